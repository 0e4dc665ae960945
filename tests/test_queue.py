"""The one queue (``officehub.kit.queue``), one test per property, on the scheduled jobs'
table (any table of work would do: the queue is its columns)."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Hashable
from datetime import datetime, timedelta

import httpx
from fastapi import FastAPI
from sqlalchemy import select, true, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events import repository as events_repository
from officehub.kit.config import Settings
from officehub.kit.db import database_now
from officehub.kit.ids import new_id
from officehub.kit.queue import (
    Backoff,
    Claimed,
    Pool,
    Recorder,
    drain,
    renewing,
    take,
)
from officehub.kit.scheduled_jobs import RETRY_AFTER, SCHEDULED, ScheduledJob, add_job
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext
from officehub.webhooks.delivery import WEBHOOKS, fan_out_events
from tests.helpers import OfficeFixture
from tests.webhook_helpers import Clock, create_webhook, deliveries, emit_event

LEASE = timedelta(seconds=30)


async def _jobs(app: FastAPI, office_id: str, count: int) -> list[str]:
    async with app.state.sessionmaker() as s:
        now = await database_now(s)
        jobs = [
            add_job(s, office_id, "noop", {"n": n}, now - timedelta(seconds=1), now)
            for n in range(count)
        ]
        await s.commit()
    return [j.id for j in jobs]


async def _now(app: FastAPI) -> datetime:
    async with app.state.sessionmaker() as s:
        return await database_now(s)


async def _job(app: FastAPI, ident: str) -> ScheduledJob:
    async with app.state.sessionmaker() as s:
        job: ScheduledJob | None = await s.get(ScheduledJob, ident)
        assert job is not None
        return job


async def _claim(app: FastAPI, token: str, limit: int, at: datetime | None = None) -> list[str]:
    async with app.state.sessionmaker() as s, s.begin():
        now = at or await database_now(s)
        return list(await SCHEDULED.claim(s, now, LEASE, token, limit))


async def test_a_claim_is_exclusive_between_two_concurrent_claimers(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """Two claimers racing over 150 due rows, each in its own transactions, take disjoint
    sets that together are every row (SKIP LOCKED on PostgreSQL, one writer on SQLite)."""
    ids = set(await _jobs(app, office_a.id, 150))
    taken: dict[str, list[str]] = {"one": [], "two": []}
    started = {"one": asyncio.Event(), "two": asyncio.Event()}

    async def claimer(name: str) -> None:
        other = started["two" if name == "one" else "one"]
        while True:
            async with app.state.sessionmaker() as s, s.begin():
                now = await database_now(s)
                got = await SCHEDULED.claim(s, now, LEASE, f"{name}-{new_id()}", 7)
                await asyncio.sleep(0.005)  # hold the transaction open a moment
            if not got:
                return
            taken[name].extend(got)
            if not started[name].is_set():  # both are under way before either goes on
                started[name].set()
                await asyncio.wait_for(other.wait(), 10)

    await asyncio.gather(claimer("one"), claimer("two"))
    assert not set(taken["one"]) & set(taken["two"])
    assert len(taken["one"]) + len(taken["two"]) == len(ids)
    assert set(taken["one"]) | set(taken["two"]) == ids
    assert taken["one"] and taken["two"], "both claimers should have taken a share"


async def test_a_lease_that_runs_out_lets_another_worker_take_the_work_over(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    [ident] = await _jobs(app, office_a.id, 1)
    assert await _claim(app, "first", 10) == [ident]
    assert await _claim(app, "second", 10) == []  # leased
    later = await _now(app) + LEASE + timedelta(seconds=1)
    assert await _claim(app, "second", 10, at=later) == [ident]
    async with app.state.sessionmaker() as s, s.begin():
        # The first holder's outcome is dropped: the row is the second's now.
        assert not await SCHEDULED.finish(s, ident, "first", {"done_at": later})
    job = await _job(app, ident)
    assert job.claim_token == "second" and job.done_at is None


async def _pool(
    ctx: WorkerContext, work_seconds: float, lease: timedelta, done: list[str], slots: int = 4
) -> Pool[str]:
    async def claim(
        session: AsyncSession, now: datetime, token: str, limit: int, _full: Collection[Hashable]
    ) -> list[Claimed[str]]:
        keys = await SCHEDULED.claim(session, now, lease, token, limit)
        return [Claimed(k, k, "all") for k in keys]

    async def work(ident: str, token: str) -> bool:
        await asyncio.sleep(work_seconds)
        async with ctx.sessionmaker() as s, s.begin():
            now = await ctx.time_in(s)
            if await SCHEDULED.finish(s, ident, token, {"done_at": now}):
                done.append(ident)
        return False

    return Pool(SCHEDULED, claim, work, slots=slots, lease=lease)


async def test_a_heartbeat_keeps_the_lease_of_work_that_runs_longer_than_it(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    """Work taking 3 leases is never claimable by another worker while it runs; the
    same claim without the heartbeat's pool is (the control)."""
    lease = timedelta(seconds=1)
    ids = await _jobs(app, office_a.id, 2)
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, overlap=True)
    done: list[str] = []
    pool = await _pool(ctx, 3.0, lease, done)
    async with app.state.sessionmaker() as s, s.begin():  # the control: no heartbeat
        [control] = await SCHEDULED.claim(s, await database_now(s), lease, "control", 1)
    [ident] = set(ids) - {control}
    assert await pool.fill(ctx) == 1
    stolen: list[str] = []
    for _ in range(5):
        await asyncio.sleep(0.5)
        stolen += await _claim(app, "thief", 10)
    await pool.settle()
    assert stolen == [control]  # the control's lease ran out; the held one's never did
    assert done == [ident]
    assert (await _job(app, ident)).done_at is not None


