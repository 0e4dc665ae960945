"""The one queue: how every kind of background work is claimed, held, finished and retried.

Each kind of work keeps its own table (outbox consumer rows, webhook and action
deliveries, outbound messages, scheduled jobs, ...): a row is a piece of work, and a
``WorkQueue`` names the columns the queue needs in it: the key, the *lease* column (the
time the row is due, moved past a lease while a worker holds it), the claim token, and
optionally the attempt count and the error. One table per kind keeps each kind's own
indexes, foreign keys (a record deleted takes its work with it) and API reads; the queue
is the statements, written once.

- ``claim``: one ``UPDATE … WHERE key IN (SELECT … LIMIT n FOR UPDATE SKIP LOCKED)``
  moving the lease to ``now + lease`` and setting a fresh token. PostgreSQL: concurrent
  claimers take disjoint rows without waiting. SQLite: one writer at a time, so the single
  statement is atomic by itself; the semantics are the same.
- ``now`` is always the database's clock on PostgreSQL (``WorkerContext.time_in``): every
  worker compares leases with the one clock they share.
- ``hold`` / ``holding``: the holder's first write in the transaction that records an
  outcome (the row lock on PostgreSQL, the write lock on SQLite) and the answer to "do I
  still hold it": a row whose lease ran out and was taken over, or that was deleted, is
  not held, and its outcome is dropped quietly.
- ``renew``: the heartbeat. Leases are short (seconds); while work runs its holder renews
  them, so a killed worker's work is taken over within a lease, not a minute.
- ``finish``, ``fail`` (the error recorded, the next try on a ``Backoff`` schedule, given
  up after its last step), ``release`` (on shutdown: due again at once, for anyone).

``Pool`` runs claimed work in a worker process: a fixed number of slots, each piece of
work finishing (and recording its outcome) on its own, never waiting for a batch; a limit
per group (an endpoint) so one slow receiver holds at most its own slots, and a breaker
that drops a group that timed out to one slot for a while; one heartbeat renewing the
leases of everything in flight; ``shutdown`` releasing what it held.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections import Counter, deque
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Collection,
    Hashable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Generic, Protocol, TypeVar

from sqlalchemy import ColumnElement, Select, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker
from sqlalchemy.orm import InstrumentedAttribute

from officehub.kit.ids import new_id

logger = logging.getLogger("officehub.queue")

Key = Any
"""A row's key (a string id, or an integer sequence number)."""

NOW: Any = object()
"""In ``WorkQueue.gave_up``: the time of the failure (a done mark)."""


@dataclass(frozen=True)
class Backoff:
    """The wait after the 1st, 2nd, … failed attempt; after the last step, give up.

    ``jitter`` spreads each step by ± that fraction; a ``retry_after`` the other side
    asked for is honoured between the step and ``retry_after_cap`` times it, or, with
    ``retry_after_limit`` (seconds), whenever longer than the step, up to that limit.
    """

    steps: tuple[timedelta, ...]
    jitter: float = 0.0
    retry_after_cap: float = 2.0
    retry_after_limit: float | None = None

    @classmethod
    def seconds(cls, *steps: float, jitter: float = 0.0) -> Backoff:
        return cls(tuple(timedelta(seconds=s) for s in steps), jitter)

    @property
    def attempts(self) -> int:
        """Attempts made before giving up: one more than the steps."""
        return len(self.steps) + 1

    def after(
        self,
        attempt: int,
        retry_after: float | None = None,
        rand: Callable[[], float] = random.random,
    ) -> timedelta | None:
        """The wait after failed attempt number ``attempt`` (1-based); None: give up."""
        if attempt < 1 or attempt > len(self.steps):
            return None
        step = self.steps[attempt - 1].total_seconds()
        if retry_after is not None and self.retry_after_limit is not None:
            step *= 1 - self.jitter + 2 * self.jitter * rand()
            return timedelta(seconds=max(step, min(retry_after, self.retry_after_limit)))
        if retry_after is not None:
            return timedelta(seconds=min(max(retry_after, step), self.retry_after_cap * step))
        return timedelta(seconds=step * (1 - self.jitter + 2 * self.jitter * rand()))


