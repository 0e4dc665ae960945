"""The audit trail's writer: entries buffered in memory, written in batches.

A request only appends to the buffer (no statement, no round trip on its path). A task of
the app writes the buffer every ``OFFICEHUB_AUDIT_FLUSH_SECONDS`` (and at shutdown, and
before ``GET /audit-log`` answers): per office, one select of the chain's head and one
multi-row insert. The chain cannot fork: ``(office_id, seq)`` is unique, so of two
processes that read the same head the second's insert fails; it rolls back and reads the
head again. On SQLite the batch's transaction takes the write lock first (``BEGIN
IMMEDIATE``), so the head it reads is the head it appends to.

The price, written in docs/decisions.md: entries of the last fraction of a second are lost
if the process is killed (not on a clean stop, which flushes).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Table, bindparam, insert, select, text
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from officehub.audit.chain import GENESIS, hash_of
from officehub.audit.models import AuditEntry
from officehub.kit import transaction_hooks
from officehub.kit.actor import Actor
from officehub.kit.db import database_unreachable
from officehub.kit.ids import new_id

log = logging.getLogger("officehub.audit")

PersonResolver = Callable[[AsyncSession, str, Sequence[str]], Awaitable[dict[str, str]]]
"""``{record id: contact id}`` of an office's records of one type (one select)."""

_person_resolvers: dict[str, PersonResolver] = {}
RESOLVED_TYPES = frozenset({"conversation", "card", "case"})
"""The record types whose contact the trail looks up (the wiring registers one resolver each);
a record of another type names its contact itself or concerns none."""
MAX_BUFFER = 100_000
_RETRIES = 8
UNREACHABLE_MAX_SECONDS = 5.0
"""The longest the flush waits between tries while the database stays unreachable."""


def use_person_resolver(record_type: str, resolver: PersonResolver) -> None:
    """How the trail finds the contact a record of ``record_type`` concerns (the wiring,
    ``officehub.hook_subscriptions``, registers the domains' lookups)."""
    if record_type not in RESOLVED_TYPES:
        raise ValueError(f"{record_type!r} is not in RESOLVED_TYPES")
    _person_resolvers[record_type] = resolver


@dataclass(frozen=True)
class Pending:
    office_id: str
    at: datetime
    actor: Actor
    action: str
    record_type: str
    record_id: str | None
    person_id: str | None
    details: dict[str, Any] | None = None


class AuditRecorder:
    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], flush_seconds: float
    ) -> None:
        self.sessionmaker = sessionmaker
        self.flush_seconds = flush_seconds
        self._buffer: list[Pending] = []
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self.written = 0

    def record(self, entry: Pending) -> None:
        """Appends ``entry`` to the buffer: no I/O. A buffer the database cannot take (down
        for long) stops growing at ``MAX_BUFFER``, logging what it drops."""
        if len(self._buffer) >= MAX_BUFFER:
            log.error("audit buffer full: an entry was dropped", extra={"action": entry.action})
            return
        self._buffer.append(entry)

    @property
    def pending(self) -> int:
        return len(self._buffer)

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.flush()

    async def _run(self) -> None:
        """Flushes every ``flush_seconds``. While the database is unreachable (a passing
        condition, as for the workers) it says so once, as a warning, and waits twice as
        long after each failed try, up to ``UNREACHABLE_MAX_SECONDS``; the entries stay
        buffered. Any other failure is an error, logged each time."""
        wait = self.flush_seconds
        unreachable = False
        while True:
            await asyncio.sleep(wait)
            try:
                await self.flush()
            except Exception as exc:
                if not database_unreachable(exc):
                    log.exception("audit flush failed; its entries stay buffered")
                    continue
                if not unreachable:
                    log.warning("audit flush: database unreachable; entries stay buffered")
                unreachable = True
                wait = min(wait * 2, UNREACHABLE_MAX_SECONDS)
                continue
            if unreachable:
                log.info("audit flush: database reachable again")
            unreachable, wait = False, self.flush_seconds

    async def flush(self) -> int:
        """Writes every buffered entry; returns how many. One at a time per process."""
        async with self._lock:
            batch, self._buffer = self._buffer, []
            if not batch:
                return 0
            by_office: dict[str, list[Pending]] = defaultdict(list)
            for entry in batch:
                by_office[entry.office_id].append(entry)
            written: set[str] = set()
            try:
                for office_id, entries in by_office.items():
                    await self._append(office_id, entries)
                    written.add(office_id)
            except BaseException:
                # What was not written goes back to the front of the buffer, in order.
                self._buffer[:0] = [e for e in batch if e.office_id not in written]
                raise
            self.written += len(batch)
            return len(batch)

    async def _append(self, office_id: str, entries: list[Pending]) -> None:
        for attempt in range(_RETRIES):
            async with self.sessionmaker() as session:
                try:
                    await self._append_once(session, office_id, entries)
                    await session.commit()
                    return
                except IntegrityError:
                    await session.rollback()
                    if attempt == _RETRIES - 1:
                        raise
                    await asyncio.sleep(0.01 * (attempt + 1))

    async def _append_once(
        self, session: AsyncSession, office_id: str, entries: list[Pending]
    ) -> None:
        if session.get_bind().dialect.name == "sqlite":
            await session.execute(text("BEGIN IMMEDIATE"))
        await _append_entries(session, office_id, entries)


