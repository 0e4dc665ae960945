"""Many processes, one PostgreSQL database: two ``officehub serve --no-worker`` API processes
and two ``officehub worker`` processes, a real webhook receiver, 2,000 changes driven through
both APIs at once, and one worker killed with SIGKILL midway.

What the contract promises (Events; Scale) and this test holds it to:
- every event reaches the receiver: each ``contact.created`` recorded in the outbox arrives
  with its event id, and nothing else arrives;
- at-least-once, never lost: a delivery the killed worker held is sent again when its lease
  ends (so is one whose lease ran out while a loaded worker still sent it), so an event
  may arrive more than once, but only as a retry of its one delivery (same event id, same
  delivery id, which is what lets receivers drop it), and such retries stay rare;
- periodic jobs run once per interval however many workers there are: the test makes every
  job's interval pass twice (moving ``job_leases.next_run_at`` to the past, as the clock
  would), once with both workers up and once after the kill, and counts the runs the
  workers log: exactly one per interval for every job.

PostgreSQL only by nature (several processes claiming with ``FOR UPDATE SKIP LOCKED`` and
waking each other by ``NOTIFY``); it runs in the suite's PostgreSQL pass.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text

from officehub.events.models import OutboxEvent
from officehub.jobs import periodic_jobs
from officehub.kit.job_leases import JobLease
from officehub.webhooks.models import WebhookDelivery, WebhookDeliveryAttempt
from tests.conftest import PG_URL
from tests.helpers import OfficeFixture
from tests.receiver import running_receiver
from tests.server_process import clean_env, running_server
from tests.webhook_helpers import create_webhook

pytestmark = pytest.mark.skipif(
    not PG_URL, reason="PostgreSQL-only: many processes on one database"
)

CHANGES = 2_000
CONCURRENCY = 8  # per API process
BATCH = 50  # deliveries a worker claims at once
WAIT = 240  # seconds; the whole test takes about a minute on an idle 2-core machine
INTERVALS = {job.name: job.interval for job in periodic_jobs()}
CLAIM_LAG = 10.0  # seconds: how late a loaded worker may see a due job (a pass's length)


@dataclass
class WorkerProcess:
    proc: asyncio.subprocess.Process
    lines: list[dict[str, object]] = field(default_factory=list)
    reader: asyncio.Task[None] | None = None

    @property
    def worker_id(self) -> str:
        return f"{os.uname().nodename}:{self.proc.pid}"

    def runs(self) -> list[str]:
        runs: list[str] = []
        for line in self.lines:
            jobs = line.get("jobs")  # one line per pass: the jobs it ran
            if isinstance(jobs, list):
                runs.extend(str(job) for job in jobs)
        return runs


@contextlib.asynccontextmanager
async def worker_process(
    database_url: str, folder: Path, data_dir: Path
) -> AsyncIterator[WorkerProcess]:
    env = clean_env(
        OFFICEHUB_DATABASE_URL=database_url,
        OFFICEHUB_DATA_DIR=str(data_dir),
        OFFICEHUB_WEBHOOK_ALLOW_PRIVATE="true",
        OFFICEHUB_WORKER_POLL_SECONDS="0.2",
        OFFICEHUB_DELIVERY_LEASE_SECONDS="20",
        OFFICEHUB_DELIVERY_BATCH_SIZE=str(BATCH),
        OFFICEHUB_DELIVERY_CONCURRENCY="25",
        OFFICEHUB_LOG_LEVEL="INFO",
        OFFICEHUB_LOG_FORMAT="json",
    )
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "officehub",
        "worker",
        cwd=folder,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    worker = WorkerProcess(proc)
    assert proc.stderr is not None
    stream = proc.stderr

    async def read() -> None:
        while line := await stream.readline():
            with contextlib.suppress(ValueError):
                worker.lines.append(json.loads(line))

    worker.reader = asyncio.create_task(read())
    try:
        yield worker
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await worker.reader


async def pass_an_interval(app: FastAPI) -> tuple[float, float]:
    """Every periodic job due now, as if its interval had passed; returns once each has been
    claimed again (its next run in the future): when the jobs were made due, and when they
    were all seen claimed."""
    async with app.state.sessionmaker() as s, s.begin():
        await s.execute(text("UPDATE job_leases SET next_run_at = now() - interval '1 second'"))
    made_due = time.time()
    async with asyncio.timeout(WAIT):  # a worker looks at its jobs between passes
        while True:
            async with app.state.sessionmaker() as s:
                waiting = await s.scalar(
                    text("SELECT count(*) FROM job_leases WHERE next_run_at <= now()")
                )
            if waiting == 0:
                return made_due, time.time()
            await asyncio.sleep(0.1)


def natural_runs(interval: float, windows: list[tuple[float, float]]) -> tuple[int, int]:
    """The fewest and the most runs a job of ``interval`` seconds makes on its own (its
    interval really passing) over ``windows``, each the time from a run (known to within
    its uncertainty, the second number) to the job being made due again. A job claimed
    when due is claimed again ``interval`` after that claim, and a worker sees a due job
    between passes, up to ``CLAIM_LAG`` seconds late."""
    most = sum(int(length // interval) for length, _ in windows)
    fewest = sum(
        int(max(0.0, length - uncertainty) // (interval + CLAIM_LAG))
        for length, uncertainty in windows
    )
    return fewest, most


async def test_two_api_and_two_worker_processes_deliver_every_event_and_run_jobs_once(
    app: FastAPI,
    database_url: str,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    for name in ("w1", "w2", "api1", "api2"):
        (tmp_path / name).mkdir()
    # Every process of a deployment holds one secrets key (docs/deployment.md): here the
    # in-process app's, in the test's data folder, which sealed the webhook's secret.
    data_dir = tmp_path / "data"
    api_env = clean_env(
        OFFICEHUB_DATABASE_URL=database_url,
        OFFICEHUB_DATA_DIR=str(data_dir),
        OFFICEHUB_LOG_LEVEL="WARNING",
    )
    started = time.time()  # no job runs before: the workers start here
    async with (
        running_receiver() as receiver,
        worker_process(database_url, tmp_path / "w1", data_dir) as first,
        worker_process(database_url, tmp_path / "w2", data_dir) as second,
    ):
        hook = await create_webhook(client, office_a, receiver.url)
        async with (
            running_server(tmp_path / "api1", "--no-worker", env=api_env) as api1,
            running_server(tmp_path / "api2", "--no-worker", env=api_env) as api2,
        ):
            # Every job's first run: one row per job in job_leases.
            async with asyncio.timeout(20):
                while True:
                    async with app.state.sessionmaker() as s:
                        names = set(await s.scalars(select(JobLease.name)))
                    if names >= set(INTERVALS):
                        break
                    await asyncio.sleep(0.1)
            assert "demo office" not in api1.stderr + api2.stderr  # the test's office serves
            # Each job's last run so far, as its claim recorded it (the next run an interval
            # later): its first run is between the workers' start and then.
            async with app.state.sessionmaker() as s:
                first_run = {
                    lease.name: lease.next_run_at.timestamp()
                    - INTERVALS[lease.name].total_seconds()
                    for lease in await s.scalars(select(JobLease))
                }

            created: list[str] = []
            failures: list[str] = []

            async def drive(base_url: str, numbers: range) -> None:
                queue = iter(numbers)
                async with httpx.AsyncClient(base_url=base_url, timeout=30) as http:

                    async def one_connection() -> None:
                        for n in queue:
                            response = await http.post(
                                "/people", json={"name": f"Pessoa {n}"}, headers=office_a.headers
                            )
                            if response.status_code == 201:
                                created.append(response.json()["id"])
                            else:
                                failures.append(f"{response.status_code} {response.text[:200]}")

                    await asyncio.gather(*(one_connection() for _ in range(CONCURRENCY)))

            half = CHANGES // 2
            load = asyncio.gather(
                drive(api1.url, range(half)), drive(api2.url, range(half, CHANGES))
            )
            await receiver.wait_for(300, seconds=WAIT)
            both_up, both_claimed = await pass_an_interval(app)
            await receiver.wait_for(700, seconds=WAIT)
            first.proc.kill()  # SIGKILL mid-delivery: no cleanup, its claims left leased
            killed_at = time.time()
            await first.proc.wait()
            one_up, one_claimed = await pass_an_interval(app)
            await load
            assert failures == []
            assert len(created) == CHANGES

            async with app.state.sessionmaker() as s:
                emitted = set(
                    await s.scalars(
                        select(OutboxEvent.id).where(
                            OutboxEvent.office_id == office_a.id,
                            OutboxEvent.name == "contact.created",
                        )
                    )
                )
            assert len(emitted) == CHANGES
            await receiver.wait_for_events(emitted, seconds=WAIT)
            async with asyncio.timeout(30):  # the last outcomes recorded
                while True:
                    async with app.state.sessionmaker() as s:
                        open_deliveries = await s.scalar(
                            text(
                                "SELECT count(*) FROM webhook_deliveries WHERE status <> 'SUCCESS'"
                            )
                        )
                    if open_deliveries == 0:
                        break
                    await asyncio.sleep(0.2)
        finished = time.time()

    assert first.proc.returncode == -signal.SIGKILL
    assert second.proc.returncode == 0

    # Every event arrived, and only those; the bodies are the contacts created.
    arrivals = Counter(receiver.event_ids())
    assert set(arrivals) == emitted
    assert {r.json["data"]["id"] for r in receiver.received} == set(created)
    # At-least-once: an event arrives again only as a retry of its one delivery (the same
    # event id and delivery id), after the killed worker's claim or a lease that ran out.
    deliveries_of: dict[str, set[str]] = {}
    for r in receiver.received:
        deliveries_of.setdefault(r.json["id"], set()).add(r.headers["x-service-delivery"])
    assert all(len(ids) == 1 for ids in deliveries_of.values())
    again = sum(times - 1 for times in arrivals.values())
    assert again < CHANGES // 10, arrivals.most_common(5)

    async with app.state.sessionmaker() as s:
        records = list(
            await s.scalars(select(WebhookDelivery).where(WebhookDelivery.webhook_id == hook["id"]))
        )
        attempts = Counter(await s.scalars(select(WebhookDeliveryAttempt.worker_id)))
    assert len(records) == CHANGES and {d.status for d in records} == {"SUCCESS"}
    # Only the worker processes delivered (the API processes run none), both of them.
    assert set(attempts) == {first.worker_id, second.worker_id}, attempts

    # Periodic jobs: the first run, then one per interval made to pass (both workers up,
    # then the survivor alone), whichever worker ran it, and no more, unless the real
    # interval passed as well (the 30-second jobs': the test takes one to two minutes).
    # A run on its own happens an interval after the job's last run: counted from each
    # job's first run (known to be between the workers' start and its lease as first
    # read; not from when every job was seen leased, 10-20 s after the first runs on a
    # loaded machine) and from each forced run (known to within the time its claim took
    # to be seen).
    runs = Counter(first.runs() + second.runs())
    for name, interval in INTERVALS.items():
        windows = [
            (both_up - started, max(0.0, first_run[name] - started)),
            (one_up - both_up, both_claimed - both_up),
            (finished - one_up, one_claimed - one_up),
        ]
        fewest, most = natural_runs(interval.total_seconds(), windows)
        assert 3 + fewest <= runs[name] <= 3 + most, (name, runs[name], fewest, most, windows)
    assert both_up < killed_at < one_up
    assert set(second.runs()) == set(INTERVALS)  # the survivor ran every job after the kill
