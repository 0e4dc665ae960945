"""Changes to stored messages: delivery statuses (the channel's and the API's), read marks
(read receipts), and reactions, edits and deletions (``chat.message.updated``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service as conversations
from officehub.events.service import PendingEvent, emit_many
from officehub.inboxes import service as inboxes
from officehub.kit.errors import NotFound, ValidationFailed
from officehub.kit.ids import new_id
from officehub.kit.timeutil import isoformat, utcnow
from officehub.messages import events, repository
from officehub.messages.models import Message
from officehub.messages.outbound import check_service_window
from officehub.messages.schemas import MessageOut, ReactionIn, ReadIn, ReadOut
from officehub.messages.storing import emit_message, store_message


async def mark_read(
    session: AsyncSession,
    office_id: str,
    conversation_id: str,
    body: ReadIn,
    user_id: str | None = None,
) -> ReadOut:
    """The operator read the conversation up to a message (the newest inbound by default).

    On the official channel a read mark is stored ``PENDING`` for the dispatcher, which tells
    the platform (marking the newest message read marks the earlier ones too); elsewhere it
    is ``RECORDED``. Idempotent: a mark at or after the message answers as it stands."""
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    if body.message_id is not None:
        message = await repository.get_message(session, office_id, body.message_id)
        if (
            message is None
            or message.conversation_id != conversation.id
            or message.direction != "INBOUND"
        ):
            raise ValidationFailed.field(
                "body.messageId", "not an inbound message of this conversation"
            )
    else:
        message = await repository.newest_inbound(session, office_id, conversation.id)
        if message is None:
            return ReadOut(conversation_id=conversation.id, message_id=None, status=None)
    read = await repository.inbound_up_to(session, office_id, conversation.id, message)
    await conversations.mark_read(session, conversation, user_id, read)
    receipt = await repository.receipt_covering(session, office_id, conversation.id, message)
    if receipt is None:
        integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
        told = integration.type == inboxes.OFFICIAL and message.external_id is not None
        await repository.add_receipt(
            session,
            {
                "id": new_id(),
                "office_id": office_id,
                "conversation_id": conversation.id,
                "message_id": message.id,
                "integration_id": integration.id,
                "external_id": message.external_id,
                "status": "PENDING" if told else "RECORDED",
                "attempts": 0,
                "created_at": utcnow(),
            },
        )
        receipt = await repository.receipt_covering(session, office_id, conversation.id, message)
    assert receipt is not None  # noqa: S101 (inserted or inserted by a concurrent read)
    return ReadOut(
        conversation_id=conversation.id,
        message_id=receipt.message_id,
        status=receipt.status,
        error=receipt.error,
    )


STATUS_RANK = {"QUEUED": 0, "SENT": 1, "DELIVERED": 2, "READ": 3}


async def apply_channel_status(
    session: AsyncSession,
    office_id: str,
    external_id: str,
    status: str,
    error: str | None,
    *,
    error_detail: dict[str, Any] | None = None,
    pricing: dict[str, Any] | None = None,
) -> MessageOut | None:
    """Moves an outbound message forward (SENT → DELIVERED → READ, or FAILED before READ);
    emits ``chat.message.status``. None when the id is unknown or the change goes back
    (a status arriving late never moves a message backwards: READ then DELIVERED stays
    READ). The platform's ``pricing`` is kept whenever it comes, even on a late status."""
    message = await repository.find_by_external_id(session, office_id, external_id)
    if message is None or message.direction != "OUTBOUND":
        return None
    if pricing is not None and message.pricing != pricing:
        message.pricing = pricing
    if message.status == "FAILED":
        return None
    current = STATUS_RANK.get(message.status, 0)
    if status == "FAILED":
        if current >= STATUS_RANK["READ"]:
            return None
    elif STATUS_RANK[status] <= current:
        return None
    return await change_status(session, message, status, error=error, error_detail=error_detail)


@dataclass(frozen=True)
class StatusChange:
    message: Message
    status: str
    integration_id: str
    external_id: str | None = None
    error: str | None = None
    error_detail: dict[str, Any] | None = None


def _apply(change: StatusChange) -> PendingEvent:
    message = change.message
    previous = message.status
    message.status = change.status
    message.status_history = [
        *(message.status_history or []),
        {"status": change.status, "at": isoformat(utcnow())},
    ]
    if change.external_id is not None:
        message.external_id = change.external_id
    if change.error is not None:
        message.error = change.error
    if change.error_detail is not None:
        message.error_detail = change.error_detail
    message.lease_until = None
    message.next_attempt_at = None
    out = MessageOut.model_validate(message)
    return PendingEvent(
        message.office_id,
        events.STATUS,
        events.MessageStatusPayload(**dict(out), previous_status=previous),
        conversation_id=message.conversation_id,
        integration_id=change.integration_id,
    )


