"""``emit``: records an event in the outbox, in the caller's transaction."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, cast, overload

from pydantic import BaseModel
from sqlalchemy import BindParameter, Table, bindparam, insert, inspect, text
from sqlalchemy import event as orm_event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from officehub.events import registry, repository
from officehub.events.catalogue import EVENT_NAMES, Event, P
from officehub.events.models import ConsumerEvent, OutboxEvent
from officehub.kit import transaction_hooks
from officehub.kit.db import Base
from officehub.kit.ids import new_id
from officehub.kit.raw_read import RawStatement
from officehub.kit.timeutil import utcnow
from officehub.kit.wakeup import NOTIFY_CHANNEL, mark_emitted

_EVENT_COLUMNS = tuple(c.name for c in OutboxEvent.__table__.columns)
_INSERT_EVENT = insert(cast(Table, OutboxEvent.__table__))
_INSERT_CONSUMER_EVENT = insert(cast(Table, ConsumerEvent.__table__))


async def interested(
    session: AsyncSession, events: Sequence[OutboxEvent]
) -> list[tuple[OutboxEvent, str]]:
    """The (event, consumer) pairs that get a progress row: each registered consumer's
    choice (``registry``), asked in the caller's transaction, so what a consumer reads to
    decide (an office's webhooks, its rules) is seen when committed before the event, and
    never when created after it. An event addressed to one target goes to the consumers
    registered ``targeted`` only."""
    transaction_hooks.wire_now()
    consumers = registry.registered()
    if not consumers:
        raise registry.ConsumersNotWired(
            "No outbox consumer is registered: call officehub.hook_subscriptions.install() "
            "in this process before running domain services"
        )
    open_events = [e for e in events if e.target_webhook_id is None]
    wanted: dict[str, Sequence[bool]] = {}
    for consumer in consumers:
        wanted[consumer.name] = await consumer.wants(session, open_events) if open_events else []
    chosen: dict[int, list[str]] = {}
    for i, event in enumerate(open_events):
        chosen[id(event)] = [c.name for c in consumers if wanted[c.name][i]]
    targeted = [c.name for c in consumers if c.targeted]
    pairs: list[tuple[OutboxEvent, str]] = []
    for event in events:
        names = targeted if event.target_webhook_id is not None else chosen[id(event)]
        pairs.extend((event, name) for name in names)
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


@dataclass(frozen=True, slots=True)
class NewRow:
    """A new record's row for ``emit``'s ``inserting`` without an ORM object: its table and
    every column's value by attribute key (what ``getattr`` of a new record would give)."""

    table: Table
    values: dict[str, Any]


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
    new_subject: bool = False,
    inserting: Base | NewRow | None = None,
    updating: Base | None = None,
    last_write: bool = False,
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
    new_subject: bool = False,
    inserting: Base | NewRow | None = None,
    updating: Base | None = None,
    last_write: bool = False,
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
    new_subject: bool = False,
    inserting: Base | NewRow | None = None,
    updating: Base | None = None,
    last_write: bool = False,
) -> OutboxEvent:
    """Adds the event to the session; it commits, or rolls back, with the change itself.

    The service passes an ``Event`` and its payload model (the webhook body's ``data`` is
    the model's JSON); a name and a dict is a payload taken as given (tests inject events
    so). ``causation_id`` and ``depth`` name the event that caused this one (automation
    chains; inside ``caused_by`` they are taken from there); ``target_webhook_id`` limits
    delivery to one webhook (``webhook.test``). Each consumer gets its progress row in the
    same transaction, and workers are woken once it commits.

    ``new_subject``: the record the event is about (``data.id``) was created by this
    transaction, so no other transaction can hold its counter (its id is new and unseen
    until the commit). On PostgreSQL the event then takes sequence 1 and the subject's
    counter row in its own statement, not at the commit: one round trip fewer.

    ``inserting``: a new record (every column set, as ``insert_or_conflict`` takes it) the
    change writes, inserted before the event: on PostgreSQL in the event's own statement
    (one round trip for the change and its event; the consumers' conditions read no table
    it writes), on SQLite by a Core insert first. It stays out of the session; a rule's
    refusal of it raises ``IntegrityError`` here (``kit.repository.conflicts_as``).

    ``updating``: a record of the session, its row locked by the caller (``for_change``),
    whose pending column changes the event's statement writes on PostgreSQL (an ``UPDATE``
    of its row by primary key, a CTE: one round trip for the change and its event); they
    are then marked written in the session (the unit of work has nothing left to write
    for it). On SQLite the flush before the event writes them. A rule's refusal raises
    ``IntegrityError`` here, as a flush's would.

    ``last_write``: the caller's transaction takes no lock and writes nothing after this
    event until it commits (the request's last write). On PostgreSQL the event's subject's
    counter is then taken and the event numbered in its own statement, not at the commit:
    one round trip fewer, and the counter is still the transaction's last lock (the order
    ``_NUMBER_PG`` keeps). Only when no earlier event of the transaction waits for its number.
    """
    name, data = _payload(name, data)
    cause = _cause.get()
    if causation_id is None and cause is not None:
        causation_id, depth = cause.event_id, cause.depth + 1
    now = utcnow()
    subject = _subject_of(conversation_id, data)
    dialect = session.get_bind().dialect
    first = dialect.name == "postgresql" and new_subject and subject is not None
    # The event's row by column (``sequence`` None until numbered, 1 for the first event of
    # a new subject on PostgreSQL), then the record made of it (``_event_record``): reading
    # each column back through the record's instrumented attributes, or setting one after,
    # cost more than writing them.
    values: dict[str, Any] = {
        "id": new_id(),
        "office_id": office_id,
        "name": name,
        "data": data,
        "created_at": now,
        "causation_id": causation_id,
        "depth": depth,
        "conversation_id": conversation_id,
        "integration_id": integration_id,
        "target_webhook_id": target_webhook_id,
        "subject": subject,
        "sequence": 1 if first else None,
    }
    event = _event_record(values)
    # What the request changed before is written first (events keep their order), then the
    # event and its consumers' rows as two prebuilt Core inserts: the unit of work's
    # bookkeeping for two objects cost more than the statements themselves. The returned
    # event is not in the session (nothing reads it back there). A session with nothing
    # to write is not flushed (``Session.flush`` would return at once; the call alone goes
    # through a greenlet). A record the event's statement updates (``updating``) is taken
    # out of the flush first.
    pg = dialect.name == "postgresql"
    update = _pending_update(session, updating) if pg and updating is not None else None
    if session.new or session.dirty or session.deleted:
        await session.flush()
    written: Table | None = None
    row: dict[str, Any] = {}
    if isinstance(inserting, NewRow):
        written, row = inserting.table, inserting.values
    elif inserting is not None:
        written = cast(Table, inserting.__table__)
        row = {c.key: getattr(inserting, c.key) for c in written.columns}
    if pg:
        numbered_now = (
            last_write and subject is not None and not first and not session.info.get(_NUMBERED)
        )
        params = _emit_pg_params(event, values, mark_emitted(session, office_id))
        if written is not None:
            params.update({param: row[key] for param, key in _row_params(written)})
        updated: _Update | None = None
        if update is not None:
            updated, update_params = update
            params.update(update_params)
        statement = _emit_pg_statement(
            first, written, dialect.identifier_preparer.quote, updated, numbered_now
        )
        await statement.execute(session, params)
        if subject is not None and not first and not numbered_now:
            _number_at_commit(session, [event.id])
        return event
    if written is not None:
        await session.execute(insert(written), {c.name: row[c.key] for c in written.columns})
    if subject is not None:
        counted = await session.execute(
            _COUNT_SUBJECT, {"office_id": office_id, "subject": subject, "n": 1}
        )
        event.sequence = values["sequence"] = counted.scalar_one()
    await session.execute(_INSERT_EVENT, values)
    rows = [_progress_row(e, consumer, now) for e, consumer in await interested(session, [event])]
    if rows:
        await session.execute(_INSERT_CONSUMER_EVENT, rows)
    mark_emitted(session, office_id)
    return event


