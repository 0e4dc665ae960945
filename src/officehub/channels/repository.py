"""The dispatcher's queries. They span offices by nature (the queue) and never serve a
request; each row they touch carries its office id onward."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Select,
    String,
    and_,
    cast,
    exists,
    func,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from officehub.channels.models import AccountNotice, ChannelPeer, ReadReceipt
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation, Message
from officehub.inboxes.models import Integration
from officehub.kit.repository import insert_ignoring_duplicates


def _due(now: datetime) -> ColumnElement[bool]:
    return and_(
        or_(Message.next_attempt_at.is_(None), Message.next_attempt_at <= now),
        or_(Message.lease_until.is_(None), Message.lease_until < now),
    )


async def _lease(
    session: AsyncSession, due: Select[Any], lease_until: datetime, token: str
) -> list[str]:
    """Leases the rows ``due`` selects in one atomic UPDATE (its subquery locks them
    ``FOR UPDATE SKIP LOCKED`` on PostgreSQL; SQLite runs one writer at a time)."""
    result = await session.execute(
        update(Message)
        .where(Message.id.in_(due.scalar_subquery()))
        .values(lease_until=lease_until, claim_token=token)
        .returning(Message.id)
        .execution_options(synchronize_session=False)
    )
    return [row[0] for row in result]


async def claim_outbound(
    session: AsyncSession,
    channel_types: Sequence[str],
    now: datetime,
    lease_until: datetime,
    token: str,
    limit: int,
    *,
    skip_locked: bool,
    bridged_types: Sequence[str] = (),
) -> list[str]:
    """Leases the oldest due ``QUEUED`` outbound message of up to ``limit`` conversations.

    Channels of ``channel_types`` always send; those of ``bridged_types`` only once their
    bridge settings are set (an unset JSON column holds SQL NULL or JSON null).

    Only a conversation's first queued message is ever claimed, so its sends keep their
    order (a message waiting for a retry holds the ones behind it). PostgreSQL: the rows
    are locked ``FOR UPDATE SKIP LOCKED``, so workers take disjoint batches; SQLite: one
    writer at a time, the statement is atomic by itself.
    """
    earlier = aliased(Message)
    ahead = exists().where(
        earlier.office_id == Message.office_id,
        earlier.conversation_id == Message.conversation_id,
        earlier.status == "QUEUED",
        earlier.direction == "OUTBOUND",
        or_(
            earlier.created_at < Message.created_at,
            and_(earlier.created_at == Message.created_at, earlier.id < Message.id),
        ),
    )
    due = (
        select(Message.id)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .join(Integration, Integration.id == Conversation.integration_id)
        .where(
            Message.status == "QUEUED",
            Message.direction == "OUTBOUND",
            or_(
                Integration.type.in_(channel_types),
                and_(
                    Integration.type.in_(bridged_types),
                    func.coalesce(cast(Integration.bridge, String), "null") != "null",
                ),
            ),
            _due(now),
            ~ahead,
        )
        .order_by(Message.created_at, Message.id)
        .limit(limit)
    )
    if skip_locked:
        due = due.with_for_update(of=Message, skip_locked=True)
    return await _lease(session, due, lease_until, token)


async def claim_media(
    session: AsyncSession,
    channel_types: Sequence[str],
    now: datetime,
    lease_until: datetime,
    token: str,
    limit: int,
    max_attempts: int,
    *,
    skip_locked: bool,
) -> list[str]:
    """Leases inbound messages whose media is still to be fetched from the platform."""
    due = (
        select(Message.id)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .join(Integration, Integration.id == Conversation.integration_id)
        .where(
            Message.media_external_id.is_not(None),
            Message.media_url.is_(None),
            Message.attempts < max_attempts,
            Integration.type.in_(channel_types),
            _due(now),
        )
        .order_by(Message.created_at, Message.id)
        .limit(limit)
    )
    if skip_locked:
        due = due.with_for_update(of=Message, skip_locked=True)
    return await _lease(session, due, lease_until, token)


async def claimed(
    session: AsyncSession, ids: Sequence[str], token: str
) -> list[tuple[Message, Integration, str | None, str]]:
    """The messages among ``ids`` still under this lease, with their channel, where the
    contact is reached (its WhatsApp id when the platform gave one, else its phone) and
    the contact's id."""
    stmt = (
        select(Message, Integration, func.coalesce(Contact.whatsapp_id, Contact.phone), Contact.id)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .join(Integration, Integration.id == Conversation.integration_id)
        .join(Contact, Contact.id == Conversation.person_id)
        .where(Message.id.in_(ids), Message.claim_token == token)
        .order_by(Message.created_at, Message.id)
    )
    return [(m, i, p, c) for m, i, p, c in (await session.execute(stmt)).all()]


async def held(
    session: AsyncSession, ids: Sequence[str], token: str, *, lock: bool
) -> dict[str, Message]:
    """The messages among ``ids`` still under this claim (locked on PostgreSQL)."""
    stmt = select(Message).where(Message.id.in_(ids), Message.claim_token == token)
    if lock:
        stmt = stmt.with_for_update()
    return {m.id: m for m in await session.scalars(stmt)}


