"""Messages of a conversation: inbound (posted by a channel adapter) and outbound text.

Outbound messages are stored ``QUEUED``; a channel's dispatcher (``officehub.channels``)
sends them and moves their status. Template sends need an ``APPROVED`` template of the
conversation's integration.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NoReturn

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import consent
from officehub.contacts import service as contacts
from officehub.contacts import texts as contact_texts
from officehub.conversations import service as conversations
from officehub.conversations.models import Conversation
from officehub.events.catalogue import Event
from officehub.events.service import PendingEvent, emit, emit_many
from officehub.fast_messages import service as fast_messages
from officehub.inboxes import service as inboxes
from officehub.inboxes.business_hours import closed_period_start
from officehub.inboxes.hooks import AwayMessageChecking
from officehub.kit.actor import acting, current_actor
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.ids import new_id
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.storage import Storage, is_valid_key
from officehub.kit.storage.base import HEADER_MEDIA_FOLDER
from officehub.kit.timeutil import as_utc, isoformat, utcnow
from officehub.messages import events, repository
from officehub.messages.models import Message
from officehub.messages.schemas import (
    FallbackTemplate,
    InboundIn,
    MessageOut,
    OutboundIn,
    ReactionIn,
    ReadIn,
    ReadOut,
)
from officehub.offices import settings as office_settings
from officehub.templates import service as templates

logger = logging.getLogger("officehub.messages")


async def receive(
    session: AsyncSession, office_id: str, conversation_id: str, body: InboundIn
) -> MessageOut:
    if body.text is None and body.media_url is None:
        raise ValidationFailed.field("body.text", "send text, mediaUrl or both")
    conversation = await conversations.get_conversation(
        session, office_id, conversation_id, for_change=True
    )
    message = await _store(
        session,
        conversation,
        direction="INBOUND",
        type="MEDIA" if body.media_url else "TEXT",
        text=body.text,
        media_url=body.media_url,
        status="RECEIVED",
    )
    out = await _emit(session, conversation, events.RECEIVED, message)
    await _answer_keyword(session, conversation, message)
    await _answer_away(session, conversation, message)
    return out


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
    if (body.text is None) == (body.template_name is None):
        raise ValidationFailed.field("body.text", "send either text or templateName")
    if body.fallback_template is not None and body.template_name is not None:
        raise ValidationFailed.field(
            "body.fallbackTemplate", "only a free-form (text) send takes a fallback template"
        )
    conversation = await conversations.get_conversation(
        session, office_id, conversation_id, for_change=True
    )
    reply = await _reply_target(session, conversation, body.reply_to_message_id)
    if body.template_name is not None:
        return await _send_template(session, conversation, body.template_name, body, storage, reply)
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
    message = await _store(
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
    return await _emit(session, conversation, events.SENT, message)


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
    message = await _store(
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
    return await _emit(session, conversation, events.SENT, message)


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
        await _check_service_window(session, conversation)
    message = await _store(
        session,
        conversation,
        direction="OUTBOUND",
        type="MEDIA",
        text=None,
        media_url=media_url,
        status="QUEUED",
    )
    return await _emit(session, conversation, events.SENT, message)


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
        await _check_service_window(session, conversation)
        interactive = interactive_choice(prompt, options)
        if interactive is not None:
            payload = {"interactive": interactive}
    message = await _store(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEXT",
        text=text[:4096],
        media_url=None,
        status="QUEUED",
        payload=payload,
    )
    return await _emit(session, conversation, events.SENT, message)


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


async def _window_open(session: AsyncSession, conversation: Conversation) -> bool:
    last = await repository.last_inbound_at(session, conversation.office_id, conversation.id)
    return last is not None and utcnow() - last <= SERVICE_WINDOW


async def _check_service_window(session: AsyncSession, conversation: Conversation) -> None:
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


async def _send_template(
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
    message = await _store(
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
    return await _emit(session, conversation, events.SENT, message)


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
            message = await _store(
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
    out = await _emit(session, conversation, events.RECEIVED, message)
    await _answer_keyword(session, conversation, message)
    await _answer_away(session, conversation, message)
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
            message = await _store(
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
    return await _emit(session, conversation, events.SENT, message)


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
            message = await _store(
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


async def _answer_keyword(
    session: AsyncSession, conversation: Conversation, message: Message
) -> None:
    """A client's text that is only an opt-out keyword of the office (``SAIR``, ``PARAR``,
    ``STOP`` unless configured; any case, any accents) withdraws their marketing consent
    (a record of source ``keyword``); an opt-in one (``VOLTAR``) gives it back. Only a
    change is recorded and answered, once, with the catalogue's text through the
    conversation's channel (the client just wrote: inside WhatsApp's window). The contact's
    row is locked by the record, so concurrent keywords and consent changes queue."""
    if message.type != "TEXT" or not message.text:
        return
    keywords = await office_settings.keywords(session, conversation.office_id)
    granted = keywords.meaning(message.text)
    if granted is None:
        return
    done = await consent.record(
        session,
        conversation.office_id,
        conversation.person_id,
        purpose=consent.MARKETING,
        granted=granted,
        source=consent.KEYWORD_SOURCE,
        only_if_changed=True,
    )
    if done is None:
        return
    answer = contact_texts.OPTED_IN_ANSWER if granted else contact_texts.OPTED_OUT_ANSWER
    reply = await _store(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEXT",
        text=answer.format(out=keywords.opt_out[0], back=keywords.opt_in[0]),
        media_url=None,
        status="QUEUED",
        automated=True,
    )
    await _emit(session, conversation, events.SENT, reply)


async def _answer_away(session: AsyncSession, conversation: Conversation, message: Message) -> None:
    """Outside the inbox's business hours, a client's first message of a closed period
    gets the inbox's away message, once per conversation per closed period, through the
    conversation's channel (issue 32). The conditional update of the conversation's
    ``away_sent_at`` decides which of concurrent messages it answers."""
    found = await inboxes.business_hours_of(session, conversation.office_id, conversation.inbox_id)
    if found is None:
        return
    hours, away = found
    if not away:
        return
    at = as_utc(message.created_at)
    start = closed_period_start(hours, at)
    if start is None:
        return
    if not await conversations.claim_away_message(session, conversation, start, at):
        return
    if away.get("template_name"):
        await _away_template(session, conversation, away)
        return
    text = await _away_text(session, conversation, away)
    if text is None:
        return
    reply = await _store(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEXT",
        text=text,
        media_url=None,
        status="QUEUED",
        automated=True,
    )
    await _emit(session, conversation, events.SENT, reply)


async def _away_text(
    session: AsyncSession, conversation: Conversation, away: dict[str, Any]
) -> str | None:
    """The away message's text: its own, or its TEXT fast message's as it stands now (None
    when that fast message was deleted or is no longer text: nothing is sent)."""
    if away.get("text"):
        return str(away["text"])
    try:
        fast = await fast_messages.get_fast_message(
            session, conversation.office_id, str(away.get("fast_message_id"))
        )
    except NotFound:
        fast = None
    if fast is None or fast.kind != "TEXT" or not fast.text:
        logger.warning(
            "inbox %s: the away message's fast message is gone or not text; none sent",
            conversation.inbox_id,
        )
        return None
    return fast.text


async def _away_template(
    session: AsyncSession, conversation: Conversation, away: dict[str, Any]
) -> None:
    """The away message as an approved template of the conversation's channel, with no
    variables. A channel with no such template (web chat, another number, a template since
    paused or given placeholders, a marketing template to a client who opted out) gets
    none: the inbound message is stored all the same."""
    body = OutboundIn(template_name=str(away["template_name"]), language=away.get("language"))
    try:
        await _send_template(session, conversation, body.template_name or "", body, None)
    except (Conflict, ValidationFailed) as exc:
        logger.warning(
            "inbox %s: the away message's template was not sent (%s)",
            conversation.inbox_id,
            exc.code,
        )


async def check_away_message(payload: AwayMessageChecking) -> None:
    """An inbox's away message may name only a TEXT fast message of the office, or a
    template approved on one of the office's WhatsApp numbers (400 naming the field)."""
    session, office_id = payload.session, payload.office_id
    if payload.fast_message_id is not None:
        field = "body.awayMessage.fastMessageId"
        try:
            fast = await fast_messages.get_fast_message(session, office_id, payload.fast_message_id)
        except NotFound as exc:
            raise ValidationFailed.field(field, "not a fast message of this office") from exc
        if fast.kind != "TEXT":
            raise ValidationFailed.field(field, f"a {fast.kind} fast message; only TEXT is sent")
    if payload.template_name is not None and not await templates.has_approved_template(
        session, office_id, None, payload.template_name
    ):
        raise ValidationFailed.field(
            "body.awayMessage.templateName",
            f"{payload.template_name!r} is not an APPROVED template of the office",
        )


