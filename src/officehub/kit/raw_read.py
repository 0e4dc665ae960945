"""Hot reads on PostgreSQL straight through the request session's asyncpg connection.

A ``RawSelect`` wraps a Core ``Select`` written once (the same statement SQLite runs through
SQLAlchemy). On PostgreSQL it is compiled once per engine dialect (asyncpg's ``$n``
parameters; an expanding ``IN`` once per number of values) and run on the session's own
asyncpg connection, so per request there is no statement to hash or look up, no execution
context, no result object and no ORM object: a list of plain dicts.

What it keeps of SQLAlchemy's execution, so a row reads as it would through it:

- **The session's connection and transaction.** The statement runs on the connection
  ``session.connection()`` checked out, under the adapter's execute lock, and starts the
  adapter's transaction first when the session has one that has not sent its ``BEGIN``
  yet (SQLAlchemy's asyncpg adapter begins lazily, on the first statement), exactly as
  its cursor does: a read in a writing request sees that request's writes and its locks
  last until the request's commit or rollback. A read-only session (``AUTOCOMMIT``) sends
  no ``BEGIN``, as before.
  Like every read here (sessions are made with ``autoflush=False``), it does not flush
  the session's pending ORM changes: a caller that needs them read flushes first.
- **The adapter's prepared statements**: the same per-connection cache SQLAlchemy's cursor
  prepares into (one ``PREPARE`` per statement and connection, then only ``BIND/EXECUTE``).
- **Values as the column types make them**: each bound value through its type's bind
  processor and each column through its type's result processor for this dialect
  (``UTCDateTime``'s aware UTC, JSON decoded by the codec SQLAlchemy registers on each
  connection, any ``TypeDecorator``), the processors SQLAlchemy's cursor result applies.
- **Errors and events**: a driver error is translated and wrapped as SQLAlchemy would
  (``DBAPIError``, the connection invalidated on a disconnect, parameters hidden); an
  engine's ``before_cursor_execute``/``after_cursor_execute`` listeners see the statement
  and its parameters (the tests that count or explain statements).

SQLite (and any other dialect) runs the same statement through the session, rows as dicts.

``RawStatement`` sends a write the same way (the outbox's event statement and its numbering
at commit, ``events.service``): what it answers is not read.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Select
from sqlalchemy.engine import Connection, Dialect
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.util import await_only, greenlet_spawn

Row = dict[str, Any]


@dataclass(frozen=True, slots=True)
class _Shape:
    """The statement compiled for one dialect and one count of values per expanding
    parameter: its text, where each positional value comes from, and the processors."""

    sql: str
    values: tuple[tuple[str, int | None, Callable[[Any], Any] | None], ...]
    """Per ``$n``: the parameter's name, its index in a list (expanding) or None, and the
    type's bind processor (None when the type has none)."""
    keys: tuple[str, ...]
    result_types: tuple[Any, ...]


@dataclass(slots=True)
class _Compiled:
    compiled: Any  # SQLCompiler: its positional names, binds and result columns
    expanding: tuple[str, ...]
    shapes: dict[tuple[int, ...], _Shape]
    result_processors: tuple[tuple[int, Callable[[Any], Any]], ...] | None = None
    """The result columns that have a processor: (position, processor)."""


class RawSelect:
    """A Core select read as plain dicts; on PostgreSQL through the raw driver (see the
    module). ``rows(session, params)``: every row, each ``{column key: value}``."""

    __slots__ = ("__weakref__", "_by_dialect", "statement")

    def __init__(self, statement: Select[*tuple[Any, ...]]) -> None:
        self.statement = statement
        self._by_dialect: weakref.WeakKeyDictionary[Dialect, _Compiled] = (
            weakref.WeakKeyDictionary()
        )

    async def rows(self, session: AsyncSession, params: Mapping[str, Any]) -> list[Row]:
        connection = await session.connection()
        sync: Any = connection.sync_connection  # set while the connection is open
        dialect = sync.dialect
        if dialect.driver != "asyncpg":
            result = await connection.execute(self.statement, dict(params))
            return [dict(m) for m in result.mappings()]
        return await self._raw(sync, dialect, params)

    async def one_or_none(self, session: AsyncSession, params: Mapping[str, Any]) -> Row | None:
        found = await self.rows(session, params)
        return found[0] if found else None

    def _compiled(self, dialect: Dialect) -> _Compiled:
        entry = self._by_dialect.get(dialect)
        if entry is None:
            compiled: Any = self.statement.compile(dialect=dialect)
            expanding = tuple(
                name for name in compiled.positiontup if compiled.binds[name].expanding
            )
            entry = self._by_dialect[dialect] = _Compiled(compiled, expanding, {})
        return entry

    def _shape(self, entry: _Compiled, params: Mapping[str, Any]) -> _Shape:
        lengths = tuple(len(params[name]) for name in entry.expanding)
        shape = entry.shapes.get(lengths)
        if shape is not None:
            return shape
        compiled: Any = entry.compiled
        processors: dict[str, Any] = dict(compiled._bind_processors)
        if entry.expanding:
            sample = {name: params.get(name) for name in compiled.positiontup}
            state = compiled._process_parameters_for_postcompile(sample, _populate_self=False)
            sql, positions = state.statement, state.positiontup
            processors.update(state.processors)
            origin = {
                expanded: (name, i)
                for name, names in state.parameter_expansion.items()
                for i, expanded in enumerate(names)
            }
        else:
            sql, positions, origin = compiled.string, compiled.positiontup, {}
        values = tuple(
            (*origin.get(name, (name, None)), processors.get(name)) for name in positions
        )
        result_columns = compiled._result_columns
        shape = _Shape(
            sql,
            values,
            tuple(column[0] for column in result_columns),
            tuple(column[3] for column in result_columns),
        )
        entry.shapes[lengths] = shape
        return shape

    async def _raw(self, sync: Connection, dialect: Any, params: Mapping[str, Any]) -> list[Row]:
        entry = self._compiled(dialect)
        shape = self._shape(entry, params)
        records, attributes = await _send(sync, dialect, entry, shape, params)
        processors = entry.result_processors
        if processors is None:
            found = (
                type_._cached_result_processor(dialect, attribute.type.oid)
                for type_, attribute in zip(shape.result_types, attributes, strict=True)
            )
            processors = entry.result_processors = tuple(
                (i, process) for i, process in enumerate(found) if process is not None
            )
        keys = shape.keys
        if not processors:
            return [dict(zip(keys, record, strict=True)) for record in records]
        rows = []
        for record in records:
            values = list(record)
            for i, process in processors:
                values[i] = process(values[i])
            rows.append(dict(zip(keys, values, strict=True)))
        return rows


