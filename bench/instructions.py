"""Instructions a request costs each server, counted by valgrind's callgrind: an A/B measure
that other work on the machine does not move.

``bench.stack_ratio``'s CPU time per request moves 10-30 % between runs of unchanged code
on a shared 2-core machine (the same server's figure from one run to the next), so a change
worth 3-5 % cannot be told from noise there. Callgrind counts the instructions a process
executes, whatever else the machine is doing (``/work/.library/env``: the same total twice,
once with the other core loaded). Each server (``stack_ratio --serve``: the same uvicorn
settings, the same seeded PostgreSQL database) runs under
``valgrind --tool=callgrind --instr-atstart=no``; after a warm-up, instrumentation is
switched on (``callgrind_control -i on``) for a fixed number of requests sent by
``CONNECTIONS`` concurrent clients, and the dump's total is divided by the requests. The
server's start-up and warm-up are not counted. Instructions are not time: a cache miss
costs none, and the kernel's work is not counted at all (system calls, page faults: a
greenlet that SQLAlchemy's asyncio layer starts maps and unmaps a 16 KiB frame stack, about
7 µs of system time each, none of it here). So this decides A/B questions about the
process's own code; the goals' ratios stay ``stack_ratio --raw``'s. Being counts, runs need
not take ``stack_ratio``'s lock (other work on the machine makes them slower, not larger).

    .venv/bin/python -m bench.instructions                          # every route, officehub and raw
    .venv/bin/python -m bench.instructions --only "PATCH" --requests 300 --repeat 5
    PYTHONPATH=/tmp/abB/src:/tmp/abB .venv/bin/python -m bench.instructions --kinds officehub

A run of 200 requests of ``PATCH /conversation/{id}`` takes about 12 s under callgrind; the
counts of three runs of unchanged code were within 4 % of each other (16 clients on one
row's lock: the event loop's turns differ); ``--connections 1`` takes the loop's turns out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx

from bench.stack_ratio import (
    RAW_NAMES,
    RouteLoad,
    World,
    await_health,
    free_port,
    routes,
    seeded_postgresql,
)

KINDS = ("officehub", "raw")
CONNECTIONS = 16
TIMEOUTS = ("CONNECT", "STATEMENT", "POOL")


@contextlib.contextmanager
def counted_server(kind: str, url: str, data_dir: str, out_dir: str) -> Iterator[tuple[str, int]]:
    """``stack_ratio --serve`` under callgrind with instrumentation off; its base URL and the
    pid callgrind_control addresses."""
    port = free_port()
    args = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out_dir}/callgrind.%p",
        sys.executable,
        "-m",
        "bench.stack_ratio",
        "--serve",
        kind,
        url,
        str(port),
        data_dir,
    ]
    # Under callgrind a request takes 50-100 times as long: sixteen on one row's lock would
    # outwait the database timeouts and be answered 503 (nothing to count).
    env = {**os.environ, **{f"OFFICEHUB_DB_{t}_TIMEOUT_SECONDS": "600" for t in TIMEOUTS}}
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        await_health(base, proc, f"{kind} under callgrind", 300)
        yield base, proc.pid
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _control(pid: int, *args: str) -> None:
    subprocess.run(
        ["callgrind_control", *args, str(pid)],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def send(
    base: str, load: RouteLoad, key: str, requests: int, start: int, connections: int
) -> None:
    """``requests`` requests of ``load`` from ``connections`` concurrent clients; any answer
    but a success stops the run (a count of refusals would measure something else)."""
    headers = {"x-service-api-key": key, "content-type": "application/json"}
    numbers = iter(range(start, start + requests))
    async with httpx.AsyncClient(
        base_url=base, timeout=600, limits=httpx.Limits(max_connections=connections)
    ) as client:

        async def one_client() -> None:
            for n in numbers:
                p = "HIGH" if n % 2 == 0 else "LOW"
                body = None if load.body is None else load.body.format(n=n, p=p)
                r = await client.request(load.method, load.path, content=body, headers=headers)
                if r.status_code >= 300:
                    raise RuntimeError(f"{load.label}: {r.status_code} {r.text[:200]}")

        await asyncio.gather(*(one_client() for _ in range(connections)))


def _total(out_dir: str, pid: int) -> int:
    """The instructions of the newest dump of ``pid`` (callgrind numbers its dumps)."""
    dumps = sorted(Path(out_dir).glob(f"callgrind.{pid}*"), key=lambda p: p.stat().st_mtime)
    text = dumps[-1].read_text(errors="replace")
    found = re.search(r"^(?:summary|totals):\s+(\d+)", text, re.M)
    if found is None:
        raise RuntimeError(f"no total in {dumps[-1]}")
    for dump in dumps:
        dump.unlink()
    return int(found.group(1))


def count(
    base: str,
    pid: int,
    out_dir: str,
    load: RouteLoad,
    world: World,
    requests: int,
    start: int,
    connections: int,
) -> float:
    """Instructions per request of one run of ``requests`` requests."""
    _control(pid, "--zero")
    _control(pid, "--instr=on")
    asyncio.run(send(base, load, world.key, requests, start, connections))
    _control(pid, "--dump")
    _control(pid, "--instr=off")
    return _total(out_dir, pid) / requests


def bench(
    kinds: tuple[str, ...], only: str, requests: int, repeat: int, connections: int
) -> dict[str, dict[str, list[float]]]:
    """Each route's instructions per request on each server, ``repeat`` runs each."""
    results: dict[str, dict[str, list[float]]] = {}
    with seeded_postgresql() as (url, tmp, world), contextlib.ExitStack() as stack:
        servers = {kind: stack.enter_context(counted_server(kind, url, tmp, tmp)) for kind in kinds}
        for i, load in enumerate(routes(world)):
            if only and not any(part in load.label for part in only.split(",")):
                continue
            for k, (kind, (base, pid)) in enumerate(servers.items()):
                start = 1_000_000 * (10 * i + 2 * k + 1)
                asyncio.run(send(base, load, world.key, 30, start, connections))  # warm
                runs = results.setdefault(load.label, {}).setdefault(kind, [])
                for r in range(repeat):
                    first = start + 1000 + r * requests
                    runs.append(count(base, pid, tmp, load, world, requests, first, connections))
                print(
                    f"{load.label} {RAW_NAMES.get(kind, kind)}: "
                    + ", ".join(f"{v / 1e6:.3f}" for v in runs)
                    + " M instructions a request",
                    flush=True,
                )
    return results


