"""Outbound messages: text, media, choices (interactive buttons and lists) and templates,
checked against the 24-hour service window, marketing consent and authentication reach;
the template fallback when the platform refuses a free-form send outside the window.

Outbound messages are stored ``QUEUED``; a channel's dispatcher (``officehub.channels``)
sends them and moves their status. Template sends need an ``APPROVED`` template of the
conversation's integration.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any, NoReturn

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import consent
from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.inboxes import service as inboxes
from officehub.kit.errors import Conflict, ValidationFailed
from officehub.kit.storage import Storage, is_valid_key
from officehub.kit.storage.base import CONVERSATION_MEDIA_FOLDER, HEADER_MEDIA_FOLDER
from officehub.kit.timeutil import utcnow
from officehub.messages import events, repository
from officehub.messages.models import Message
from officehub.messages.schemas import FallbackTemplate, MessageOut, OutboundIn
from officehub.messages.storing import emit_message, store_message
from officehub.templates import header_media
from officehub.templates import service as templates

if TYPE_CHECKING:
    from officehub.conversations.models import Conversation

SERVICE_WINDOW = timedelta(hours=24)


HEADER_MEDIA_PREFIX = HEADER_MEDIA_FOLDER


async def send(
    session: AsyncSession,
    office_id: str,
    conversation_id: str,
    body: OutboundIn,
    storage: Storage | None = None,
) -> MessageOut:
    """Stores an outbound message ``QUEUED`` for the channel's dispatcher.

    On the official channel free text needs the contact's last inbound message within 24 h
    (409 ``OUTSIDE_SERVICE_WINDOW``), unless it names a ``fallbackTemplate``: then that
    template is stored instead (and, inside the window, kept on the message for a 131047
    failure). A template needs to be APPROVED for the conversation's integration (409
    ``TEMPLATE_NOT_APPROVED``; 400 for a fallback) and its placeholders filled (400).
    """
    _check_shape(body)
    conversation = await conversations.get_conversation(
        session, office_id, conversation_id, for_change=True
    )
    reply = await _reply_target(session, conversation, body.reply_to_message_id)
    if body.media_path is not None:
        return await _send_attachment(session, conversation, body, storage, reply)
    if body.template_name is not None:
        return await send_template(session, conversation, body.template_name, body, storage, reply)
    integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
    payload: dict[str, Any] | None = None
    if integration.type == inboxes.OFFICIAL:
        fallback = None
        if body.fallback_template is not None:
            fallback = await _fallback(session, conversation, body.fallback_template)
        if not await _window_open(session, conversation):
            if fallback is None:
                _window_closed()
            return await _send_fallback(session, conversation, fallback, replaces=None)
        if fallback is not None:
            payload = {"fallbackTemplate": fallback}
    message = await store_message(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEXT",
        text=body.text,
        media_url=None,
        status="QUEUED",
        payload={**(_reply_payload(reply) or {}), **(payload or {})} or None,
        reply_to_id=reply.id if reply else None,
    )
    return await emit_message(session, conversation, events.SENT, message)


async def _reply_target(
    session: AsyncSession, conversation: Conversation, message_id: str | None
) -> Message | None:
    """The message a send replies to: one of this conversation the channel knows (it has
    the channel's id), else 400 naming ``replyToMessageId``."""
    if message_id is None:
        return None
    target = await repository.find_in_conversation(
        session, conversation.office_id, conversation.id, message_id
    )
    if target is None or target.type == "REACTION":
        raise ValidationFailed.field(
            "body.replyToMessageId", "no message with this id in this conversation"
        )
    if not target.external_id:
        raise ValidationFailed.field(
            "body.replyToMessageId", "the message has not reached the channel yet"
        )
    return target


def _check_shape(body: OutboundIn) -> None:
    """One of ``text``, ``templateName``, ``mediaPath``; a fallback template only with
    text, ``caption`` and ``fileName`` only with a file (400 naming the field)."""
    chosen = [
        name
        for name, value in (
            ("text", body.text),
            ("templateName", body.template_name),
            ("mediaPath", body.media_path),
        )
        if value is not None
    ]
    if len(chosen) != 1:
        field = chosen[0] if chosen else "text"
        raise ValidationFailed.field(
            f"body.{field}", "send exactly one of text, templateName or mediaPath"
        )
    if body.fallback_template is not None and body.text is None:
        raise ValidationFailed.field(
            "body.fallbackTemplate", "only a free-form (text) send takes a fallback template"
        )
    for field, value in (("caption", body.caption), ("fileName", body.file_name)):
        if value is not None and body.media_path is None:
            raise ValidationFailed.field(f"body.{field}", "only a media send (mediaPath) takes it")


async def _send_attachment(
    session: AsyncSession,
    conversation: Conversation,
    body: OutboundIn,
    storage: Storage | None,
    reply: Message | None,
) -> MessageOut:
    """A file the office uploaded to this conversation, sent as the kind its bytes were
    read as (image, video, audio, document), ``caption`` under it; on the official channel
    only within the 24-hour window (409 ``OUTSIDE_SERVICE_WINDOW``, as free text)."""
    path = str(body.media_path)
    owned = any(
        path.startswith(f"{folder}/{conversation.office_id}/{conversation.id}/")
        for folder in (CONVERSATION_MEDIA_FOLDER, HEADER_MEDIA_FOLDER)
    )
    kind = header_media.kind_of_key(path) if owned and is_valid_key(path) else None
    if kind is None:
        raise ValidationFailed.field(
            "body.mediaPath",
            "not a file uploaded to this conversation (POST /conversation/{id}/media)",
        )
    if storage is None or not await storage.exists(path):
        raise ValidationFailed.field("body.mediaPath", "no file is stored there")
    integration = await inboxes.get_integration(
        session, conversation.office_id, conversation.integration_id
    )
    if integration.type == inboxes.OFFICIAL:
        await check_service_window(session, conversation)
    media_kind, mime = kind
    if media_kind == "audio" and body.caption is not None:
        raise ValidationFailed.field("body.caption", "an audio file is sent without a caption")
    file_name = body.file_name or path.rsplit("/", 1)[-1]
    caption = body.caption
    message = await store_message(
        session,
        conversation,
        direction="OUTBOUND",
        type="MEDIA",
        text=caption,
        media_url=storage.url(path),
        status="QUEUED",
        payload={
            "mediaPath": path,
            "mediaKind": media_kind,
            "mimeType": mime,
            "fileName": file_name,
            **(_reply_payload(reply) or {}),
        },
        content={
            "kind": "media",
            "mediaKind": media_kind,
            "mimeType": mime,
            "fileName": file_name,
            "caption": caption,
        },
        reply_to_id=reply.id if reply else None,
    )
    return await emit_message(session, conversation, events.SENT, message)


def _reply_payload(reply: Message | None) -> dict[str, Any] | None:
    return {"replyToExternalId": reply.external_id} if reply is not None else None


WINDOW_CLOSED_CODE = 131047
"""The platform's error for a free-form send outside the 24-hour window (re-engagement)."""


async def _fallback(
    session: AsyncSession, conversation: Conversation, wanted: FallbackTemplate
) -> dict[str, Any]:
    """The fallback template as the send will carry it; 400 naming ``fallbackTemplate``'s
    field when it is not an APPROVED template of the integration or does not fit."""
    try:
        template = await templates.approved_template(
            session,
            conversation.office_id,
            conversation.integration_id,
            wanted.name,
            wanted.language,
        )
    except Conflict as exc:
        raise ValidationFailed.field("body.fallbackTemplate.name", exc.details) from exc
    header = templates.header_format(template.components)
    if header in templates.MEDIA_HEADERS:
        raise ValidationFailed.field(
            "body.fallbackTemplate.name",
            f"template {template.name!r} has a media header: a fallback cannot carry media",
        )
    variables = wanted.variables or []
    expected = templates.placeholders(template.components, "BODY")
    if len(variables) != expected:
        raise ValidationFailed.field(
            "body.fallbackTemplate.variables",
            f"template {template.name!r} has {expected} placeholder(s); {len(variables)} sent",
        )
    return {
        "name": template.name,
        "language": template.language,
        "variables": variables,
        "headerFormat": header,
    }


async def _send_fallback(
    session: AsyncSession,
    conversation: Conversation,
    fallback: dict[str, Any],
    *,
    replaces: str | None,
) -> MessageOut:
    """Stores the fallback template ``QUEUED``; ``replaces`` names the free-form message the
    platform failed with 131047 (None: the window was closed at the send)."""
    message = await store_message(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEMPLATE",
        text=None,
        media_url=None,
        status="QUEUED",
        template_name=str(fallback["name"]),
        payload={
            "language": fallback["language"],
            "variables": list(fallback["variables"]),
            "headerFormat": fallback["headerFormat"],
            "headerMediaPath": None,
            "fallbackFor": replaces,
        },
    )
    return await emit_message(session, conversation, events.SENT, message)


async def fall_back(session: AsyncSession, message: Message) -> MessageOut | None:
    """After the platform failed ``message`` with 131047: its fallback template goes out,
    once (the message's ``fallbackMessageId`` records it; callers hold the message's row,
    under the dispatcher's claim or the integration's notification lock)."""
    payload = dict(message.payload or {})
    fallback = payload.get("fallbackTemplate")
    if not isinstance(fallback, dict) or payload.get("fallbackMessageId"):
        return None
    conversation = await conversations.get_conversation(
        session, message.office_id, message.conversation_id
    )
    sent = await _send_fallback(session, conversation, fallback, replaces=message.id)
    message.payload = {**payload, "fallbackMessageId": sent.id}
    await session.flush()
    return sent


async def fall_back_by_external_id(
    session: AsyncSession, office_id: str, external_id: str
) -> MessageOut | None:
    """``fall_back`` for a message the platform reported failed with 131047."""
    message = await repository.find_by_external_id(session, office_id, external_id)
    if message is None or message.direction != "OUTBOUND" or message.status != "FAILED":
        return None
    return await fall_back(session, message)


async def send_media(
    session: AsyncSession, office_id: str, conversation_id: str, media_url: str
) -> MessageOut:
    """Stores an outbound media message ``QUEUED`` (a flow's ``media`` step); the service
    window applies as to free text."""
    conversation = await conversations.get_conversation(
        session, office_id, conversation_id, for_change=True
    )
    integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
    if integration.type == inboxes.OFFICIAL:
        await check_service_window(session, conversation)
    message = await store_message(
        session,
        conversation,
        direction="OUTBOUND",
        type="MEDIA",
        text=None,
        media_url=media_url,
        status="QUEUED",
    )
    return await emit_message(session, conversation, events.SENT, message)


BUTTON_TITLE_MAX = 20


ROW_TITLE_MAX = 24


ROW_DESCRIPTION_MAX = 72


BUTTONS_MAX = 3


ROWS_MAX = 10


INTERACTIVE_BODY_MAX = 1024


LIST_BUTTON = "Ver opções"


CHOOSE = "Escolha uma opção"


def _clip(text: str, size: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 1].rstrip() + "…"


def interactive_choice(prompt: str, options: Sequence[tuple[str, str]]) -> dict[str, Any] | None:
    """The Cloud API's ``interactive`` object for a choice among ``options`` ((reply id,
    title) pairs): reply buttons for up to 3, a list for up to 10; None beyond 10 (the
    numbered text is sent instead). Titles are cut to the platform's sizes with "…"; a list
    row keeps the whole title in its description when cut."""
    if not options or len(options) > ROWS_MAX:
        return None
    body = {"text": _clip(prompt, INTERACTIVE_BODY_MAX) if prompt.strip() else CHOOSE}
    if len(options) <= BUTTONS_MAX:
        buttons = [
            {"type": "reply", "reply": {"id": ident, "title": _clip(title, BUTTON_TITLE_MAX)}}
            for ident, title in options
        ]
        return {"type": "button", "body": body, "action": {"buttons": buttons}}
    rows: list[dict[str, str]] = []
    for ident, title in options:
        row = {"id": ident, "title": _clip(title, ROW_TITLE_MAX)}
        if row["title"] != " ".join(title.split()):
            row["description"] = _clip(title, ROW_DESCRIPTION_MAX)
        rows.append(row)
    return {
        "type": "list",
        "body": body,
        "action": {"button": LIST_BUTTON, "sections": [{"title": CHOOSE[:24], "rows": rows}]},
    }


async def send_choice(
    session: AsyncSession,
    office_id: str,
    conversation_id: str,
    text: str,
    prompt: str,
    options: Sequence[tuple[str, str]],
) -> MessageOut:
    """A flow's question: stored as free text (what the console and the other channels
    show); on the official channel it goes out as reply buttons or a list
    (``interactive_choice``). The service window applies as to free text."""
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
    payload: dict[str, Any] | None = None
    if integration.type == inboxes.OFFICIAL:
        await check_service_window(session, conversation)
        interactive = interactive_choice(prompt, options)
        if interactive is not None:
            payload = {"interactive": interactive}
    message = await store_message(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEXT",
        text=text[:4096],
        media_url=None,
        status="QUEUED",
        payload=payload,
    )
    return await emit_message(session, conversation, events.SENT, message)


async def _window_open(session: AsyncSession, conversation: Conversation) -> bool:
    last = await repository.last_inbound_at(session, conversation.office_id, conversation.id)
    return last is not None and utcnow() - last <= SERVICE_WINDOW


async def check_service_window(session: AsyncSession, conversation: Conversation) -> None:
    if not await _window_open(session, conversation):
        _window_closed()


def _window_closed() -> NoReturn:
    raise Conflict(
        "Outside the customer-service window",
        details=(
            "Free-form messages may be sent only within 24 hours of the contact's last "
            "message; send an approved template instead (or name a fallbackTemplate)"
        ),
        code="OUTSIDE_SERVICE_WINDOW",
    )


async def send_template(
    session: AsyncSession,
    conversation: Conversation,
    template_name: str,
    body: OutboundIn,
    storage: Storage | None,
    reply: Message | None = None,
) -> MessageOut:
    template = await templates.approved_template(
        session,
        conversation.office_id,
        conversation.integration_id,
        template_name,
        body.language,
    )
    await _check_marketing_consent(session, conversation, template.category)
    await _check_authentication_reach(session, conversation, template.category)
    variables = body.variables or []
    wanted = templates.placeholders(template.components, "BODY")
    if len(variables) != wanted:
        raise ValidationFailed.field(
            "body.variables",
            f"template {template.name!r} has {wanted} placeholder(s); {len(variables)} sent",
        )
    header = templates.header_format(template.components)
    if header in templates.MEDIA_HEADERS:
        await _check_header_media(conversation, body.header_media_path, storage)
    elif body.header_media_path is not None:
        raise ValidationFailed.field(
            "body.headerMediaPath", f"template {template.name!r} has no media header"
        )
    message = await store_message(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEMPLATE",
        text=None,
        media_url=None,
        status="QUEUED",
        template_name=template.name,
        payload={
            "language": template.language,
            "variables": variables,
            "headerFormat": header,
            "headerMediaPath": body.header_media_path,
            **(_reply_payload(reply) or {}),
        },
        reply_to_id=reply.id if reply else None,
    )
    return await emit_message(session, conversation, events.SENT, message)


async def _check_marketing_consent(
    session: AsyncSession, conversation: Conversation, category: str
) -> None:
    """A MARKETING template is not sent to a client whose current marketing consent is
    withdrawn (an opt-out keyword, WhatsApp's marketing preference, a consent record): 409
    ``CONTACT_OPTED_OUT``, nothing stored; utility and authentication templates still go."""
    if category.upper() != "MARKETING":
        return
    person_id = conversation.person_id
    if await consent.marketing_withdrawn(session, conversation.office_id, person_id):
        raise Conflict(
            "The contact opted out of marketing messages",
            details=(
                f"Template of category MARKETING not sent: contact {person_id} withdrew "
                "marketing consent (GET /people/{id}/consents); send a utility template, or "
                "wait until they opt in again"
            ),
            code="CONTACT_OPTED_OUT",
        )


async def _check_authentication_reach(
    session: AsyncSession, conversation: Conversation, category: str
) -> None:
    """An AUTHENTICATION template needs the client's phone (the platform refuses it to a
    business-scoped user id, error 131062): to a contact known only by its WhatsApp user id
    (a username, no phone) it is refused, 409 ``CONTACT_HAS_NO_PHONE``, nothing stored."""
    if category.upper() != "AUTHENTICATION":
        return
    contact = await contacts.get_contact(session, conversation.office_id, conversation.person_id)
    if contact.phone or contact.whatsapp_id:
        return
    raise Conflict(
        "The contact has no phone number",
        details=(
            f"Template of category AUTHENTICATION not sent: contact {contact.id} is known on "
            "WhatsApp by its user id only (a username), and the platform sends authentication "
            "templates to phone numbers only (its error 131062); send a utility template, or "
            "ask the client for their number"
        ),
        code="CONTACT_HAS_NO_PHONE",
    )


async def _check_header_media(
    conversation: Conversation, path: str | None, storage: Storage | None
) -> None:
    if path is None:
        raise ValidationFailed.field(
            "body.headerMediaPath", "the template's header needs media: upload it first"
        )
    prefix = f"{HEADER_MEDIA_PREFIX}/{conversation.office_id}/{conversation.id}/"
    if not path.startswith(prefix) or not is_valid_key(path):
        raise ValidationFailed.field(
            "body.headerMediaPath", "not a header media upload of this conversation"
        )
    if storage is not None and not await storage.exists(path):
        raise ValidationFailed.field("body.headerMediaPath", "no file is stored there")
