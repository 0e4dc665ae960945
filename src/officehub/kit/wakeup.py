"""Waking workers when events commit, instead of waiting for the next poll.

In one process (``serve`` with its embedded worker, tests) an ``asyncio.Event`` per
worker is set after any session that emitted commits, and so is each web chat visitor
stream's (``watch``) for the offices whose events that session emitted. Separate
``officehub worker`` processes on PostgreSQL ``LISTEN`` on a channel that ``emit``
notifies in the event's transaction (PostgreSQL delivers it at commit, never for a
rollback). Visitor streams do not listen: another process's commits reach them at their
slow safety poll (``OFFICEHUB_WEBCHAT_POLL_SECONDS``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator

import asyncpg
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

logger = logging.getLogger("officehub.events")

NOTIFY_CHANNEL = "officehub_events"
_EMITTED = "officehub_emitted"
_OFFICES = "officehub_emitted_offices"
_listeners: set[asyncio.Event] = set()
_watchers: dict[str, set[asyncio.Event]] = {}


def mark_emitted(session: AsyncSession, office_id: str | None = None) -> bool:
    """Remembers that this transaction emitted (for ``office_id``); True the first time in
    the transaction."""
    first = not session.info.get(_EMITTED)
    session.info[_EMITTED] = True
    if office_id is not None:
        session.info.setdefault(_OFFICES, set()).add(office_id)
    return first


def watch(office_id: str, signal: asyncio.Event) -> None:
    """``signal`` is set after each commit, in this process, that emitted an event of
    ``office_id`` (a visitor's stream waits on it instead of polling)."""
    _watchers.setdefault(office_id, set()).add(signal)


def unwatch(office_id: str, signal: asyncio.Event) -> None:
    signals = _watchers.get(office_id)
    if signals is None:
        return
    signals.discard(signal)
    if not signals:
        del _watchers[office_id]


def subscribe(signal: asyncio.Event) -> None:
    _listeners.add(signal)


def unsubscribe(signal: asyncio.Event) -> None:
    _listeners.discard(signal)


def wake_all() -> None:
    for signal in list(_listeners):
        signal.set()


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    if session.in_nested_transaction():
        # A savepoint released: nothing is committed yet. Waking here sent readers to look
        # before the commit, and none was woken after it (on SQLite, and for visitor
        # streams on PostgreSQL, the event then waited for a safety read: 30 s).
        return
    offices: set[str] = session.info.pop(_OFFICES, set())
    if session.info.pop(_EMITTED, False):
        wake_all()
    for office_id in offices:
        for signal in list(_watchers.get(office_id, ())):
            signal.set()


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    if session.in_nested_transaction():
        return  # a savepoint rolled back: what the transaction emitted before it still commits
    session.info.pop(_EMITTED, None)
    session.info.pop(_OFFICES, None)


RETRY_FIRST_SECONDS = 0.5
RETRY_MAX_SECONDS = 15.0
PING_SECONDS = 10.0
"""How often an idle LISTEN connection is checked: a link that died silently (no reset)
is noticed within this, plus the ping's own timeout."""


@contextlib.asynccontextmanager
async def listening(database_url: str, signal: asyncio.Event) -> AsyncIterator[None]:
    """On PostgreSQL, sets ``signal`` on every notification of a committed event.

    The LISTEN connection is kept open for as long as the context runs: when it is lost (a
    database restart, a failover, a network split) it is opened again, after 0.5 s and
    then twice as long each failed try, up to 15 s; meanwhile the worker polls. Once it is
    back, ``signal`` is set once, for what was committed while nobody listened.
    """
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        yield
        return
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    keeper = asyncio.create_task(_keep_listening(dsn, signal))
    try:
        yield
    finally:
        keeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await keeper


async def _keep_listening(dsn: str, signal: asyncio.Event) -> None:
    delay = RETRY_FIRST_SECONDS
    failed = False
    while True:
        try:
            connection = await asyncpg.connect(dsn, timeout=10)
        except (OSError, asyncpg.PostgresError, TimeoutError):
            if not failed:
                logger.warning("LISTEN unavailable; the worker polls and retries")
            failed = True
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX_SECONDS)
            continue
        try:
            lost = asyncio.Event()
            connection.add_termination_listener(lambda _connection, closed=lost: closed.set())
            await connection.add_listener(NOTIFY_CHANNEL, lambda *_args: signal.set())
            if failed:
                logger.info("LISTEN open again")
                signal.set()  # events committed while nobody listened
            failed, delay = False, RETRY_FIRST_SECONDS
            await _until_lost(connection, lost)
            logger.warning("LISTEN connection lost; opening it again")
            failed = True
        except (OSError, asyncpg.PostgresError, TimeoutError):
            logger.warning("LISTEN connection lost; opening it again")
            failed = True
        finally:
            with contextlib.suppress(Exception):
                connection.terminate()


async def _until_lost(connection: asyncpg.Connection, lost: asyncio.Event) -> None:
    """Returns when the connection closed, or did not answer a periodic ping."""
    while not lost.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(lost.wait(), PING_SECONDS)
            return
        await asyncio.wait_for(connection.fetchval("SELECT 1"), PING_SECONDS)