class RawStatement(RawSelect):
    """A statement that writes (a Core insert or a ``text()``, its values bound by name),
    run as ``RawSelect`` runs its select: compiled once per dialect, on PostgreSQL sent on
    the session's own asyncpg connection in its transaction, each value through its type's
    bind processor, errors and statement listeners as SQLAlchemy's. What it answers, if
    anything, is not read (a ``text()`` names no columns to read it by).

    ``execute`` from a coroutine; ``execute_sync`` from SQLAlchemy's synchronous side (a
    session event such as ``before_commit``, which runs in the greenlet of the async call)."""

    __slots__ = ()

    def __init__(self, statement: Any) -> None:
        super().__init__(statement)

    async def execute(self, session: AsyncSession, params: Mapping[str, Any]) -> None:
        connection = await session.connection()
        sync: Any = connection.sync_connection
        if sync.dialect.driver != "asyncpg":
            await connection.execute(self.statement, dict(params))
            return
        await self._execute(sync, params)

    def execute_sync(self, connection: Connection, params: Mapping[str, Any]) -> None:
        if connection.dialect.driver != "asyncpg":
            connection.execute(self.statement, dict(params))
            return
        await_only(self._execute(connection, params))

    async def _execute(self, sync: Connection, params: Mapping[str, Any]) -> None:
        dialect: Any = sync.dialect
        entry = self._compiled(dialect)
        await _send(sync, dialect, entry, self._shape(entry, params), params)


async def _send(
    sync: Connection, dialect: Any, entry: _Compiled, shape: _Shape, params: Mapping[str, Any]
) -> tuple[Any, Any]:
    """Sends ``shape`` with ``params`` on ``sync``'s asyncpg connection: (records, their
    attributes)."""
    binds = entry.compiled.binds
    args: list[Any] = []
    for name, index, process in shape.values:
        value = params[name] if name in params else binds[name].effective_value
        if index is not None:
            value = value[index]
        args.append(value if process is None else process(value))
    dispatch = sync.dispatch
    if dispatch.before_cursor_execute:
        dispatch.before_cursor_execute(sync, None, shape.sql, tuple(args), None, False)
    adapter: Any = sync.connection.dbapi_connection
    try:
        async with adapter._execute_mutex:
            if adapter._transaction is None:
                await adapter._start_transaction()  # nothing in AUTOCOMMIT
            prepared, attributes = await adapter._prepare(
                shape.sql, dialect._invalidate_schema_cache_asof
            )
            records = await prepared.fetch(*args)
    except Exception as error:
        await greenlet_spawn(_raise_as_sqlalchemy, sync, adapter, error, shape.sql, args)
        raise  # pragma: no cover (_raise_as_sqlalchemy always raises)
    if dispatch.after_cursor_execute:
        dispatch.after_cursor_execute(sync, None, shape.sql, tuple(args), None, False)
    return records, attributes


def _raise_as_sqlalchemy(
    sync: Connection, adapter: Any, error: Exception, sql: str, args: Sequence[Any]
) -> None:
    """The driver's error as SQLAlchemy's cursor would raise it: translated by the adapter
    (``sqlalchemy.dialects.postgresql.asyncpg``), then wrapped by the connection
    (``DBAPIError``, hidden parameters, the connection invalidated on a disconnect)."""
    try:
        adapter._handle_exception(error)
    except Exception as translated:
        sync._handle_dbapi_exception(translated, sql, tuple(args), None, None)
    raise error  # pragma: no cover (both above raise)


def on_raw_driver(session: AsyncSession) -> bool:
    """Whether ``session`` reads through asyncpg (PostgreSQL): where ``RawSelect`` pays.
    Callers keep their SQLAlchemy path (ORM records) elsewhere, SQLite's included."""
    return session.get_bind().dialect.driver == "asyncpg"