_EVENT_MAPPER = OutboxEvent.__mapper__


def _event_record(values: dict[str, Any]) -> OutboxEvent:
    """The transient ``OutboxEvent`` of ``values`` (every column), made as a loaded record
    is (``ClassManager.new_instance``, its values in its ``__dict__``) rather than by its
    constructor, whose instrumented setting of each attribute cost 13 µs of an ``emit``.
    The same record to read (and, added to a session, to insert: a flush writes a new
    record's values from its ``__dict__``); only its attribute history is empty, which
    nothing reads of a record outside a session. Until the mappers are configured (the
    first record made configures them), made by the constructor."""
    if not _EVENT_MAPPER.configured:
        return OutboxEvent(**values)
    event: OutboxEvent = _EVENT_MAPPER.class_manager.new_instance()
    event.__dict__.update(values)
    return event


def _subject_of(conversation_id: str | None, data: dict[str, Any]) -> str | None:
    """What an event is about, for its sequence: its conversation, else the record its
    payload describes (``data.id``); None for an event about no record."""
    if conversation_id is not None:
        return conversation_id
    record = data.get("id")
    return record if isinstance(record, str) and 0 < len(record) <= 40 else None


_COUNT_SUBJECT = text(
    "INSERT INTO event_subjects (office_id, subject, last_sequence)"
    " VALUES (:office_id, :subject, :n)"
    " ON CONFLICT (office_id, subject)"
    " DO UPDATE SET last_sequence = event_subjects.last_sequence + :n"
    " RETURNING last_sequence"
)
"""Counts ``n`` more events of a subject and answers its last sequence (SQLite, where a
writing transaction holds the whole database from its start, so numbering at once costs
no contention). The subject's row stays locked until the transaction ends, so the sequence
follows the order in which transactions about one subject commit."""