@dataclass(frozen=True)
class WorkQueue:
    """The columns of one table of work that the queue reads and writes.

    ``open`` says which rows still have work (``status IN (…)``, ``done_at IS NULL``);
    ``lease`` is due time and lease in one: a row is claimable when open and its lease is
    at or before now (or null, with ``null_is_due``). ``gave_up`` are the values written
    when ``fail`` runs out of tries (a status, a done mark).
    """

    name: str
    key: InstrumentedAttribute[Any]
    lease: InstrumentedAttribute[Any]
    token: InstrumentedAttribute[Any]
    open: ColumnElement[bool]
    backoff: Backoff
    attempts: InstrumentedAttribute[Any] | None = None
    error: InstrumentedAttribute[Any] | None = None
    error_length: int = 1000
    gave_up: Mapping[str, Any] = field(default_factory=dict)
    null_is_due: bool = False
    order_by: tuple[Any, ...] = ()

    @property
    def model(self) -> Any:
        return self.key.class_

    def due(self, now: datetime) -> ColumnElement[bool]:
        if self.null_is_due:
            return or_(self.lease.is_(None), self.lease <= now)
        return self.lease <= now

    def _held(self, keys: Collection[Key], tokens: Collection[str]) -> list[ColumnElement[bool]]:
        return [
            self.key.in_(list(keys)),
            self.token.in_(list(tokens)) if len(tokens) != 1 else self.token == next(iter(tokens)),
            self.open,
        ]

    async def claim(
        self,
        session: AsyncSession,
        now: datetime,
        lease: timedelta,
        token: str,
        limit: int,
        *,
        where: Sequence[ColumnElement[bool]] = (),
        join: tuple[Any, ColumnElement[bool]] | None = None,
        values: Mapping[str, Any] | None = None,
        due_when: ColumnElement[bool] | None = None,
    ) -> list[Key]:
        """Leases up to ``limit`` due rows to ``token`` until ``now + lease``; their keys.

        ``where`` narrows the due rows (``join``: a table they are read with);
        ``values`` are written with the lease (an attempt counted at claim time); ``due_when``
        says which open rows are claimable instead of their lease being due (work asked
        for by hand, whatever its due time). The rows are locked ``FOR UPDATE SKIP LOCKED``
        on PostgreSQL (``lock_skipping``); on SQLite the one statement is atomic by itself."""
        due: Select[Any] = select(self.key)
        if join is not None:
            due = due.join(*join)
        due = due.where(self.open, self.due(now) if due_when is None else due_when, *where)
        due = due.order_by(*(self.order_by or (self.lease, self.key))).limit(limit)
        due = lock_skipping(session, due, of=self.model)
        result = await session.execute(
            update(self.model)
            .where(self.key.in_(due.scalar_subquery()))
            .values({self.lease.key: now + lease, self.token.key: token, **dict(values or {})})
            .returning(self.key)
            .execution_options(synchronize_session=False)
        )
        return [row[0] for row in result]

    async def holding(
        self, session: AsyncSession, keys: Collection[Key], tokens: Collection[str]
    ) -> set[Key]:
        """The rows among ``keys`` still held by one of ``tokens`` (and still open), locked
        by a write: make it the transaction's first statement, before any read."""
        if not keys or not tokens:
            return set()
        result = await session.execute(
            update(self.model)
            .where(*self._held(keys, tokens))
            .values({self.token.key: self.token})
            .returning(self.key)
            .execution_options(synchronize_session=False)
        )
        return {row[0] for row in result}

    async def hold(self, session: AsyncSession, key: Key, token: str) -> bool:
        return bool(await self.holding(session, [key], [token]))

    async def holding_each(
        self, session: AsyncSession, claims: Collection[tuple[Key, str]]
    ) -> set[Key]:
        """``holding`` for rows each claimed under its own token (``(key, token)``): the
        keys still held by theirs. One statement per token."""
        by_token: dict[str, list[Key]] = {}
        for key, token in claims:
            by_token.setdefault(token, []).append(key)
        held: set[Key] = set()
        for token, keys in by_token.items():
            held |= await self.holding(session, keys, [token])
        return held

    async def renew(
        self,
        session: AsyncSession,
        keys: Collection[Key],
        tokens: Collection[str],
        until: datetime,
    ) -> set[Key]:
        """The heartbeat: moves the leases of the rows still held to ``until``."""
        if not keys or not tokens:
            return set()
        result = await session.execute(
            update(self.model)
            .where(*self._held(keys, tokens))
            .values({self.lease.key: until})
            .returning(self.key)
            .execution_options(synchronize_session=False)
        )
        return {row[0] for row in result}

    async def finish(
        self, session: AsyncSession, key: Key, token: str, values: Mapping[str, Any]
    ) -> bool:
        """Writes the row's outcome and lets go of it; False (nothing written) when the
        row is no longer held: taken over after its lease, or deleted."""
        result = await session.execute(
            update(self.model)
            .where(*self._held([key], [token]))
            .values({self.token.key: None, **dict(values)})
            .execution_options(synchronize_session=False)
        )
        return bool(result.rowcount)  # type: ignore[attr-defined]

    def failure(
        self,
        now: datetime,
        attempt: int,
        error: str,
        retry_after: float | None = None,
    ) -> tuple[dict[str, Any], datetime | None]:
        """The values ``fail`` writes after failed attempt ``attempt``, and the next try's
        time (None: given up)."""
        values: dict[str, Any] = {}
        if self.attempts is not None:
            values[self.attempts.key] = attempt
        if self.error is not None:
            values[self.error.key] = error[: self.error_length]
        wait = self.backoff.after(attempt, retry_after)
        if wait is None:
            values.update({k: now if v is NOW else v for k, v in self.gave_up.items()})
            return values, None
        values[self.lease.key] = now + wait
        return values, now + wait

    async def fail(
        self,
        session: AsyncSession,
        key: Key,
        token: str,
        now: datetime,
        attempt: int,
        error: str,
        *,
        retry_after: float | None = None,
        values: Mapping[str, Any] | None = None,
    ) -> datetime | None:
        """Records failed attempt ``attempt`` with its error: due again on the backoff
        schedule, or given up after the last step. Returns the next try's time."""
        written, at = self.failure(now, attempt, error, retry_after)
        await self.finish(session, key, token, {**written, **dict(values or {})})
        return at

    async def release(
        self, session: AsyncSession, keys: Collection[Key], tokens: Collection[str], now: datetime
    ) -> int:
        """Lets go of held rows unfinished (a worker shutting down): due again at once."""
        if not keys or not tokens:
            return 0
        result = await session.execute(
            update(self.model)
            .where(*self._held(keys, tokens))
            .values({self.lease.key: now, self.token.key: None})
            .execution_options(synchronize_session=False)
        )
        return int(result.rowcount)  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def renewing(
    sessionmaker: async_sessionmaker[AsyncSession],
    queue: WorkQueue,
    keys: set[Key],
    token: str,
    lease: timedelta,
    clock: Callable[[], datetime],
) -> AsyncIterator[None]:
    """The heartbeat of work run outside a ``Pool``: while the block runs, renews the
    leases of ``keys`` (the caller discards each key once its outcome is recorded) every
    third of a lease."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(lease.total_seconds() / 3)
            if not keys:
                continue
            try:
                async with sessionmaker() as session, session.begin():
                    await queue.renew(session, set(keys), [token], clock() + lease)
            except Exception:
                logger.warning("queue %s: a heartbeat failed", queue.name, exc_info=True)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def locks_rows(session: AsyncSession) -> bool:
    """Whether claims lock rows ``FOR UPDATE SKIP LOCKED`` (PostgreSQL; SQLite has one
    writer at a time, which makes each claim atomic by itself)."""
    return session.get_bind().dialect.name != "sqlite"


Statement = TypeVar("Statement", bound=Select[Any])


def lock_skipping(session: AsyncSession, stmt: Statement, *, of: Any = None) -> Statement:
    """The one place rows are claimed: ``stmt`` (the domain's select, its where and order)
    locked ``FOR UPDATE SKIP LOCKED`` on PostgreSQL (``of``: the tables whose rows are
    locked), so concurrent workers take disjoint rows without waiting. On SQLite it is
    ``stmt`` as it is: one writer at a time, the claiming transaction's first write holds
    the database (``take``, ``WorkQueue.claim``). No domain writes its own ``SKIP LOCKED``:
    a test reads the sources for it."""
    if not locks_rows(session):
        return stmt
    return stmt.with_for_update(of=of, skip_locked=True)


@contextlib.asynccontextmanager
async def heartbeat(
    ctx: Context,
    queue: WorkQueue,
    keys: Collection[Key],
    token: str,
    lease: timedelta,
) -> AsyncIterator[None]:
    """While the block runs, renews the lease of ``keys`` held by ``token`` every third of
    ``lease`` (work claimed in a batch and done in place, outside a ``Pool``)."""

    async def beat() -> None:
        while True:
            await asyncio.sleep(lease.total_seconds() / 3)
            try:
                async with ctx.sessionmaker() as session, session.begin():
                    now = await ctx.time_in(session)
                    await queue.renew(session, keys, [token], now + lease)
            except Exception:
                logger.warning("queue %s: a heartbeat failed", queue.name, exc_info=True)

    task = asyncio.create_task(beat())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def take(session: AsyncSession, due: Select[Any]) -> list[Any]:
    """Work done inside one transaction (no lease: the transaction is the hold, and it
    ends with it): the keys ``due`` selects (one key column), locked ``FOR UPDATE SKIP
    LOCKED`` on PostgreSQL, so concurrent workers take different rows without waiting; on
    SQLite a no-op write of them takes the database's write lock first (one writer at a
    time: the next taker sees them done). The caller writes each outcome before its
    commit. Keys in no particular order."""
    if locks_rows(session):
        return list(await session.scalars(lock_skipping(session, due)))
    key: Any = due.selected_columns[0]
    result = await session.execute(
        update(key.table)
        .where(key.in_(due.scalar_subquery()))
        .values({key.key: key})
        .returning(key)
        .execution_options(synchronize_session=False)
    )
    return [row[0] for row in result]


class Context(Protocol):
    """What the pool needs of a worker (``WorkerContext``)."""

    sessionmaker: async_sessionmaker[AsyncSession]
    worker_id: str

    async def time_in(self, session: AsyncSession) -> datetime: ...


class PoolsContext(Context, Protocol):
    """A worker that keeps its pools (``pool_of``, ``drain``): ``WorkerContext``."""

    overlap: bool
    pools: dict[str, Any]


Item = TypeVar("Item")


@dataclass
class Claimed(Generic[Item]):
    """What a claim hands the pool: the work, each with its key and group."""

    item: Item
    key: Key
    group: Hashable


Claimer = Callable[
    [AsyncSession, datetime, str, int, Collection[Hashable]], Awaitable[list[Claimed[Item]]]
]
"""``(session, now, token, limit, full groups) -> claimed``: claims (with ``WorkQueue.
claim``) up to ``limit`` rows, none of the full groups', in the pool's transaction."""

Begin = Callable[[AsyncSession, datetime, list[Item]], Awaitable[None]]
"""``(session, now, kept)``: in the claim's transaction, what the work the pool keeps
(started, or waiting for its group's slot) writes first (an attempt logged before its
request is sent)."""

Work = Callable[[Item, str], Awaitable[bool]]
"""Does one piece of work and records its outcome (``finish``/``fail`` under the token);
answers True when its group was slow (a timeout), which trips the group's breaker."""


