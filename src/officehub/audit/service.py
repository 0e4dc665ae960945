"""Reading the trail (``GET /audit-log``) and checking its chains (``officehub audit verify``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.audit.chain import GENESIS, entry_hash
from officehub.audit.models import AuditEntry
from officehub.audit.schemas import AuditActor, AuditEntryOut
from officehub.kit.errors import ValidationFailed
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import scoped

_VERIFY_BATCH = 1000


@dataclass(frozen=True)
class AuditFilter:
    actor_id: str | None = None
    person_id: str | None = None
    action: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def entry_out(entry: AuditEntry) -> AuditEntryOut:
    return AuditEntryOut(
        id=entry.id,
        seq=entry.seq,
        at=entry.at,
        actor=AuditActor(kind=entry.actor_kind, id=entry.actor_id, address=entry.actor_address),
        action=entry.action,
        record_type=entry.record_type,
        record_id=entry.record_id,
        person_id=entry.person_id,
        details=entry.details,
        previous_hash=entry.previous_hash,
        hash=entry.hash,
    )


async def list_entries(
    session: AsyncSession, office_id: str, params: PageParams, where: AuditFilter
) -> tuple[list[AuditEntryOut], int]:
    """The office's entries, newest first."""
    if where.since is not None and where.until is not None and where.since > where.until:
        raise ValidationFailed.field("from", "must not be after to")
    stmt = scoped(AuditEntry, office_id)
    if where.actor_id is not None:
        stmt = stmt.where(AuditEntry.actor_id == where.actor_id)
    if where.person_id is not None:
        stmt = stmt.where(AuditEntry.person_id == where.person_id)
    if where.action is not None:
        stmt = stmt.where(AuditEntry.action == where.action)
    if where.since is not None:
        stmt = stmt.where(AuditEntry.at >= where.since)
    if where.until is not None:
        stmt = stmt.where(AuditEntry.at <= where.until)
    rows, total = await paginate(session, stmt.order_by(AuditEntry.seq.desc()), params)
    return [entry_out(row) for row in rows], total


@dataclass(frozen=True)
class Break:
    office_id: str
    seq: int
    entry_id: str
    problem: str

    def __str__(self) -> str:
        return f"office {self.office_id}, entry {self.seq} ({self.entry_id}): {self.problem}"


async def _entries(session: AsyncSession, office_id: str) -> AsyncIterator[AuditEntry]:
    after = 0
    while True:
        batch = list(
            await session.scalars(
                scoped(AuditEntry, office_id)
                .where(AuditEntry.seq > after)
                .order_by(AuditEntry.seq)
                .limit(_VERIFY_BATCH)
            )
        )
        for entry in batch:
            yield entry
        if len(batch) < _VERIFY_BATCH:
            return
        after = batch[-1].seq


async def first_break(session: AsyncSession, office_id: str) -> tuple[int, Break | None]:
    """How many entries of the office's chain were checked, and its first broken one."""
    expected_seq, previous, count = 1, GENESIS, 0
    async for entry in _entries(session, office_id):
        count += 1
        problem = None
        if entry.seq != expected_seq:
            problem = f"expected entry {expected_seq} here: entries are missing"
        elif entry.previous_hash != previous:
            problem = "previousHash does not match the entry before (an entry was removed)"
        elif entry.hash != entry_hash(entry):
            problem = "its content changed (hash does not match)"
        if problem is not None:
            return count, Break(office_id, entry.seq, entry.id, problem)
        expected_seq, previous = entry.seq + 1, entry.hash
    return count, None


async def offices_with_entries(session: AsyncSession) -> list[str]:
    stmt = select(AuditEntry.office_id).distinct().order_by(AuditEntry.office_id)
    return list(await session.scalars(stmt))
