"""The worker loop: periodic jobs run once per interval across workers; SIGTERM stops it."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from datetime import UTC, datetime, timedelta

from fastapi import FastAPI

from officehub.kit.config import Settings
from officehub.kit.worker import PeriodicJob, Worker, WorkerContext


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 1, 1, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


async def test_periodic_job_runs_once_per_interval_across_workers(
    app: FastAPI, settings: Settings
) -> None:
    clock = FakeClock()
    runs: list[str] = []

    def make_worker(name: str) -> Worker:
        async def job(_ctx: WorkerContext) -> None:
            runs.append(name)

        ctx = WorkerContext(
            settings, app.state.engine, app.state.sessionmaker, clock=clock, worker_id=name
        )
        return Worker(ctx, [], [PeriodicJob("tick", timedelta(minutes=1), job)])

    first, second = make_worker("one"), make_worker("two")
    for _ in range(3):
        await first.run_once()
        await second.run_once()
    assert len(runs) == 1
    clock.now += timedelta(seconds=59)
    await second.run_once()
    await first.run_once()
    assert len(runs) == 1
    clock.now += timedelta(seconds=2)
    await second.run_once()
    await first.run_once()
    assert len(runs) == 2 and runs[1] == "two"


async def test_a_failing_job_does_not_stop_the_others(app: FastAPI, settings: Settings) -> None:
    done: list[int] = []

    async def broken(_ctx: WorkerContext) -> int:
        raise RuntimeError("boom")

    async def fine(_ctx: WorkerContext) -> int:
        done.append(1)
        return 0

    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    assert await Worker(ctx, [broken, fine]).run_once() == 0
    assert done == [1]


async def test_worker_process_stops_cleanly_on_sigterm(database_url: str) -> None:
    env = {**os.environ, "OFFICEHUB_DATABASE_URL": database_url, "OFFICEHUB_LOG_LEVEL": "INFO"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "officehub",
        "worker",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stderr is not None
    try:
        async with asyncio.timeout(60):
            while b"started" not in (line := await proc.stderr.readline()):
                assert line, "worker exited before starting"
        proc.send_signal(signal.SIGTERM)
        async with asyncio.timeout(30):
            rest = await proc.stderr.read()
            assert await proc.wait() == 0
        assert b"stopped" in rest
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
