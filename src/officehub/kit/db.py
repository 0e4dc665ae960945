"""Engine, sessions and the declarative base.

SQLite runs in WAL mode with foreign keys on and a busy timeout; PostgreSQL goes
through asyncpg with a pool. The request owns the transaction: see ``get_session``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import socket
import sqlite3
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import anyio
import asyncpg
from fastapi import Depends, Request
from sqlalchemy import (
    JSON,
    DateTime,
    MetaData,
    String,
    TypeDecorator,
    event,
    func,
    literal_column,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.engine import Dialect, make_url
from sqlalchemy.exc import DBAPIError, DisconnectionError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.ext.asyncio import (
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)
from sqlalchemy.orm import (
    DeclarativeBase,
    InstrumentedAttribute,
    Mapped,
    ORMExecuteState,
    Session,
    mapped_column,
)
from sqlalchemy.pool import ConnectionPoolEntry, PoolProxiedConnection, PoolResetState
from sqlalchemy.sql.elements import ColumnElement

from officehub.kit.ids import new_id
from officehub.kit.sqlite_driver import one_hop_dbapi
from officehub.kit.timeutil import as_utc, utcnow

if TYPE_CHECKING:
    from officehub.kit.config import Settings

logger = logging.getLogger("officehub.db")
_ON_ROLLBACK = "officehub.on_rollback"
_AIOSQLITE_LOG = logging.getLogger("aiosqlite")

NAMING = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class UTCDateTime(TypeDecorator[datetime]):
    """Stores aware datetimes; always hands back aware UTC (SQLite forgets the zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = as_utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else as_utc(value)


API_TIMESTAMP_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'
"""``to_char``'s pattern for ``timeutil.isoformat``'s text: UTC, milliseconds truncated."""


def api_timestamp(
    column: ColumnElement[datetime] | InstrumentedAttribute[datetime], name: str
) -> ColumnElement[str]:
    """A timestamp column as the API writes it (``2026-03-04T05:06:07.891Z``, what
    ``timeutil.isoformat`` makes of it), written by PostgreSQL's ``to_char`` of its UTC time
    (truncated to milliseconds, as ``isoformat``): read as text, no datetime to decode, no
    result processor, nothing to format per value in Python. PostgreSQL only; ``NULL``
    stays ``NULL``."""
    utc = func.timezone(literal_column("'UTC'"), column)
    return func.to_char(utc, literal_column(f"'{API_TIMESTAMP_FORMAT}'"), type_=String).label(name)


JSONType = JSON().with_variant(JSONB(), "postgresql")


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        datetime: UTCDateTime(),
        dict[str, Any]: JSONType,
    }


_COLUMN_KEYS: dict[type, tuple[str, ...]] = {}


def column_values(record: Base) -> dict[str, Any]:
    """A mapped record's column values by attribute name, for an answer model: a loaded one
    straight from the instance's state, an unloaded or expired one through the attribute
    (which loads it). The same values as ``getattr`` per column, without SQLAlchemy's
    attribute instrumentation per column and row (a page of 20 conversations of 39
    columns: 780 instrumented reads, half of ``conversation_out``'s time)."""
    kind = type(record)
    keys = _COLUMN_KEYS.get(kind)
    if keys is None:
        keys = _COLUMN_KEYS[kind] = tuple(c.key for c in record.__table__.columns)
    state = record.__dict__
    return {k: state[k] if k in state else getattr(record, k) for k in keys}


class IdMixin:
    id: Mapped[str] = mapped_column(String(32), primary_key=True, default=new_id)


class TimestampMixin:
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


async def database_now(session: AsyncSession) -> datetime:
    """The database's clock on PostgreSQL (hosts may disagree; it is the one they share).

    SQLite has no clock of its own and lives on one host: the host's clock.
    """
    if session.get_bind().dialect.name == "sqlite":
        return utcnow()
    now = await session.scalar(select(func.now()))
    if now is None:  # pragma: no cover (now() always answers)
        return utcnow()
    return as_utc(now)


def on_rollback(session: AsyncSession, undo: Callable[[], Awaitable[object]]) -> None:
    """Runs ``undo`` if the request's transaction does not commit.

    For what a request does outside the database before its commit, such as writing a
    file: a request that fails afterwards leaves nothing behind.
    """
    session.info.setdefault(_ON_ROLLBACK, []).append(undo)