async def test_a_failure_is_retried_on_the_backoff_schedule(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    [ident] = await _jobs(app, office_a.id, 1)
    now = await _now(app)
    for attempt, step in enumerate(RETRY_AFTER, start=1):
        [claimed] = await _claim(app, f"t{attempt}", 1, at=now)
        async with app.state.sessionmaker() as s, s.begin():
            at = await SCHEDULED.fail(s, claimed, f"t{attempt}", now, attempt, "boom")
        assert at == now + step
        job = await _job(app, ident)
        assert job.due_at == now + step and job.attempts == attempt
        assert await _claim(app, "early", 1, at=now + step - timedelta(seconds=1)) == []
        now += step


async def test_work_is_given_up_after_its_last_attempt(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    [ident] = await _jobs(app, office_a.id, 1)
    now = await _now(app)
    attempts = SCHEDULED.backoff.attempts
    for attempt in range(1, attempts + 1):
        [claimed] = await _claim(app, f"t{attempt}", 1, at=now)
        async with app.state.sessionmaker() as s, s.begin():
            at = await SCHEDULED.fail(s, claimed, f"t{attempt}", now, attempt, f"boom {attempt}")
        now += timedelta(days=1)
        assert (at is None) == (attempt == attempts)
    job = await _job(app, ident)
    assert job.attempts == attempts == len(RETRY_AFTER) + 1
    assert job.done_at is not None and job.error == f"boom {attempts}"
    assert await _claim(app, "after", 1, at=now + timedelta(days=365)) == []


async def test_a_failure_records_its_error(app: FastAPI, office_a: OfficeFixture) -> None:
    [ident] = await _jobs(app, office_a.id, 1)
    [claimed] = await _claim(app, "t", 1)
    async with app.state.sessionmaker() as s, s.begin():
        await SCHEDULED.fail(s, claimed, "t", await database_now(s), 1, "x" * 5000)
    job = await _job(app, ident)
    assert job.error == "x" * 1000  # bounded by the column
    assert job.claim_token is None and job.attempts == 1


async def test_shutdown_releases_held_work_for_another_worker_at_once(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    ids = set(await _jobs(app, office_a.id, 3))
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, overlap=True)
    done: list[str] = []
    pool = await _pool(ctx, 3600.0, timedelta(seconds=30), done)
    assert await pool.fill(ctx) == 3
    assert await _claim(app, "other", 10) == []  # held for 30 s
    assert await pool.shutdown(ctx) == 3
    assert not pool.running
    assert set(await _claim(app, "other", 10)) == ids  # due again at once
    assert done == []


async def test_a_pool_holds_a_slow_group_to_its_own_slots(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    """Eight rows of a slow group and two of a fast one, four slots, two per group: the
    fast group's work is claimed and done while the slow group's holds its two slots (and
    two more wait for them; the rest went back to the queue for other workers)."""
    slow = set(await _jobs(app, office_a.id, 8))
    fast = set(await _jobs(app, office_a.id, 2))
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, overlap=True)
    done: list[str] = []

    async def claim(
        session: AsyncSession, now: datetime, token: str, limit: int, full: Collection[Hashable]
    ) -> list[Claimed[str]]:
        where = [ScheduledJob.id.not_in(slow)] if "slow" in full else []
        keys = await SCHEDULED.claim(session, now, LEASE, token, limit, where=where)
        return [Claimed(k, k, "slow" if k in slow else "fast") for k in keys]

    async def work(ident: str, token: str) -> bool:
        await asyncio.sleep(3600 if ident in slow else 0)
        async with ctx.sessionmaker() as s, s.begin():
            if await SCHEDULED.finish(s, ident, token, {"done_at": utcnow()}):
                done.append(ident)
        return False

    pool: Pool[str] = Pool(SCHEDULED, claim, work, slots=4, per_group=2, lease=LEASE)
    async with asyncio.timeout(10):  # fills until the fast group's work is done
        while set(done) != fast or len(pool.waiting_keys) < 2:
            await pool.fill(ctx)
            await asyncio.sleep(0.02)
    assert set(done) == fast
    assert pool.groups["slow"] == 2
    async with app.state.sessionmaker() as s:
        held = set(
            await s.scalars(select(ScheduledJob.id).where(ScheduledJob.claim_token.isnot(None)))
        )
    assert len(held & slow) == 4 and len(pool.waiting_keys) == 2
    await pool.shutdown(ctx)


async def test_a_killed_workers_outbox_events_are_taken_over_within_ten_seconds(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A consumer's claim on the default lease: a worker that died holding an event is
    replaced after seconds, not a minute (the lease is renewed only while work runs)."""
    hook = await create_webhook(client, office_a, "http://127.0.0.1:9/hook")
    await emit_event(app, office_a.id)
    clock = Clock()
    now = clock()
    async with app.state.sessionmaker() as s, s.begin():  # a worker claims, then dies
        assert await events_repository.claim(
            s, WEBHOOKS.name, now, now + WEBHOOKS.lease, "dead", 50
        )
    ctx = WorkerContext(
        settings, app.state.engine, app.state.sessionmaker, clock=clock, database_clock=False
    )
    assert await fan_out_events(ctx) == 0  # still held
    clock.advance(seconds=10.5)
    assert await fan_out_events(ctx) == 1
    assert len(await deliveries(app, hook["id"])) == 1


def test_a_retry_after_is_honoured_up_to_an_absolute_limit() -> None:
    """With ``retry_after_limit``, the other side's ``Retry-After`` wins whenever longer
    than the step, up to the limit (not a multiple of the step); never shorter."""
    backoff = Backoff(
        (timedelta(seconds=2), timedelta(seconds=4)), jitter=0.2, retry_after_limit=3600
    )
    mid = lambda: 0.5  # noqa: E731 - no jitter
    assert backoff.after(1, 60, mid) == timedelta(seconds=60)  # 30 steps: still honoured
    assert backoff.after(1, 86_400, mid) == timedelta(seconds=3600)
    assert backoff.after(2, 1, mid) == timedelta(seconds=4)
    assert backoff.after(3, 60, mid) is None  # the last attempt: given up all the same
    capped = Backoff((timedelta(seconds=2),))  # without it: at most twice the step
    assert capped.after(1, 60) == timedelta(seconds=4)


async def test_a_pool_claims_and_renews_on_the_clock_it_is_given(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    """A pool given a clock claims and leases with it (not the database's): work due an
    hour from now is claimed by a pool whose clock says it is an hour later."""
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, overlap=False)
    async with app.state.sessionmaker() as s:
        now = await database_now(s)
        job = add_job(s, office_a.id, "noop", {}, now + timedelta(hours=1), now)
        await s.commit()
    later = now + timedelta(hours=1, seconds=1)
    done: list[str] = []

    async def clock(_session: AsyncSession) -> datetime:
        return later

    async def claim(
        session: AsyncSession, at: datetime, token: str, limit: int, _full: Collection[Hashable]
    ) -> list[Claimed[str]]:
        keys = await SCHEDULED.claim(session, at, LEASE, token, limit)
        return [Claimed(k, k, "all") for k in keys]

    async def work(ident: str, token: str) -> bool:
        async with ctx.sessionmaker() as s, s.begin():
            if await SCHEDULED.finish(s, ident, token, {"done_at": later}):
                done.append(ident)
        return False

    unclocked: Pool[str] = Pool(SCHEDULED, claim, work, slots=2, lease=LEASE)
    assert await unclocked.fill(ctx) == 0  # by the shared clock it is not due yet
    clocked: Pool[str] = Pool(SCHEDULED, claim, work, slots=2, lease=LEASE, clock=clock)
    assert await clocked.fill(ctx) == 1
    await clocked.settle()
    assert done == [job.id]
    assert (await _job(app, job.id)).due_at == later + LEASE  # leased by the given clock


async def test_work_taken_inside_a_transaction_goes_to_one_taker(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """Two takers racing over 60 due rows, each taking 4 for one transaction and writing
    its outcome before the commit, take disjoint sets that together are every row (SKIP
    LOCKED on PostgreSQL, one writer on SQLite)."""
    ids = set(await _jobs(app, office_a.id, 60))
    taken: dict[str, list[str]] = {"one": [], "two": []}

    async def taker(name: str) -> None:
        while True:
            async with app.state.sessionmaker() as s, s.begin():
                now = await database_now(s)
                due = (
                    select(ScheduledJob.id)
                    .where(ScheduledJob.done_at.is_(None), ScheduledJob.due_at <= now)
                    .order_by(ScheduledJob.due_at, ScheduledJob.id)
                    .limit(4)
                )
                got = await take(s, due)
                await asyncio.sleep(0.005)  # the work, inside the transaction
                await s.execute(
                    update(ScheduledJob).where(ScheduledJob.id.in_(got)).values(done_at=now)
                )
            if not got:
                return
            taken[name].extend(got)

    await asyncio.gather(taker("one"), taker("two"))
    assert not set(taken["one"]) & set(taken["two"])
    assert set(taken["one"]) | set(taken["two"]) == ids
    assert len(taken["one"]) + len(taken["two"]) == len(ids)


async def test_work_asked_for_by_hand_is_claimed_whatever_its_due_time(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """``due_when`` replaces the lease being due (a check asked for now): a row due in an
    hour is claimed, leased like any claim, and still never by two claimers at once."""
    async with app.state.sessionmaker() as s:
        now = await database_now(s)
        job = add_job(s, office_a.id, "noop", {}, now + timedelta(hours=1), now)
        await s.commit()
    assert await _claim(app, "due-only", 10) == []
    async with app.state.sessionmaker() as s, s.begin():
        mine = ScheduledJob.id == job.id
        got = await SCHEDULED.claim(s, now, LEASE, "by-hand", 10, where=[mine], due_when=true())
    assert got == [job.id]
    claimed = await _job(app, job.id)
    assert claimed.claim_token == "by-hand" and claimed.due_at == now + LEASE


async def test_a_renewing_block_keeps_the_leases_of_the_work_it_still_holds(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """Work run outside a pool (``renewing``): the leases of the keys still in the set are
    renewed while the block runs; one discarded (its outcome recorded) is not."""
    lease = timedelta(seconds=1)
    await _jobs(app, office_a.id, 2)
    async with app.state.sessionmaker() as s, s.begin():
        first, second = await SCHEDULED.claim(s, await database_now(s), lease, "worker", 2)
    held = {first, second}
    stolen: list[str] = []
    async with renewing(app.state.sessionmaker, SCHEDULED, held, "worker", lease, utcnow):
        held.discard(second)
        for _ in range(6):
            await asyncio.sleep(0.5)
            stolen += await _claim(app, "thief", 10)
    assert stolen == [second]
    assert (await _job(app, first)).claim_token == "worker"


async def test_a_single_pass_claims_as_slots_free_up_until_nothing_is_due(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    """Seven due rows, two slots: one pass outside a long-running worker (tests,
    ``run_until_idle``) does all seven, claiming as slots free up, not one claim's worth;
    it answers how many it started."""
    ids = await _jobs(app, office_a.id, 7)
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    done: list[str] = []
    pool = await _pool(ctx, 0.05, LEASE, done, slots=2)
    assert await drain(ctx, pool) == 7
    assert sorted(done) == sorted(ids)
    assert not pool.running and not pool.waiting_keys


async def _recorded(app: FastAPI, ids: list[str]) -> set[str]:
    return {i for i in ids if (await _job(app, i)).done_at is not None}


async def test_outcomes_ready_together_are_written_in_one_transaction(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    ids = await _jobs(app, office_a.id, 4)
    assert sorted(await _claim(app, "t", 4)) == sorted(ids)
    writes: list[list[str]] = []

    async def write(session: AsyncSession, outcomes: list[str]) -> None:
        writes.append(list(outcomes))
        for ident in outcomes:
            await SCHEDULED.finish(session, ident, "t", {"done_at": utcnow()})

    recorder: Recorder[str] = Recorder(app.state.sessionmaker, write, "test")
    await asyncio.gather(*(recorder.record(i) for i in ids))
    assert writes == [ids]
    assert await _recorded(app, ids) == set(ids)


async def test_a_batch_of_outcomes_that_fails_is_written_one_by_one(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """One outcome whose write raises loses none of the others written with it: the
    batch's transaction rolls back and each is written in its own."""
    ids = await _jobs(app, office_a.id, 4)
    await _claim(app, "t", 4)
    poison = ids[1]
    writes: list[list[str]] = []

    async def write(session: AsyncSession, outcomes: list[str]) -> None:
        writes.append(list(outcomes))
        for ident in outcomes:
            await SCHEDULED.finish(session, ident, "t", {"done_at": utcnow()})
            if ident == poison:
                raise RuntimeError("a bad outcome")

    recorder: Recorder[str] = Recorder(app.state.sessionmaker, write, "test")
    await asyncio.gather(*(recorder.record(i) for i in ids))
    assert writes == [ids, *([i] for i in ids)]
    assert await _recorded(app, ids) == set(ids) - {poison}
    assert (await _job(app, poison)).claim_token == "t"  # nothing written: still held
