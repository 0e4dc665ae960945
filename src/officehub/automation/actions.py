"""The eight actions, each done through the owning domain's service so its usual events
follow, and the scheduled jobs that send later (sequences, delayed messages, webhooks)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation import repository
from officehub.automation.evaluation import Subject
from officehub.automation.models import AutomationPause
from officehub.automation.scheduled import JobHandler, RetryLater, schedule
from officehub.automation.schemas import ActionOutcome
from officehub.automation.templates import body_placeholders
from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.crm import service as crm
from officehub.crm.schemas import CardUpdate
from officehub.events.service import Cause, caused_by
from officehub.fast_messages import service as fast_messages
from officehub.kit.config import Settings
from officehub.kit.errors import NotFound, ServiceError, ValidationFailed
from officehub.kit.scheduled_jobs import ScheduledJob
from officehub.kit.worker import WorkerContext
from officehub.messages import service as messages
from officehub.messages.schemas import FallbackTemplate, OutboundIn
from officehub.tickets import service as tickets
from officehub.tickets.schemas import TicketCreate
from officehub.webhooks import actions as action_deliveries

logger = logging.getLogger("officehub.automation")

SEND_MESSAGE = "automation.send_message"
SEQUENCE_BLOCK = "automation.sequence_block"
FIRE_WEBHOOK = "automation.fire_webhook"


@dataclass(frozen=True)
class ActionContext:
    office_id: str
    rule_id: str
    rule_name: str
    event_id: str
    event_name: str
    event_created_at: str
    event_data: dict[str, Any]
    depth: int
    subject: Subject
    now: datetime
    settings: Settings

    @property
    def cause(self) -> dict[str, Any]:
        return {"eventId": self.event_id, "depth": self.depth}


class ActionFailed(Exception):
    """An action that cannot be done for this event; logged in the run."""


async def run_actions(
    session: AsyncSession, ctx: ActionContext, actions: list[dict[str, Any]]
) -> list[ActionOutcome]:
    """In order; one failing is logged (its changes rolled back) and the rest still run."""
    outcomes: list[ActionOutcome] = []
    with caused_by(Cause(ctx.event_id, ctx.depth)):
        for index, action in enumerate(actions):
            name = str(action.get("action"))
            params = action.get("actionParams") or {}
            try:
                async with session.begin_nested():
                    status, detail = await _run(session, ctx, name, params)
                outcomes.append(
                    ActionOutcome(index=index, action=name, status=status, detail=detail)
                )
            except ServiceError as exc:
                error = f"{exc.code}: {exc.details or exc.message}"
                outcomes.append(
                    ActionOutcome(index=index, action=name, status="failed", error=error)
                )
            except ActionFailed as exc:
                outcomes.append(
                    ActionOutcome(index=index, action=name, status="failed", error=str(exc))
                )
    return outcomes


def _conversation(ctx: ActionContext) -> str:
    if ctx.subject.conversation_id is None:
        raise ActionFailed("the event has no conversation")
    return ctx.subject.conversation_id


async def _card(session: AsyncSession, ctx: ActionContext) -> str:
    if ctx.subject.card_id is not None:
        return ctx.subject.card_id
    conversation_id = _conversation(ctx)
    conversation = await conversations.get_conversation(session, ctx.office_id, conversation_id)
    try:
        card = await crm.card_of_conversation(
            session, ctx.office_id, conversation.person_id, conversation_id
        )
    except NotFound as exc:
        raise ActionFailed("the conversation has no CRM card") from exc
    return card.id


async def _event_variables(
    session: AsyncSession, ctx: ActionContext, conversation_id: str, params: dict[str, Any]
) -> list[str] | None:
    """A template sent for a case movement fills its placeholders from the event:
    ``{{1}}`` the movement, ``{{2}}`` the case number, ``{{3}}`` the date (dd/mm/yyyy)."""
    if ctx.event_name != "case.movement.created":
        return None
    conversation = await conversations.get_conversation(session, ctx.office_id, conversation_id)
    wanted = await body_placeholders(
        session, ctx.office_id, conversation.integration_id, params["templateName"]
    )
    data = ctx.event_data
    at = str(data.get("occurredAt") or "")
    date = f"{at[8:10]}/{at[5:7]}/{at[0:4]}" if len(at) >= 10 else at
    values = [str(data.get("description") or ""), str(data.get("caseNumber") or ""), date]
    return [v[:1024] for v in values[:wanted]] if 0 < wanted <= len(values) else None


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


async def _run(
    session: AsyncSession, ctx: ActionContext, name: str, params: dict[str, Any]
) -> tuple[Any, str | None]:
    office_id = ctx.office_id
    if name == "SEND_FAST_MESSAGE":
        conversation_id = _conversation(ctx)
        await _refuse_unverified(session, ctx, conversation_id)
        if params.get("templateName"):
            variables = await _event_variables(session, ctx, conversation_id, params)
            sent = await messages.send(
                session,
                office_id,
                conversation_id,
                OutboundIn(template_name=params["templateName"], variables=variables),
            )
            return "done", f"message {sent.id}"
        fast = await fast_messages.get_fast_message(session, office_id, params["fastMessageId"])
        if fast.kind == "TEXT":
            fallback = _fallback(params)
            if fallback is not None and not fallback.variables:
                # a case notice: the fallback's placeholders from the movement, as a template's
                found = await _event_variables(
                    session, ctx, conversation_id, {"templateName": fallback.name}
                )
                fallback = fallback.model_copy(update={"variables": found})
            sent = await messages.send(
                session,
                office_id,
                conversation_id,
                OutboundIn(text=fast.text, fallback_template=fallback),
            )
            return "done", f"message {sent.id}"
        if fast.kind == "SEQUENCE":
            blocks = fast.blocks or []
            first = _seconds(blocks[0].get("typingSeconds")) if blocks else 0.0
            job = await schedule(
                session,
                office_id,
                SEQUENCE_BLOCK,
                {
                    "conversationId": conversation_id,
                    "blocks": blocks,
                    "index": 0,
                    "cause": ctx.cause,
                },
                ctx.now + timedelta(seconds=first),
                ctx.now,
            )
            return "scheduled", f"{len(blocks)} blocks from job {job.id}"
        raise ActionFailed(
            "AUDIO fast messages are not sent yet: outbound messages carry text or a template"
        )
    if name == "SCHEDULE_MESSAGE":
        conversation_id = _conversation(ctx)
        await _refuse_unverified(session, ctx, conversation_id)
        delay = int(params.get("delayMinutes") or 0)
        job = await schedule(
            session,
            office_id,
            SEND_MESSAGE,
            {
                "conversationId": conversation_id,
                "text": params.get("text") or None,
                "templateName": params.get("templateName") or None,
                "fallbackTemplate": params.get("fallbackTemplate") or None,
                "cause": ctx.cause,
            },
            ctx.now + timedelta(minutes=delay),
            ctx.now,
        )
        return "scheduled", f"job {job.id} in {delay} min"
    if name == "MOVE_CARD":
        card_id = await _card(session, ctx)
        card = await crm.update_card(
            session, office_id, card_id, CardUpdate(column_id=params["targetFunnelColumnId"])
        )
        return "done", f"card {card.id} in column {card.column_id}"
    if name == "TAG_CONVERSATION":
        conversation_id = _conversation(ctx)
        await conversations.add_tag(session, office_id, conversation_id, params["tagId"])
        return "done", f"tag {params['tagId']}"
    if name == "ASSIGN_LEGAL_AREA":
        card_id = await _card(session, ctx)
        await crm.update_card(
            session, office_id, card_id, CardUpdate(legal_area_id=params["legalAreaId"])
        )
        return "done", f"card {card_id} legal area {params['legalAreaId']}"
    if name == "CREATE_TICKET":
        ticket = await tickets.create_ticket(
            session,
            office_id,
            TicketCreate(
                title=params["title"],
                description=params.get("description"),
                status_id=params["ticketStatusId"],
                priority=params.get("priority") or "MEDIUM",
                conversation_id=ctx.subject.conversation_id,
            ),
        )
        return "done", f"ticket {ticket.id}"
    if name == "FIRE_WEBHOOK":
        delivery = await action_deliveries.enqueue(
            session,
            office_id,
            url=params["url"],
            method=params.get("method") or "POST",
            headers=params.get("headers") or {},
            secret=params.get("secret"),
            event=ctx.event_name,
            event_id=ctx.event_id,
            payload={
                "id": ctx.event_id,
                "event": ctx.event_name,
                "createdAt": ctx.event_created_at,
                "officeId": office_id,
                "data": ctx.event_data,
                "rule": {"id": ctx.rule_id, "name": ctx.rule_name},
            },
            now=ctx.now,
            retention_days=ctx.settings.delivery_retention_days,
            rule_id=ctx.rule_id,
        )
        return "scheduled", f"delivery {delivery.id}"
    if name == "PAUSE_AUTOMATION":
        conversation_id = _conversation(ctx)
        minutes = params.get("durationMinutes")
        until = None if not minutes else ctx.now + timedelta(minutes=int(minutes))
        await repository.set_pause(
            session,
            AutomationPause(
                office_id=office_id,
                conversation_id=conversation_id,
                until=until,
                resume_on_template_sent=bool(params.get("resumeOnTemplateSent")),
                created_at=ctx.now,
            ),
        )
        return "done", "paused until resumed" if until is None else f"paused for {minutes} min"
    raise ActionFailed(f"unknown action {name}")


def _fallback(params: dict[str, Any]) -> FallbackTemplate | None:
    """A text send's ``fallbackTemplate`` param (checked when the rule was saved)."""
    value = params.get("fallbackTemplate")
    return FallbackTemplate.model_validate(value) if isinstance(value, dict) else None