async def external_id_known(session: AsyncSession, office_id: str, external_id: str) -> bool:
    return await repository.find_by_external_id(session, office_id, external_id) is not None


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


async def list_messages(
    session: AsyncSession, office_id: str, conversation_id: str, params: PageParams
) -> tuple[list[MessageOut], int]:
    await conversations.get_conversation(session, office_id, conversation_id)
    rows, total = await paginate(
        session, repository.messages_query(office_id, conversation_id), params
    )
    return [MessageOut.model_validate(m) for m in rows], total


TRANSCRIPT_LIMIT = 20_000


async def conversation_record(
    session: AsyncSession, office_id: str, conversation_id: str
) -> list[Message]:
    """Every message of the conversation, reactions included, oldest first (an evidence
    transcript); at most ``TRANSCRIPT_LIMIT`` (409 beyond: a bundle is built in one go)."""
    await conversations.get_conversation(session, office_id, conversation_id)
    rows = list(
        await session.scalars(
            repository.record_query(office_id, conversation_id).limit(TRANSCRIPT_LIMIT + 1)
        )
    )
    if len(rows) > TRANSCRIPT_LIMIT:
        raise Conflict(
            "The conversation is too long for one evidence bundle",
            code="EVIDENCE_TOO_LARGE",
            details=f"More than {TRANSCRIPT_LIMIT} messages",
        )
    return rows


async def _store(
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


async def _emit(
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
    return await _emit(session, conversation, events.UPDATED, message)


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
        await _check_service_window(session, conversation)
    if not _set_reaction(message, "OFFICE", body.emoji, utcnow()):
        return MessageOut.model_validate(message)
    if official:
        await _store(
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