async def _undo(session: AsyncSession) -> None:
    actions: list[Callable[[], Awaitable[object]]] = session.info.pop(_ON_ROLLBACK, [])
    with anyio.CancelScope(shield=True):
        for undo in reversed(actions):
            try:
                await undo()
            except Exception:
                logger.exception("undoing a rolled-back request's side effect failed")


def _sqlite_pragmas(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA busy_timeout=10000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    # Deleted rows are overwritten with zeros, in the file and the WAL, so an erased
    # client's data does not linger in free pages (LGPD; docs/lgpd.md).
    cursor.execute("PRAGMA secure_delete=ON")
    cursor.close()


def _rollback_if_open(dbapi_connection: Any, _record: Any, state: PoolResetState) -> None:
    """The pool's reset of a SQLite connection coming back: a rollback only when a
    transaction is still open.

    SQLAlchemy's own reset rolls back every returned connection unless the connection's
    close just did; after a commit, or a read (SQLite's driver opens no transaction for
    one), it is a rollback of nothing that still costs a hand-off to aiosqlite's thread.
    Whether a transaction is open is a flag the driver reads without that hand-off.
    """
    if state.transaction_was_reset or not state.asyncio_safe:
        return
    if dbapi_connection.driver_connection.in_transaction:
        dbapi_connection.rollback()


DEFAULT_POOL_SIZE = 20
"""Kept open per process: more than the requests a process has in flight under load (a
connection beyond the pool is opened and closed per request, TLS handshake and all)."""


@dataclass(frozen=True)
class DatabaseTimeouts:
    """How long a PostgreSQL connection may keep a request waiting (see ``create_engine``)."""

    connect: float
    statement: float
    pool: float
    keepalive: int

    @classmethod
    def of(cls, settings: Settings) -> DatabaseTimeouts:
        return cls(
            connect=settings.db_connect_timeout_seconds,
            statement=settings.db_statement_timeout_seconds,
            pool=settings.db_pool_timeout_seconds,
            keepalive=settings.db_keepalive_seconds,
        )

    @property
    def retry_after(self) -> int:
        """The ``Retry-After`` of a 503 for an unreachable database: about what finding out
        again costs (a connection's or a pool checkout's wait), whole seconds."""
        return max(1, math.ceil(max(self.connect, self.pool)))


def create_engine(
    url: str, pool_size: int = DEFAULT_POOL_SIZE, timeouts: DatabaseTimeouts | None = None
) -> AsyncEngine:
    """The engine of ``url``; on PostgreSQL, ``timeouts`` bound every wait on the database.

    Without them (the command line's one-off tasks: migrations, backups) nothing is bounded
    but asyncpg's own 60-s connect timeout. With them (the API and the worker) a database
    that goes silent, its packets dropped rather than refused, costs a request at most a
    pool checkout, a connect and a statement's timeout, each answered 503
    ``DATABASE_UNAVAILABLE``: ``connect`` is asyncpg's connect timeout, ``statement`` its
    ``command_timeout`` (the statement is cancelled), ``pool`` the pool's checkout
    timeout, and each connection's socket gets TCP keepalive probes after ``keepalive``
    idle seconds, so that a pooled connection whose peer vanished is found dead by the
    kernel instead of waiting on a reply forever.
    """
    if is_sqlite(url):
        database = make_url(url).database
        if database and database != ":memory:":
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        # aiosqlite's debug lines quote every statement with its values (personal data).
        _AIOSQLITE_LOG.setLevel(max(logging.INFO, _AIOSQLITE_LOG.level))
        engine = create_async_engine(
            url,
            module=one_hop_dbapi(),  # one aiosqlite hand-off per statement, not four
            connect_args={"timeout": 10},
            hide_parameters=True,
            pool_reset_on_return=None,  # _rollback_if_open does it, when there is something
        )
        event.listen(engine.sync_engine, "connect", _sqlite_pragmas)
        event.listen(engine.sync_engine.pool, "reset", _rollback_if_open)
        return engine
    bounds: dict[str, Any] = {}
    if timeouts is not None:
        bounds = {
            "pool_timeout": timeouts.pool,
            "connect_args": {"timeout": timeouts.connect, "command_timeout": timeouts.statement},
        }
    engine = create_async_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size // 2,
        hide_parameters=True,  # errors and logs never quote a statement's values
        **bounds,
    )
    _check_on_checkout(engine)
    if timeouts is not None:
        event.listen(engine.sync_engine, "connect", _keepalive(timeouts.keepalive))
    return engine