def _seconds(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


# Scheduled jobs -------------------------------------------------------------------------


def _cause(job: ScheduledJob) -> Cause | None:
    cause = job.payload.get("cause")
    if not isinstance(cause, dict):
        return None
    return Cause(str(cause.get("eventId")), int(cause.get("depth") or 0))


async def _send(session: AsyncSession, job: ScheduledJob, body: OutboundIn) -> None:
    cause = _cause(job)
    try:
        if cause is None:
            await messages.send(session, job.office_id, job.payload["conversationId"], body)
        else:
            with caused_by(cause):
                await messages.send(session, job.office_id, job.payload["conversationId"], body)
    except (ServiceError, ValidationFailed) as exc:
        raise RetryLater(f"{exc.code}: {exc.details or exc.message}", None) from exc


async def send_message_job(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
    payload = job.payload
    await _send(
        session,
        job,
        OutboundIn(
            text=payload.get("text"),
            template_name=payload.get("templateName"),
            fallback_template=_fallback(payload) if payload.get("text") else None,
        ),
    )


async def sequence_block_job(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
    """Sends block ``index``, then schedules the next at its pace: this block's
    ``waitSeconds``, then the next one's ``typingSeconds``. Media blocks are recorded as
    not sent (outbound messages carry text until the channel dispatcher lands)."""
    payload = job.payload
    blocks: list[dict[str, Any]] = payload["blocks"]
    index = int(payload["index"])
    block = blocks[index]
    if block.get("kind") == "TEXT" and block.get("text"):
        await _send(session, job, OutboundIn(text=block["text"]))
    else:
        job.error = f"block {index} ({block.get('kind')}) not sent: media sends need a channel"
    if index + 1 < len(blocks):
        now = ctx.now()
        wait = _seconds(block.get("waitSeconds")) + _seconds(blocks[index + 1].get("typingSeconds"))
        await schedule(
            session,
            job.office_id,
            SEQUENCE_BLOCK,
            {**payload, "index": index + 1},
            now + timedelta(seconds=wait),
            now,
        )


async def fire_webhook_job(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
    """A ``FIRE_WEBHOOK`` scheduled before action deliveries existed (still due after the
    upgrade) becomes an action delivery: sent, logged and retried like the new ones."""
    payload = job.payload
    body = payload.get("body")
    await action_deliveries.enqueue(
        session,
        job.office_id,
        url=str(payload["url"]),
        method=str(payload.get("method") or "POST"),
        headers=dict(payload.get("headers") or {}),
        secret=payload.get("secret"),
        event=str(payload.get("event") or (body or {}).get("event") or "automation.webhook"),
        event_id=(body or {}).get("id") if isinstance((body or {}).get("id"), str) else None,
        payload=body if isinstance(body, dict) else {"body": body},
        now=ctx.now(),
        retention_days=ctx.settings.delivery_retention_days,
        rule_id=None,
    )


JOB_HANDLERS: dict[str, JobHandler] = {
    SEND_MESSAGE: send_message_job,
    SEQUENCE_BLOCK: sequence_block_job,
    FIRE_WEBHOOK: fire_webhook_job,
}
