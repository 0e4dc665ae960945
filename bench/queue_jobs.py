"""Jobs per second through the work queue (``kit.queue``: ``SKIP LOCKED`` claims, a lease, one
transaction per job), with 1 and 2 worker processes on PostgreSQL, and one worker's memory
over a long run.

The jobs are scheduled jobs (``kit.scheduled_jobs``) of a kind whose handler does nothing,
run by the worker's own runner (``kit.scheduled_jobs.scheduled_runner``: claim 50, then
hold, run and finish each in its own transaction), so the figure is the queue's own cost.
Each worker is a process of its own (``--worker``), started after the jobs are written; the
figure is jobs / the time from the workers' start to the last one's exit. The memory run
samples one worker's resident set size (``/proc/self/statm``) every ``--sample`` jobs.

    .venv/bin/python -m bench.queue_jobs                       # 20,000 jobs, 1 and 2 workers
    .venv/bin/python -m bench.queue_jobs --jobs 5000 --memory-jobs 0
    .venv/bin/python -m bench.queue_jobs --memory-jobs 100000  # the flat-memory check

A database of its own (``officehub_bench_queue``) on the test PostgreSQL is created and
dropped here. Published figures beside it (``docs/performance.md``): Graphile Worker states
~183,000 jobs/s in optimal conditions (batched completion, 4 instances of 24 concurrent jobs,
a well-specced server) and ~700 jobs/s for its first releases.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from typing import Any

from sqlalchemy import insert

import officehub.models  # noqa: F401 (every table: the ORM resolves foreign keys)
from bench.databases import BASE, drop_database, fresh_database
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.ids import new_id
from officehub.kit.scheduled_jobs import ScheduledJob, scheduled_runner
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext

DATABASE = "officehub_bench_queue"
URL = BASE + DATABASE
KIND = "bench.noop"
PAGE = os.sysconf("SC_PAGE_SIZE")


async def _noop(*_args: Any) -> None:
    return None


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE / 2**20


async def worker_main(url: str, sample: int) -> None:
    """One worker process: runs the queue until it is empty; prints its RSS samples."""
    engine = create_engine(url)
    ctx = WorkerContext(Settings(database_url=url), engine, create_sessionmaker(engine))
    run = scheduled_runner({KIND: _noop})
    done, samples, next_sample = 0, [(0, _rss_mib())], sample
    began = time.time()  # after the imports and the engine: the queue's own time
    while claimed := await run(ctx):
        done += claimed
        if sample and done >= next_sample:
            samples.append((done, _rss_mib()))
            next_sample += sample
    samples.append((done, _rss_mib()))
    await engine.dispose()
    print(json.dumps({"done": done, "rss": samples, "began": began, "ended": time.time()}))


async def _write_jobs(count: int) -> str:
    """``count`` due jobs of one office; returns the office's id."""
    engine = create_engine(URL)
    office_id = new_id()
    now = utcnow() - timedelta(seconds=1)
    try:
        async with engine.begin() as conn:
            await conn.exec_driver_sql(
                "INSERT INTO offices (id, name, created_at, updated_at) VALUES ($1, $2, $3, $3)",
                (office_id, "Bench", now),
            )
            for start in range(0, count, 5000):
                rows = [
                    {
                        "id": new_id(),
                        "office_id": office_id,
                        "kind": KIND,
                        "payload": {},
                        "due_at": now,
                        "created_at": now,
                        "attempts": 0,
                    }
                    for _ in range(start, min(count, start + 5000))
                ]
                await conn.execute(insert(ScheduledJob), rows)
    finally:
        await engine.dispose()
    return office_id


def _run_workers(workers: int, sample: int) -> tuple[float, list[dict[str, Any]]]:
    """The queue's time: from the first worker's first claim to the last one's end (a
    process's start, 2-3 s of imports, is not the queue's)."""
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "bench.queue_jobs", "--worker", URL, "--sample", str(sample)],
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(workers)
    ]
    outputs = [json.loads(p.communicate()[0].strip().splitlines()[-1]) for p in processes]
    return max(o["ended"] for o in outputs) - min(o["began"] for o in outputs), outputs


async def _throughput(jobs: int, workers: int) -> None:
    await fresh_database(DATABASE)
    await _write_jobs(jobs)
    seconds, outputs = _run_workers(workers, 0)
    done = sum(o["done"] for o in outputs)
    assert done == jobs, f"{done} of {jobs} jobs run"
    print(
        f"{workers} worker(s): {jobs:,} jobs in {seconds:.1f} s = {jobs / seconds:,.0f} jobs/s "
        f"(each ran {', '.join(str(o['done']) for o in outputs)})"
    )


async def _memory(jobs: int, sample: int) -> None:
    await fresh_database(DATABASE)
    await _write_jobs(jobs)
    seconds, [output] = _run_workers(1, sample)
    rss = output["rss"]
    after_warmup = [mib for done, mib in rss if done >= sample]
    print(
        f"memory, 1 worker over {output['done']:,} jobs ({seconds:.0f} s): RSS "
        + " → ".join(f"{mib:.1f}" for _done, mib in rss)
        + " MiB"
    )
    if after_warmup:
        low, high = min(after_warmup), max(after_warmup)
        print(
            f"  after the first {sample:,} jobs: {low:.1f} to {high:.1f} MiB "
            f"(spread {high - low:.1f} MiB)"
        )


async def main(args: argparse.Namespace) -> None:
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    try:
        for workers in (1, 2):
            await _throughput(args.jobs, workers)
        if args.memory_jobs:
            await _memory(args.memory_jobs, args.sample)
    finally:
        await drop_database(DATABASE)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=20_000)
    parser.add_argument("--memory-jobs", type=int, default=0)
    parser.add_argument("--sample", type=int, default=10_000)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parsed = parser.parse_args()
    if parsed.worker:
        asyncio.run(worker_main(parsed.worker, parsed.sample))
    else:
        asyncio.run(main(parsed))