KEEPALIVE_PROBES = 3


def _keepalive(idle: int) -> Callable[[Any, ConnectionPoolEntry], None]:
    """Turns TCP keepalive on for each new asyncpg connection's socket: probes after
    ``idle`` seconds of silence, ``KEEPALIVE_PROBES`` of them ``idle`` seconds apart,
    and the kernel ends the connection when none is answered."""

    def _on_connect(dbapi_connection: Any, _record: ConnectionPoolEntry) -> None:
        transport = getattr(getattr(dbapi_connection, "_connection", None), "_transport", None)
        sock = None if transport is None else transport.get_extra_info("socket")
        if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
            return  # a Unix socket: no network to lose
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        for option, value in (
            ("TCP_KEEPIDLE", idle),
            ("TCP_KEEPINTVL", idle),
            ("TCP_KEEPCNT", KEEPALIVE_PROBES),
        ):
            if hasattr(socket, option):  # Linux has all three; macOS names them otherwise
                sock.setsockopt(socket.IPPROTO_TCP, getattr(socket, option), value)

    return _on_connect


PING_AFTER_IDLE_SECONDS = 10.0
"""A pooled connection idle longer than this is pinged before use (see ``_check_on_checkout``)."""
_IDLE_SINCE = "officehub.idle_since"


def _check_on_checkout(engine: AsyncEngine) -> None:
    """What ``pool_pre_ping`` did, without its three round trips on every checkout.

    asyncpg's ping is ``BEGIN; SELECT; ROLLBACK``: three round trips before every request's
    first statement, about a tenth of a short request's time. Instead each checkout asks
    the connection whether it is closed, which costs nothing: a backend ended by
    ``pg_terminate_backend``, a server restart or shutdown closes its socket, and asyncpg
    marks the connection closed as soon as the event loop reads that. Only a connection
    idle longer than ``PING_AFTER_IDLE_SECONDS`` (one whose peer may have gone silently, a
    firewall's dropped state) gets a real ping. A connection found dead is replaced by a
    fresh one before the request uses it (the pool retries the checkout).
    """
    pool = engine.sync_engine.pool

    @event.listens_for(pool, "checkin")
    def _idle(_dbapi_connection: Any, record: ConnectionPoolEntry) -> None:
        record.info[_IDLE_SINCE] = time.monotonic()

    @event.listens_for(pool, "checkout")
    def _check(
        dbapi_connection: Any, record: ConnectionPoolEntry, _proxy: PoolProxiedConnection
    ) -> None:
        raw = getattr(dbapi_connection, "_connection", None)
        if raw is not None and raw.is_closed():
            raise DisconnectionError("the server closed this connection")
        idle_since = record.info.get(_IDLE_SINCE)
        if idle_since is not None and time.monotonic() - idle_since > PING_AFTER_IDLE_SECONDS:
            try:
                dbapi_connection.ping()
            except Exception as exc:
                raise DisconnectionError("the connection did not answer a ping") from exc


def create_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False, autoflush=False)


READ_METHODS = frozenset({"GET", "HEAD"})
_WRITE_LOCKED = "officehub.write_locked"


def holds_write_lock(session: AsyncSession) -> bool:
    """Whether the session's transaction began with SQLite's write lock (``BEGIN
    IMMEDIATE``, ``get_session``): no other writer can change what it reads."""
    return bool(session.info.get(_WRITE_LOCKED))


class WriteInReadOnlySession(RuntimeError):
    """A GET tried to change something: a bug, refused before it reaches the database."""


