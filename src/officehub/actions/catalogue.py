"""The catalogue: every action rules and flows perform, each a parameters model, a check and
a run done through the owning domain's service (so its usual events follow).

Names here are the implementations'; the rules' and the flows' vocabularies map the
spec's names onto them (``automation.vocabulary``, ``flows.vocabulary``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, StringConstraints
from sqlalchemy.ext.asyncio import AsyncSession
from typing_extensions import TypeAliasType

from officehub.actions.base import (
    ActionContext,
    ActionFailed,
    ActionSpec,
    CheckContext,
    Outcome,
    Refused,
    reference,
)
from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.conversations.schemas import ConversationPatch
from officehub.crm import service as crm
from officehub.crm.schemas import CardCreate, CardUpdate
from officehub.departments import service as departments
from officehub.fast_messages import service as fast_messages
from officehub.kit.errors import NotFound, ServiceError
from officehub.kit.outbound import HeaderRefused, check_headers, check_url, refuse_private_url
from officehub.kit.pagination import PageParams
from officehub.kit.scheduled_jobs import add_job
from officehub.kit.schemas import LongText, StrictBodyModel
from officehub.kit.transaction_hooks import Hook
from officehub.legal_areas import service as legal_areas
from officehub.messages import outbound as outbound_messages
from officehub.messages.schemas import FallbackTemplate, OutboundIn
from officehub.tags import service as tags
from officehub.templates import service as templates
from officehub.tickets import service as tickets
from officehub.tickets.schemas import TicketCreate, TicketPriority
from officehub.users import service as users
from officehub.webhooks import actions as action_deliveries

SEND_MESSAGE_JOB = "automation.send_message"
SEQUENCE_BLOCK_JOB = "automation.sequence_block"
"""Scheduled-job kinds the message actions add (their handlers: ``automation.actions``)."""

_FIRST = PageParams(page=1, limit=1)
_URL = re.compile(r"^https?://[^\s/?#]+\S*$", re.IGNORECASE)
MAX_MINUTES = 525_600


def _blank(value: Any) -> Any:
    """An empty string is a parameter not given."""
    return None if value == "" else value


Ref = Annotated[str, StringConstraints(min_length=1, max_length=64)]
OptRef = Annotated[Ref | None, BeforeValidator(_blank)]
TemplateName = Annotated[
    Annotated[str, StringConstraints(max_length=512)] | None, BeforeValidator(_blank)
]
HttpMethod = TypeAliasType("HttpMethod", Literal["GET", "POST", "PUT", "PATCH", "DELETE"])


# Parameters ----------------------------------------------------------------------------


class SendFastMessageParams(StrictBodyModel):
    """A fast message (text, or a sequence of blocks at their pace), or an APPROVED
    template: one of ``fastMessageId`` and ``templateName``."""

    fast_message_id: OptRef = Field(None, description="A fast message of the office")
    template_name: TemplateName = Field(None, description="An APPROVED template's name")
    fallback_template: FallbackTemplate | None = Field(
        None, description="Sent instead of a text when the 24-hour window is closed"
    )


class ScheduleMessageParams(StrictBodyModel):
    """A text or an APPROVED template, sent ``delayMinutes`` after the event."""

    text: Annotated[
        Annotated[LongText, StringConstraints(max_length=4096)] | None, BeforeValidator(_blank)
    ] = None
    template_name: TemplateName = None
    delay_minutes: Annotated[int, Field(ge=0, le=MAX_MINUTES)] | None = None
    fallback_template: FallbackTemplate | None = None


class MoveCardParams(StrictBodyModel):
    """The conversation's card moves to the column; a conversation without a card gets one
    there."""

    target_funnel_column_id: Ref


class TagConversationParams(StrictBodyModel):
    tag_id: Ref


class AssignLegalAreaParams(StrictBodyModel):
    """Set on the conversation's card; on the conversation when it has no card."""

    legal_area_id: Ref


