"""The automation consumer of the outbox: runs the office's rules for each event."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation import repository
from officehub.automation.actions import ActionContext, run_actions
from officehub.automation.evaluation import Decision, Subject, decide, subject_of
from officehub.automation.models import AutomationPause, AutomationRule, AutomationRun
from officehub.automation.schemas import ActionOutcome, RuleFailure
from officehub.events.consumers import Consumer
from officehub.kit.ids import new_id
from officehub.kit.timeutil import isoformat
from officehub.kit.worker import PeriodicJob, WorkerContext

if TYPE_CHECKING:
    from officehub.events.models import OutboxEvent

MAX_DEPTH = 5
"""Events this deep in a causal chain run no rule: a chain has at most five links."""
RUN_RETENTION = timedelta(days=30)
_PURGE_BATCH = 1000


def _paused(pause: AutomationPause | None, now: datetime) -> bool:
    return pause is not None and (pause.until is None or pause.until > now)


async def handle_event(session: AsyncSession, event: OutboxEvent, ctx: WorkerContext) -> None:
    office_id = event.office_id
    now = ctx.now()
    data = event.data or {}
    first_entry: bool | None = None
    if event.name in ("crm.lead.created", "crm.lead.moved"):
        card_id, column_id = data.get("id"), data.get("columnId")
        if isinstance(card_id, str) and isinstance(column_id, str):
            first_entry = await repository.record_entry(session, office_id, card_id, column_id, now)
    pause: AutomationPause | None = None
    if event.conversation_id is not None:
        pause = await repository.get_pause(session, office_id, event.conversation_id)
        if (
            pause is not None
            and pause.resume_on_template_sent
            and event.name == "chat.message.sent"
            and data.get("templateName")
        ):
            await repository.remove_pause(session, office_id, event.conversation_id)
            pause = None
    rules = await repository.rules_for_event(session, office_id, event.name, event.integration_id)
    if not rules:
        return
    paused = _paused(pause, now)
    chain: list[str] | None = None
    subject: Subject | None = None
    for rule in rules:
        if paused:
            decision = Decision("skipped", "automation is paused for this conversation", [], [])
        else:
            if subject is None:
                subject = await subject_of(
                    session,
                    office_id,
                    event.name,
                    data,
                    event.conversation_id,
                    with_card=any(r.conditions.get("funnelColumnId") for r in rules),
                    at=event.created_at,
                )
            decision = decide(rule, subject, first_entry)
            if (
                decision.branch != "skipped"
                and rule.skip_while_human_assigned
                and subject.assigned_user_id is not None
            ):
                decision = Decision(
                    "skipped",
                    "skipWhileHumanAssigned: a person is assigned to the conversation",
                    decision.checks,
                    [],
                )
            if decision.branch != "skipped":
                guard = await _loop_guard(session, office_id, event, rule, chain)
                if guard is not None:
                    chain, reason = guard
                    if reason:
                        decision = Decision("skipped", reason, decision.checks, [])
        await _run(session, ctx, event, rule, decision, subject)


async def _loop_guard(
    session: AsyncSession,
    office_id: str,
    event: OutboxEvent,
    rule: AutomationRule,
    chain: list[str] | None,
) -> tuple[list[str] | None, str] | None:
    """Why a rule that would act must not (depth 5, or it already acted in this causal
    chain), with the chain's event ids read once per event; None when it may act."""
    if event.depth >= MAX_DEPTH:
        return chain, (
            f"loop guard: the causal chain reached depth {MAX_DEPTH}; the chain stops here"
        )
    if event.causation_id is None:
        return None
    if chain is None:
        chain = await repository.ancestors(session, office_id, event)
    if await repository.ran_in_chain(session, office_id, rule.id, chain):
        return chain, "loop guard: the rule already ran in this causal chain; the chain stops here"
    return chain, ""


async def _run(
    session: AsyncSession,
    ctx: WorkerContext,
    event: OutboxEvent,
    rule: AutomationRule,
    decision: Decision,
    subject: Subject | None,
) -> None:
    outcomes: list[ActionOutcome] = []
    now = ctx.now()
    if (
        decision.branch != "skipped"
        and rule.run_once_per_conversation
        and event.conversation_id is not None
        and not await repository.claim_conversation(
            session, event.office_id, rule.id, event.conversation_id, event.id, now
        )
    ):
        decision = Decision(
            "skipped",
            "runOncePerConversation: the rule has acted in this conversation already",
            decision.checks,
            [],
        )
    if decision.actions and subject is not None:
        action_ctx = ActionContext(
            office_id=event.office_id,
            rule_id=rule.id,
            rule_name=rule.name,
            event_id=event.id,
            event_name=event.name,
            event_created_at=isoformat(event.created_at),
            event_data=event.data,
            depth=event.depth,
            subject=subject,
            now=ctx.now(),
            settings=ctx.settings,
        )
        outcomes = await run_actions(session, action_ctx, decision.actions)
    run = AutomationRun(
        id=new_id(),
        office_id=event.office_id,
        rule_id=rule.id,
        event_id=event.id,
        event_name=event.name,
        conversation_id=event.conversation_id,
        causation_id=event.causation_id,
        depth=event.depth,
        branch=decision.branch,
        reason=decision.reason[:500],
        outcomes=[o.model_dump(mode="json") for o in outcomes],
        created_at=now,
    )
    repository.add_run(session, run)
    await _record_health(session, rule, run, outcomes)


async def _record_health(
    session: AsyncSession, rule: AutomationRule, run: AutomationRun, outcomes: list[ActionOutcome]
) -> None:
    """A run with a failed action counts on the rule (the console's alert); a run whose
    actions all went through resets the count. The rule's row is written only then."""
    failed = next((o for o in outcomes if o.status == "failed"), None)
    if failed is not None:
        failure = RuleFailure(
            at=run.created_at,
            run_id=run.id,
            event_id=run.event_id,
            event=run.event_name,
            action=failed.action,
            error=failed.error or "",
        )
        await repository.record_failure(
            session, rule, failure.model_dump(mode="json", by_alias=True)
        )
    elif outcomes and rule.failure_count:
        await repository.reset_failures(session, rule)


AUTOMATION = Consumer("automation", handle_event)


async def purge_old_runs(ctx: WorkerContext) -> int:
    total = 0
    while True:
        async with ctx.sessionmaker() as session, session.begin():
            removed = await repository.purge_runs(session, ctx.now() - RUN_RETENTION, _PURGE_BATCH)
        total += removed
        if removed < _PURGE_BATCH:
            return total


RUNS_PURGE_JOB = PeriodicJob("automation-runs-purge", timedelta(hours=1), purge_old_runs)