def create_read_sessionmaker(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    """Sessions for requests that only read: no ``BEGIN`` and no ``COMMIT`` round trip.

    Each statement runs in its own implicit transaction (autocommit). A read request
    loses nothing by it: under READ COMMITTED (PostgreSQL's default) each statement of a
    transaction sees its own snapshot anyway, and SQLite reads outside a transaction as
    inside one. A write through such a session is a bug and raises before it runs.

    SQLite gets there without asking: its driver opens a transaction only before a write,
    so a read already runs without one. Asking for ``AUTOCOMMIT`` there cost a ``PRAGMA
    read_uncommitted`` and a second rollback each time the connection went back to the
    pool, each a hand-off to aiosqlite's thread (``GET /tag``: 9 hand-offs, then 6; with
    ``officehub.kit.sqlite_driver`` and ``_rollback_if_open``, 3).
    """
    bind = (
        engine
        if engine.dialect.name == "sqlite"
        else engine.execution_options(isolation_level="AUTOCOMMIT")
    )
    return async_sessionmaker(
        bind, expire_on_commit=False, autoflush=False, sync_session_class=ReadOnlySession
    )


class ReadOnlySession(Session):
    """The session class behind ``create_read_sessionmaker``."""


@event.listens_for(ReadOnlySession, "before_flush")
def _refuse_flush(session: Session, _context: Any, _instances: Any) -> None:
    if session.new or session.dirty or session.deleted:
        raise WriteInReadOnlySession("a read-only request tried to flush changes")


@event.listens_for(ReadOnlySession, "do_orm_execute")
def _refuse_write(state: ORMExecuteState) -> None:
    if state.is_insert or state.is_update or state.is_delete:
        raise WriteInReadOnlySession("a read-only request tried to write")


def _takes_write_lock_first(request: Request) -> bool:
    """A request that may write, unless it streams an upload: holding the one writer's lock
    while a slow client sends 100 MB would stall every other writer past its timeout."""
    if request.method in READ_METHODS or request.method == "OPTIONS":
        return False
    return not request.headers.get("content-type", "").startswith("multipart/")


_FUNCTION_STACK = "fastapi_function_astack"
"""FastAPI's exit stack of a request's endpoint call (a ``scope="function"`` dependency's):
left when the endpoint has returned or raised and its answer is made, before it is sent."""


async def get_session(request: Request) -> AsyncSession:
    """One session per request: committed when the handler returns, rolled back on error.

    A GET or HEAD gets a read-only session without a transaction of its own (see
    ``create_read_sessionmaker``): nothing to commit, no round trip spent on it.

    The session is finished on the endpoint call's exit stack (``_end_read``,
    ``_end_write``), which FastAPI leaves when the answer is made, before it is sent: a
    client never sees a success for a change that did not commit. The exit stack sees
    the endpoint's exception, if any (rolled back, then passed on to the error handlers).
    The same as a ``scope="function"`` generator dependency, without FastAPI's machinery
    for one (a context manager around a generator, its anyio cancel scope): 4-5 % of a
    short request's Python calls (docs/decisions.md, "The request's session ends on the
    endpoint's exit stack").

    On SQLite a request that may write (any method but GET, HEAD, OPTIONS; not a multipart
    upload) opens its transaction with ``BEGIN IMMEDIATE``: it waits (``busy_timeout``) for
    the write lock up front. A deferred transaction that reads and then writes fails at once
    with "database is locked" in WAL mode when another writer committed in between; no
    timeout helps there.
    """
    state = request.app.state
    stack = request.scope.get(_FUNCTION_STACK)
    if not isinstance(stack, AsyncExitStack):  # FastAPI sets it from 0.121 on (pyproject)
        raise RuntimeError(f"FastAPI gave this request no {_FUNCTION_STACK}: see get_session")
    if request.method in READ_METHODS:
        session: AsyncSession = state.read_sessionmaker()
        stack.push_async_exit(partial(_end_read, session))
        return session
    session = state.sessionmaker()
    stack.push_async_exit(partial(_end_write, session))
    if _takes_write_lock_first(request) and session.get_bind().dialect.name == "sqlite":
        await session.execute(text("BEGIN IMMEDIATE"))
        session.info[_WRITE_LOCKED] = True
    return session


async def _end_read(session: AsyncSession, *_exc_info: object) -> bool:
    """Closes a read's session; the exception, if any, goes on (``False``)."""
    async with session:  # its close runs in a task of its own, shielded
        return False


async def _end_write(session: AsyncSession, exc_type: object, *_exc_info: object) -> bool:
    """Commits a write's session if the endpoint returned, else rolls it back; undoes its
    side effects (``on_rollback``) when it did not commit; a failed commit raises (the
    error handlers answer it, 503 for a lost race or an unreachable database). Closed
    either way; the endpoint's exception, if any, goes on (``False``)."""
    async with session:
        if exc_type is not None:
            await session.rollback()
            await _undo(session)
            return False
        try:
            await session.commit()
        except asyncio.CancelledError:
            # Cancelled in the middle of its commit (the shutdown's grace run out): whether
            # the database committed is unknown, so its side effects stay (a file left with
            # no row at worst, never a row whose file is gone). Closing rolls back the rest.
            session.info.pop(_ON_ROLLBACK, None)
            raise
        except BaseException:
            await session.rollback()
            await _undo(session)
            raise
        session.info.pop(_ON_ROLLBACK, None)
    return False


SessionDep = Annotated[AsyncSession, Depends(get_session)]


_UNREACHABLE = (
    ConnectionError,  # refused, reset, aborted: the server or the network is down
    socket.gaierror,  # its host name does not resolve
    asyncpg.exceptions.ConnectionDoesNotExistError,  # closed in the middle of an operation
    asyncpg.exceptions.PostgresConnectionError,  # SQLSTATE class 08
    asyncpg.exceptions.CannotConnectNowError,  # starting up or in recovery
    asyncpg.exceptions.AdminShutdownError,  # shutting down or failing over
    asyncpg.exceptions.CrashShutdownError,
    asyncpg.exceptions.TooManyConnectionsError,  # 53300: max_connections or a role's or a
    # database's connection limit reached: a new connection is refused until one closes
    TimeoutError,  # asyncpg's connect or command timeout: the database went silent
    PoolTimeout,  # every pooled connection is busy (or stuck on a silent database)
)


def database_unreachable(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) says the database could not be reached: a
    passing condition a client should retry (503), not a fault of the request (500)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, DBAPIError) and current.connection_invalidated:
            return True
        if isinstance(current, _UNREACHABLE) and _raised_by_the_driver(current):
            return True
        current = current.__cause__ or current.__context__
    return False


