"""``emit``: records an event in the outbox, in the caller's transaction."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast, overload

from pydantic import BaseModel
from sqlalchemy import (
    Boolean,
    String,
    Table,
    bindparam,
    column,
    insert,
    literal,
    null,
    select,
    table,
    text,
    union_all,
)
from sqlalchemy import cast as sql_cast
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.catalogue import EVENT_NAMES, Event, P
from officehub.events.models import ConsumerEvent, OutboxEvent
from officehub.events.wakeup import NOTIFY_CHANNEL, mark_emitted
from officehub.kit.db import JSONType
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow

_EVENT_COLUMNS = tuple(c.name for c in OutboxEvent.__table__.columns)
_INSERT_EVENT = insert(cast(Table, OutboxEvent.__table__))
_INSERT_CONSUMER_EVENT = insert(cast(Table, ConsumerEvent.__table__))

CONSUMERS = ("webhooks", "automation", "flows")
"""The outbox consumers that keep a progress row per event they want (``interested``)."""

FLOWS_EVENTS = frozenset({"chat.message.received", "chat.conversation.assigned"})
"""The events a conversation's flow reacts to (``flows.runtime.handle_event``)."""
AUTOMATION_ALWAYS = frozenset({"crm.lead.created", "crm.lead.moved"})
"""Events automation records whatever the rules: a card's column entries, which decide
``restartOnReturn`` for rules created later."""

_webhooks = table(
    "webhooks",
    column("office_id", String),
    column("is_active", Boolean),
    column("events", JSONType),
)
_rules = table(
    "automation_rules",
    column("office_id", String),
    column("trigger_event", String),
    column("enabled", Boolean),
    column("integration_id", String),
)


@dataclass(frozen=True)
class _Key:
    office_id: str
    name: str
    integration_id: str | None


async def _subscribers(
    session: AsyncSession, keys: Sequence[_Key]
) -> tuple[dict[str, list[list[str]]], set[tuple[str, str, str | None]]]:
    """One query: each office's active webhooks' event lists, and which (office, trigger,
    integration) has an enabled rule. Both read through indexes starting with office_id."""
    offices = sorted({k.office_id for k in keys})
    wanted = sorted({k.name for k in keys if k.name not in AUTOMATION_ALWAYS})
    hooks = select(
        literal("w").label("kind"),
        _webhooks.c.office_id,
        _webhooks.c.events,
        null().label("trigger_event"),
        null().label("integration_id"),
    ).where(_webhooks.c.office_id.in_(offices), _webhooks.c.is_active.is_(True))
    stmt: Any = hooks
    if wanted:
        rules = (
            select(
                literal("r").label("kind"),
                _rules.c.office_id,
                sql_cast(null(), JSONType),
                _rules.c.trigger_event,
                _rules.c.integration_id,
            )
            .where(
                _rules.c.office_id.in_(offices),
                _rules.c.trigger_event.in_(wanted),
                _rules.c.enabled.is_(True),
            )
            .distinct()
        )
        stmt = union_all(hooks, rules)
    webhooks: dict[str, list[list[str]]] = {}
    triggers: set[tuple[str, str, str | None]] = set()
    for kind, office_id, events, trigger, integration in await session.execute(stmt):
        if kind == "w":
            if isinstance(events, str):
                events = json.loads(events)
            webhooks.setdefault(office_id, []).append(list(events or []))
        else:
            triggers.add((office_id, trigger, integration))
    return webhooks, triggers


async def interested(
    session: AsyncSession, events: Sequence[OutboxEvent]
) -> list[tuple[OutboxEvent, str]]:
    """The (event, consumer) pairs that get a progress row: each consumer's choice.

    - ``webhooks``: an active webhook of the office subscribed to the event exists when it
      is recorded (``webhook.test``: always, for its one target);
    - ``automation``: an enabled rule of the office on that trigger (and integration)
      exists, or the event is one automation records anyway (card column entries, a
      template sent into a conversation, which lifts a ``resumeOnTemplateSent`` pause);
    - ``flows``: an inbound message or an assignment in a conversation.

    The office's webhooks and rules are read in the caller's transaction, so an endpoint
    or rule committed before the event is seen; one created after it never gets it.
    """
    keys = [
        _Key(e.office_id, e.name, e.integration_id) for e in events if e.target_webhook_id is None
    ]
    webhooks, triggers = await _subscribers(session, keys) if keys else ({}, set())
    pairs: list[tuple[OutboxEvent, str]] = []
    for event in events:
        if event.target_webhook_id is not None:
            pairs.append((event, "webhooks"))
            continue
        if any(event.name in subscribed for subscribed in webhooks.get(event.office_id, [])):
            pairs.append((event, "webhooks"))
        if (
            event.name in AUTOMATION_ALWAYS
            or _template_sent(event)
            or (event.office_id, event.name, None) in triggers
            or (
                event.integration_id is not None
                and (event.office_id, event.name, event.integration_id) in triggers
            )
        ):
            pairs.append((event, "automation"))
        if event.name in FLOWS_EVENTS and event.conversation_id is not None:
            pairs.append((event, "flows"))
    return pairs