_NUMBERED = "officehub_events_to_number"

_NUMBER_PG = text(
    """
WITH pending AS (
    SELECT o.id, o.office_id, o.subject,
           row_number() OVER (PARTITION BY o.office_id, o.subject ORDER BY p.place) AS place
    FROM unnest(CAST(:ids AS varchar[])) WITH ORDINALITY AS p(id, place)
    JOIN outbox_events AS o ON o.id = p.id
    WHERE o.subject IS NOT NULL
), counts AS (
    SELECT office_id, subject, count(*) AS n FROM pending GROUP BY office_id, subject
), counted AS (
    INSERT INTO event_subjects (office_id, subject, last_sequence)
    SELECT office_id, subject, n FROM counts ORDER BY office_id, subject
    ON CONFLICT (office_id, subject)
    DO UPDATE SET last_sequence = event_subjects.last_sequence + EXCLUDED.last_sequence
    RETURNING office_id, subject, last_sequence
)
UPDATE outbox_events AS o
SET sequence = counted.last_sequence - counts.n + pending.place
FROM pending
JOIN counts USING (office_id, subject)
JOIN counted USING (office_id, subject)
WHERE o.id = pending.id
"""
)
"""PostgreSQL numbers a transaction's events when it commits (``_number_pending``), in one
statement: each subject's counter row is taken in (office, subject) order, as the last
thing the transaction does. Numbering at each ``emit`` held a conversation's counter from
its first event to the commit, and two transactions taking rows in other orders (a
message's row, then a counter; a counter, then the message's row) deadlocked: the inbound
path at 20 notifications/s did, several times a minute (``bench.inbound_path``). Events a
rolled-back savepoint took away are not found, so they leave no gap."""

_RAW_NUMBER_PG = RawStatement(_NUMBER_PG)


def _number_at_commit(session: AsyncSession, ids: Sequence[str]) -> None:
    session.info.setdefault(_NUMBERED, []).extend(ids)