@dataclass
class _Running:
    token: str
    group: Hashable
    task: asyncio.Task[None]


class Pool(Generic[Item]):
    """Runs claimed work in one worker process, each piece on its own (see the module).

    A claim that brings more of a group than it has free slots keeps up to its limit of
    them waiting (held, renewed by the heartbeat, started as the group's slots free up)
    and releases the rest at once for other workers.
    """

    def __init__(
        self,
        queue: WorkQueue,
        claim: Claimer[Item],
        work: Work[Item],
        *,
        slots: int,
        lease: timedelta,
        per_group: int | None = None,
        batch: int | None = None,
        breaker: timedelta = timedelta(seconds=60),
        on_free: Callable[[], None] | None = None,
        begin: Begin[Item] | None = None,
        clock: Callable[[AsyncSession], Awaitable[datetime]] | None = None,
    ) -> None:
        """``clock``: the time claims, leases and releases are written with, when not the
        worker's shared one (``ctx.time_in``)."""
        self.queue = queue
        self.claim = claim
        self.work = work
        self.slots = max(1, slots)
        self.lease = lease
        self.per_group = max(1, per_group or self.slots)
        self.batch = batch or self.slots
        self.breaker = breaker
        self.on_free = on_free
        self.begin = begin
        self.clock = clock
        self.running: dict[Key, _Running] = {}
        self.groups: Counter[Hashable] = Counter()
        self.waiting: dict[Hashable, deque[tuple[Claimed[Item], str]]] = {}
        self.waiting_keys: dict[Key, str] = {}
        self._slow_until: dict[Hashable, float] = {}
        self._heart: asyncio.Task[None] | None = None

    async def now(self, ctx: Context, session: AsyncSession) -> datetime:
        return await (self.clock or ctx.time_in)(session)

    def limit_of(self, group: Hashable) -> int:
        """The group's slots: ``per_group``, or one while its breaker is open."""
        until = self._slow_until.get(group)
        if until is not None and time.monotonic() < until:
            return 1
        self._slow_until.pop(group, None)
        return self.per_group

    def full(self) -> set[Hashable]:
        return {g for g, n in self.groups.items() if n >= self.limit_of(g)}

    def held(self) -> dict[Key, str]:
        """Every row the pool holds, running or waiting, with its token."""
        return {**self.waiting_keys, **{k: r.token for k, r in self.running.items()}}

    async def fill(self, ctx: Context) -> int:
        """Claims work for the free slots and starts it; returns how many it started."""
        free = min(self.slots - len(self.running), self.batch)  # waiting holds no slot
        if free <= 0:
            return 0
        token = new_id()
        started: list[Claimed[Item]] = []
        waiting: list[Claimed[Item]] = []
        async with ctx.sessionmaker() as session, session.begin():
            now = await self.now(ctx, session)
            claimed = await self.claim(session, now, token, free, self.full())
            counts = Counter(self.groups)
            queued = Counter({g: len(q) for g, q in self.waiting.items()})
            extra: list[Key] = []
            for piece in claimed:
                limit = self.limit_of(piece.group)
                if piece.key in self.running or piece.key in self.waiting_keys:
                    extra.append(piece.key)
                elif counts[piece.group] < limit:
                    counts[piece.group] += 1
                    started.append(piece)
                elif queued[piece.group] < limit:
                    queued[piece.group] += 1
                    waiting.append(piece)
                else:
                    extra.append(piece.key)  # its group is full: back to the queue
            if extra:
                await self.queue.release(session, extra, [token], now)
            if (started or waiting) and self.begin is not None:
                await self.begin(session, now, [p.item for p in started + waiting])
        for piece in waiting:
            self.waiting.setdefault(piece.group, deque()).append((piece, token))
            self.waiting_keys[piece.key] = token
        for piece in started:
            self._start(piece, token)
        if (started or waiting) and (self._heart is None or self._heart.done()):
            self._heart = asyncio.create_task(self._heartbeat(ctx))
        return len(started)

    def _start(self, piece: Claimed[Item], token: str) -> None:
        self.groups[piece.group] += 1
        task = asyncio.create_task(self._run(piece, token))
        self.running[piece.key] = _Running(token, piece.group, task)

    def _start_waiting(self, group: Hashable) -> None:
        queue = self.waiting.get(group)
        while queue and self.groups[group] < self.limit_of(group):
            piece, token = queue.popleft()
            del self.waiting_keys[piece.key]
            self._start(piece, token)
        if not queue:
            self.waiting.pop(group, None)

    async def _run(self, piece: Claimed[Item], token: str) -> None:
        try:
            if await self.work(piece.item, token):
                self._slow_until[piece.group] = time.monotonic() + self.breaker.total_seconds()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("queue %s: work on %s failed", self.queue.name, piece.key)
        finally:
            running = self.running.get(piece.key)
            if running is not None and running.token == token:
                del self.running[piece.key]
                self.groups[piece.group] -= 1
                if self.groups[piece.group] <= 0:
                    del self.groups[piece.group]
            if not asyncio.current_task().cancelling():  # type: ignore[union-attr]
                self._start_waiting(piece.group)
            if self.on_free is not None:
                self.on_free()

    async def _heartbeat(self, ctx: Context) -> None:
        """Renews the leases of the work held every third of a lease."""
        every = self.lease.total_seconds() / 3
        while self.running or self.waiting_keys:
            await asyncio.sleep(every)
            held = self.held()
            if not held:
                return
            try:
                async with ctx.sessionmaker() as session, session.begin():
                    now = await self.now(ctx, session)
                    await self.queue.renew(
                        session, list(held), set(held.values()), now + self.lease
                    )
            except Exception:
                logger.warning("queue %s: a heartbeat failed", self.queue.name, exc_info=True)

    async def settle(self, ctx: Context | None = None) -> int:
        """Waits for the work held, waiting work included (cancelled with it). With
        ``ctx``, claims more as slots free up, until nothing is due: returns how many
        more it started."""
        more = 0
        # The full groups when a claim last found nothing: claim again only once one of
        # them has a free slot (or nothing runs), not after every piece that ends.
        dry: set[Hashable] | None = None
        while self.running or self.waiting_keys:
            if not self.running:
                for group in list(self.waiting):
                    self._start_waiting(group)
            tasks = [r.task for r in self.running.values()]
            try:
                await asyncio.wait(
                    tasks,
                    return_when=asyncio.ALL_COMPLETED if ctx is None else asyncio.FIRST_COMPLETED,
                )
            except asyncio.CancelledError:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                raise
            if ctx is not None and not self.waiting_keys and len(self.running) < self.slots:
                full = self.full()
                if dry is None or not self.running or dry - full:
                    started = await self.fill(ctx)
                    more += started
                    dry = full if not started and not self.waiting_keys else None
        if self._heart is not None:
            self._heart.cancel()
        return more

    async def shutdown(self, ctx: Context, grace: float = 0.0) -> int:
        """Lets the work in flight finish for up to ``grace`` seconds, then stops the rest
        and releases every row it holds: due again at once for another worker. Returns
        how many were released."""
        if grace > 0 and self.running:
            await asyncio.wait([r.task for r in self.running.values()], timeout=grace)
        held = {**self.waiting_keys, **{k: r.token for k, r in self.running.items()}}
        self.waiting.clear()
        self.waiting_keys.clear()
        running = dict(self.running)
        for r in running.values():
            r.task.cancel()
        for r in running.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await r.task
        if self._heart is not None:
            self._heart.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._heart
        if not held:
            return 0
        async with ctx.sessionmaker() as session, session.begin():
            now = await self.now(ctx, session)
            return await self.queue.release(session, list(held), set(held.values()), now)


