"""The watcher: checks due watched cases on DataJud and records what is new.

Each run claims a batch of due cases through the one queue (``kit.queue``: their
``next_check_at`` moved past a short lease, renewed by a heartbeat while the batch runs,
``SKIP LOCKED`` on PostgreSQL), asks DataJud for them with at most
``datajud_court_concurrency`` calls in flight per court, and records each answer as it
arrives, in its own transaction (a few writers on PostgreSQL, one on SQLite), only while
the case is still held by the run's claim: no HTTP call happens inside a database
transaction, and a slow court does not delay recording the others' answers. A 429 or 5xx
is retried (``Retry-After`` honoured up to ``MAX_WAIT``); a court that keeps failing opens
its circuit breaker, and its cases are put off until the breaker's cooldown ends, while the
other courts go on. The next check of each case is the interval later with ±10 % jitter,
so cases (and offices) spread out.

The first answer that has the case stores its history without announcing it; every
movement stored after that emits ``case.movement.created``, and a check that stores
movements or changes the status emits ``case.updated``. A case whose checks have all failed
for ``datajud_stale_after_seconds`` (since the first failure) emits ``case.source.stale``
once; its next usable answer emits ``case.source.recovered``.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases import datajud, repository, service
from officehub.cases.hooks import MovementsAnnounced, movements_announced
from officehub.cases.models import Case, CaseMovement
from officehub.cases.numbers import CaseNumber
from officehub.kit import outside, queue
from officehub.kit.db import is_sqlite
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import PeriodicJob, WorkerContext

logger = logging.getLogger("officehub.cases")

Sleep = Callable[[float], Awaitable[None]]

MAX_TRIES = 3
MAX_WAIT = 30.0
"""The longest wait between tries of one case (a longer ``Retry-After`` ends the tries)."""
LEASE = timedelta(seconds=30)
"""Renewed every third of it while the batch runs: a killed worker's cases are due again
within it."""
ERROR_RETRY = timedelta(minutes=30)
"""A failed check is tried again this much later (or at the interval, when shorter)."""
BREAKER_THRESHOLD = 5
BREAKER_COOLDOWN = timedelta(minutes=5)
RUN_EVERY = timedelta(seconds=30)
BY_HAND_LIMIT = 100_000
RECORDERS = 4
"""Answers recorded at once on PostgreSQL (one at a time on SQLite: a single writer)."""


@dataclass
class Breaker:
    """A court's circuit breaker: ``BREAKER_THRESHOLD`` failed checks in a row open it for
    ``BREAKER_COOLDOWN``; then one check is let through, and one more failure reopens it."""

    failures: int = 0
    open_until: datetime | None = None

    def allows(self, now: datetime) -> bool:
        return self.open_until is None or now >= self.open_until

    def succeeded(self) -> None:
        self.failures, self.open_until = 0, None

    def failed(self, now: datetime) -> None:
        self.failures += 1
        if self.failures >= BREAKER_THRESHOLD:
            self.open_until = now + BREAKER_COOLDOWN


@dataclass
class Report:
    checked: int = 0
    new_movements: int = 0
    not_found: int = 0
    failed: int = 0
    put_off: int = 0
    """Cases not asked because their court's breaker was open."""

    def as_dict(self) -> dict[str, int]:
        return {
            "checked": self.checked,
            "newMovements": self.new_movements,
            "notFound": self.not_found,
            "failed": self.failed,
            "putOff": self.put_off,
        }

    def add(self, other: Report) -> None:
        for name in ("checked", "new_movements", "not_found", "failed", "put_off"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def idle(self) -> bool:
        """Nothing was due: no case checked, failed or put off."""
        return self.checked + self.put_off + self.failed == 0


@dataclass(frozen=True)
class _Answer:
    movements: list[datajud.Movement] | None = None
    error: str | None = None


@dataclass
class Watcher:
    """Holds the per-court breakers across runs (one per worker process)."""

    sleep: Sleep = asyncio.sleep
    breakers: dict[str, Breaker] = field(default_factory=dict)

    def breaker(self, court: str) -> Breaker:
        return self.breakers.setdefault(court, Breaker())

    async def run(
        self,
        ctx: WorkerContext,
        *,
        only_case: str | None = None,
        only_office: str | None = None,
        limit: int | None = None,
        never_checked_until: datetime | None = None,
    ) -> Report:
        """One batch of due cases (by hand: the watched cases of ``only_case`` or
        ``only_office``, due or not; with ``never_checked_until``, also the cases never
        checked yet, see ``repository.claim_due``)."""
        now = ctx.now()
        by_hand = only_case is not None or only_office is not None
        token = new_id()
        async with ctx.sessionmaker() as session, session.begin():
            cases = await repository.claim_due(
                session,
                now,
                LEASE,
                token,
                limit or (BY_HAND_LIMIT if by_hand else ctx.settings.datajud_batch_size),
                only_case=only_case,
                only_office=only_office,
                never_checked_until=never_checked_until,
            )
            claimed = [(c.id, c.office_id, c.number, c.court) for c in cases]
        report = Report()
        if not claimed:
            return report
        held = {c[0] for c in claimed}
        async with queue.renewing(ctx.sessionmaker, repository.CASES, held, token, LEASE, ctx.now):
            await self._check(ctx, claimed, token, held, report)
        return report

    async def _check(
        self,
        ctx: WorkerContext,
        claimed: list[tuple[str, str, str, str]],
        token: str,
        held: set[str],
        report: Report,
    ) -> None:
        settings = ctx.settings
        per_court: dict[str, asyncio.Semaphore] = {}
        limits = httpx.Limits(max_connections=64, max_keepalive_connections=64)
        async with httpx.AsyncClient(
            timeout=settings.datajud_timeout_seconds, trust_env=False, limits=limits
        ) as client:
            answers: asyncio.Queue[tuple[str, str, str, _Answer | None] | None] = asyncio.Queue()

            async def one(case_id: str, office_id: str, number: str, court: str) -> None:
                gate = per_court.setdefault(
                    court, asyncio.Semaphore(settings.datajud_court_concurrency)
                )
                try:
                    async with gate:
                        answer = await self._ask(ctx, client, court, number)
                except Exception:
                    logger.exception("case %s: asking DataJud failed", case_id)
                    answer = _Answer(error="unexpected failure")
                await answers.put((case_id, office_id, court, answer))

            async def recorder() -> None:
                while (item := await answers.get()) is not None:
                    try:
                        await self._record(ctx, token, *item, report)
                    except Exception:
                        report.failed += 1
                        logger.exception("case %s: recording the check failed", item[0])
                    finally:
                        held.discard(item[0])

            writers = 1 if is_sqlite(settings.database_url) else RECORDERS
            recording = [asyncio.create_task(recorder()) for _ in range(writers)]
            await asyncio.gather(*(one(*c) for c in claimed))
            for _ in recording:
                await answers.put(None)
            await asyncio.gather(*recording)

    async def _ask(
        self, ctx: WorkerContext, client: httpx.AsyncClient, court: str, number: str
    ) -> _Answer | None:
        """DataJud's answer, an error after the tries, or None (the breaker is open)."""
        breaker = self.breaker(court)
        reason = ""
        for attempt in range(1, MAX_TRIES + 1):
            if not breaker.allows(ctx.now()):
                return None
            try:
                movements = await datajud.search(client, ctx.settings, court, number)
            except outside.Refused as exc:
                breaker.succeeded()  # the court answers; the request was the problem
                return _Answer(error=exc.reason)
            except outside.Unavailable as exc:
                reason = exc.reason
                wait = exc.retry_after
                if wait is None:
                    wait = 0.5 * 2**attempt * (0.8 + 0.4 * random.random())  # noqa: S311
                if attempt == MAX_TRIES or wait > MAX_WAIT:
                    break
                await self.sleep(wait)
                continue
            breaker.succeeded()
            return _Answer(movements=movements)
        breaker.failed(ctx.now())
        return _Answer(error=reason)

    async def _record(
        self,
        ctx: WorkerContext,
        token: str,
        case_id: str,
        office_id: str,
        court: str,
        answer: _Answer | None,
        report: Report,
    ) -> None:
        now = ctx.now()
        interval = timedelta(seconds=ctx.settings.datajud_interval_seconds)
        async with ctx.sessionmaker() as session, session.begin():
            # Written first: the row lock (PostgreSQL) or the write lock (SQLite) before any
            # read; a case unwatched, deleted or taken over since its claim is left alone.
            if not await repository.CASES.hold(session, case_id, token):
                return
            case = await repository.get_case(session, office_id, case_id)
            if case is None or not case.watch:
                return
            case.claim_token = None
            if answer is None:
                until = self.breaker(court).open_until or now
                case.next_check_at = until + BREAKER_COOLDOWN * random.random()  # noqa: S311
                report.put_off += 1
                return
            report.checked += 1
            previous = case.check_status
            changes: list[str] = []
            went_stale: datetime | None = None  # failing since, when this check made it stale
            stale_since = case.source_stale_since
            if answer.error is not None:
                report.failed += 1
                case.check_status, case.check_error = "ERROR", answer.error[:300]
                case.next_check_at = now + _jittered(min(interval, ERROR_RETRY))
                failing_since = case.source_failing_since or now
                case.source_failing_since = failing_since
                stale_after = timedelta(seconds=ctx.settings.datajud_stale_after_seconds)
                if stale_since is None and now - failing_since >= stale_after:
                    case.source_stale_since, went_stale = now, failing_since
            else:
                case.source_failing_since = case.source_stale_since = None
                case.last_checked_at = now
                case.check_error = None
                case.next_check_at = now + _jittered(interval)
                if answer.movements is None:
                    report.not_found += 1
                    case.check_status = "NOT_FOUND"
                else:
                    case.check_status = "OK"
                    added = await _store(session, case, answer.movements)
                    history = case.history_at is None
                    if history:
                        case.history_at = now
                    if added:
                        report.new_movements += len(added)
                        changes.append("movements")
                        if not history:
                            await _announce(session, case, added, now)
            if case.check_status != previous:
                changes.append("checkStatus")
            if case.source_stale_since != stale_since:
                changes.append("sourceStaleSince")
            await session.flush()
            if went_stale is not None:
                await service.emit_stale(session, case, went_stale, case.check_error)
            elif stale_since is not None and case.source_stale_since is None:
                await service.emit_recovered(session, case, stale_since)
            if changes:
                await service.emit_updated(session, case, changes)


def _jittered(interval: timedelta) -> timedelta:
    return interval * (0.9 + 0.2 * random.random())  # noqa: S311 - spread, not secret


async def _store(
    session: AsyncSession, case: Case, movements: list[datajud.Movement]
) -> list[CaseMovement]:
    number = CaseNumber(case.number).formatted
    now = utcnow()
    rows = [
        {
            "id": new_id(),
            "office_id": case.office_id,
            "person_id": case.person_id,
            "case_id": case.id,
            "case_number": number,
            "code": m.code,
            "description": m.description,
            "complements": list(m.complements) or None,
            "occurred_at": m.occurred_at,
            "created_at": now,
            "updated_at": now,
        }
        for m in movements
    ]
    added: list[CaseMovement] = []
    for start in range(0, len(rows), 500):
        added += await repository.insert_movements(session, rows[start : start + 500])
    if added:
        newest = max(m.occurred_at for m in added)
        if case.last_movement_at is None or newest > case.last_movement_at:
            case.last_movement_at = newest
    return sorted(added, key=lambda m: (m.occurred_at, m.code or 0))


async def _announce(
    session: AsyncSession, case: Case, added: list[CaseMovement], now: datetime
) -> None:
    """``case.movement.created`` per new movement, in the order they happened; then the
    ``movements_announced`` hook (case notices)."""
    conversation_id = await service.recipient_conversation(session, case)
    for movement in added:
        await service.emit_movement(session, case, movement, conversation_id)
    await movements_announced.fire(
        MovementsAnnounced(
            session, case.office_id, case.id, tuple(m.id for m in added), conversation_id, now
        )
    )


WATCHER = Watcher()
BLOCK_AT_MOST = 2.0
"""Seconds the periodic job holds the worker's loop; a longer batch goes on in the
background (the worker's queue jobs, deliveries included, are not held up by a slow
court), and the next run starts no second batch while it lasts."""
_running: dict[str, asyncio.Task[Report]] = {}


def _log_failure(task: asyncio.Task[Report]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("case watch batch failed", exc_info=error)


async def _watch_due(ctx: WorkerContext) -> None:
    task = _running.get("batch")
    if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
        return
    task = asyncio.create_task(WATCHER.run(ctx))
    task.add_done_callback(_log_failure)
    _running["batch"] = task
    await asyncio.wait({task}, timeout=BLOCK_AT_MOST)


WATCH_JOB = PeriodicJob("cases.watch", RUN_EVERY, _watch_due)
