"""Tracebacks and error texts without the personal data a database error may carry.

A database error's text can quote the values of the statement that failed: SQLAlchemy
appends the statement's parameters (hidden by ``hide_parameters=True`` on our engines), and
the driver's own message may quote a value too (PostgreSQL's ``Key (email)=(…)``, ``invalid
input syntax …: "…"``, a trigger's ``RAISE``). So for database errors only the exception
types and the SQL statement (placeholders, never values) are kept; the frames are kept for
every exception.
"""

from __future__ import annotations

import traceback
from types import TracebackType
from typing import TypeAlias

ExcInfo: TypeAlias = (
    tuple[type[BaseException], BaseException, TracebackType | None] | tuple[None, None, None]
)

_DRIVER_MODULES = ("sqlite3", "aiosqlite", "asyncpg", "sqlalchemy.dialects", "psycopg")
_WITHHELD = "message withheld: a database error may quote personal data"


def _is_driver_error(exc: BaseException) -> bool:
    module = type(exc).__module__ or ""
    return any(module == m or module.startswith(m + ".") for m in _DRIVER_MODULES)


def safe_message(exc: BaseException, withhold: bool = False) -> str:
    """``Type: message``, with a database error's message replaced by its statement.

    ``withhold`` drops the message of any exception (a database error's ``orig``).
    """
    from sqlalchemy.exc import DBAPIError, StatementError  # imported when an error is told

    name = type(exc).__qualname__
    if isinstance(exc, StatementError):
        origin = type(exc.orig).__qualname__ if exc.orig is not None else "?"
        statement = " ".join((exc.statement or "").split())[:2000]
        return f"{name} ({origin}; {_WITHHELD}) [SQL: {statement}]"
    if withhold or isinstance(exc, DBAPIError) or _is_driver_error(exc):
        return f"{name} ({_WITHHELD})"
    text = str(exc)
    return f"{name}: {text}" if text else name


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and those it came from, oldest first (as Python prints them)."""
    chain: list[BaseException] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        chain.append(current)
        if current.__cause__ is not None:
            current = current.__cause__
        elif not current.__suppress_context__:
            current = current.__context__
        else:
            current = None
    return list(reversed(chain))


def format_exception_safely(exc_info: ExcInfo) -> str:
    """Like ``logging.Formatter.formatException``, with every message made safe."""
    exc = exc_info[1]
    if exc is None:
        return ""
    from sqlalchemy.exc import StatementError

    parts: list[str] = []
    chain = _chain(exc)
    origins = {id(link.orig) for link in chain if isinstance(link, StatementError)}
    for position, link in enumerate(chain):
        if position:
            caused = chain[position].__cause__ is chain[position - 1]
            parts.append(
                "\nThe above exception was the direct cause of the following exception:\n\n"
                if caused
                else "\nDuring handling of the above exception, another exception occurred:\n\n"
            )
        if link.__traceback__ is not None:
            parts.append("Traceback (most recent call last):\n")
            parts.extend(traceback.format_tb(link.__traceback__))
        parts.append(safe_message(link, withhold=id(link) in origins) + "\n")
        if isinstance(link, BaseExceptionGroup):
            for number, inner in enumerate(link.exceptions, 1):
                nested = format_exception_safely((type(inner), inner, inner.__traceback__))
                parts.append(f"+---- {number} ----\n")
                parts.append("".join(f"| {line}\n" for line in nested.splitlines()))
    return "".join(parts).rstrip("\n")
