"""SQLAlchemy's aiosqlite adapter, with one hand-off to aiosqlite's thread per statement.

aiosqlite runs every call on a ``sqlite3`` connection in a thread of its own; each call is a
hand-off (a queued job, a future, a wake-up of the event loop), about 60 µs of CPU. The stock
adapter makes four per statement: open a cursor, execute, fetch the rows, close the cursor.
A ``GET /tag/{id}`` ran two statements: eight hand-offs for what SQLite answers in
microseconds. Here a statement's cursor is opened, run, read and closed in one job on that
thread, and its description, row count and last row id are kept for SQLAlchemy to read.

Everything else is SQLAlchemy's own adapter (transactions, errors, isolation levels, server
side cursors, which officehub does not use). The one job goes through aiosqlite's
``Connection._execute``, the same queue its public methods use (SQLAlchemy's adapter already
reaches into that queue to set isolation levels); ``tests/test_performance.py`` counts the
hand-offs, so an aiosqlite that changes it fails there, not silently.
"""

from __future__ import annotations

import collections
import sqlite3
from collections.abc import Sequence
from typing import Any, cast

import aiosqlite
from sqlalchemy.connectors.asyncio import AsyncAdapt_dbapi_connection
from sqlalchemy.dialects.sqlite.aiosqlite import (
    AsyncAdapt_aiosqlite_connection,
    AsyncAdapt_aiosqlite_cursor,
    AsyncAdapt_aiosqlite_dbapi,
)
from sqlalchemy.util import EMPTY_DICT, await_only

_Description = tuple[tuple[Any, ...], ...] | None
_Ran = tuple[_Description, list[Any], int, int | None]


def _run(connection: sqlite3.Connection, operation: str, parameters: Any, many: bool) -> _Ran:
    """On aiosqlite's thread: the whole life of one cursor."""
    cursor = connection.cursor()
    try:
        if many:
            cursor.executemany(operation, parameters)
        elif parameters is None:
            cursor.execute(operation)
        else:
            cursor.execute(operation, parameters)
        description = cursor.description
        rows = cursor.fetchall() if description else []
        return description, rows, cursor.rowcount, cursor.lastrowid
    finally:
        cursor.close()


class OneHopCursor(AsyncAdapt_aiosqlite_cursor):
    """A cursor whose statement, rows and close are one job on aiosqlite's thread."""

    __slots__ = ("_description", "_lastrowid", "_rowcount")

    def __init__(self, adapt_connection: AsyncAdapt_dbapi_connection) -> None:
        # No aiosqlite cursor of its own: each statement opens and closes one in its job.
        self._adapt_connection = adapt_connection
        self._connection = adapt_connection._connection
        self._cursor = None  # type: ignore[assignment]  # never read: see the overrides
        self._soft_closed_memoized = EMPTY_DICT
        self._rows = collections.deque()
        self._description: _Description = None
        self._rowcount = -1
        self._lastrowid: int | None = None

    @property
    def description(self) -> Any:
        return self._description

    @property
    def rowcount(self) -> int:
        return self._rowcount

    @property
    def lastrowid(self) -> Any:
        return self._lastrowid

    @property
    def arraysize(self) -> int:
        return 1

    @arraysize.setter
    def arraysize(self, value: int) -> None:
        """Rows are all read in the statement's job; there is no batch size to set."""

    async def _async_soft_close(self) -> None:
        """The cursor closed within its statement's job already."""

    def close(self) -> None:
        self._rows.clear()

    async def _execute_async(self, operation: Any, parameters: Any) -> Any:
        await self._one_job(operation, parameters, many=False)

    async def _executemany_async(self, operation: Any, seq_of_parameters: Any) -> Any:
        await self._one_job(operation, seq_of_parameters, many=True)

    async def _one_job(self, operation: str, parameters: Any, many: bool) -> None:
        connection = cast(aiosqlite.Connection, self._connection)
        async with self._adapt_connection._execute_mutex:
            ran: _Ran = await connection._execute(  # type: ignore[no-untyped-call]
                _run, connection._conn, operation, parameters, many
            )
        self._description, rows, self._rowcount, self._lastrowid = ran
        self._rows = collections.deque(rows)

    def nextset(self) -> None:
        """SQLite runs one statement per call: there is never a next result set."""

    def setinputsizes(self, *inputsizes: Any) -> None:
        """Not used by SQLite."""

    def fetchmany(self, size: int | None = None) -> Sequence[Any]:
        rows = self._rows
        return [rows.popleft() for _ in range(min(size or 1, len(rows)))]


class OneHopConnection(AsyncAdapt_aiosqlite_connection):
    __slots__ = ()
    _cursor_cls = OneHopCursor


class OneHopDBAPI(AsyncAdapt_aiosqlite_dbapi):
    """What ``create_async_engine(..., module=...)`` takes in place of the aiosqlite module."""

    def connect(self, *arg: Any, **kw: Any) -> OneHopConnection:
        connection = self.aiosqlite.connect(*arg, **kw)
        connection._thread.daemon = True  # as SQLAlchemy's adapter: a thread never holds exit
        return OneHopConnection(self, await_only(connection))


def one_hop_dbapi() -> OneHopDBAPI:
    """The module for a SQLite engine (``create_async_engine(..., module=...)``)."""
    return OneHopDBAPI(aiosqlite, sqlite3)
