"""Inbound messages: posted by the API or delivered by a channel (with their quotes and
echoes of what the office sent from the WhatsApp Business app, and imported history). A
client's new message is answered by the automatic replies (``officehub.messages.auto_replies``)
in the transaction that stores it. Also the reads flows need of a conversation's inbound
messages."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service as conversations
from officehub.kit.errors import ValidationFailed
from officehub.kit.timeutil import isoformat
from officehub.messages import events, repository
from officehub.messages.auto_replies import answer_away, answer_keyword
from officehub.messages.schemas import InboundIn, MessageOut
from officehub.messages.storing import emit_message, store_message

if TYPE_CHECKING:
    from officehub.conversations.models import Conversation


async def receive(
    session: AsyncSession, office_id: str, conversation_id: str, body: InboundIn
) -> MessageOut:
    if body.text is None and body.media_url is None:
        raise ValidationFailed.field("body.text", "send text, mediaUrl or both")
    conversation = await conversations.get_conversation(
        session, office_id, conversation_id, for_change=True
    )
    message = await store_message(
        session,
        conversation,
        direction="INBOUND",
        type="MEDIA" if body.media_url else "TEXT",
        text=body.text,
        media_url=body.media_url,
        status="RECEIVED",
    )
    out = await emit_message(session, conversation, events.RECEIVED, message)
    await answer_keyword(session, conversation, message)
    await answer_away(session, conversation, message)
    return out


async def reply_id(session: AsyncSession, office_id: str, message_id: str) -> str | None:
    """The platform's reply id of an inbound button or list answer (``payload.replyId``)."""
    message = await repository.get_message(session, office_id, message_id)
    if message is None or not isinstance(message.payload, dict):
        return None
    found = message.payload.get("replyId")
    return found if isinstance(found, str) and found else None


async def first_inbound_id(
    session: AsyncSession, office_id: str, conversation_id: str
) -> str | None:
    """The conversation's first inbound message (a flow starts on it)."""
    return await repository.first_inbound_id(session, office_id, conversation_id)


async def receive_from_channel(
    session: AsyncSession,
    conversation: Conversation,
    *,
    external_id: str,
    type: str,
    text: str | None,
    media_external_id: str | None = None,
    payload: dict[str, Any] | None = None,
    media_url: str | None = None,
    content: dict[str, Any] | None = None,
    reply_to_external_id: str | None = None,
    forwarded: bool = False,
) -> MessageOut | None:
    """An inbound message a channel delivered; None when its id is already stored (the
    platform retried). The unique index on the external id holds the rule. A reply names
    the channel's id of the message it quotes: ``replyTo`` is ours, when we have it in
    this conversation."""
    if await repository.find_by_external_id(session, conversation.office_id, external_id):
        return None
    reply_to_id = None
    if reply_to_external_id:
        quoted = await repository.find_by_external_id(
            session, conversation.office_id, reply_to_external_id
        )
        if quoted is not None and quoted.conversation_id == conversation.id:
            reply_to_id = quoted.id
        # the platform's id is kept either way: a quote of a message not stored here
        payload = {**(payload or {}), "replyToExternalId": reply_to_external_id[:128]}
    try:
        async with session.begin_nested():
            message = await store_message(
                session,
                conversation,
                direction="INBOUND",
                type=type,
                text=text,
                media_url=media_url,
                status="RECEIVED",
                external_id=external_id,
                media_external_id=media_external_id,
                payload=payload,
                content=content,
                reply_to_id=reply_to_id,
                forwarded=forwarded,
            )
    except IntegrityError:
        return None
    out = await emit_message(session, conversation, events.RECEIVED, message)
    await answer_keyword(session, conversation, message)
    await answer_away(session, conversation, message)
    return out


async def store_echo(
    session: AsyncSession,
    conversation: Conversation,
    *,
    external_id: str,
    type: str,
    text: str | None,
    media_external_id: str | None = None,
    payload: dict[str, Any] | None = None,
    content: dict[str, Any] | None = None,
) -> MessageOut | None:
    """A message the office typed in the WhatsApp Business app on its phone (coexistence:
    the platform's ``smb_message_echoes``): stored OUTBOUND and ``SENT`` (the platform took
    it; never dispatched again), ``payload.origin`` ``business_app``, an answer for the SLA,
    ``chat.message.sent``. No one of the service sent it (``sentBy`` null). None when its
    id is stored already (the platform retried)."""
    if await repository.find_by_external_id(session, conversation.office_id, external_id):
        return None
    try:
        async with session.begin_nested():
            message = await store_message(
                session,
                conversation,
                direction="OUTBOUND",
                type=type,
                text=text,
                media_url=None,
                status="SENT",
                external_id=external_id,
                media_external_id=media_external_id,
                payload={**(payload or {}), "origin": "business_app"},
                content=content,
                automated=True,
                responds=True,
            )
    except IntegrityError:
        return None
    return await emit_message(session, conversation, events.SENT, message)


async def import_history(
    session: AsyncSession,
    conversation: Conversation,
    *,
    external_id: str,
    direction: str,
    type: str,
    text: str | None,
    at: datetime,
    status: str,
    media_external_id: str | None = None,
    payload: dict[str, Any] | None = None,
    content: dict[str, Any] | None = None,
) -> bool:
    """A past message a channel handed over (WhatsApp coexistence ``history``), stored once
    (its external id) at its own time, quietly: no event, so no flow, rule, routing or
    webhook starts; not the conversation's last message, not unread, no SLA figure.
    Answers whether it was new."""
    if await repository.find_by_external_id(session, conversation.office_id, external_id):
        return False
    try:
        async with session.begin_nested():
            message = await store_message(
                session,
                conversation,
                direction=direction,
                type=type,
                text=text,
                media_url=None,
                status=status,
                external_id=external_id,
                media_external_id=media_external_id,
                payload={**(payload or {}), "origin": "history"},
                content=content,
                record_time=False,
                automated=True,
            )
            message.created_at = at
            message.status_history = [{"status": status, "at": isoformat(at)}]
            await session.flush()
    except IntegrityError:
        return False
    return True


async def external_id_known(session: AsyncSession, office_id: str, external_id: str) -> bool:
    return await repository.find_by_external_id(session, office_id, external_id) is not None
