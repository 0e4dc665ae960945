"""Background work is declared by the domains and run by the kit (issue 43, room 2).

- each domain keeps its jobs in its own ``jobs.py`` (a ``DomainJobs``), and the worker's
  job list (``officehub.jobs``) collects every one of them, once;
- each kind of scheduled job is registered by one domain's ``jobs.py``, exactly once, with
  a handler of that domain; every kind the sources schedule has one;
- one runner of scheduled jobs, in the kit (``kit.scheduled_jobs``);
- a job of a kind nobody registered is not lost: it fails for good, visibly (done, its
  error on the row), and is not run again;
- a job claimed by a worker killed mid-job is run again by another once its lease ends,
  not before.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub import jobs as job_list
from officehub.kit.config import Settings
from officehub.kit.scheduled_jobs import (
    LEASE,
    DomainJobs,
    ScheduledJob,
    add_job,
    handlers_of,
    scheduled_runner,
)
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext
from tests.helpers import OfficeFixture

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "officehub"


def _domain_jobs_modules() -> dict[str, Any]:
    """Every ``officehub.<domain>.jobs`` module, by domain."""
    return {
        path.parent.name: importlib.import_module(f"officehub.{path.parent.name}.jobs")
        for path in sorted(PACKAGE.glob("*/jobs.py"))
    }


def test_every_domains_jobs_are_collected_by_the_job_list_once() -> None:
    modules = _domain_jobs_modules()
    assert {"automation", "contacts", "conversations", "users"} <= set(modules)
    for domain, module in modules.items():
        assert isinstance(module.JOBS, DomainJobs), domain
    collected = Counter(id(jobs) for jobs in job_list.DOMAINS)
    assert sorted(collected.values()) == [1] * len(modules)
    assert set(collected) == {id(module.JOBS) for module in modules.values()}
    # Nothing runs that a domain did not declare; nothing declared is left out.
    periodic = job_list.periodic_jobs()
    assert Counter(job.name for job in periodic).most_common(1)[0][1] == 1
    declared_periodic = [job for m in modules.values() for job in m.JOBS.periodic]
    assert sorted(job.name for job in periodic) == sorted(job.name for job in declared_periodic)
    queue = [job for job in job_list.queue_jobs() if job.__module__ != "officehub.events.consumers"]
    declared = [job for m in modules.values() for job in m.JOBS.queue]
    assert len(queue) == len(declared) + 1  # and the one runner of scheduled jobs
    assert set(declared) <= set(queue)


def test_each_kind_of_scheduled_job_is_registered_by_its_domain_once() -> None:
    kinds: Counter[str] = Counter()
    for domain, module in _domain_jobs_modules().items():
        for kind, handler in module.JOBS.scheduled.items():
            kinds[kind] += 1
            # The handler is the domain's own work, not another domain's.
            assert handler.__module__.startswith(f"officehub.{domain}."), (kind, domain)
    assert kinds, "some domain has scheduled work"
    assert [kind for kind, n in kinds.items() if n != 1] == []
    assert set(handlers_of(job_list.DOMAINS)) == set(kinds)


def test_a_kind_registered_twice_is_refused() -> None:
    async def handler(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
        return None

    one, other = DomainJobs(scheduled={"x.y": handler}), DomainJobs(scheduled={"x.y": handler})
    with pytest.raises(ValueError, match=r"'x\.y' registered twice"):
        handlers_of([one, other])


def _scheduled_kinds() -> dict[str, str]:
    """Every kind the sources pass to ``add_job``: its value, and where."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if "migrations" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and getattr(node.func, "id", getattr(node.func, "attr", None)) == "add_job"
        ]
        if not calls:
            continue
        dotted = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        module = importlib.import_module(dotted)
        for call in calls:
            arg = call.args[2] if len(call.args) > 2 else None
            arg = arg or next(k.value for k in call.keywords if k.arg == "kind")
            value = eval(compile(ast.Expression(arg), str(path), "eval"), vars(module))  # noqa: S307
            assert isinstance(value, str), (path, call.lineno)
            found[value] = f"{dotted}:{call.lineno}"
    return found


def test_every_kind_the_sources_schedule_has_a_registered_handler() -> None:
    scheduled = _scheduled_kinds()
    assert len(scheduled) >= 5  # sends, sequence blocks, erasures, retention, paused mail
    handlers = handlers_of(job_list.DOMAINS)
    assert {kind: where for kind, where in scheduled.items() if kind not in handlers} == {}