class CreateTicketParams(StrictBodyModel):
    """A ticket of the conversation. No ``ticketStatusId`` (flows only): the office's
    first status."""

    title: Annotated[LongText, StringConstraints(min_length=1, max_length=200)]
    description: Annotated[
        Annotated[LongText, StringConstraints(max_length=10_000)] | None,
        BeforeValidator(_blank),
    ] = None
    ticket_status_id: OptRef = None
    priority: Annotated[TicketPriority | None, BeforeValidator(_blank)] = None
    assignee_ids: list[Ref] | None = Field(None, max_length=100)
    department_ids: list[Ref] | None = Field(None, max_length=100)


class FireWebhookParams(StrictBodyModel):
    """An action delivery: SSRF-guarded, signed when ``secret`` is set, retried, logged."""

    url: Annotated[str, StringConstraints(min_length=1, max_length=2000)]
    method: Annotated[HttpMethod | None, BeforeValidator(_blank)] = None
    headers: dict[str, str] | None = Field(None, max_length=20)
    secret: Annotated[
        Annotated[str, StringConstraints(min_length=8, max_length=256)] | None,
        BeforeValidator(_blank),
    ] = Field(None, description="Write-only: signs the delivery (Standard Webhooks)")


class PauseAutomationParams(StrictBodyModel):
    """Rules stop for the conversation: for ``durationMinutes``, or until resumed."""

    duration_minutes: Annotated[int, Field(ge=1, le=MAX_MINUTES)] | None = None
    resume_on_template_sent: bool | None = None


class AssignConversationParams(StrictBodyModel):
    """A person (or, with none, the inbox's routing policy) and a department."""

    user_id: OptRef = None
    department_id: OptRef = None


# Shared checks -------------------------------------------------------------------------


async def _template(
    session: AsyncSession, c: CheckContext, key: str, name: str, part: str | None = None
) -> None:
    if not await templates.has_approved_template(session, c.office_id, c.integration_id, name):
        raise Refused(key, f"{name!r} is not an APPROVED template of the office", part=part)


async def _fallback(session: AsyncSession, c: CheckContext, value: FallbackTemplate | None) -> None:
    if value is not None:
        await _template(session, c, "fallbackTemplate", value.name, part="name")


def _conversation(ctx: ActionContext) -> str:
    if ctx.conversation_id is None:
        raise ActionFailed("the event has no conversation")
    return ctx.conversation_id


async def _conversation_card(session: AsyncSession, ctx: ActionContext) -> str | None:
    if ctx.card_id is not None:
        return ctx.card_id
    conversation_id = _conversation(ctx)
    conversation = await conversations.get_conversation(session, ctx.office_id, conversation_id)
    try:
        card = await crm.card_of_conversation(
            session, ctx.office_id, conversation.person_id, conversation_id
        )
    except NotFound:
        return None
    return card.id


# Messages ------------------------------------------------------------------------------

REVEALING_EVENTS = ("case.", "crm.")


async def _refuse_unverified(
    session: AsyncSession, ctx: ActionContext, conversation_id: str
) -> None:
    """A message sent for a case or a card event tells the contact about their case: never
    to an unverified contact (a web chat visitor whose claim nobody checked)."""
    if not ctx.event_name.startswith(REVEALING_EVENTS):
        return
    conversation = await conversations.get_conversation(session, ctx.office_id, conversation_id)
    if not await contacts.is_verified(session, ctx.office_id, conversation.person_id):
        raise ActionFailed(
            f"the contact is not verified: a {ctx.event_name} notice is not sent to it"
        )


