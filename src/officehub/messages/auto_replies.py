"""Automatic replies, sent in the inbound message's transaction: keyword answers (fast
messages with keywords) and away messages outside business hours (text or template)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import consent
from officehub.contacts import texts as contact_texts
from officehub.conversations import service as conversations
from officehub.fast_messages import service as fast_messages
from officehub.inboxes import service as inboxes
from officehub.inboxes.business_hours import closed_period_start
from officehub.inboxes.hooks import AwayMessageChecking
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.timeutil import as_utc
from officehub.messages import events
from officehub.messages.models import Message
from officehub.messages.outbound import send_template
from officehub.messages.schemas import OutboundIn
from officehub.messages.storing import emit_message, store_message
from officehub.offices import settings as office_settings
from officehub.templates import service as templates

if TYPE_CHECKING:
    from officehub.conversations.models import Conversation

logger = logging.getLogger("officehub.messages")


async def answer_keyword(
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
    reply = await store_message(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEXT",
        text=answer.format(out=keywords.opt_out[0], back=keywords.opt_in[0]),
        media_url=None,
        status="QUEUED",
        automated=True,
    )
    await emit_message(session, conversation, events.SENT, reply)


async def answer_away(session: AsyncSession, conversation: Conversation, message: Message) -> None:
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
    reply = await store_message(
        session,
        conversation,
        direction="OUTBOUND",
        type="TEXT",
        text=text,
        media_url=None,
        status="QUEUED",
        automated=True,
    )
    await emit_message(session, conversation, events.SENT, reply)


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
        await send_template(session, conversation, body.template_name or "", body, None)
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