async def configured_official(
    session: AsyncSession, only: str | None = None
) -> list[tuple[str, str]]:
    """(office id, integration id) of every official integration with settings (checked
    here: an unset JSON column may hold SQL NULL or JSON null)."""
    stmt = select(Integration.office_id, Integration.id, Integration.whatsapp).where(
        Integration.type == "WHATSAPP_OFFICIAL"
    )
    if only is not None:
        stmt = stmt.where(Integration.id == only)
    rows = (await session.execute(stmt.order_by(Integration.id))).all()
    return [(o, i) for o, i, settings in rows if settings]


async def peers_of(
    session: AsyncSession, pairs: Sequence[tuple[str, str, str]]
) -> dict[tuple[str, str], str]:
    """The bridged channel's id of each (office, integration, contact): the latest seen."""
    found: dict[tuple[str, str], str] = {}
    if not pairs:
        return found
    offices = {o for o, _, _ in pairs}
    integrations = {i for _, i, _ in pairs}
    contacts = {c for _, _, c in pairs}
    stmt = (
        select(ChannelPeer.integration_id, ChannelPeer.contact_id, ChannelPeer.peer_id)
        .where(
            ChannelPeer.office_id.in_(offices),
            ChannelPeer.integration_id.in_(integrations),
            ChannelPeer.contact_id.in_(contacts),
        )
        .order_by(ChannelPeer.created_at, ChannelPeer.id)
    )
    for integration_id, contact_id, peer_id in (await session.execute(stmt)).all():
        found[(integration_id, contact_id)] = peer_id
    return found


async def peer_contact(
    session: AsyncSession, office_id: str, integration_id: str, peer_id: str
) -> str | None:
    """The contact a bridged channel's sender id was seen as."""
    stmt = select(ChannelPeer.contact_id).where(
        ChannelPeer.office_id == office_id,
        ChannelPeer.integration_id == integration_id,
        ChannelPeer.peer_id == peer_id,
    )
    return (await session.scalars(stmt)).first()


async def add_peer(
    session: AsyncSession, office_id: str, integration_id: str, contact_id: str, peer_id: str
) -> None:
    await insert_ignoring_duplicates(
        session,
        ChannelPeer,
        [
            {
                "office_id": office_id,
                "integration_id": integration_id,
                "contact_id": contact_id,
                "peer_id": peer_id,
            }
        ],
    )


async def add_notice(
    session: AsyncSession,
    office_id: str,
    integration_id: str,
    field: str,
    event: str | None,
    value: dict[str, Any],
) -> None:
    """Keeps an account notification of the integration (``whatsapp_account_notices``)."""
    session.add(
        AccountNotice(
            office_id=office_id,
            integration_id=integration_id,
            field=field,
            event=event,
            value=value,
        )
    )
    await session.flush()


def notices_query(office_id: str, integration_id: str) -> Select[Any]:
    """The integration's account notices, newest first."""
    return (
        select(AccountNotice)
        .where(
            AccountNotice.office_id == office_id,
            AccountNotice.integration_id == integration_id,
        )
        .order_by(AccountNotice.received_at.desc(), AccountNotice.id.desc())
    )


async def claim_receipts(
    session: AsyncSession,
    now: datetime,
    lease_until: datetime,
    token: str,
    limit: int,
    *,
    skip_locked: bool,
) -> list[ReadReceipt]:
    """Leases up to ``limit`` due ``PENDING`` read marks (``FOR UPDATE SKIP LOCKED`` on
    PostgreSQL) and answers them."""
    due = (
        select(ReadReceipt.id)
        .where(
            ReadReceipt.status == "PENDING",
            or_(ReadReceipt.next_attempt_at.is_(None), ReadReceipt.next_attempt_at <= now),
            or_(ReadReceipt.lease_until.is_(None), ReadReceipt.lease_until < now),
        )
        .order_by(ReadReceipt.created_at, ReadReceipt.id)
        .limit(limit)
    )
    if skip_locked:
        due = due.with_for_update(skip_locked=True)
    result = await session.execute(
        update(ReadReceipt)
        .where(ReadReceipt.id.in_(due.scalar_subquery()))
        .values(lease_until=lease_until, claim_token=token)
        .returning(ReadReceipt.id)
        .execution_options(synchronize_session=False)
    )
    ids = [row[0] for row in result]
    if not ids:
        return []
    stmt = select(ReadReceipt).where(ReadReceipt.id.in_(ids), ReadReceipt.claim_token == token)
    return list(await session.scalars(stmt))


async def held_receipts(
    session: AsyncSession, ids: Sequence[str], token: str, *, lock: bool
) -> dict[str, ReadReceipt]:
    stmt = select(ReadReceipt).where(ReadReceipt.id.in_(ids), ReadReceipt.claim_token == token)
    if lock:
        stmt = stmt.with_for_update()
    return {r.id: r for r in await session.scalars(stmt)}


async def integrations_by_id(session: AsyncSession, ids: Sequence[str]) -> dict[str, Integration]:
    if not ids:
        return {}
    return {
        i.id: i for i in await session.scalars(select(Integration).where(Integration.id.in_(ids)))
    }