Outcome = TypeVar("Outcome")


class Recorder(Generic[Outcome]):
    """Writes the outcomes of a pool's work as they come, none waiting for another's: what
    is ready within ``LINGER`` goes into one short transaction (``write(session, outcomes)``,
    which checks each is still held, ``WorkQueue.holding``, and drops the others quietly);
    if that transaction fails, each outcome is written in its own, so one bad outcome
    cannot lose the others. ``record`` returns once its outcome's transaction has ended."""

    LINGER = 0.005
    """Seconds the writer waits for more outcomes before its transaction: work that ends
    together is written together (SQLite has one writer: one commit for many), none
    waiting for slow work."""

    def __init__(
        self,
        sessionmaker: async_sessionmaker[AsyncSession],
        write: Callable[[AsyncSession, list[Outcome]], Awaitable[None]],
        name: str,
    ) -> None:
        self.sessionmaker = sessionmaker
        self.write = write
        self.name = name
        self.pending: list[tuple[Outcome, asyncio.Future[None]]] = []
        self.task: asyncio.Task[None] | None = None

    async def record(self, outcome: Outcome) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.pending.append((outcome, done))
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._drain())
        await done

    async def _write(self, outcomes: list[Outcome]) -> None:
        async with self.sessionmaker() as session, session.begin():
            await self.write(session, outcomes)

    async def _drain(self) -> None:
        while self.pending:
            await asyncio.sleep(self.LINGER)
            batch, self.pending = self.pending, []
            try:
                await self._write([o for o, _ in batch])
            except Exception:
                logger.warning("queue %s: outcomes written one by one", self.name, exc_info=True)
                for outcome, _ in batch:
                    try:
                        await self._write([outcome])
                    except Exception:
                        logger.exception("queue %s: an outcome was not written", self.name)
            for _, done in batch:
                if not done.done():
                    done.set_result(None)