@orm_event.listens_for(Session, "before_commit")
def _number_pending(session: Session) -> None:
    if session.in_nested_transaction():
        return  # a savepoint: the outer transaction numbers them when it commits
    ids = session.info.pop(_NUMBERED, None)
    if ids:
        _RAW_NUMBER_PG.execute_sync(session.connection(), {"ids": ids})


@orm_event.listens_for(Session, "after_rollback")
def _forget_pending(session: Session) -> None:
    if not session.in_transaction():
        session.info.pop(_NUMBERED, None)


_EMIT_PG_TEMPLATE = """
WITH {counter}event AS (
    INSERT INTO outbox_events (id, office_id, name, data, created_at, causation_id, depth,
                               conversation_id, integration_id, target_webhook_id, subject{seq})
    VALUES (:id, :office_id, :name, :data, :created_at, :causation_id, :depth,
            :conversation_id, :integration_id, :target_webhook_id, :subject{seq_value})
    RETURNING id, office_id, created_at, COALESCE(conversation_id, id) AS ordering_key
), wanted (consumer) AS (
{wanted}
), progress AS (
    INSERT INTO outbox_consumer_events (office_id, consumer, event_id, ordering_key,
                                        created_at, attempts)
    SELECT event.office_id, wanted.consumer, event.id, event.ordering_key, event.created_at, 0
    FROM event CROSS JOIN wanted
)
SELECT pg_notify(:channel, '') WHERE :notify
"""
"""``emit`` on PostgreSQL in one round trip: the event, the progress row of each consumer
that wants it (each registered consumer's ``wants_sql``, read in the same statement: an
active webhook subscribed to the event, an enabled rule on its trigger and integration…)
and the workers' wake-up (``pg_notify``, once per transaction). On SQLite: three
statements, ``interested`` deciding in Python; ``test_event_interest`` holds both to the
same choices. An event about a record its transaction created (``new_subject``) also takes
sequence 1 and the subject's counter row there (``_FIRST_OF_SUBJECT``)."""

_FIRST_OF_SUBJECT = """counter AS (
    INSERT INTO event_subjects (office_id, subject, last_sequence)
    VALUES (:office_id, :subject, 1)
), """

_COUNTED_NOW = """counted AS (
    INSERT INTO event_subjects (office_id, subject, last_sequence)
    VALUES (:office_id, :subject, 1)
    ON CONFLICT (office_id, subject)
    DO UPDATE SET last_sequence = event_subjects.last_sequence + 1
    RETURNING last_sequence
), """
"""``emit(…, last_write=True)``: the subject's counter taken and the event numbered in the
event's statement (the counter row stays locked to the commit, the transaction's last lock)."""


@dataclass(frozen=True)
class _Update:
    """``emit``'s ``updating``: the table and the names of the columns its pending changes
    set (its row found by its primary key); the statement is built once per shape."""

    table: Table
    columns: tuple[str, ...]


def _pending_update(session: AsyncSession, record: Base) -> tuple[_Update, dict[str, Any]] | None:
    """The pending column changes of ``record`` (loaded, persistent) as the flush would
    write them, marked written in the session; None (the flush writes them) when it holds
    anything else pending (a relationship, a key) or its table has a column the flush
    would set on its own (``onupdate``) that the change does not set."""
    state: Any = inspect(record)
    if state.key is None or not state.modified:
        return None
    shape = _updatable(state.mapper)
    values = state.dict
    names: list[str] = []
    params: dict[str, Any] = {}
    for key, before in state.committed_state.items():
        found = shape.columns.get(key)
        if found is None or key not in values:
            return None
        name, is_equal = found
        value = values[key]
        if is_equal(value, before) is True:
            continue
        names.append(name)
        params[f"upd_{name}"] = value
    if not names or not shape.set_by_flush.issubset(names):
        return None
    for name, value in zip(shape.keys, state.key[1], strict=True):
        params[f"upd_pk_{name}"] = value
    # Written by the event's statement: the unit of work has nothing left to write for it.
    state._commit_all(values, session.sync_session.identity_map)
    return _Update(shape.table, tuple(names)), params


