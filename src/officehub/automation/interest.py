"""The automation consumer's registration with the outbox (``events.registry``).

It wants an event when an enabled rule of the office on that trigger (and integration)
exists when the event is recorded, or when the event is one automation records anyway:
a card's column entries (which decide ``restartOnReturn`` for rules created later) and a
template sent into a conversation (which lifts a ``resumeOnTemplateSent`` pause).
``install`` is called by ``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import Table, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.consumer import AUTOMATION
from officehub.automation.models import AutomationRule
from officehub.events import registry

if TYPE_CHECKING:
    from officehub.events.models import OutboxEvent

ALWAYS = frozenset({"crm.lead.created", "crm.lead.moved"})
"""Events automation records whatever the rules: a card's column entries."""


def _always(event: OutboxEvent) -> bool:
    return event.name in ALWAYS or _template_sent(event)


def _template_sent(event: OutboxEvent) -> bool:
    """A template sent into a conversation (lifts a ``resumeOnTemplateSent`` pause)."""
    return (
        event.name == "chat.message.sent"
        and event.conversation_id is not None
        and bool((event.data or {}).get("templateName"))
    )


_rules = cast(Table, AutomationRule.__table__)
_ENABLED = (
    select(_rules.c.office_id, _rules.c.trigger_event, _rules.c.integration_id)
    .where(
        _rules.c.office_id.in_(bindparam("offices", expanding=True)),
        _rules.c.trigger_event.in_(bindparam("names", expanding=True)),
        _rules.c.enabled.is_(True),
    )
    .distinct()
)
"""A Core select (no ORM bookkeeping): ``emit`` runs it on SQLite for events automation does
not record anyway."""


async def wants(session: AsyncSession, events: Sequence[OutboxEvent]) -> list[bool]:
    """One query, only when some event is not wanted anyway: which (office, trigger,
    integration) has an enabled rule (through the evaluation index)."""
    asked = [e for e in events if not _always(e)]
    triggers: set[tuple[str, str, str | None]] = set()
    if asked:
        params = {
            "offices": sorted({e.office_id for e in asked}),
            "names": sorted({e.name for e in asked}),
        }
        triggers = {(o, t, i) for o, t, i in await session.execute(_ENABLED, params)}
    return [
        _always(e)
        or (e.office_id, e.name, None) in triggers
        or (e.integration_id is not None and (e.office_id, e.name, e.integration_id) in triggers)
        for e in events
    ]


WANTS_SQL = """:automation_always OR EXISTS (
        SELECT 1 FROM automation_rules
        WHERE office_id = :office_id AND trigger_event = :name AND enabled
          AND (integration_id IS NULL OR integration_id = :integration_id))"""


def sql_params(event: OutboxEvent) -> dict[str, Any]:
    return {"automation_always": _always(event)}


REGISTRATION = registry.Registration(AUTOMATION, wants, WANTS_SQL, sql_params)


def install() -> None:
    registry.register(REGISTRATION)
