"""The web chat's queries: visitors by token (within an office) and what a visitor sees."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_, select, update
from sqlalchemy.engine import CursorResult
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.messages.models import Message
from officehub.webchat.models import ClaimCode, WebchatVisitor


async def visitor_by_token(
    session: AsyncSession, office_id: str, token_hash: str
) -> WebchatVisitor | None:
    stmt = select(WebchatVisitor).where(
        WebchatVisitor.office_id == office_id, WebchatVisitor.token_hash == token_hash
    )
    return (await session.scalars(stmt)).first()


async def visitor_by_id(session: AsyncSession, visitor_id: str) -> WebchatVisitor | None:
    """By id alone: the live stream's own visitor, authenticated when it opened."""
    return await session.get(WebchatVisitor, visitor_id)


async def message_by_external_id(
    session: AsyncSession, office_id: str, external_id: str
) -> Message:
    stmt = select(Message).where(Message.office_id == office_id, Message.external_id == external_id)
    return (await session.scalars(stmt)).one()


async def messages_by_id(
    session: AsyncSession, office_id: str, ids: Sequence[str]
) -> list[Message]:
    if not ids:
        return []
    stmt = select(Message).where(Message.office_id == office_id, Message.id.in_(ids))
    return list(await session.scalars(stmt))


def _of_visitor(visitor: WebchatVisitor) -> ColumnElement[bool]:
    return and_(
        Message.office_id == visitor.office_id,
        Message.conversation_id == visitor.conversation_id,
        Message.created_at >= visitor.created_at,
        Message.type != "NOTE",
    )


async def visible_messages(
    session: AsyncSession, visitor: WebchatVisitor, outbound: Sequence[str], limit: int
) -> list[Message]:
    """The latest ``limit`` messages the visitor may see, oldest first."""
    rows = await session.scalars(
        select(Message)
        .where(
            _of_visitor(visitor),
            or_(Message.direction == "INBOUND", Message.status.in_(outbound)),
        )
        .order_by(Message.created_at.desc(), Message.id.desc())
        .limit(limit)
    )
    return list(reversed(list(rows)))


async def messages_since(
    session: AsyncSession,
    visitor: WebchatVisitor,
    since: datetime,
    pending: set[str],
    limit: int,
) -> list[Message]:
    condition = Message.created_at >= since
    if pending:
        condition = or_(condition, Message.id.in_(pending))
    rows = await session.scalars(
        select(Message)
        .where(_of_visitor(visitor), condition)
        .order_by(Message.created_at, Message.id)
        .limit(limit)
    )
    return list(rows)


# One-time codes (``verification``).


async def code_times(
    session: AsyncSession,
    office_id: str,
    since: datetime,
    *,
    contact_id: str | None = None,
    phone: str | None = None,
) -> list[datetime]:
    """When the codes of a contact (or to a phone) made from ``since`` on were made."""
    stmt = select(ClaimCode.created_at).where(
        ClaimCode.office_id == office_id, ClaimCode.created_at >= since
    )
    if contact_id is not None:
        stmt = stmt.where(ClaimCode.contact_id == contact_id)
    if phone is not None:
        stmt = stmt.where(ClaimCode.phone == phone)
    return list((await session.scalars(stmt)).all())


async def latest_code(session: AsyncSession, office_id: str, contact_id: str) -> ClaimCode | None:
    stmt = (
        select(ClaimCode)
        .where(ClaimCode.office_id == office_id, ClaimCode.contact_id == contact_id)
        .order_by(ClaimCode.created_at.desc(), ClaimCode.id.desc())
        .limit(1)
    )
    return (await session.scalars(stmt)).first()


async def code_by_id(session: AsyncSession, office_id: str, code_id: str) -> ClaimCode | None:
    """Read afresh (a concurrent request may have changed or deleted it)."""
    stmt = (
        select(ClaimCode)
        .where(ClaimCode.office_id == office_id, ClaimCode.id == code_id)
        .execution_options(populate_existing=True)
    )
    return (await session.scalars(stmt)).first()


async def expire_codes(
    session: AsyncSession, office_id: str, contact_id: str, now: datetime
) -> None:
    """The contact's codes still open stop working (a new one was sent)."""
    await session.execute(
        update(ClaimCode)
        .where(
            ClaimCode.office_id == office_id,
            ClaimCode.contact_id == contact_id,
            ClaimCode.used_at.is_(None),
            ClaimCode.expires_at > now,
        )
        .values(expires_at=now)
        .execution_options(synchronize_session=False)
    )


def _open(code_id: str, now: datetime, max_attempts: int) -> list[ColumnElement[bool]]:
    return [
        ClaimCode.id == code_id,
        ClaimCode.used_at.is_(None),
        ClaimCode.expires_at > now,
        ClaimCode.attempts < max_attempts,
    ]


async def use_code(session: AsyncSession, code_id: str, now: datetime, max_attempts: int) -> bool:
    """Marks the code used if it still is open: one conditional UPDATE, so of two
    confirmations at once exactly one changes the row (the other waits for its row lock on
    PostgreSQL, or for the write lock on SQLite, and then matches nothing)."""
    result = await session.execute(
        update(ClaimCode)
        .where(*_open(code_id, now, max_attempts))
        .values(used_at=now)
        .execution_options(synchronize_session=False)
    )
    return _rowcount(result) == 1


async def count_wrong_try(
    session: AsyncSession, code_id: str, now: datetime, max_attempts: int
) -> bool:
    """One more wrong try of a code still open (conditional, like ``use_code``)."""
    result = await session.execute(
        update(ClaimCode)
        .where(*_open(code_id, now, max_attempts))
        .values(attempts=ClaimCode.attempts + 1)
        .execution_options(synchronize_session=False)
    )
    return _rowcount(result) == 1


def _rowcount(result: object) -> int:
    return result.rowcount if isinstance(result, CursorResult) else 0
