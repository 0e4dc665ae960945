"""What the official channel's webhook does with a verified notification.

Every notification of an integration is handled under a lock on its row, so a sender's
first messages make one contact and one conversation, and a retried message id is seen
as stored (the unique index on the message's external id holds the rule regardless).
Media is only recorded here; the ``download_media`` queue job fetches it.
"""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels import account, referral
from officehub.channels.platform_status import status_error, status_pricing
from officehub.channels.schemas import Notification, PlatformMessage, Status
from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.conversations.schemas import ConversationIn
from officehub.crm import service as crm
from officehub.inboxes import service as inboxes
from officehub.inboxes.models import Integration
from officehub.messages import service as messages

logger = logging.getLogger("officehub.channels")

MEDIA_KINDS = ("image", "audio", "video", "document", "sticker")
_STATUSES = {"sent": "SENT", "delivered": "DELIVERED", "read": "READ", "failed": "FAILED"}


async def receive_notification(
    session: AsyncSession, integration: Integration, notification: Notification
) -> int:
    """Stores the notification's messages and applies its statuses; answers how many
    messages were new."""
    await inboxes.lock_integration(session, integration.office_id, integration.id)
    stored = 0
    for entry in notification.entry:
        for change in entry.changes:
            if change.field != "messages":
                await account.apply_change(session, integration, change.field, change.value)
                continue
            names = {
                c.wa_id: (c.profile.name if c.profile else None) for c in change.value.contacts
            }
            for message in change.value.messages:
                stored += await _receive(session, integration, message, names.get(message.sender))
            for status in change.value.statuses:
                await _apply_status(session, integration, status)
    return stored


def _content(message: PlatformMessage) -> tuple[str, str | None, str | None, dict[str, str]]:
    """(type, text, platform media id, payload) of an inbound message."""
    if message.type == "text" and message.text is not None:
        return "TEXT", message.text.body, None, {}
    if message.type == "interactive" and message.interactive is not None:
        reply = message.interactive.button_reply or message.interactive.list_reply
        if reply is not None:
            return "TEXT", reply.title, None, {"replyId": reply.id}
    if message.type == "button" and message.button is not None:
        return "TEXT", message.button.text, None, {"replyId": message.button.payload or ""}
    if message.type in MEDIA_KINDS:
        media = getattr(message, message.type)
        if media is not None:
            payload = {"mediaKind": message.type}
            if media.mime_type:
                payload["mimeType"] = media.mime_type
            if media.filename:
                payload["fileName"] = media.filename
            return "MEDIA", media.caption, media.id, payload
    return "TEXT", f"[unsupported message type: {message.type[:32]}]", None, {}


async def _receive(
    session: AsyncSession, integration: Integration, message: PlatformMessage, name: str | None
) -> int:
    office_id = integration.office_id
    if await messages.external_id_known(session, office_id, message.id):
        return 0
    contact = await contacts.find_or_create_by_phone(
        session, office_id, message.sender, name, integration.inbox_id
    )
    opened, _created = await conversations.open_conversation(
        session,
        office_id,
        ConversationIn(
            person_id=contact.id, inbox_id=integration.inbox_id, integration_id=integration.id
        ),
    )
    conversation = await conversations.get_conversation(session, office_id, opened.id)
    type, text, media_id, payload = _content(message)
    kept: dict[str, Any] = dict(payload)
    if message.referral is not None:
        kept["referral"] = referral.referral_payload(message.referral)
    out = await messages.receive_from_channel(
        session,
        conversation,
        external_id=message.id,
        type=type,
        text=text.replace("\x00", "\ufffd")[:4096] if text else None,
        media_external_id=media_id,
        payload=kept or None,
    )
    if out is not None and message.referral is not None:
        origin = referral.lead_origin(message, message.referral, out.text)
        await crm.record_ad_origin(session, office_id, conversation.id, origin)
    return 0 if out is None else 1


async def _apply_status(session: AsyncSession, integration: Integration, status: Status) -> None:
    """A status of one of our sends. An unknown word (``deleted``, ``warning``...) or a
    message we never sent changes nothing; a failure keeps the platform's first error as
    ``errorDetail`` and all of them in ``error``."""
    target = _STATUSES.get(status.status)
    if target is None:
        logger.info("integration %s: status %r ignored", integration.id, status.status[:32])
        return
    error = detail = None
    if target == "FAILED":
        error = (
            "; ".join(f"{e.code}: {e.message or e.title or 'error'}" for e in status.errors)[:2000]
            or "the platform reported a failure"
        )
        detail = status_error(status)
    await messages.apply_channel_status(
        session,
        integration.office_id,
        status.id,
        target,
        error,
        error_detail=detail,
        pricing=status_pricing(status),
    )