def test_the_runner_of_scheduled_jobs_is_the_kits_alone() -> None:
    """One runner: no domain claims ``scheduled_jobs`` rows or makes a runner of its own."""
    users = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if ("scheduled_runner(" in text or "SCHEDULED." in text) and path.name != "jobs.py":
            users.append(str(path.relative_to(PACKAGE)))
    assert users == ["kit/scheduled_jobs.py"]
    assert not (PACKAGE / "automation" / "scheduled.py").exists()


def _ctx(app: FastAPI, settings: Settings, now: datetime, worker_id: str) -> WorkerContext:
    return WorkerContext(
        settings,
        app.state.engine,
        app.state.sessionmaker,
        clock=lambda: now,
        worker_id=worker_id,
        database_clock=False,
    )


async def _add(app: FastAPI, office_id: str, kind: str, now: datetime) -> str:
    async with app.state.sessionmaker() as s, s.begin():
        ident: str = add_job(s, office_id, kind, {"n": 1}, now, now).id
        return ident


async def _row(app: FastAPI, ident: str) -> ScheduledJob:
    async with app.state.sessionmaker() as s:
        job: ScheduledJob | None = await s.get(ScheduledJob, ident)
        assert job is not None
        return job


async def test_a_job_of_a_kind_nobody_registered_fails_visibly_and_is_kept(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    now = utcnow()
    ident = await _add(app, office_a.id, "nobody.owns.this", now)
    runner = scheduled_runner(handlers_of(job_list.DOMAINS))
    assert await runner(_ctx(app, settings, now, "w1")) == 1
    job = await _row(app, ident)
    assert job.error == "no handler for 'nobody.owns.this'"
    assert job.done_at == now and job.attempts == 1 and job.claim_token is None
    assert job.payload == {"n": 1}
    # Given up: not claimed again, however late.
    assert await runner(_ctx(app, settings, now + timedelta(days=1), "w2")) == 0


async def test_a_job_held_by_a_killed_worker_runs_again_after_its_lease(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    now = utcnow()
    ident = await _add(app, office_a.id, "tests.slow", now)
    started = asyncio.Event()
    ran: list[str] = []

    async def hangs(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
        started.set()
        await asyncio.Event().wait()  # until the worker is killed

    async def runs(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
        ran.append(ctx.worker_id)

    dying = asyncio.ensure_future(
        scheduled_runner({"tests.slow": hangs})(_ctx(app, settings, now, "dying"))
    )
    await asyncio.wait_for(started.wait(), 10)
    dying.cancel()  # killed mid-job: nothing it did commits, the row stays leased
    with pytest.raises(asyncio.CancelledError):
        await dying
    job = await _row(app, ident)
    assert job.done_at is None and job.claim_token is not None
    assert job.due_at == now + LEASE

    runner = scheduled_runner({"tests.slow": runs})
    second = timedelta(seconds=1)
    assert await runner(_ctx(app, settings, now + LEASE - second, "early")) == 0
    assert ran == []
    assert await runner(_ctx(app, settings, now + LEASE, "after")) == 1
    assert ran == ["after"]
    job = await _row(app, ident)
    assert job.done_at == now + LEASE and job.claim_token is None and job.error is None


async def test_a_live_workers_batch_keeps_its_leases_by_the_heartbeat(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    """The runner renews its batch's leases every third of the lease while it works: the
    jobs waiting behind one that runs longer than a lease are not taken over by another
    worker, and each runs once, by the worker that claimed it. (On PostgreSQL another
    worker would take the waiting job once its lease ran out; on SQLite, one writer at a
    time, it waits for the running job's transaction either way.)"""
    lease = timedelta(seconds=0.6)
    first = await _add(app, office_a.id, "tests.long", utcnow())
    second = await _add(app, office_a.id, "tests.long", utcnow())
    ran: list[tuple[str, str]] = []

    async def long(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
        ran.append((job.id, ctx.worker_id))
        if job.id == first:
            await asyncio.sleep(3 * lease.total_seconds())

    def live(worker_id: str) -> WorkerContext:
        ctx = _ctx(app, settings, utcnow(), worker_id)
        ctx.clock = utcnow
        return ctx

    working = asyncio.ensure_future(
        scheduled_runner({"tests.long": long}, lease=lease)(live("working"))
    )
    thief = scheduled_runner({"tests.long": long}, lease=lease)
    stolen = 0
    while not working.done():
        await asyncio.sleep(0.2)
        stolen += await thief(live("thief"))
    assert await working == 2
    assert stolen == 0
    assert ran == [(first, "working"), (second, "working")]
    assert (await _row(app, second)).done_at is not None