def _progress_row(event: OutboxEvent, consumer: str, now: datetime) -> dict[str, Any]:
    """A consumer's progress row for ``event``, as the Core insert takes it."""
    return {
        "office_id": event.office_id,
        "consumer": consumer,
        "event_id": event.id,
        "ordering_key": event.conversation_id or event.id,
        "created_at": now,
        "attempts": 0,
    }


def _progress(event: OutboxEvent, consumer: str, now: datetime) -> ConsumerEvent:
    return ConsumerEvent(
        office_id=event.office_id,
        consumer=consumer,
        event_id=event.id,
        ordering_key=event.conversation_id or event.id,
        created_at=now,
        attempts=0,
    )


@dataclass(frozen=True)
class Cause:
    """The event whose handling is making changes, and that event's depth."""

    event_id: str
    depth: int


_cause: ContextVar[Cause | None] = ContextVar("officehub_event_cause", default=None)


@contextlib.contextmanager
def caused_by(cause: Cause) -> Iterator[None]:
    """Every event emitted inside is recorded as caused by ``cause`` (one level deeper)."""
    token = _cause.set(cause)
    try:
        yield
    finally:
        _cause.reset(token)


@overload
async def emit(
    session: AsyncSession,
    office_id: str,
    name: Event[P],
    data: P,
    *,
    causation_id: str | None = None,
    depth: int = 0,
    conversation_id: str | None = None,
    integration_id: str | None = None,
    target_webhook_id: str | None = None,
) -> OutboxEvent: ...


@overload
async def emit(
    session: AsyncSession,
    office_id: str,
    name: str,
    data: dict[str, Any],
    *,
    causation_id: str | None = None,
    depth: int = 0,
    conversation_id: str | None = None,
    integration_id: str | None = None,
    target_webhook_id: str | None = None,
) -> OutboxEvent: ...


async def emit(
    session: AsyncSession,
    office_id: str,
    name: Event[Any] | str,
    data: BaseModel | dict[str, Any],
    *,
    causation_id: str | None = None,
    depth: int = 0,
    conversation_id: str | None = None,
    integration_id: str | None = None,
    target_webhook_id: str | None = None,
) -> OutboxEvent:
    """Adds the event to the session; it commits, or rolls back, with the change itself.

    The service passes an ``Event`` and its payload model (the webhook body's ``data`` is
    the model's JSON); a name and a dict is a payload taken as given (tests inject events
    so). ``causation_id`` and ``depth`` name the event that caused this one (automation
    chains; inside ``caused_by`` they are taken from there); ``target_webhook_id`` limits
    delivery to one webhook (``webhook.test``). Each consumer gets its progress row in the
    same transaction, and workers are woken once it commits.
    """
    name, data = _payload(name, data)
    cause = _cause.get()
    if causation_id is None and cause is not None:
        causation_id, depth = cause.event_id, cause.depth + 1
    now = utcnow()
    event = OutboxEvent(
        id=new_id(),
        office_id=office_id,
        name=name,
        data=data,
        created_at=now,
        causation_id=causation_id,
        depth=depth,
        conversation_id=conversation_id,
        integration_id=integration_id,
        target_webhook_id=target_webhook_id,
    )
    # What the request changed before is written first (events keep their order), then the
    # event and its consumers' rows as two prebuilt Core inserts: the unit of work's
    # bookkeeping for two objects cost more than the statements themselves. The returned
    # event is not in the session (nothing reads it back there).
    await session.flush()
    values = {c: getattr(event, c) for c in _EVENT_COLUMNS}
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(
            _EMIT_PG, _emit_pg_params(event, values, mark_emitted(session, office_id))
        )
        return event
    await session.execute(_INSERT_EVENT, values)
    rows = [_progress_row(e, consumer, now) for e, consumer in await interested(session, [event])]
    if rows:
        await session.execute(_INSERT_CONSUMER_EVENT, rows)
    mark_emitted(session, office_id)
    return event