async def _event_variables(
    session: AsyncSession, ctx: ActionContext, conversation_id: str, template_name: str
) -> list[str] | None:
    """A template sent for a case movement fills its placeholders from the event:
    ``{{1}}`` the movement, ``{{2}}`` the case number, ``{{3}}`` the date (dd/mm/yyyy)."""
    if ctx.event_name != "case.movement.created":
        return None
    conversation = await conversations.get_conversation(session, ctx.office_id, conversation_id)
    template = await templates.approved_template(
        session, ctx.office_id, conversation.integration_id, template_name, None
    )
    wanted = templates.placeholders(template.components, "BODY")
    data = ctx.event_data
    at = str(data.get("occurredAt") or "")
    date = f"{at[8:10]}/{at[5:7]}/{at[0:4]}" if len(at) >= 10 else at
    values = [str(data.get("description") or ""), str(data.get("caseNumber") or ""), date]
    return [v[:1024] for v in values[:wanted]] if 0 < wanted <= len(values) else None


def seconds(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


async def _check_send_fast_message(
    session: AsyncSession, c: CheckContext, p: SendFastMessageParams
) -> None:
    if p.fast_message_id is None and p.template_name is None:
        raise Refused("fastMessageId", "required (or templateName)")
    if p.fast_message_id is not None:
        await reference(
            "fastMessageId",
            p.fast_message_id,
            "fast message of the office",
            fast_messages.get_fast_message(session, c.office_id, p.fast_message_id),
        )
    if p.template_name is not None:
        await _template(session, c, "templateName", p.template_name)
    await _fallback(session, c, p.fallback_template)


async def _send_fast_message(
    session: AsyncSession, ctx: ActionContext, p: SendFastMessageParams
) -> Outcome:
    office_id, conversation_id = ctx.office_id, _conversation(ctx)
    await _refuse_unverified(session, ctx, conversation_id)
    if p.template_name:
        variables = await _event_variables(session, ctx, conversation_id, p.template_name)
        sent = await outbound_messages.send(
            session,
            office_id,
            conversation_id,
            OutboundIn(template_name=p.template_name, variables=variables),
        )
        return Outcome("done", f"message {sent.id}")
    fast = await fast_messages.get_fast_message(session, office_id, str(p.fast_message_id))
    if fast.kind == "TEXT":
        fallback = p.fallback_template
        if fallback is not None and not fallback.variables:
            # a case notice: the fallback's placeholders from the movement, as a template's
            found = await _event_variables(session, ctx, conversation_id, fallback.name)
            fallback = fallback.model_copy(update={"variables": found})
        sent = await outbound_messages.send(
            session,
            office_id,
            conversation_id,
            OutboundIn(text=fast.text, fallback_template=fallback),
        )
        return Outcome("done", f"message {sent.id}")
    if fast.kind == "SEQUENCE":
        blocks = fast.blocks or []
        first = seconds(blocks[0].get("typingSeconds")) if blocks else 0.0
        job = add_job(
            session,
            office_id,
            SEQUENCE_BLOCK_JOB,
            {"conversationId": conversation_id, "blocks": blocks, "index": 0, "cause": ctx.cause},
            ctx.now + timedelta(seconds=first),
            ctx.now,
        )
        return Outcome("scheduled", f"{len(blocks)} blocks from job {job.id}")
    raise ActionFailed(
        "AUDIO fast messages are not sent yet: outbound messages carry text or a template"
    )


async def _check_schedule_message(
    session: AsyncSession, c: CheckContext, p: ScheduleMessageParams
) -> None:
    if p.text is None and p.template_name is None:
        raise Refused("text", "required (or templateName)")
    if p.template_name is not None:
        await _template(session, c, "templateName", p.template_name)
    await _fallback(session, c, p.fallback_template)


async def _schedule_message(
    session: AsyncSession, ctx: ActionContext, p: ScheduleMessageParams
) -> Outcome:
    conversation_id = _conversation(ctx)
    await _refuse_unverified(session, ctx, conversation_id)
    delay = p.delay_minutes or 0
    fallback = p.fallback_template
    job = add_job(
        session,
        ctx.office_id,
        SEND_MESSAGE_JOB,
        {
            "conversationId": conversation_id,
            "text": p.text or None,
            "templateName": p.template_name or None,
            "fallbackTemplate": None
            if fallback is None
            else fallback.model_dump(mode="json", by_alias=True, exclude_none=True),
            "cause": ctx.cause,
        },
        ctx.now + timedelta(minutes=delay),
        ctx.now,
    )
    return Outcome("scheduled", f"job {job.id} in {delay} min")


# Records -------------------------------------------------------------------------------


async def _check_move_card(session: AsyncSession, c: CheckContext, p: MoveCardParams) -> None:
    column = p.target_funnel_column_id
    await reference(
        "targetFunnelColumnId",
        column,
        "column of the office",
        crm.get_column(session, c.office_id, column),
    )


async def _move_card(session: AsyncSession, ctx: ActionContext, p: MoveCardParams) -> Outcome:
    column_id = p.target_funnel_column_id
    card_id = await _conversation_card(session, ctx)
    if card_id is None:
        conversation_id = _conversation(ctx)
        conversation = await conversations.get_conversation(session, ctx.office_id, conversation_id)
        created = await crm.create_card(
            session,
            ctx.office_id,
            CardCreate(
                column_id=column_id,
                person_id=conversation.person_id,
                conversation_id=conversation_id,
            ),
        )
        return Outcome("done", f"card {created.id} created")
    card = await crm.update_card(session, ctx.office_id, card_id, CardUpdate(column_id=column_id))
    return Outcome("done", f"card {card.id} in column {card.column_id}")


async def _check_tag(session: AsyncSession, c: CheckContext, p: TagConversationParams) -> None:
    await reference(
        "tagId", p.tag_id, "tag of the office", tags.get_tag(session, c.office_id, p.tag_id)
    )


async def _tag(session: AsyncSession, ctx: ActionContext, p: TagConversationParams) -> Outcome:
    await conversations.add_tag(session, ctx.office_id, _conversation(ctx), p.tag_id)
    return Outcome("done", f"tag {p.tag_id}")


async def _check_legal_area(
    session: AsyncSession, c: CheckContext, p: AssignLegalAreaParams
) -> None:
    await reference(
        "legalAreaId",
        p.legal_area_id,
        "legal area of the office",
        legal_areas.get_legal_area(session, c.office_id, p.legal_area_id),
    )


async def _legal_area(
    session: AsyncSession, ctx: ActionContext, p: AssignLegalAreaParams
) -> Outcome:
    area_id = p.legal_area_id
    card_id = await _conversation_card(session, ctx)
    if card_id is None:
        # No card: the legal area belongs to the conversation too (inbox routing reads it)
        conversation_id = _conversation(ctx)
        await conversations.update_conversation(
            session, ctx.office_id, conversation_id, ConversationPatch(legal_area_id=area_id)
        )
        return Outcome("done", f"conversation {conversation_id} legal area {area_id}")
    await crm.update_card(session, ctx.office_id, card_id, CardUpdate(legal_area_id=area_id))
    return Outcome("done", f"card {card_id} legal area {area_id}")


async def _check_ticket(session: AsyncSession, c: CheckContext, p: CreateTicketParams) -> None:
    if p.ticket_status_id is not None:
        await reference(
            "ticketStatusId",
            p.ticket_status_id,
            "ticket status of the office",
            tickets.get_ticket_status(session, c.office_id, p.ticket_status_id),
        )


async def _ticket(session: AsyncSession, ctx: ActionContext, p: CreateTicketParams) -> Outcome:
    status_id = p.ticket_status_id
    if status_id is None:
        statuses, _ = await tickets.list_ticket_statuses(session, ctx.office_id, _FIRST)
        if not statuses:
            raise NotFound("No ticket status", details="the office has no ticket status")
        status_id = statuses[0].id
    ticket = await tickets.create_ticket(
        session,
        ctx.office_id,
        TicketCreate(
            title=p.title,
            description=p.description,
            status_id=status_id,
            priority=p.priority or "MEDIUM",
            assignee_ids=list(p.assignee_ids or []),
            department_ids=list(p.department_ids or []),
            conversation_id=ctx.conversation_id,
        ),
    )
    return Outcome("done", f"ticket {ticket.id}")


async def _check_webhook(session: AsyncSession, c: CheckContext, p: FireWebhookParams) -> None:
    """The URL as a webhook's: http(s) with a host, no blocked literal address (names are
    checked again when sent), and headers that can be sent."""
    if not _URL.match(p.url):
        raise Refused("url", "must be an http or https URL")
    try:
        check_url(p.url)
        refuse_private_url(
            p.url, allow_private=c.allow_private, field="body.url", code="WEBHOOK_URL_NOT_ALLOWED"
        )
    except ValueError as exc:
        raise Refused("url", str(exc)) from exc
    except ServiceError as exc:
        reason = exc.details.split(": ", 1)[-1] or exc.message
        raise Refused("url", reason, code=exc.code) from exc
    try:
        check_headers(p.headers or {})
    except HeaderRefused as exc:
        raise Refused("headers", exc.reason, part=exc.name) from exc


async def _fire_webhook(session: AsyncSession, ctx: ActionContext, p: FireWebhookParams) -> Outcome:
    delivery = await action_deliveries.enqueue(
        session,
        ctx.office_id,
        url=p.url,
        method=p.method or "POST",
        headers=p.headers or {},
        secret=p.secret,
        event=ctx.webhook_event or ctx.event_name,
        event_id=ctx.event_id,
        payload=ctx.webhook_payload,
        now=ctx.now,
        retention_days=ctx.settings.delivery_retention_days,
        rule_id=ctx.source_rule_id,
        flow_id=ctx.source_flow_id,
    )
    return Outcome("scheduled", f"delivery {delivery.id}")


@dataclass(frozen=True)
class PauseRequested:
    """``PAUSE_AUTOMATION``: automation (above this layer) keeps the pause."""

    session: AsyncSession
    office_id: str
    conversation_id: str
    minutes: int | None
    resume_on_template_sent: bool
    now: datetime


pause_requested: Hook[PauseRequested] = Hook("actions.pause_requested", required=True)


async def _check_nothing(session: AsyncSession, c: CheckContext, p: Any) -> None:
    return None


async def _pause(session: AsyncSession, ctx: ActionContext, p: PauseAutomationParams) -> Outcome:
    if ctx.conversation_id is None:
        return Outcome("skipped", "the event has no conversation: nothing to pause")
    minutes = p.duration_minutes
    await pause_requested.fire(
        PauseRequested(
            session,
            ctx.office_id,
            ctx.conversation_id,
            minutes,
            bool(p.resume_on_template_sent),
            ctx.now,
        )
    )
    return Outcome("done", "paused until resumed" if not minutes else f"paused for {minutes} min")


async def _check_assign(
    session: AsyncSession, c: CheckContext, p: AssignConversationParams
) -> None:
    if p.user_id is not None:
        await reference(
            "userId",
            p.user_id,
            "user of the office",
            users.get_user(session, c.office_id, p.user_id),
        )
    if p.department_id is not None:
        await reference(
            "departmentId",
            p.department_id,
            "department of the office",
            departments.get_department(session, c.office_id, p.department_id),
        )


async def _assign(
    session: AsyncSession, ctx: ActionContext, p: AssignConversationParams
) -> Outcome:
    conversation_id = _conversation(ctx)
    fields: dict[str, Any] = {}
    if p.user_id:
        fields["assigned_user_id"] = p.user_id
    if p.department_id:
        fields["department_id"] = p.department_id
    out = await conversations.update_conversation(
        session, ctx.office_id, conversation_id, ConversationPatch(**fields)
    )
    if not p.user_id:
        # No person named: the inbox's routing policy picks one, or queues it.
        out = await conversations.route_conversation(session, ctx.office_id, conversation_id)
        fields["routedTo"] = out.assigned_user_id
    return Outcome("done", f"assigned {fields}", handed_to_person=out.assigned_user_id is not None)


# The catalogue -------------------------------------------------------------------------

_COLUMN = "cm3k9x2f70003abcd1234efgh"

SEND_FAST_MESSAGE = ActionSpec(
    "SEND_FAST_MESSAGE",
    "Sends a fast message (a text, or a sequence at its pace) or an APPROVED template",
    SendFastMessageParams,
    _check_send_fast_message,
    _send_fast_message,
    {"fastMessageId": "cm3k9x2f7000cabcd1234efgh"},
)
SCHEDULE_MESSAGE = ActionSpec(
    "SCHEDULE_MESSAGE",
    "Sends a text or an APPROVED template after delayMinutes",
    ScheduleMessageParams,
    _check_schedule_message,
    _schedule_message,
    {"text": "Ainda precisa de ajuda?", "delayMinutes": 60},
)
MOVE_CARD = ActionSpec(
    "MOVE_CARD",
    "Moves the conversation's CRM card to a column (creates it there when it has none)",
    MoveCardParams,
    _check_move_card,
    _move_card,
    {"targetFunnelColumnId": _COLUMN},
)
TAG_CONVERSATION = ActionSpec(
    "TAG_CONVERSATION",
    "Adds a tag to the conversation",
    TagConversationParams,
    _check_tag,
    _tag,
    {"tagId": "cm3k9x2f7000aabcd1234efgh"},
)
ASSIGN_LEGAL_AREA = ActionSpec(
    "ASSIGN_LEGAL_AREA",
    "Sets the legal area of the conversation's card, or of the conversation without a card",
    AssignLegalAreaParams,
    _check_legal_area,
    _legal_area,
    {"legalAreaId": "cm3k9x2f7000dabcd1234efgh"},
)
CREATE_TICKET = ActionSpec(
    "CREATE_TICKET",
    "Creates a ticket of the conversation",
    CreateTicketParams,
    _check_ticket,
    _ticket,
    {"title": "Retornar o cliente", "ticketStatusId": "cm3k9x2f7000eabcd1234efgh"},
    needs_conversation=False,
)
FIRE_WEBHOOK = ActionSpec(
    "FIRE_WEBHOOK",
    "Sends an HTTP request (an action delivery: guarded, signed with a secret, retried, logged)",
    FireWebhookParams,
    _check_webhook,
    _fire_webhook,
    {"url": "https://crm.example.com/hooks/lead", "method": "POST"},
    needs_conversation=False,
)
PAUSE_AUTOMATION = ActionSpec(
    "PAUSE_AUTOMATION",
    "Stops the rules for the conversation (with none, the outcome is skipped)",
    PauseAutomationParams,
    _check_nothing,
    _pause,
    {"durationMinutes": 120, "resumeOnTemplateSent": True},
    needs_conversation=False,
)
ASSIGN_CONVERSATION = ActionSpec(
    "ASSIGN_CONVERSATION",
    "Assigns the conversation to a person (or routes it) and a department",
    AssignConversationParams,
    _check_assign,
    _assign,
    {"userId": "cm3k9x2f7000fabcd1234efgh"},
)

CATALOGUE: dict[str, ActionSpec[Any]] = {
    spec.name: spec
    for spec in (
        SEND_FAST_MESSAGE,
        SCHEDULE_MESSAGE,
        MOVE_CARD,
        TAG_CONVERSATION,
        ASSIGN_LEGAL_AREA,
        CREATE_TICKET,
        FIRE_WEBHOOK,
        PAUSE_AUTOMATION,
        ASSIGN_CONVERSATION,
    )
}
