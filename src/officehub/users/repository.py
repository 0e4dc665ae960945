from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import InstrumentedAttribute

from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, lock_rows, replace_set, scoped
from officehub.users.models import User, UserInbox, UserLegalArea, email_key


async def get_user(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> User | None:
    return await get_scoped(session, User, office_id, ident, for_change=for_change)


async def existing_ids(session: AsyncSession, office_id: str, idents: Sequence[str]) -> set[str]:
    users = await session.scalars(scoped(User, office_id).where(User.id.in_(list(idents))))
    return {user.id for user in users}


async def active_admins(session: AsyncSession, office_id: str) -> list[User]:
    """The office's active administrators, oldest first."""
    stmt = (
        scoped(User, office_id)
        .where(User.role == "ADMIN", User.is_active.is_(True))
        .order_by(User.created_at, User.id)
    )
    return list(await session.scalars(stmt))


async def get_by_email(session: AsyncSession, office_id: str, email: str) -> User | None:
    stmt = scoped(User, office_id).where(User.email_key == email_key(email))
    return (await session.scalars(stmt)).first()


async def list_users(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    search: str | None = None,
) -> tuple[list[User], int]:
    stmt = scoped(User, office_id)
    if inbox_id is not None:
        members = select(UserInbox.user_id).where(
            UserInbox.office_id == office_id, UserInbox.inbox_id == inbox_id
        )
        stmt = stmt.where(User.id.in_(members))
    if search:
        pattern = (
            "%" + search.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        )
        stmt = stmt.where(
            or_(
                func.lower(User.name).like(pattern, escape="\\"),
                func.lower(User.email).like(pattern, escape="\\"),
            )
        )
    return await paginate(session, stmt.order_by(User.name, User.id), params)


async def _linked_ids(
    session: AsyncSession,
    office_id: str,
    user_ids: Sequence[str],
    link: type[UserInbox] | type[UserLegalArea],
    column: InstrumentedAttribute[str],
) -> dict[str, list[str]]:
    """Each user's ids of ``column`` in the link table, for a page of users in one query."""
    found: dict[str, list[str]] = {ident: [] for ident in user_ids}
    if not user_ids:
        return found
    stmt = (
        select(link.user_id, column)
        .where(link.office_id == office_id, link.user_id.in_(user_ids))
        .order_by(column)
    )
    for user_id, linked in (await session.execute(stmt)).all():
        found[user_id].append(linked)
    return found


async def inbox_ids_of(
    session: AsyncSession, office_id: str, user_ids: Sequence[str]
) -> dict[str, list[str]]:
    """Each user's inbox ids, for a page of users in one query."""
    return await _linked_ids(session, office_id, user_ids, UserInbox, UserInbox.inbox_id)


async def set_inboxes(
    session: AsyncSession, office_id: str, user_id: str, inbox_ids: Sequence[str]
) -> None:
    """The user's inboxes become ``inbox_ids``; the user's row is locked first, so concurrent
    replacements apply one after the other (the last one wins whole)."""
    await lock_rows(session, User, office_id, User.id == user_id)
    await replace_set(session, UserInbox, office_id, ("user_id", user_id), "inbox_id", inbox_ids)


async def with_email(session: AsyncSession, email: str, office_id: str | None) -> list[User]:
    """Users of ``email`` in every office (or ``office_id``'s): the CLI's look-up only."""
    stmt = select(User).where(User.email_key == email_key(email.strip()))
    if office_id is not None:
        stmt = stmt.where(User.office_id == office_id)
    return list(await session.scalars(stmt.order_by(User.office_id)))


async def legal_area_ids_of(
    session: AsyncSession, office_id: str, user_ids: Sequence[str]
) -> dict[str, list[str]]:
    """Each user's legal area ids, for a page of users in one query."""
    return await _linked_ids(
        session, office_id, user_ids, UserLegalArea, UserLegalArea.legal_area_id
    )


async def set_legal_areas(
    session: AsyncSession, office_id: str, user_id: str, legal_area_ids: Sequence[str]
) -> None:
    """The user's legal areas become ``legal_area_ids`` (the user's row is locked by the
    caller's change)."""
    await replace_set(
        session, UserLegalArea, office_id, ("user_id", user_id), "legal_area_id", legal_area_ids
    )


async def user_names(session: AsyncSession, office_id: str, ids: list[str]) -> dict[str, str]:
    """The names of the office's users among ``ids``, by id."""
    stmt = select(User.id, User.name).where(User.office_id == office_id, User.id.in_(ids))
    return {str(i): str(n) for i, n in (await session.execute(stmt)).all()}