def pool_of(ctx: PoolsContext, name: str, make: Callable[[], Pool[Any]]) -> Pool[Any]:
    """The worker's pool called ``name`` (made on first use, kept in ``ctx.pools``)."""
    pools: dict[str, Pool[Any]] = ctx.pools
    pool = pools.get(name)
    if pool is None:
        pool = pools[name] = make()
    return pool


async def drain(ctx: PoolsContext, pool: Pool[Any]) -> int:
    """One pass of a queue job over ``pool``: claims work for its free slots and starts
    it. A long-running worker (``ctx.overlap``) returns at once, the work finishing on its
    own while later passes claim more; a single pass (tests, ``run_until_idle``) keeps
    claiming as slots free up until nothing is due, and returns when all it started is
    done (how much it started)."""
    started = await pool.fill(ctx)
    if not ctx.overlap:
        started += await pool.settle(ctx)
    return started


async def shutdown(ctx: Any, grace: float = 0.0) -> int:
    """A worker's orderly stop: its pools' work in flight gets ``grace`` seconds to finish,
    the rest is released."""
    released = 0
    for pool in list(ctx.pools.values()):
        try:
            released += await pool.shutdown(ctx, grace)
        except Exception:
            logger.warning("queue %s: releasing on shutdown failed", pool.queue.name, exc_info=True)
    return released
