"""Every query of automation rules, their runs and pauses; scoped by office id."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Select, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.models import (
    AutomationPause,
    AutomationRule,
    AutomationRuleConversation,
    AutomationRun,
    CardColumnEntry,
)
from officehub.events.models import OutboxEvent
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, scoped


async def get_rule(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> AutomationRule | None:
    return await get_scoped(session, AutomationRule, office_id, ident, for_change=for_change)


async def list_rules(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    trigger_event: str | None,
    enabled: bool | None,
) -> tuple[list[AutomationRule], int]:
    stmt = scoped(AutomationRule, office_id)
    if trigger_event is not None:
        stmt = stmt.where(AutomationRule.trigger_event == trigger_event)
    if enabled is not None:
        stmt = stmt.where(AutomationRule.enabled.is_(enabled))
    stmt = stmt.order_by(AutomationRule.created_at, AutomationRule.id)
    return await paginate(session, stmt, params)


async def rules_for_event(
    session: AsyncSession, office_id: str, trigger_event: str, integration_id: str | None
) -> list[AutomationRule]:
    """The enabled rules of one trigger, through the (office, trigger, enabled, priority)
    index: higher priority first, ties by creation."""
    stmt = scoped(AutomationRule, office_id).where(
        AutomationRule.trigger_event == trigger_event, AutomationRule.enabled.is_(True)
    )
    rules = list(
        await session.scalars(
            stmt.order_by(
                AutomationRule.priority.desc(), AutomationRule.created_at, AutomationRule.id
            )
        )
    )
    return [r for r in rules if r.integration_id in (None, integration_id)]


def _runs(office_id: str, rule_id: str) -> Select[AutomationRun]:
    return scoped(AutomationRun, office_id).where(AutomationRun.rule_id == rule_id)


async def list_runs(
    session: AsyncSession, office_id: str, rule_id: str, params: PageParams
) -> tuple[list[AutomationRun], int]:
    stmt = _runs(office_id, rule_id).order_by(
        AutomationRun.created_at.desc(), AutomationRun.id.desc()
    )
    return await paginate(session, stmt, params)


async def ran_in_chain(
    session: AsyncSession, office_id: str, rule_id: str, event_ids: Sequence[str]
) -> bool:
    """Whether the rule acted (then or else) on any of these events."""
    if not event_ids:
        return False
    stmt = (
        _runs(office_id, rule_id)
        .where(AutomationRun.event_id.in_(event_ids), AutomationRun.branch != "skipped")
        .limit(1)
    )
    return (await session.scalars(stmt)).first() is not None


async def ancestors(session: AsyncSession, office_id: str, event: OutboxEvent) -> list[str]:
    """The ids of the events that caused this one, nearest first."""
    found: list[str] = []
    cause = event.causation_id
    while cause is not None and len(found) < 50:
        found.append(cause)
        cause = await session.scalar(
            select(OutboxEvent.causation_id).where(
                OutboxEvent.office_id == office_id, OutboxEvent.id == cause
            )
        )
    return found


async def claim_conversation(
    session: AsyncSession,
    office_id: str,
    rule_id: str,
    conversation_id: str,
    event_id: str,
    now: datetime,
) -> bool:
    """A run-once rule takes the conversation: False when it has acted in it already. The
    primary key decides between two events handled at once (the later insert waits for the
    first transaction, then is refused)."""
    try:
        async with session.begin_nested():
            session.add(
                AutomationRuleConversation(
                    rule_id=rule_id,
                    conversation_id=conversation_id,
                    office_id=office_id,
                    event_id=event_id,
                    created_at=now,
                )
            )
            await session.flush()
    except IntegrityError:
        return False
    return True


async def record_failure(
    session: AsyncSession, rule: AutomationRule, failure: dict[str, Any]
) -> None:
    """One more failed run; a rule deleted meanwhile is left alone (no row, no error)."""
    await session.execute(
        update(AutomationRule)
        .where(AutomationRule.office_id == rule.office_id, AutomationRule.id == rule.id)
        .values(failure_count=AutomationRule.failure_count + 1, last_failure=failure)
        .execution_options(synchronize_session=False)
    )


async def reset_failures(session: AsyncSession, rule: AutomationRule) -> None:
    await session.execute(
        update(AutomationRule)
        .where(AutomationRule.office_id == rule.office_id, AutomationRule.id == rule.id)
        .values(failure_count=0)
        .execution_options(synchronize_session=False)
    )


def add_run(session: AsyncSession, run: AutomationRun) -> None:
    """Written with the transaction's next flush or its commit."""
    session.add(run)


async def latest_event(session: AsyncSession, office_id: str, name: str) -> OutboxEvent | None:
    stmt = (
        scoped(OutboxEvent, office_id)
        .where(OutboxEvent.name == name)
        .order_by(OutboxEvent.created_at.desc(), OutboxEvent.id.desc())
        .limit(1)
    )
    return (await session.scalars(stmt)).first()


async def get_event(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> OutboxEvent | None:
    return await get_scoped(session, OutboxEvent, office_id, ident, for_change=for_change)


async def get_pause(
    session: AsyncSession, office_id: str, conversation_id: str
) -> AutomationPause | None:
    stmt = scoped(AutomationPause, office_id).where(
        AutomationPause.conversation_id == conversation_id
    )
    return (await session.scalars(stmt)).first()


async def remove_pause(session: AsyncSession, office_id: str, conversation_id: str) -> None:
    await session.execute(
        delete(AutomationPause).where(
            AutomationPause.office_id == office_id,
            AutomationPause.conversation_id == conversation_id,
        )
    )


async def record_entry(
    session: AsyncSession, office_id: str, card_id: str, column_id: str, now: datetime
) -> bool:
    """Notes that the card entered the column; True when it is the first entry."""
    dialect = session.get_bind().dialect.name
    values = {"office_id": office_id, "card_id": card_id, "column_id": column_id, "created_at": now}
    stmt: Any
    if dialect == "postgresql":
        stmt = pg_insert(CardColumnEntry).values(values).on_conflict_do_nothing()
    else:
        stmt = sqlite_insert(CardColumnEntry).values(values).on_conflict_do_nothing()
    result = await session.execute(stmt)
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def purge_runs(session: AsyncSession, before: datetime, limit: int) -> int:
    ids = list(
        await session.scalars(
            select(AutomationRun.id).where(AutomationRun.created_at < before).limit(limit)
        )
    )
    if ids:
        await session.execute(delete(AutomationRun).where(AutomationRun.id.in_(ids)))
    return len(ids)


async def set_pause(session: AsyncSession, pause: AutomationPause) -> None:
    """One pause per conversation: a new one replaces the old (one conversation's events
    are handled one at a time, so nothing races here)."""
    await remove_pause(session, pause.office_id, pause.conversation_id)
    session.add(pause)
    await session.flush()
