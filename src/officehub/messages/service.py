"""Messages of a conversation: inbound (posted by a channel adapter) and outbound text.

Outbound messages are stored ``QUEUED`` for the channel to deliver. Template sends need an
``APPROVED`` template of the conversation's integration; until the official channel keeps a
template catalogue none is approved, so every template send answers 409.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service as conversations
from officehub.conversations.models import Conversation, Message
from officehub.errors import Conflict, ValidationFailed
from officehub.events.service import emit
from officehub.messages import repository
from officehub.messages.schemas import InboundIn, MessageOut, OutboundIn
from officehub.pagination import PageParams, paginate
from officehub.timeutil import utcnow


async def receive(
    session: AsyncSession, office_id: str, conversation_id: str, body: InboundIn
) -> MessageOut:
    if body.text is None and body.media_url is None:
        raise ValidationFailed.field("body.text", "send text, mediaUrl or both")
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    message = await _store(
        session,
        conversation,
        direction="INBOUND",
        type="MEDIA" if body.media_url else "TEXT",
        text=body.text,
        media_url=body.media_url,
        status="RECEIVED",
    )
    return await _emit(session, conversation, "chat.message.received", message)


async def send(
    session: AsyncSession, office_id: str, conversation_id: str, body: OutboundIn
) -> MessageOut:
    if (body.text is None) == (body.template_name is None):
        raise ValidationFailed.field("body.text", "send either text or templateName")
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    if body.template_name is not None:
        raise Conflict(
            "The template is not approved",
            details=(
                f"Template {body.template_name!r} is not an APPROVED template of integration "
                f"{conversation.integration_id}"
            ),
            code="TEMPLATE_NOT_APPROVED",
        )
    message = await _store(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEXT",
        text=body.text,
        media_url=None,
        status="QUEUED",
    )
    return await _emit(session, conversation, "chat.message.sent", message)


async def list_messages(
    session: AsyncSession, office_id: str, conversation_id: str, params: PageParams
) -> tuple[list[MessageOut], int]:
    await conversations.get_conversation(session, office_id, conversation_id)
    rows, total = await paginate(
        session, repository.messages_query(office_id, conversation_id), params
    )
    return [MessageOut.model_validate(m) for m in rows], total


async def _store(
    session: AsyncSession,
    conversation: Conversation,
    *,
    direction: str,
    type: str,
    text: str | None,
    media_url: str | None,
    status: str,
) -> Message:
    now = utcnow()
    message = await repository.add_message(
        session,
        Message(
            office_id=conversation.office_id,
            conversation_id=conversation.id,
            direction=direction,
            type=type,
            text=text,
            template_name=None,
            media_url=media_url,
            status=status,
            created_at=now,
        ),
    )
    await conversations.record_message_time(session, conversation, now)
    return message


async def _emit(
    session: AsyncSession, conversation: Conversation, name: str, message: Message
) -> MessageOut:
    out = MessageOut.model_validate(message)
    await emit(
        session,
        conversation.office_id,
        name,
        out.model_dump(mode="json", by_alias=True),
        conversation_id=conversation.id,
        integration_id=conversation.integration_id,
    )
    return out