_CONTENDED = (
    asyncpg.exceptions.DeadlockDetectedError,  # 40P01: PostgreSQL rolled this one back
    asyncpg.exceptions.SerializationError,  # 40001
)


def database_contended(exc: BaseException) -> bool:
    """True when ``exc`` (or what caused it) says the transaction lost a race for rows
    another one held (a deadlock PostgreSQL broke by rolling this one back, a serialization
    failure; on SQLite the write lock not had within the busy timeout): nothing of it was
    kept, and the same request may succeed at once (503, a retry), not a fault (500)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, _CONTENDED):
            return True
        if isinstance(current, sqlite3.OperationalError) and "database is locked" in str(current):
            return True
        current = current.__cause__ or current.__context__
    return False


_DRIVERS = ("sqlalchemy", "asyncpg", "aiosqlite")


def _raised_by_the_driver(exc: BaseException) -> bool:
    """A refused connection counts only when the database driver met it: an outbound call
    that failed (a webhook, the messaging platform) is no database outage."""
    if isinstance(exc, asyncpg.PostgresError | asyncpg.InterfaceError):
        return True
    tb = exc.__traceback__
    while tb is not None:
        if str(tb.tb_frame.f_globals.get("__name__", "")).startswith(_DRIVERS):
            return True
        tb = tb.tb_next
    return False


async def checkpoint_wal(engine: AsyncEngine) -> bool:
    """SQLite: copies the WAL into the database file and truncates it to nothing, so the
    page images it held (an erased client's among them) are gone; waits for readers up to
    the busy timeout. True when done (always on PostgreSQL, which has no such file)."""
    if engine.dialect.name != "sqlite":
        return True
    async with engine.connect() as connection:
        row = (await connection.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")).one()
    return bool(row[0] == 0)


async def vacuum(engine: AsyncEngine, tables: Sequence[str]) -> None:
    """PostgreSQL: ``VACUUM`` of ``tables`` outside any transaction (it cannot run in one),
    so the space of deleted rows is reclaimed. SQLite needs none (``secure_delete``)."""
    if engine.dialect.name != "postgresql" or not tables:
        return
    async with engine.connect() as connection:
        autocommit = await connection.execution_options(isolation_level="AUTOCOMMIT")
        await autocommit.exec_driver_sql("VACUUM " + ", ".join(f'"{name}"' for name in tables))
