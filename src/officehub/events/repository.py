"""The outbox consumers' queries: they span offices by nature (the queue)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import and_, bindparam, delete, exists, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from officehub.events.models import ConsumerEvent, EventSubject, OutboxEvent
from officehub.kit.queue import NOW, Backoff, WorkQueue
from officehub.kit.repository import batches, mentioning

CONSUMER_EVENTS = WorkQueue(
    "outbox_consumer_events",
    key=ConsumerEvent.seq,
    lease=ConsumerEvent.lease_until,
    token=ConsumerEvent.claim_token,
    open=ConsumerEvent.done_at.is_(None),
    # After the 1st … 4th failed attempt; the 5th sets the event aside.
    backoff=Backoff.seconds(1, 5, 30, 120),
    attempts=ConsumerEvent.attempts,
    error=ConsumerEvent.error,
    gave_up={"done_at": NOW, "lease_until": None},
    null_is_due=True,
    order_by=(ConsumerEvent.seq,),
)
"""The consumers' rows on the one queue (``kit.queue``); an attempt counts at its claim."""


async def claim(
    session: AsyncSession,
    consumer: str,
    now: datetime,
    lease_until: datetime,
    token: str,
    limit: int,
) -> list[int]:
    """Leases up to ``limit`` rows whose ordering key has no earlier undone row.

    So one conversation's events go one at a time in order, while other conversations'
    are claimed alongside. PostgreSQL: ``FOR UPDATE SKIP LOCKED`` gives concurrent workers
    disjoint rows; SQLite: one writer, the statement is atomic by itself.
    """
    earlier = aliased(ConsumerEvent)
    first_of_its_key = ~exists().where(
        and_(
            earlier.consumer == ConsumerEvent.consumer,
            earlier.ordering_key == ConsumerEvent.ordering_key,
            earlier.done_at.is_(None),
            earlier.seq < ConsumerEvent.seq,
        )
    )
    seqs = await CONSUMER_EVENTS.claim(
        session,
        now,
        lease_until - now,
        token,
        limit,
        where=[ConsumerEvent.consumer == consumer, first_of_its_key],
        values={"attempts": ConsumerEvent.attempts + 1},
    )
    return sorted(seqs)


async def hold(session: AsyncSession, seq: int, token: str) -> bool:
    """Whether this token still holds the row, written first: the transaction takes its
    write lock before reading anything (PostgreSQL: the row lock; SQLite: the database's,
    so a concurrent commit cannot invalidate its snapshot halfway)."""
    return await CONSUMER_EVENTS.hold(session, seq, token)


async def held(
    session: AsyncSession, seq: int, token: str
) -> tuple[ConsumerEvent, OutboxEvent] | None:
    """The claimed row and its event, if this token still holds it (after ``hold``)."""
    stmt = (
        select(ConsumerEvent, OutboxEvent)
        .join(OutboxEvent, OutboxEvent.id == ConsumerEvent.event_id)
        .where(
            ConsumerEvent.seq == seq,
            ConsumerEvent.claim_token == token,
            ConsumerEvent.done_at.is_(None),
        )
    )
    row = (await session.execute(stmt)).first()
    return None if row is None else (row[0], row[1])


async def hold_many(
    session: AsyncSession, seqs: Sequence[int], token: str
) -> list[tuple[ConsumerEvent, OutboxEvent]]:
    """``hold`` then ``held`` for a batch: the rows this token still holds, with their
    events, in seq order (locked first, read after)."""
    await CONSUMER_EVENTS.holding(session, seqs, [token])
    stmt = (
        select(ConsumerEvent, OutboxEvent)
        .join(OutboxEvent, OutboxEvent.id == ConsumerEvent.event_id)
        .where(
            ConsumerEvent.seq.in_(seqs),
            ConsumerEvent.claim_token == token,
            ConsumerEvent.done_at.is_(None),
        )
        .order_by(ConsumerEvent.seq)
    )
    return [(row[0], row[1]) for row in await session.execute(stmt)]


async def finish_many(session: AsyncSession, seqs: Sequence[int], now: datetime) -> None:
    await session.execute(
        update(ConsumerEvent)
        .where(ConsumerEvent.seq.in_(seqs))
        .values(done_at=now, claim_token=None, lease_until=None, error=None)
        .execution_options(synchronize_session=False)
    )


