"""The one place a message is stored (``store_message``: API, channels, web chat, bridge,
flows, automation), which makes it its conversation's last message in the same
transaction, and the event that tells of it (``emit_message``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service as conversations
from officehub.events.catalogue import Event
from officehub.events.service import emit
from officehub.kit.actor import acting, current_actor
from officehub.kit.timeutil import isoformat, utcnow
from officehub.messages import repository
from officehub.messages.models import Message
from officehub.messages.schemas import MessageOut

if TYPE_CHECKING:
    from officehub.conversations.models import Conversation


async def store_message(
    session: AsyncSession,
    conversation: Conversation,
    *,
    direction: str,
    type: str,
    text: str | None,
    media_url: str | None,
    status: str,
    template_name: str | None = None,
    external_id: str | None = None,
    media_external_id: str | None = None,
    payload: dict[str, Any] | None = None,
    content: dict[str, Any] | None = None,
    reply_to_id: str | None = None,
    forwarded: bool = False,
    record_time: bool = True,
    user_id: str | None = None,
    automated: bool = False,
    responds: bool | None = None,
) -> Message:
    """The one place a message is created (API, channels, web chat, bridge, flows,
    automation): it becomes the conversation's last message in the same transaction. An
    outbound message sent by a signed-in user names them there (``lastMessage.userId``).
    ``automated``: the service's own answer inside a client's request (away message,
    keyword answer): no one sent it (``sent_by`` None), so it is no SLA response.
    ``responds``: whether it answers the client for the SLA, when not who sent it says so
    (a message the office typed in the WhatsApp Business app)."""
    now = utcnow()
    sent_by = acting() if direction == "OUTBOUND" and not automated else None
    actor = current_actor.get()
    if user_id is None and direction == "OUTBOUND" and actor is not None and actor.kind == "user":
        user_id = actor.id
    message = await repository.add_message(
        session,
        Message(
            office_id=conversation.office_id,
            conversation_id=conversation.id,
            direction=direction,
            type=type,
            text=text,
            template_name=template_name,
            media_url=media_url,
            status=status,
            created_at=now,
            external_id=external_id,
            media_external_id=media_external_id,
            payload=payload,
            attempts=0,
            content=content,
            reply_to_id=reply_to_id,
            forwarded=forwarded,
            sent_by=sent_by,
            status_history=[{"status": status, "at": isoformat(now)}],
        ),
    )
    if record_time:
        await conversations.record_message(
            session,
            conversation,
            message_id=message.id,
            at=now,
            text=text,
            type=type,
            user_id=user_id,
            inbound=direction == "INBOUND",
            responds=(sent_by is not None if responds is None else responds) and type != "NOTE",
        )
    return message


async def emit_message(
    session: AsyncSession, conversation: Conversation, event: Event[MessageOut], message: Message
) -> MessageOut:
    out = MessageOut.model_validate(message)
    await emit(
        session,
        conversation.office_id,
        event,
        out,
        conversation_id=conversation.id,
        integration_id=conversation.integration_id,
    )
    return out
