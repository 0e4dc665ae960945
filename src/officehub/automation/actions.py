"""A rule's actions run through the catalogue (``officehub.actions``), and the scheduled
jobs that send later (sequences, delayed messages, webhooks scheduled before deliveries),
registered in ``automation.jobs``."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.actions import base
from officehub.actions.catalogue import SEND_MESSAGE_JOB, SEQUENCE_BLOCK_JOB, seconds
from officehub.automation.evaluation import Subject
from officehub.automation.schemas import ActionOutcome
from officehub.automation.vocabulary import RULE_ACTIONS, parse
from officehub.events.service import Cause, caused_by
from officehub.kit.config import Settings
from officehub.kit.errors import ServiceError, ValidationFailed
from officehub.kit.scheduled_jobs import RetryLater, ScheduledJob, add_job
from officehub.kit.worker import WorkerContext
from officehub.messages import outbound as outbound_messages
from officehub.messages.schemas import FallbackTemplate, OutboundIn
from officehub.webhooks import actions as action_deliveries

logger = logging.getLogger("officehub.automation")

SEND_MESSAGE = SEND_MESSAGE_JOB
SEQUENCE_BLOCK = SEQUENCE_BLOCK_JOB
FIRE_WEBHOOK = "automation.fire_webhook"
ActionFailed = base.ActionFailed


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

    def for_actions(self) -> base.ActionContext:
        """The catalogue's context: the event's conversation and card; a FIRE_WEBHOOK sends
        the event's envelope and the rule."""
        return base.ActionContext(
            office_id=self.office_id,
            now=self.now,
            settings=self.settings,
            conversation_id=self.subject.conversation_id,
            card_id=self.subject.card_id,
            event_id=self.event_id,
            event_name=self.event_name,
            event_data=self.event_data,
            depth=self.depth,
            source_rule_id=self.rule_id,
            webhook_event=self.event_name,
            webhook_payload={
                "id": self.event_id,
                "event": self.event_name,
                "createdAt": self.event_created_at,
                "officeId": self.office_id,
                "data": self.event_data,
                "rule": {"id": self.rule_id, "name": self.rule_name},
            },
        )


async def run_actions(
    session: AsyncSession, ctx: ActionContext, actions: list[dict[str, Any]]
) -> list[ActionOutcome]:
    """In order; one failing is logged (its changes rolled back) and the rest still run."""
    outcomes: list[ActionOutcome] = []
    context = ctx.for_actions()
    with caused_by(Cause(ctx.event_id, ctx.depth)):
        for index, action in enumerate(actions):
            name = str(action.get("action"))
            try:
                entry = RULE_ACTIONS.get(name)
                if entry is None:
                    raise base.ActionFailed(f"unknown action {name}")
                params: BaseModel = parse(name, action.get("actionParams") or {}, "actionParams")
                async with session.begin_nested():
                    done = await entry.spec.run(session, context, params)
                outcomes.append(
                    ActionOutcome(index=index, action=name, status=done.status, detail=done.detail)
                )
            except ServiceError as exc:
                error = f"{exc.code}: {exc.details or exc.message}"
                outcomes.append(
                    ActionOutcome(index=index, action=name, status="failed", error=error)
                )
            except base.ActionFailed as exc:
                outcomes.append(
                    ActionOutcome(index=index, action=name, status="failed", error=str(exc))
                )
    return outcomes


def _fallback(params: dict[str, Any]) -> FallbackTemplate | None:
    """A text send's ``fallbackTemplate`` param (checked when the rule was saved)."""
    value = params.get("fallbackTemplate")
    return FallbackTemplate.model_validate(value) if isinstance(value, dict) else None


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
            await outbound_messages.send(
                session, job.office_id, job.payload["conversationId"], body
            )
        else:
            with caused_by(cause):
                await outbound_messages.send(
                    session, job.office_id, job.payload["conversationId"], body
                )
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
        wait = seconds(block.get("waitSeconds")) + seconds(blocks[index + 1].get("typingSeconds"))
        add_job(
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
