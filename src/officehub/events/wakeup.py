"""Waking workers when events commit, instead of waiting for the next poll.

In one process (``serve`` with its embedded worker, tests) an ``asyncio.Event`` per
worker is set after any session that emitted commits. Separate ``officehub worker``
processes on PostgreSQL ``LISTEN`` on a channel that ``emit`` notifies in the event's
transaction (PostgreSQL delivers it at commit, never for a rollback).
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
_listeners: set[asyncio.Event] = set()


def mark_emitted(session: AsyncSession) -> bool:
    """Remembers that this transaction emitted; True the first time in the transaction."""
    first = not session.info.get(_EMITTED)
    session.info[_EMITTED] = True
    return first


def subscribe(signal: asyncio.Event) -> None:
    _listeners.add(signal)


def unsubscribe(signal: asyncio.Event) -> None:
    _listeners.discard(signal)


def wake_all() -> None:
    for signal in list(_listeners):
        signal.set()


@event.listens_for(Session, "after_commit")
def _after_commit(session: Session) -> None:
    if session.info.pop(_EMITTED, False):
        wake_all()


@event.listens_for(Session, "after_rollback")
def _after_rollback(session: Session) -> None:
    session.info.pop(_EMITTED, None)


@contextlib.asynccontextmanager
async def listening(database_url: str, signal: asyncio.Event) -> AsyncIterator[None]:
    """On PostgreSQL, sets ``signal`` on every notification of a committed event."""
    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        yield
        return
    dsn = url.set(drivername="postgresql").render_as_string(hide_password=False)
    connection: asyncpg.Connection | None = None
    try:
        connection = await asyncpg.connect(dsn)
        await connection.add_listener(NOTIFY_CHANNEL, lambda *_args: signal.set())
    except (OSError, asyncpg.PostgresError):
        logger.warning("LISTEN unavailable; the worker polls")
        connection = None
    try:
        yield
    finally:
        if connection is not None:
            with contextlib.suppress(Exception):
                await connection.close()