_EMIT_PG = text(
    """
WITH event AS (
    INSERT INTO outbox_events (id, office_id, name, data, created_at, causation_id, depth,
                               conversation_id, integration_id, target_webhook_id)
    VALUES (:id, :office_id, :name, :data, :created_at, :causation_id, :depth,
            :conversation_id, :integration_id, :target_webhook_id)
    RETURNING id, office_id, created_at, COALESCE(conversation_id, id) AS ordering_key
), wanted (consumer) AS (
    SELECT 'webhooks' WHERE :targeted OR EXISTS (
        SELECT 1 FROM webhooks
        WHERE office_id = :office_id AND is_active
          AND events @> jsonb_build_array(CAST(:name AS TEXT)))
    UNION ALL
    SELECT 'automation' WHERE NOT :targeted AND (:automation_always OR EXISTS (
        SELECT 1 FROM automation_rules
        WHERE office_id = :office_id AND trigger_event = :name AND enabled
          AND (integration_id IS NULL OR integration_id = :integration_id)))
    UNION ALL
    SELECT 'flows' WHERE NOT :targeted AND :flows
), progress AS (
    INSERT INTO outbox_consumer_events (office_id, consumer, event_id, ordering_key,
                                        created_at, attempts)
    SELECT event.office_id, wanted.consumer, event.id, event.ordering_key, event.created_at, 0
    FROM event CROSS JOIN wanted
)
SELECT pg_notify(:channel, '') WHERE :notify
"""
).bindparams(
    bindparam("data", type_=OutboxEvent.__table__.c.data.type),
    bindparam("created_at", type_=OutboxEvent.__table__.c.created_at.type),
)
"""``emit`` on PostgreSQL in one round trip: the event, the progress row of each consumer
that wants it (``interested``'s rules, read in the same statement: an active webhook
subscribed to the event, an enabled rule on its trigger and integration) and the workers'
wake-up (``pg_notify``, once per transaction). On SQLite: three statements, ``interested``
deciding in Python; ``test_event_interest`` holds both to the same choices."""


def _emit_pg_params(event: OutboxEvent, values: dict[str, Any], notify: bool) -> dict[str, Any]:
    return {
        **values,
        "targeted": event.target_webhook_id is not None,
        "automation_always": event.name in AUTOMATION_ALWAYS or _template_sent(event),
        "flows": event.name in FLOWS_EVENTS and event.conversation_id is not None,
        "channel": NOTIFY_CHANNEL,
        "notify": notify,
    }


def _template_sent(event: OutboxEvent) -> bool:
    """A template sent into a conversation (lifts a ``resumeOnTemplateSent`` pause)."""
    return (
        event.name == "chat.message.sent"
        and event.conversation_id is not None
        and bool((event.data or {}).get("templateName"))
    )


def _payload(
    event: Event[Any] | str, data: BaseModel | dict[str, Any]
) -> tuple[str, dict[str, Any]]:
    """The event's name and its payload as stored (and sent): a model's JSON, by alias."""
    if isinstance(event, Event):
        # Its model exactly: a subclass would add keys the catalogue's schema does not name.
        if not isinstance(data, BaseModel) or type(data) is not event.payload:
            raise TypeError(f"{event.name} carries {event.payload.__name__}, not {type(data)}")
        return event.name, data.model_dump(mode="json", by_alias=True)
    if event not in EVENT_NAMES:
        raise ValueError(f"unknown event {event!r}")
    if not isinstance(data, dict):
        raise TypeError(f"{event}: a payload model goes with its Event")
    return event, data


@dataclass(frozen=True)
class PendingEvent:
    """An event ``emit_many`` records: an ``Event`` and its payload model, checked there
    (or, as ``emit`` takes them, a name and a dict)."""

    office_id: str
    name: Event[Any] | str
    data: BaseModel | dict[str, Any]
    conversation_id: str | None = None
    integration_id: str | None = None


async def emit_many(session: AsyncSession, events: Sequence[PendingEvent]) -> None:
    """``emit`` for a batch (a worker recording many outcomes): one flush for them all."""
    payloads = [_payload(e.name, e.data) for e in events]
    if not events:
        return
    now = utcnow()
    records = [
        OutboxEvent(
            id=new_id(),
            office_id=e.office_id,
            name=name,
            data=data,
            created_at=now,
            causation_id=None,
            depth=0,
            conversation_id=e.conversation_id,
            integration_id=e.integration_id,
            target_webhook_id=None,
        )
        for e, (name, data) in zip(events, payloads, strict=True)
    ]
    session.add_all(records)
    await session.flush()
    rows = [_progress(e, consumer, now) for e, consumer in await interested(session, records)]
    if rows:
        session.add_all(rows)
        await session.flush()
    first = [mark_emitted(session, office_id) for office_id in {e.office_id for e in events}]
    if first[0] and session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": NOTIFY_CHANNEL})