@dataclass(frozen=True)
class _Updatable:
    table: Table
    columns: dict[str, tuple[str, Callable[[Any, Any], Any]]]
    """Per attribute of one column of the table (not a key): the column's name and the
    attribute's comparison (the flush's)."""
    set_by_flush: frozenset[str]
    """The columns the flush sets on its own when a row changes (``onupdate``)."""
    keys: tuple[str, ...]
    """The primary key's columns, in the identity's order."""


@cache
def _updatable(mapper: Any) -> _Updatable:
    table: Any = mapper.local_table
    columns = {
        prop.key: (prop.columns[0].name, mapper.class_manager[prop.key].impl.is_equal)
        for prop in mapper.column_attrs
        if len(prop.columns) == 1
        and prop.columns[0].table is table
        and not prop.columns[0].primary_key
    }
    set_by_flush = frozenset(
        c.name for c in table.columns if c.onupdate is not None or c.server_onupdate is not None
    )
    return _Updatable(table, columns, set_by_flush, tuple(c.name for c in mapper.primary_key))


def _updated_pg(
    update: _Update, quote: Callable[[str], str]
) -> tuple[str, list[BindParameter[Any]]]:
    """The CTE writing ``update`` (its row by primary key), each value bound with its
    column's type; ``quote``: the dialect's, for names."""
    columns = [update.table.c[name] for name in update.columns]
    keys = list(update.table.primary_key.columns)
    sets = ", ".join(f"{quote(c.name)} = :upd_{c.name}" for c in columns)
    where = " AND ".join(f"{quote(c.name)} = :upd_pk_{c.name}" for c in keys)
    # Names from the table's metadata (quoted), values bound: nothing a request sends.
    statement = f"UPDATE {quote(update.table.name)} SET {sets} WHERE {where}"  # noqa: S608
    binds = [bindparam(f"upd_{c.name}", type_=c.type) for c in columns]
    binds += [bindparam(f"upd_pk_{c.name}", type_=c.type) for c in keys]
    return f"updated AS (\n    {statement}\n), ", binds


_emit_pg: dict[tuple[bool, Table | None, _Update | None, bool], tuple[int, RawStatement]] = {}


@cache
def _row_params(table: Table) -> tuple[tuple[str, str], ...]:
    """Each column's parameter in ``_written_pg``'s CTE and the row's key it takes."""
    return tuple((f"row_{c.name}", c.key) for c in table.columns)


def _written_pg(table: Table, quote: Callable[[str], str]) -> tuple[str, list[BindParameter[Any]]]:
    """The CTE inserting one row of ``table`` (``emit``'s ``inserting``): every column, each
    bound as ``row_<column>`` with its column's type; ``quote``: the dialect's, for names."""
    names = ", ".join(quote(c.name) for c in table.columns)
    values = ", ".join(f":row_{c.name}" for c in table.columns)
    # Names from the table's metadata (quoted), values bound: nothing a request sends.
    insert_row = f"INSERT INTO {quote(table.name)} ({names}) VALUES ({values})"  # noqa: S608
    cte = f"written AS (\n    {insert_row}\n), "
    return cte, [bindparam(f"row_{c.name}", type_=c.type) for c in table.columns]