async def finish(session: AsyncSession, seq: int, now: datetime, error: str | None = None) -> None:
    await session.execute(
        update(ConsumerEvent)
        .where(ConsumerEvent.seq == seq)
        .values(done_at=now, claim_token=None, lease_until=None, error=error)
    )


async def purge_processed(session: AsyncSession, before: datetime, limit: int) -> int:
    """Deletes up to ``limit`` events older than ``before`` that every consumer is done
    with (no consumer row undone, webhook fan-out included); their rows go with them."""
    undone = exists().where(
        ConsumerEvent.event_id == OutboxEvent.id, ConsumerEvent.done_at.is_(None)
    )
    ids: Sequence[str] = list(
        await session.scalars(
            select(OutboxEvent.id)
            .where(
                OutboxEvent.created_at < before,
                ~undone,
            )
            .order_by(OutboxEvent.created_at)
            .limit(limit)
        )
    )
    if not ids:
        return 0
    await session.execute(delete(ConsumerEvent).where(ConsumerEvent.event_id.in_(ids)))
    await session.execute(delete(OutboxEvent).where(OutboxEvent.id.in_(ids)))
    return len(ids)


async def events_mentioning(
    session: AsyncSession, office_id: str, mentions: Sequence[str]
) -> list[str]:
    """The office's events about any of ``mentions`` (a conversation's by its column, any
    by its payload naming the id), oldest first."""
    found: dict[str, None] = {}
    for chunk in batches(sorted(mentions)):
        rows = await session.scalars(
            select(OutboxEvent.id).where(
                OutboxEvent.office_id == office_id,
                OutboxEvent.conversation_id.in_(chunk) | mentioning(OutboxEvent.data, chunk),
            )
        )
        found.update(dict.fromkeys(rows))
    return sorted(found)


async def delete_subjects(session: AsyncSession, office_id: str, subjects: Sequence[str]) -> None:
    for chunk in batches(subjects, 500):
        await session.execute(
            delete(EventSubject).where(
                EventSubject.office_id == office_id, EventSubject.subject.in_(chunk)
            )
        )


async def delete_events(session: AsyncSession, office_id: str, ids: Sequence[str]) -> None:
    for chunk in batches(ids, 500):
        await session.execute(
            delete(ConsumerEvent).where(
                ConsumerEvent.office_id == office_id, ConsumerEvent.event_id.in_(chunk)
            )
        )
        await session.execute(
            delete(OutboxEvent).where(OutboxEvent.office_id == office_id, OutboxEvent.id.in_(chunk))
        )


# The live streams' reads (officehub.live.hub): the statements are built once.
_RECENT = select(OutboxEvent.id, OutboxEvent.created_at).where(
    OutboxEvent.created_at > bindparam("since")
)
_RECENT_OF = _RECENT.where(OutboxEvent.office_id.in_(bindparam("offices", expanding=True)))


async def recorded_since(
    session: AsyncSession, since: datetime, offices: Sequence[str] | None = None
) -> list[tuple[str, datetime]]:
    """The id and time of each event recorded after ``since`` (of ``offices`` when given;
    of every office when None)."""
    if offices is None:
        rows = await session.execute(_RECENT, {"since": since})
    else:
        rows = await session.execute(_RECENT_OF, {"since": since, "offices": list(offices)})
    return [(ident, at) for ident, at in rows]


async def created_at_of(session: AsyncSession, office_id: str, ident: str) -> datetime | None:
    """When the office's event ``ident`` was recorded; None when it has no such event."""
    found = (
        await session.execute(
            select(OutboxEvent.created_at).where(
                OutboxEvent.office_id == office_id, OutboxEvent.id == ident
            )
        )
    ).first()
    return None if found is None else found[0]


async def newest_id(session: AsyncSession, office_id: str) -> str | None:
    """The office's newest event id."""
    found: str | None = await session.scalar(
        select(OutboxEvent.id)
        .where(OutboxEvent.office_id == office_id)
        .order_by(OutboxEvent.created_at.desc(), OutboxEvent.id.desc())
        .limit(1)
    )
    return found