def table(results: dict[str, dict[str, list[float]]], kinds: tuple[str, ...]) -> str:
    head = ["route"] + [f"{RAW_NAMES.get(k, k)} M instr/req (median)" for k in kinds]
    if "officehub" in kinds and "raw" in kinds:
        head.append("raw/officehub")
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for label, by_kind in results.items():
        medians = {k: statistics.median(v) for k, v in by_kind.items()}
        cells = [f"`{label}`"] + [f"{medians[k] / 1e6:.3f}" for k in kinds]
        if len(head) > len(kinds) + 1:
            cells.append(f"{medians['raw'] / medians['officehub']:.2f}x")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--only", default="", help="routes whose label contains one of these (comma-separated)"
    )
    parser.add_argument(
        "--kinds",
        default=",".join(KINDS),
        help="servers (stack_ratio's kinds: officehub, raw, bare, fastapi-raw, litestar-raw)",
    )
    parser.add_argument("--requests", type=int, default=200, help="requests counted a run")
    parser.add_argument("--repeat", type=int, default=3, help="runs a route and server")
    parser.add_argument("--connections", type=int, default=CONNECTIONS)
    args = parser.parse_args()
    if not (shutil.which("valgrind") and shutil.which("callgrind_control")):
        sys.exit("valgrind (with callgrind_control) is needed: apt-get install valgrind")
    kinds = tuple(k for k in args.kinds.split(",") if k)
    print(
        f"callgrind; {args.requests} requests a run, {args.repeat} runs, "
        f"{args.connections} connections; load average "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n",
        flush=True,
    )
    results = bench(kinds, args.only, args.requests, args.repeat, args.connections)
    print()
    print(table(results, kinds))


if __name__ == "__main__":
    main()
