"""The dispatcher's queries. They span offices by nature (the queue) and never serve a
request; each row they touch carries its office id onward."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import (
    Select,
    String,
    and_,
    cast,
    exists,
    func,
    or_,
    select,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from officehub.channels.models import AccountNotice, ChannelPeer, ReadReceipt
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.inboxes.models import Integration
from officehub.kit.queue import Backoff, WorkQueue
from officehub.kit.repository import insert_ignoring_duplicates
from officehub.messages.models import Message

OUTBOUND = WorkQueue(
    "outbound_messages",
    key=Message.id,
    lease=Message.next_attempt_at,
    token=Message.claim_token,
    open=and_(Message.status == "QUEUED", Message.direction == "OUTBOUND"),
    backoff=Backoff.seconds(),
    attempts=Message.attempts,
    error=Message.error,
    error_length=2000,
    null_is_due=True,
    order_by=(Message.created_at, Message.id),
)
"""Outbound messages to send: ``next_attempt_at`` is due time and lease (``kit.queue``);
the dispatcher sets the backoff from the settings (``dispatch_max_attempts``)."""

MEDIA = WorkQueue(
    "inbound_media",
    key=Message.id,
    lease=Message.next_attempt_at,
    token=Message.claim_token,
    open=and_(Message.media_external_id.is_not(None), Message.media_url.is_(None)),
    backoff=Backoff.seconds(),
    attempts=Message.attempts,
    error=Message.error,
    error_length=2000,
    null_is_due=True,
    order_by=(Message.created_at, Message.id),
)
"""Inbound media still to fetch from the platform (same columns as ``OUTBOUND``; a
message is one or the other)."""

RECEIPTS = WorkQueue(
    "read_receipts",
    key=ReadReceipt.id,
    lease=ReadReceipt.next_attempt_at,
    token=ReadReceipt.claim_token,
    open=ReadReceipt.status == "PENDING",
    backoff=Backoff.seconds(),
    attempts=ReadReceipt.attempts,
    error=ReadReceipt.error,
    error_length=2000,
    gave_up={"status": "FAILED"},
    null_is_due=True,
    order_by=(ReadReceipt.created_at, ReadReceipt.id),
)
"""Read marks to tell the platform (``PENDING``)."""


def _of_types(channel_types: Sequence[str], bridged_types: Sequence[str] = ()) -> Any:
    """Conversations on channels of ``channel_types``, or of ``bridged_types`` once their
    bridge settings are set (an unset JSON column holds SQL NULL or JSON null)."""
    integrations = select(Integration.id).where(
        or_(
            Integration.type.in_(channel_types),
            and_(
                Integration.type.in_(bridged_types),
                func.coalesce(cast(Integration.bridge, String), "null") != "null",
            ),
        )
    )
    return Conversation.integration_id.in_(integrations.scalar_subquery())


async def claim_outbound(
    session: AsyncSession,
    queue: WorkQueue,
    channel_types: Sequence[str],
    now: datetime,
    lease: timedelta,
    token: str,
    limit: int,
    *,
    bridged_types: Sequence[str] = (),
    skip_integrations: Collection[str] = (),
) -> list[str]:
    """Leases the oldest due ``QUEUED`` outbound message of up to ``limit`` conversations
    (none of ``skip_integrations``: their slots are full).

    Channels of ``channel_types`` always send; those of ``bridged_types`` only once their
    bridge settings are set. Only a conversation's first queued message is ever claimed,
    so its sends keep their order (a message waiting for a retry holds the ones behind
    it). Claimed through the one queue (``kit.queue``: ``SKIP LOCKED`` on PostgreSQL).
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
    where = [_of_types(channel_types, bridged_types), ~ahead]
    if skip_integrations:
        where.append(Conversation.integration_id.not_in(list(skip_integrations)))
    return list(
        await queue.claim(
            session,
            now,
            lease,
            token,
            limit,
            where=where,
            join=(Conversation, Conversation.id == Message.conversation_id),
        )
    )


async def claim_media(
    session: AsyncSession,
    queue: WorkQueue,
    channel_types: Sequence[str],
    now: datetime,
    lease: timedelta,
    token: str,
    limit: int,
    max_attempts: int,
    *,
    skip_integrations: Collection[str] = (),
) -> list[str]:
    """Leases inbound messages whose media is still to be fetched from the platform."""
    where = [Message.attempts < max_attempts, _of_types(channel_types)]
    if skip_integrations:
        where.append(Conversation.integration_id.not_in(list(skip_integrations)))
    return list(
        await queue.claim(
            session,
            now,
            lease,
            token,
            limit,
            where=where,
            join=(Conversation, Conversation.id == Message.conversation_id),
        )
    )


async def claimed(
    session: AsyncSession, ids: Sequence[str], token: str
) -> list[tuple[Message, Integration, str | None, str, str | None]]:
    """The messages among ``ids`` still under this lease, with their channel, where the
    contact is reached (its WhatsApp id when the platform gave one, else its phone), the
    contact's id and its WhatsApp business-scoped user id (where a send goes without a
    phone)."""
    stmt = (
        select(
            Message,
            Integration,
            func.coalesce(Contact.whatsapp_id, Contact.phone),
            Contact.id,
            Contact.whatsapp_user_id,
        )
        .join(Conversation, Conversation.id == Message.conversation_id)
        .join(Integration, Integration.id == Conversation.integration_id)
        .join(Contact, Contact.id == Conversation.person_id)
        .where(Message.id.in_(ids), Message.claim_token == token)
        .order_by(Message.created_at, Message.id)
    )
    return [(m, i, p, c, u) for m, i, p, c, u in (await session.execute(stmt)).all()]


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
    queue: WorkQueue,
    now: datetime,
    lease: timedelta,
    token: str,
    limit: int,
    *,
    skip_integrations: Collection[str] = (),
) -> list[ReadReceipt]:
    """Leases up to ``limit`` due ``PENDING`` read marks (``kit.queue``) and answers them."""
    where = []
    if skip_integrations:
        where.append(ReadReceipt.integration_id.not_in(list(skip_integrations)))
    ids = await queue.claim(session, now, lease, token, limit, where=where)
    if not ids:
        return []
    stmt = select(ReadReceipt).where(ReadReceipt.id.in_(ids), ReadReceipt.claim_token == token)
    return list(await session.scalars(stmt))


async def integrations_by_id(session: AsyncSession, ids: Sequence[str]) -> dict[str, Integration]:
    if not ids:
        return {}
    return {
        i.id: i for i in await session.scalars(select(Integration).where(Integration.id.in_(ids)))
    }


async def messages_by_id(session: AsyncSession, ids: Collection[str]) -> dict[str, Message]:
    if not ids:
        return {}
    return {m.id: m for m in await session.scalars(select(Message).where(Message.id.in_(ids)))}
