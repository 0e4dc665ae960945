"""Every query of accounts. Tokens and sessions are found by their hash alone (as API keys
are: the hash names one office's record); everything else is scoped by office id."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.accounts.models import UserRecoveryCode, UserSession, UserToken, UserTotp
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import scoped
from officehub.users.models import User, UserInbox, email_key


async def add(
    session: AsyncSession, record: UserToken | UserSession | UserTotp | UserRecoveryCode
) -> None:
    session.add(record)
    await session.flush()


async def drop_open_tokens(
    session: AsyncSession, office_id: str, user_id: str, purpose: str
) -> None:
    """Earlier unused links of this purpose stop working when a new one is made."""
    await session.execute(
        delete(UserToken).where(
            UserToken.office_id == office_id,
            UserToken.user_id == user_id,
            UserToken.purpose == purpose,
            UserToken.used_at.is_(None),
        )
    )


async def token_by_hash(session: AsyncSession, token_hash: str) -> UserToken | None:
    return (
        await session.scalars(select(UserToken).where(UserToken.token_hash == token_hash))
    ).first()


async def spend_token(session: AsyncSession, token_id: str, now: datetime) -> bool:
    """Marks the token used if it still is unused and unexpired: ``True`` for the one
    request that did (the row's lock makes a concurrent spender find it used)."""
    result: Any = await session.execute(
        update(UserToken)
        .where(
            UserToken.id == token_id,
            UserToken.used_at.is_(None),
            UserToken.expires_at > now,
        )
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount) == 1


async def sign_in_user(session: AsyncSession, email: str) -> User | None:
    """The user who signs in with ``email`` (any case): unique among users with a password."""
    stmt = select(User).where(
        User.email_key == email_key(email.strip()), User.password_hash.is_not(None)
    )
    return (await session.scalars(stmt)).first()


async def session_by_hash(
    session: AsyncSession, token_hash: str
) -> tuple[UserSession, User] | None:
    stmt = (
        select(UserSession, User)
        .join(User, User.id == UserSession.user_id)
        .where(UserSession.token_hash == token_hash)
    )
    row = (await session.execute(stmt)).first()
    return None if row is None else (row[0], row[1])


async def inbox_ids(session: AsyncSession, office_id: str, user_id: str) -> frozenset[str]:
    stmt = select(UserInbox.inbox_id).where(
        UserInbox.office_id == office_id, UserInbox.user_id == user_id
    )
    return frozenset(await session.scalars(stmt))


async def touch_session(session: AsyncSession, session_id: str, now: datetime) -> None:
    await session.execute(
        update(UserSession)
        .where(UserSession.id == session_id)
        .values(last_seen_at=now)
        .execution_options(synchronize_session=False)
    )


async def sessions_of(
    session: AsyncSession, office_id: str, user_id: str, params: PageParams
) -> tuple[list[UserSession], int]:
    stmt = (
        scoped(UserSession, office_id)
        .where(UserSession.user_id == user_id)
        .order_by(UserSession.created_at.desc(), UserSession.id)
    )
    return await paginate(session, stmt, params)


async def end_session(session: AsyncSession, office_id: str, user_id: str, ident: str) -> bool:
    result: Any = await session.execute(
        delete(UserSession).where(
            UserSession.office_id == office_id,
            UserSession.user_id == user_id,
            UserSession.id == ident,
        )
    )
    return int(result.rowcount) == 1


async def end_sessions_of(session: AsyncSession, office_id: str, user_id: str) -> None:
    await session.execute(
        delete(UserSession).where(
            UserSession.office_id == office_id, UserSession.user_id == user_id
        )
    )


async def purge_ended(session: AsyncSession, now: datetime, idle_since: datetime) -> int:
    """Deletes sessions past either timeout and links used or expired; how many went."""
    sessions: Any = await session.execute(
        delete(UserSession).where(
            or_(UserSession.expires_at <= now, UserSession.last_seen_at <= idle_since)
        )
    )
    tokens: Any = await session.execute(
        delete(UserToken).where(or_(UserToken.used_at.is_not(None), UserToken.expires_at <= now))
    )
    return int(sessions.rowcount) + int(tokens.rowcount)


async def totp_of(session: AsyncSession, office_id: str, user_id: str) -> UserTotp | None:
    stmt = scoped(UserTotp, office_id).where(UserTotp.user_id == user_id)
    return (await session.scalars(stmt)).first()


async def take_step(
    session: AsyncSession, totp_id: str, step: int, confirm_at: datetime | None
) -> bool:
    """Records ``step`` as the last accepted one if it is later than the recorded one:
    ``True`` for the one request that did (the update holds the row's lock, so a concurrent
    taker of the same step finds it taken). ``confirm_at``: also activates an enrolment
    (only one not yet active)."""
    stmt = update(UserTotp).where(
        UserTotp.id == totp_id,
        or_(UserTotp.last_step.is_(None), UserTotp.last_step < step),
    )
    values: dict[str, Any] = {"last_step": step}
    if confirm_at is not None:
        stmt = stmt.where(UserTotp.confirmed_at.is_(None))
        values["confirmed_at"] = confirm_at
    else:
        stmt = stmt.where(UserTotp.confirmed_at.is_not(None))
    result: Any = await session.execute(
        stmt.values(**values).execution_options(synchronize_session=False)
    )
    return int(result.rowcount) == 1


async def spend_recovery_code(
    session: AsyncSession, office_id: str, user_id: str, code_hash: str, now: datetime
) -> bool:
    result: Any = await session.execute(
        update(UserRecoveryCode)
        .where(
            UserRecoveryCode.office_id == office_id,
            UserRecoveryCode.user_id == user_id,
            UserRecoveryCode.code_hash == code_hash,
            UserRecoveryCode.used_at.is_(None),
        )
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount) == 1


async def drop_recovery_codes(session: AsyncSession, office_id: str, user_id: str) -> None:
    await session.execute(
        delete(UserRecoveryCode).where(
            UserRecoveryCode.office_id == office_id, UserRecoveryCode.user_id == user_id
        )
    )


async def drop_totp(session: AsyncSession, office_id: str, user_id: str) -> bool:
    """Removes the user's TOTP and recovery codes; ``True`` if there was one."""
    await drop_recovery_codes(session, office_id, user_id)
    result: Any = await session.execute(
        delete(UserTotp).where(UserTotp.office_id == office_id, UserTotp.user_id == user_id)
    )
    return int(result.rowcount) == 1
