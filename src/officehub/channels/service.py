"""What the official channel's webhook does with a verified notification.

Every notification of an integration is handled under a lock on its row, so a sender's
first messages make one contact and one conversation, and a retried message id is seen
as stored (the unique index on the message's external id holds the rule regardless).
Media is only recorded here; the ``download_media`` queue job fetches it.

Nothing signed is refused: the body is walked leniently (``entry`` → ``changes`` →
``value``) and each message and status is read and stored on its own, in its own
savepoint. A message that cannot be read is kept as ``UNSUPPORTED`` with the platform's
type and errors; what cannot even be attributed to a sender is logged (kinds and counts,
never phones, names or text) and dropped.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels import account, referral
from officehub.channels.platform_status import status_error, status_pricing
from officehub.channels.schemas import (
    Echo,
    Media,
    PlatformError,
    PlatformMessage,
    SenderContact,
    Status,
)
from officehub.contacts import whatsapp_identity as identity
from officehub.contacts.normalize import digits
from officehub.contacts.whatsapp_identity import WhatsAppUser, user_id_or_none
from officehub.conversations import service as conversations
from officehub.conversations.schemas import ConversationIn
from officehub.crm import service as crm
from officehub.inboxes import service as inboxes
from officehub.kit.timeutil import utcnow
from officehub.messages import inbound as inbound_messages
from officehub.messages import outbound as outbound_messages
from officehub.messages import statuses as message_statuses

if TYPE_CHECKING:
    from officehub.contacts.models import Contact
    from officehub.inboxes.models import Integration

logger = logging.getLogger("officehub.channels")

MEDIA_KINDS = ("image", "audio", "video", "document", "sticker")
NUMBER_CHANGES = ("customer_changed_number", "user_changed_number", "user_changed_user_id")
_STATUSES = {"sent": "SENT", "delivered": "DELIVERED", "read": "READ", "failed": "FAILED"}
TEXT_MAX = 4096


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


async def receive_notification(session: AsyncSession, integration: Integration, body: Any) -> int:
    """Stores the notification's messages and applies its statuses; answers how many
    messages were new. Any JSON is taken; parts of the wrong shape are logged and skipped."""
    await inboxes.lock_integration(session, integration.office_id, integration.id)
    if not isinstance(body, dict) or not isinstance(body.get("entry"), list):
        logger.warning(
            "notification of integration %s is not of the platform's shape (%s); nothing stored",
            integration.id,
            type(body).__name__,
        )
        return 0
    stored = 0
    for entry in body["entry"]:
        for change in _list(_dict(entry).get("changes")):
            change = _dict(change)
            value = _dict(change.get("value"))
            if not _ours(integration, value):
                logger.warning(
                    "%s notification for integration %s names another phone number id; "
                    "nothing stored",
                    str(change.get("field") or "?")[:64],
                    integration.id,
                )
                continue
            if change.get("field") == "user_id_update":
                await _apply_user_id_updates(session, integration, value)
                continue
            if change.get("field") == "smb_message_echoes":
                for raw in _list(value.get("message_echoes")):
                    stored += await _receive_echo(session, integration, raw)
                continue
            if change.get("field") == "history":
                await _import_history(session, integration, value)
                continue
            if change.get("field") == "smb_app_state_sync":
                await _sync_app_contacts(session, integration, value)
                continue
            if change.get("field") != "messages":
                await _apply_account_change(session, integration, change)
                continue
            senders = _senders(value.get("contacts"))
            for raw in _list(value.get("messages")):
                stored += await _receive_one(session, integration, raw, senders)
            for raw in _list(value.get("statuses")):
                await _apply_one(session, integration, raw)
    return stored


def _ours(integration: Integration, value: dict[str, Any]) -> bool:
    """Whether a change is this integration's: a ``metadata.phone_number_id`` naming
    another number is not (offices sharing an app secret would file each other's clients);
    a change without one (account changes) is."""
    named = _dict(value.get("metadata")).get("phone_number_id")
    if named is None:
        return True
    return str(named) == str((integration.whatsapp or {}).get("phoneNumberId", ""))


async def _receive_echo(session: AsyncSession, integration: Integration, raw: Any) -> int:
    """A message the office typed in the WhatsApp Business app (coexistence): stored as an
    outbound message of the client's conversation (opened if need be), in its own
    savepoint; one that cannot be read or attributed to a client is logged and dropped."""
    try:
        echo = Echo.model_validate(raw)
    except ValidationError:
        logger.warning("unreadable message echo for integration %s skipped", integration.id)
        return 0
    client = WhatsAppUser(echo.to, echo.to_user_id)
    if client.wa_id is None and client.user_id is None:
        logger.warning("message echo for integration %s names no client; skipped", integration.id)
        return 0
    try:
        async with session.begin_nested():
            if await inbound_messages.external_id_known(session, integration.office_id, echo.id):
                return 0
            office_id = integration.office_id
            contact = await identity.find_or_create(
                session, office_id, client, integration.inbox_id
            )
            opened, _created = await conversations.open_conversation(
                session,
                office_id,
                ConversationIn(
                    person_id=contact.id,
                    inbox_id=integration.inbox_id,
                    integration_id=integration.id,
                ),
            )
            conversation = await conversations.get_conversation(session, office_id, opened.id)
            kind = read_message(echo)
            out = await inbound_messages.store_echo(
                session,
                conversation,
                external_id=echo.id,
                type=kind.type,
                text=_clean(kind.text),
                media_external_id=kind.media_id,
                payload=_scrub(kind.payload) or None,
                content=_scrub(kind.content),
            )
            return 0 if out is None else 1
    except Exception as exc:
        logger.error(
            "message echo for integration %s could not be stored: %s",
            integration.id,
            type(exc).__name__,
        )
        return 0


_HISTORY_STATUSES = {"READ": "READ", "PLAYED": "READ", "DELIVERED": "DELIVERED", "ERROR": "FAILED"}


async def _import_history(
    session: AsyncSession, integration: Integration, value: dict[str, Any]
) -> None:
    """``history``: the past conversations of an office that kept the WhatsApp Business app
    (coexistence), in chunks of threads, one thread per client (its ``id`` the client's
    phone). Each message is stored once (its id), at its own time, quietly: no flow, rule,
    SLA or routing starts (``inbound_messages.import_history``); ``from`` the office's own number is
    outbound. A chunk with ``errors`` (the owner declined to share) is logged."""
    business = digits(str(_dict(value.get("metadata")).get("display_phone_number") or ""))
    imported = skipped = 0
    for chunk in _list(value.get("history")):
        chunk = _dict(chunk)
        if chunk.get("errors"):
            codes = [_dict(e).get("code") for e in _list(chunk.get("errors"))][:5]
            logger.info("history of integration %s not shared (codes: %s)", integration.id, codes)
        for thread in _list(chunk.get("threads")):
            thread = _dict(thread)
            for raw in _list(thread.get("messages")):
                try:
                    async with session.begin_nested():
                        done = await _import_one(session, integration, business, thread, raw)
                except Exception as exc:
                    logger.error(
                        "history message for integration %s could not be stored: %s",
                        integration.id,
                        type(exc).__name__,
                    )
                    done = False
                imported, skipped = imported + done, skipped + (not done)
    logger.info(
        "history for integration %s: %d messages imported, %d skipped",
        integration.id,
        imported,
        skipped,
    )


async def _import_one(
    session: AsyncSession,
    integration: Integration,
    business: str,
    thread: dict[str, Any],
    raw: Any,
) -> bool:
    try:
        message = PlatformMessage.model_validate(raw)
    except ValidationError:
        return False
    outbound = bool(business) and message.sender is not None and digits(message.sender) == business
    thread_id = thread.get("id") if isinstance(thread.get("id"), str) else None
    client = WhatsAppUser(
        thread_id if thread_id and digits(thread_id) else (None if outbound else message.sender),
        user_id_or_none(thread.get("user_id")) or (None if outbound else message.from_user_id),
    )
    if client.wa_id is None and client.user_id is None:
        return False
    office_id = integration.office_id
    if await inbound_messages.external_id_known(session, office_id, message.id):
        return False
    contact = await identity.find_or_create(session, office_id, client, integration.inbox_id)
    conversation = await conversations.history_conversation(
        session, office_id, contact.id, integration.inbox_id, integration.id
    )
    state = str(_dict(_dict(raw).get("history_context")).get("status") or "").upper()
    kind = read_message(message)
    return await inbound_messages.import_history(
        session,
        conversation,
        external_id=message.id,
        direction="OUTBOUND" if outbound else "INBOUND",
        type=kind.type,
        text=_clean(kind.text),
        at=_at(message),
        status=_HISTORY_STATUSES.get(state, "SENT") if outbound else "RECEIVED",
        media_external_id=kind.media_id,
        payload=_scrub(kind.payload) or None,
        content=_scrub(kind.content),
    )


async def _sync_app_contacts(
    session: AsyncSession, integration: Integration, value: dict[str, Any]
) -> None:
    """``smb_app_state_sync``: the contacts of the office's WhatsApp Business app. An added
    one is found by phone, else made (``contact.created``), its name as the app has it; a
    contact the office has keeps its own name. A removal in the app deletes nothing here
    (the office's records are its own). Each in its own savepoint."""
    added = removed = 0
    for item in _list(value.get("state_sync")):
        item = _dict(item)
        card = _dict(item.get("contact"))
        phone = card.get("phone_number")
        if item.get("type") != "contact" or not isinstance(phone, str) or not digits(phone):
            continue
        if item.get("action") == "remove":
            removed += 1
            continue
        name = card.get("full_name") or card.get("first_name")
        user = WhatsAppUser(digits(phone)[:32], None, name if isinstance(name, str) else None)
        try:
            async with session.begin_nested():
                await identity.find_or_create(
                    session, integration.office_id, user, integration.inbox_id
                )
            added += 1
        except Exception as exc:
            logger.error(
                "app contact for integration %s could not be kept: %s",
                integration.id,
                type(exc).__name__,
            )
    logger.info(
        "app contacts for integration %s: %d added or known, %d removals ignored",
        integration.id,
        added,
        removed,
    )


async def _apply_account_change(
    session: AsyncSession, integration: Integration, change: dict[str, Any]
) -> None:
    """A change of another field than ``messages`` (templates, quality, marketing
    preferences...), applied in its own savepoint: one that fails is logged, never refused."""
    field = str(change.get("field") or "?")[:64]
    try:
        async with session.begin_nested():
            await account.apply_change(session, integration, field, _dict(change.get("value")))
    except Exception as exc:
        logger.error(
            "%s notification for integration %s could not be applied: %s",
            field,
            integration.id,
            type(exc).__name__,
        )


def _senders(raw: Any) -> list[SenderContact]:
    found = []
    for item in _list(raw):
        try:
            contact = SenderContact.model_validate(item)
        except ValidationError:
            continue
        if contact.wa_id or contact.user_id:
            found.append(contact)
    return found


def sender_of(message: PlatformMessage, senders: list[SenderContact]) -> WhatsAppUser:
    """Who sent the message: its own ``from``/``from_user_id``, completed by the
    ``contacts`` entry naming either (the other id, the profile name and username)."""
    entry = next(
        (
            c
            for c in senders
            if (message.sender and c.wa_id == message.sender)
            or (message.from_user_id and c.user_id == message.from_user_id)
        ),
        None,
    )
    profile = entry.profile if entry is not None and entry.profile is not None else None
    return WhatsAppUser(
        wa_id=message.sender or (entry.wa_id if entry else None),
        user_id=message.from_user_id or (entry.user_id if entry else None),
        name=profile.name if profile else None,
        username=profile.username if profile else None,
    )


async def _receive_one(
    session: AsyncSession, integration: Integration, raw: Any, senders: list[SenderContact]
) -> int:
    platform_type = str(_dict(raw).get("type") or "?")[:32]
    try:
        message = PlatformMessage.model_validate(raw)
    except ValidationError as exc:
        fields = sorted({".".join(str(p) for p in e["loc"]) for e in exc.errors()})[:5]
        logger.warning(
            "unreadable %s message for integration %s (fields: %s)",
            platform_type,
            integration.id,
            ", ".join(fields),
        )
        kept = _unreadable(raw, platform_type, fields)
        if kept is None:
            return 0
        message = kept
    try:
        async with session.begin_nested():
            return await _receive(session, integration, message, sender_of(message, senders))
    except Exception as exc:
        # Kept off the answer: the platform would retry a message that fails the same way
        # for days, then disable the webhook. The kind and error class only: no content.
        logger.error(
            "%s message for integration %s could not be stored: %s",
            message.type[:32],
            integration.id,
            type(exc).__name__,
        )
        return 0


def _unreadable(raw: Any, platform_type: str, fields: list[str]) -> PlatformMessage | None:
    """A message whose parts do not read, kept as ``unsupported`` when its sender and id
    do; else None."""
    data = _dict(raw)
    try:
        return PlatformMessage.model_validate(
            {
                "from": data.get("from"),
                "from_user_id": data.get("from_user_id"),
                "id": data.get("id"),
                "timestamp": data.get("timestamp")
                if isinstance(data.get("timestamp"), str)
                else None,
                "type": platform_type,
                "errors": [
                    {
                        "title": f"unreadable {platform_type} message",
                        "message": f"fields not as documented: {', '.join(fields)}",
                    }
                ],
            }
        )
    except ValidationError:
        return None


def _at(message: PlatformMessage) -> datetime:
    try:
        return datetime.fromtimestamp(int(message.timestamp or ""), UTC)
    except (ValueError, OverflowError, OSError):
        return utcnow()


def _clean(text: str | None) -> str | None:
    return text.replace("\x00", "\ufffd")[:TEXT_MAX] if text else None


def _scrub(value: Any) -> Any:
    """Content without NUL characters (PostgreSQL stores none, in text or JSON)."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {_scrub(k): _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    return value


async def _receive(
    session: AsyncSession, integration: Integration, message: PlatformMessage, sender: WhatsAppUser
) -> int:
    office_id = integration.office_id
    if message.type == "reaction" and message.reaction is not None:
        reaction = message.reaction
        reacted = await message_statuses.react_from_channel(
            session, office_id, reaction.message_id, reaction.emoji or "", _at(message)
        )
        if reacted is None:
            logger.info("reaction to a message not stored here (integration %s)", integration.id)
        return 0
    if message.type == "edit" and message.edit is not None:
        text = _edited_text(message.edit.message)
        if text is not None:
            changed = await message_statuses.edit_from_channel(
                session, office_id, message.edit.original_message_id, text, _at(message)
            )
            if changed is not None:
                return 0
    if message.type == "revoke" and message.revoke is not None:
        await message_statuses.revoke_from_channel(
            session, office_id, message.revoke.original_message_id, _at(message)
        )
        return 0
    if await inbound_messages.external_id_known(session, office_id, message.id):
        return 0
    contact = await _apply_number_change(session, integration, message, sender)
    if contact is None:
        contact = await identity.find_or_create(session, office_id, sender, integration.inbox_id)
    opened, _created = await conversations.open_conversation(
        session,
        office_id,
        ConversationIn(
            person_id=contact.id, inbox_id=integration.inbox_id, integration_id=integration.id
        ),
    )
    conversation = await conversations.get_conversation(session, office_id, opened.id)
    kind = read_message(message)
    context = message.context
    if message.referral is not None:
        kind.payload = {
            **(kind.payload or {}),
            "referral": referral.referral_payload(message.referral),
        }
    out = await inbound_messages.receive_from_channel(
        session,
        conversation,
        external_id=message.id,
        type=kind.type,
        text=_clean(kind.text),
        media_external_id=kind.media_id,
        payload=_scrub(kind.payload) or None,
        content=_scrub(kind.content),
        reply_to_external_id=context.id if context else None,
        forwarded=bool(context and (context.forwarded or context.frequently_forwarded)),
    )
    if kind.type == "UNSUPPORTED":
        codes = [e.get("code") for e in _list(_dict(kind.content).get("errors"))]
        logger.info(
            "unsupported %s message kept for integration %s (codes: %s)",
            message.type[:32],
            integration.id,
            codes,
        )
    if out is not None and message.referral is not None:
        origin = referral.lead_origin(message, message.referral, out.text)
        await crm.record_ad_origin(session, office_id, conversation.id, origin)
    return 0 if out is None else 1


def _edited_text(edited: dict[str, Any] | None) -> str | None:
    data = _dict(edited)
    body = _dict(data.get("text")).get("body")
    if isinstance(body, str):
        return _clean(body)
    for kind in MEDIA_KINDS:
        caption = _dict(data.get(kind)).get("caption")
        if isinstance(caption, str):
            return _clean(caption)
    return None


class Read:
    """How an inbound message is stored: type, readable text, media id, typed content."""

    def __init__(
        self,
        type: str,
        text: str | None,
        content: dict[str, Any] | None = None,
        media_id: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> None:
        self.type = type
        self.text = text
        self.content = content
        self.media_id = media_id
        self.payload = payload or {}


def map_url(latitude: float, longitude: float) -> str:
    return f"https://www.google.com/maps?q={latitude},{longitude}"


def read_message(message: PlatformMessage) -> Read:
    """The stored form of each kind the Cloud API documents; anything else (or a kind
    without its part) is ``UNSUPPORTED`` with the platform's type and errors."""
    kind = message.type
    if kind == "text" and message.text is not None:
        return Read("TEXT", message.text.body)
    if kind == "edit" and message.edit is not None:
        # An edit of a message not stored here: kept as a message of its own.
        return Read("TEXT", _edited_text(message.edit.message) or "[mensagem editada]")
    if kind in MEDIA_KINDS and getattr(message, kind) is not None:
        return _media(kind, getattr(message, kind))
    if kind == "location" and message.location is not None:
        place = message.location
        link = map_url(place.latitude, place.longitude)
        label = " — ".join(p for p in (place.name, place.address) if p)
        return Read(
            "LOCATION",
            f"📍 {label}\n{link}" if label else f"📍 {link}",
            {
                "kind": "location",
                "name": place.name,
                "address": place.address,
                "latitude": place.latitude,
                "longitude": place.longitude,
                "url": place.url,
                "mapUrl": link,
            },
        )
    if kind == "contacts" and message.contacts:
        return _contacts(message)
    if kind == "button" and message.button is not None:
        button = message.button
        return Read(
            "TEXT",
            button.text,
            {"kind": "reply", "replyType": "button", "id": button.payload, "title": button.text},
            payload={"replyId": button.payload or ""},
        )
    if kind == "interactive" and message.interactive is not None:
        read = _interactive(message)
        if read is not None:
            return read
    if kind == "order" and message.order is not None:
        return _order(message)
    if kind == "system" and message.system is not None:
        system = message.system
        return Read(
            "SYSTEM",
            system.body or "Aviso do WhatsApp",
            {
                "kind": "system",
                "systemType": system.type,
                "body": system.body,
                "newWaId": system.new_wa_id or system.wa_id,
                "newUserId": system.user_id or system.new_user_id,
            },
        )
    return _unsupported(message)


def _media(kind: str, media: Media) -> Read:
    payload = {"mediaKind": kind}
    if media.mime_type:
        payload["mimeType"] = media.mime_type
    if media.filename:
        payload["fileName"] = media.filename
    content: dict[str, Any] = {
        "kind": "media",
        "mediaKind": kind,
        "mimeType": media.mime_type,
        "fileName": media.filename,
        "caption": media.caption,
    }
    if kind == "sticker":
        content["animated"] = bool(media.animated)
    if kind == "audio":
        content["voice"] = bool(media.voice)
    return Read("MEDIA", media.caption, content, media.id, payload)


def _contacts(message: PlatformMessage) -> Read:
    shared = []
    lines = []
    for card in message.contacts or []:
        name = None
        if card.name is not None:
            name = card.name.formatted_name or " ".join(
                p for p in (card.name.first_name, card.name.last_name) if p
            )
        phones = [{"phone": p.phone, "waId": p.wa_id, "type": p.type} for p in card.phones]
        emails = [{"email": e.email, "type": e.type} for e in card.emails]
        shared.append(
            {
                "name": name or None,
                "phones": phones,
                "emails": emails,
                "organization": card.org.company if card.org else None,
            }
        )
        details = [str(p.phone or p.wa_id) for p in card.phones if p.phone or p.wa_id]
        details += [e.email for e in card.emails]
        lines.append(f"👤 {name or 'Contato'}" + (f": {', '.join(details)}" if details else ""))
    return Read("CONTACTS", "\n".join(lines), {"kind": "contacts", "contacts": shared})


def _interactive(message: PlatformMessage) -> Read | None:
    interactive = message.interactive
    assert interactive is not None  # noqa: S101 (checked by the caller)
    reply = interactive.button_reply or interactive.list_reply
    if reply is not None:
        return Read(
            "TEXT",
            reply.title,
            {
                "kind": "reply",
                "replyType": interactive.type,
                "id": reply.id,
                "title": reply.title,
                "description": reply.description,
            },
            payload={"replyId": reply.id or ""},
        )
    flow = interactive.nfm_reply
    if flow is not None:
        response: Any = flow.response_json
        try:
            response = json.loads(flow.response_json or "null")
        except ValueError:
            pass
        answers = (
            "; ".join(f"{k}: {v}" for k, v in response.items() if k != "flow_token")
            if isinstance(response, dict)
            else ""
        )
        text = f"📋 {flow.body or 'Formulário respondido'}" + (f"\n{answers}" if answers else "")
        return Read(
            "INTERACTIVE",
            text,
            {"kind": "flow", "name": flow.name, "body": flow.body, "response": response},
        )
    return None


def _order(message: PlatformMessage) -> Read:
    order = message.order
    assert order is not None  # noqa: S101 (checked by the caller)
    items = [
        {
            "productRetailerId": i.product_retailer_id,
            "quantity": i.quantity,
            "itemPrice": i.item_price,
            "currency": i.currency,
        }
        for i in order.product_items
    ]
    total = sum((i.quantity or 0) * (i.item_price or 0) for i in order.product_items)
    currencies = {i.currency for i in order.product_items if i.currency}
    currency = currencies.pop() if len(currencies) == 1 else None
    text = f"🛒 Pedido: {len(items)} item(ns), total {total:.2f} {currency or ''}".rstrip()
    if order.text:
        text += f"\n{order.text}"
    return Read(
        "ORDER",
        text,
        {
            "kind": "order",
            "catalogId": order.catalog_id,
            "note": order.text,
            "items": items,
            "total": total,
            "currency": currency,
        },
    )


def _error(error: PlatformError) -> dict[str, Any]:
    details = error.error_data.details if error.error_data is not None else None
    return {
        "code": error.code,
        "title": error.title,
        "message": error.message,
        "details": str(details)[:500] if details is not None else None,
    }


def _unsupported(message: PlatformMessage) -> Read:
    errors = [_error(e) for e in message.errors]
    titled = next((e["title"] for e in errors if e["title"]), None)
    label = message.type if message.type not in ("unsupported", "unknown") else "desconhecido"
    text = f"[Mensagem não suportada ({label[:32]})" + (f": {titled}" if titled else "") + "]"
    return Read(
        "UNSUPPORTED",
        text,
        {"kind": "unsupported", "platformType": message.type[:32], "errors": errors},
    )


async def _apply_one(session: AsyncSession, integration: Integration, raw: Any) -> None:
    try:
        status = Status.model_validate(raw)
    except ValidationError:
        logger.warning("unreadable status for integration %s skipped", integration.id)
        return
    try:
        async with session.begin_nested():
            await _apply_status(session, integration, status)
    except Exception as exc:
        logger.error(
            "status for integration %s could not be applied: %s",
            integration.id,
            type(exc).__name__,
        )


async def _apply_number_change(
    session: AsyncSession, integration: Integration, message: PlatformMessage, sender: WhatsAppUser
) -> Contact | None:
    """A ``system`` message ``user_changed_number`` (``customer_changed_number`` in older
    versions): the contact's phone and WhatsApp address follow the client to the new number
    (and its new BSUID, when given); ``user_changed_user_id``: the contact takes the new
    BSUID. Done before the message is stored; answers the contact the message belongs to,
    or None when this is no change of a known contact."""
    change = message.system
    if message.type != "system" or change is None or change.type not in NUMBER_CHANGES:
        return None
    new_wa_id = change.wa_id or change.new_wa_id
    new_user_id = change.user_id or change.new_user_id
    if change.type == "user_changed_user_id":
        new_wa_id = None
    if not (new_wa_id and digits(new_wa_id)) and not new_user_id:
        return None
    return await identity.change_identity(
        session,
        integration.office_id,
        WhatsAppUser(sender.wa_id, sender.user_id),
        new_wa_id=new_wa_id if new_wa_id and digits(new_wa_id) else None,
        new_user_id=new_user_id,
    )


async def _apply_user_id_updates(
    session: AsyncSession, integration: Integration, value: dict[str, Any]
) -> None:
    """The ``user_id_update`` notification: a client's BSUID changed (the platform makes a
    new one when they change number). Each item, in its own savepoint, moves the contact
    known by the previous BSUID (else by ``wa_id``) to the current one."""
    for item in _list(value.get("user_id_update")):
        item = _dict(item)
        ids = _dict(item.get("user_id"))
        previous = user_id_or_none(ids.get("previous") or item.get("previous_user_id"))
        current = user_id_or_none(ids.get("current") or item.get("new_user_id"))
        wa_id = item.get("wa_id") if isinstance(item.get("wa_id"), str) else None
        if current is None or (previous is None and not wa_id):
            logger.warning("unreadable user_id_update for integration %s skipped", integration.id)
            continue
        try:
            async with session.begin_nested():
                moved = await identity.change_identity(
                    session,
                    integration.office_id,
                    WhatsAppUser(wa_id if wa_id and digits(wa_id) else None, previous),
                    new_user_id=current,
                )
        except Exception as exc:
            logger.error(
                "user_id_update for integration %s could not be applied: %s",
                integration.id,
                type(exc).__name__,
            )
            continue
        if moved is None:
            logger.info("user_id_update for integration %s: no such contact", integration.id)


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
    changed = await message_statuses.apply_channel_status(
        session,
        integration.office_id,
        status.id,
        target,
        error,
        error_detail=detail,
        pricing=status_pricing(status),
    )
    if changed is not None and any(
        e.code == outbound_messages.WINDOW_CLOSED_CODE for e in status.errors
    ):
        # under the integration's lock, and only when the message just became FAILED
        await outbound_messages.fall_back_by_external_id(session, integration.office_id, status.id)
    if status.recipient_id and status.recipient_user_id:
        # both ids of the client: a contact known by one learns the other
        await identity.find(
            session,
            integration.office_id,
            WhatsAppUser(status.recipient_id, status.recipient_user_id),
        )