async def append_now(session: AsyncSession, entry: Pending) -> None:
    """Appends one entry in the caller's transaction (the worker's: the entry commits with
    the change it reports, or neither does). A concurrent writer taking the same ``seq``
    fails this savepoint only; it reads the head again and retries."""
    for attempt in range(_RETRIES):
        try:
            async with session.begin_nested():
                await _append_entries(session, entry.office_id, [entry])
            return
        except IntegrityError:
            if attempt == _RETRIES - 1:
                raise
            await asyncio.sleep(0.01 * (attempt + 1))


_HEAD = (
    select(AuditEntry.seq, AuditEntry.hash)
    .where(AuditEntry.office_id == bindparam("office_id"))
    .order_by(AuditEntry.seq.desc())
    .limit(1)
)
"""The office's chain head; built once (SQLAlchemy finds its compiled form at once)."""
_INSERT = insert(cast(Table, AuditEntry.__table__))
"""The entries as rows of the table: no ORM object per entry, the same columns and values."""


async def _append_entries(session: AsyncSession, office_id: str, entries: list[Pending]) -> None:
    persons = await _persons(session, office_id, entries)
    head = (await session.execute(_HEAD, {"office_id": office_id})).first()
    seq, previous = (0, GENESIS) if head is None else (head.seq, head.hash)
    rows = []
    for entry in entries:
        seq += 1
        actor = entry.actor
        row: dict[str, Any] = {
            "office_id": office_id,
            "seq": seq,
            "at": entry.at,
            "actor_kind": actor.kind,
            "actor_id": actor.id,
            "actor_address": actor.address[:64],
            "action": entry.action,
            "record_type": entry.record_type,
            "record_id": entry.record_id,
            "person_id": entry.person_id or persons.get((entry.record_type, entry.record_id)),
            "details": entry.details,
            "previous_hash": previous,
        }
        digest = hash_of(**row)
        row["id"], row["hash"] = new_id(), digest
        previous = digest
        rows.append(row)
    await session.execute(_INSERT, rows)


async def _persons(
    session: AsyncSession, office_id: str, entries: list[Pending]
) -> dict[tuple[str, str | None], str]:
    wanted: dict[str, set[str]] = defaultdict(set)
    for entry in entries:
        if entry.person_id is None and entry.record_id is not None:
            if entry.record_type in RESOLVED_TYPES:
                wanted[entry.record_type].add(entry.record_id)
    if wanted:
        transaction_hooks.wire_now()  # the domains' lookups, where the CLI defers them
    found: dict[tuple[str, str | None], str] = {}
    for record_type, idents in wanted.items():
        resolver = _person_resolvers.get(record_type)
        if resolver is None:  # a process that wires nothing (a test of the trail alone)
            continue
        resolved = await resolver(session, office_id, sorted(idents))
        found.update({(record_type, ident): person for ident, person in resolved.items()})
    return found