def _emit_pg_statement(
    first_of_subject: bool = False,
    written: Table | None = None,
    quote: Callable[[str], str] = str,
    updated: _Update | None = None,
    counted: bool = False,
) -> RawStatement:
    """The statement for the consumers registered now (rebuilt when they change), compiled
    once and sent through the raw driver (``kit.raw_read.RawStatement``): SQLAlchemy's
    execution of a ``text()`` of some forty values cost more than the driver's own work.
    ``updated``: ``emit``'s ``updating`` CTE; ``counted``: numbered in it (``last_write``)."""
    transaction_hooks.wire_now()
    shape = (first_of_subject, written, updated, counted)
    built = _emit_pg.get(shape)
    if built is not None and built[0] == registry.version():
        return built[1]
    consumers = registry.registered()
    if not consumers:
        raise registry.ConsumersNotWired(
            "No outbox consumer is registered: call officehub.hook_subscriptions.install() "
            "in this process before running domain services"
        )
    # Names are checked at registration (lower-case letters and _), so they are literals.
    wanted = "\n    UNION ALL\n".join(
        f"    SELECT '{c.name}' WHERE :targeted OR ({c.wants_sql})"
        if c.targeted
        else f"    SELECT '{c.name}' WHERE NOT :targeted AND ({c.wants_sql})"
        for c in consumers
    )
    row_cte, row_params = _written_pg(written, quote) if written is not None else ("", [])
    update_cte, update_params = _updated_pg(updated, quote) if updated is not None else ("", [])
    if first_of_subject:
        numbering, sequence = _FIRST_OF_SUBJECT, ", 1"
    elif counted:
        numbering, sequence = _COUNTED_NOW, ", (SELECT last_sequence FROM counted)"
    else:
        numbering, sequence = "", ""
    statement = RawStatement(
        text(
            _EMIT_PG_TEMPLATE.format(
                wanted=wanted,
                counter=row_cte + update_cte + numbering,
                seq=", sequence" if sequence else "",
                seq_value=sequence,
            )
        ).bindparams(
            bindparam("data", type_=OutboxEvent.__table__.c.data.type),
            bindparam("created_at", type_=OutboxEvent.__table__.c.created_at.type),
            *row_params,
            *update_params,
        )
    )
    _emit_pg[shape] = (registry.version(), statement)
    return statement


def _emit_pg_params(event: OutboxEvent, values: dict[str, Any], notify: bool) -> dict[str, Any]:
    params = {
        **values,
        "targeted": event.target_webhook_id is not None,
        "channel": NOTIFY_CHANNEL,
        "notify": notify,
    }
    for consumer in registry.registered():
        params.update(consumer.sql_params(event))
    return params


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
            subject=_subject_of(e.conversation_id, data),
        )
        for e, (name, data) in zip(events, payloads, strict=True)
    ]
    if session.get_bind().dialect.name == "postgresql":
        _number_at_commit(session, [r.id for r in records if r.subject is not None])
    else:
        await _number(session, records)
    session.add_all(records)
    await session.flush()
    rows = [_progress(e, consumer, now) for e, consumer in await interested(session, records)]
    if rows:
        session.add_all(rows)
        await session.flush()
    first = [mark_emitted(session, office_id) for office_id in {e.office_id for e in events}]
    if first[0] and session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": NOTIFY_CHANNEL})


async def _number(session: AsyncSession, records: Sequence[OutboxEvent]) -> None:
    """Each record's sequence within its subject, in the batch's order (SQLite); the
    subjects' rows are counted in (office, subject) order."""
    by_subject: dict[tuple[str, str], list[OutboxEvent]] = {}
    for record in records:
        if record.subject is not None:
            by_subject.setdefault((record.office_id, record.subject), []).append(record)
    for (office_id, subject), numbered in sorted(by_subject.items()):
        counted = await session.execute(
            _COUNT_SUBJECT, {"office_id": office_id, "subject": subject, "n": len(numbered)}
        )
        last = counted.scalar_one()
        for place, record in enumerate(numbered, start=last - len(numbered) + 1):
            record.sequence = place


async def events_mentioning(
    session: AsyncSession, office_id: str, mentions: Sequence[str]
) -> list[str]:
    """The ids of the office's events whose conversation or payload names any of
    ``mentions`` (the records an erased contact leaves)."""
    return await repository.events_mentioning(session, office_id, mentions)


async def forget_subjects(session: AsyncSession, office_id: str, subjects: Sequence[str]) -> None:
    """Deletes the sequence counters of these subjects (an erasure: a subject is a record's
    id). A later event about the same id would count from 1 again."""
    await repository.delete_subjects(session, office_id, subjects)


async def forget_events(session: AsyncSession, office_id: str, ids: Sequence[str]) -> None:
    """Deletes these events with every consumer's progress on them (an erasure)."""
    await repository.delete_events(session, office_id, ids)