async def change_statuses(session: AsyncSession, changes: Sequence[StatusChange]) -> None:
    """Sets outbound messages' statuses (with channel id or error) and emits one
    ``chat.message.status`` per change, carrying ``previousStatus``; one flush for all."""
    if changes:
        await emit_many(session, [_apply(c) for c in changes])


async def change_status(
    session: AsyncSession,
    message: Message,
    status: str,
    *,
    external_id: str | None = None,
    error: str | None = None,
    error_detail: dict[str, Any] | None = None,
) -> MessageOut:
    conversation = await conversations.get_conversation(
        session, message.office_id, message.conversation_id
    )
    change = StatusChange(
        message, status, conversation.integration_id, external_id, error, error_detail
    )
    await change_statuses(session, [change])
    return MessageOut.model_validate(message)


# Reactions, edits and deletions: changes to a stored message (``chat.message.updated``).

DELETED_TEXT = "🚫 Mensagem apagada pelo cliente"


def _set_reaction(message: Message, sender: str, emoji: str, at: datetime) -> bool:
    """At most one reaction per sender; an empty emoji removes the sender's. False when
    nothing changes (a retried notification, the same emoji again)."""
    current = [r for r in (message.reactions or []) if r.get("from") == sender]
    if [r.get("emoji") for r in current] == ([emoji] if emoji else []):
        return False
    kept = [r for r in (message.reactions or []) if r.get("from") != sender]
    if emoji:
        kept.append({"emoji": emoji, "from": sender, "at": isoformat(at)})
    message.reactions = kept
    return True


async def _updated(session: AsyncSession, message: Message) -> MessageOut:
    await session.flush()
    conversation = await conversations.get_conversation(
        session, message.office_id, message.conversation_id
    )
    return await emit_message(session, conversation, events.UPDATED, message)


async def react_from_channel(
    session: AsyncSession, office_id: str, external_id: str, emoji: str, at: datetime
) -> MessageOut | None:
    """The contact reacted to a message (None when the channel's id is not stored here)."""
    message = await repository.find_by_external_id(session, office_id, external_id, lock=True)
    if message is None:
        return None
    if not _set_reaction(message, "CONTACT", emoji, at):
        return MessageOut.model_validate(message)
    return await _updated(session, message)


async def edit_from_channel(
    session: AsyncSession, office_id: str, external_id: str, text: str, at: datetime
) -> MessageOut | None:
    """The contact edited a message: it shows the new text, the first kept."""
    message = await repository.find_by_external_id(session, office_id, external_id, lock=True)
    if message is None or message.direction != "INBOUND":
        return None
    if message.deleted_at is not None or (message.edited_at is not None and message.text == text):
        return MessageOut.model_validate(message)
    if message.original_text is None:
        message.original_text = message.text
    message.text = text
    message.edited_at = at
    return await _updated(session, message)


async def revoke_from_channel(
    session: AsyncSession, office_id: str, external_id: str, at: datetime
) -> MessageOut | None:
    """The contact deleted a message for everyone: it shows so, its text kept for the
    office's records in ``originalText``."""
    message = await repository.find_by_external_id(session, office_id, external_id, lock=True)
    if message is None or message.direction != "INBOUND":
        return None
    if message.deleted_at is not None:
        return MessageOut.model_validate(message)
    if message.original_text is None:
        message.original_text = message.text
    message.text = DELETED_TEXT
    message.deleted_at = at
    return await _updated(session, message)


async def react(
    session: AsyncSession, office_id: str, conversation_id: str, message_id: str, body: ReactionIn
) -> MessageOut:
    """The office reacts to a contact's message: stored on it at once and, on the official
    channel, queued for the platform as a hidden ``REACTION`` send (the service window
    applies as to free text)."""
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    message = await repository.find_in_conversation(
        session, office_id, conversation.id, message_id, lock=True
    )
    if message is None or message.type == "REACTION":
        raise NotFound("Message not found", details=f"No message with id {message_id}")
    if message.direction != "INBOUND":
        raise ValidationFailed.field(
            "path.messageId", "only a contact's message can get a reaction"
        )
    integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
    official = integration.type == inboxes.OFFICIAL
    if official:
        if not message.external_id:
            raise ValidationFailed.field("path.messageId", "the message has no channel id")
        await check_service_window(session, conversation)
    if not _set_reaction(message, "OFFICE", body.emoji, utcnow()):
        return MessageOut.model_validate(message)
    if official:
        await store_message(
            session,
            conversation,
            direction="OUTBOUND",
            type="REACTION",
            text=None,
            media_url=None,
            status="QUEUED",
            payload={"reaction": {"message_id": message.external_id, "emoji": body.emoji}},
            record_time=False,
        )
    return await _updated(session, message)


async def delivery_status(session: AsyncSession, office_id: str, message_id: str) -> str | None:
    """The message's delivery status (QUEUED, SENT, DELIVERED, READ, FAILED), or None when
    the office has no such message."""
    message = await repository.get_message(session, office_id, message_id)
    return None if message is None else message.status
