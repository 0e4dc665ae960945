"""Every benchmark script under ``bench/`` that runs on SQLite alone still runs, with its
quick settings. They print figures and assert none: these tests hold only that each one
finishes and prints. ``bench/webhook_delivery.py`` had stopped finishing for two days
(its webhook was not yet flushed when its events were recorded, so none was delivered)
and only ``make bench`` could tell. The PostgreSQL ones and the two that load a server with
``wrk`` for a minute (``stack_ratio``, ``funnel_read``) are left to ``make bench``.

``stack_ratio --raw`` compares frameworks on raw asyncpg (PostgreSQL): its figures mean
something only if its FastAPI and Litestar apps do the same work and hold the same
contract, which the last test here holds on PostgreSQL.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server import serving

ROOT = Path(__file__).resolve().parent.parent

SCRIPTS = [
    ("webhook_delivery", "--quick"),
    ("audit_trail", "--quick"),
    ("rule_eval", "--quick"),
    ("flow_turn", "--quick"),
    ("inbound_path", "--quick"),
    ("dispatch", "--quick"),
    ("contact_search", "--quick"),
    ("avatar_upload", "--quick"),
    ("keyless_bodies", "--quick"),
    ("upload_memory", "--quick"),
    ("case_watch", "--cases", "50", "--no-tracemalloc"),
    ("djen_sync", "--lawyers", "10", "--no-tracemalloc"),
    ("request_cpu", "--quick"),
    ("client_export", "--quick"),
    ("conversation_reports", "--quick"),
]


@pytest.mark.parametrize(
    ("script", "args"), [(s[0], s[1:]) for s in SCRIPTS], ids=[s[0] for s in SCRIPTS]
)
def test_the_benchmark_script_runs_to_its_figures(script: str, args: tuple[str, ...]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{script}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), done.stderr[-3000:]


Call = tuple[str, str, dict[str, Any] | None, bool]
"""method, path, JSON body, whether the key is sent"""


async def _answers(url: str, key: str, phases: list[list[Call]]) -> list[list[Any]]:
    """``bench.stack_ratio --raw``'s FastAPI + raw and Litestar + raw apps, each behind a
    real uvicorn with its lifespan run (its asyncpg pool), answering each phase's calls in
    turn, both a phase before either the next (the reads before the writes change what they
    read): ``[fastapi's, litestar's]``, each (status, JSON)."""
    from bench.litestar_raw import litestar_raw_app
    from bench.raw_asyncpg import fastapi_raw_app

    fastapi, litestar = fastapi_raw_app(url), litestar_raw_app(url)
    answers: list[list[Any]] = [[], []]
    async with (
        fastapi.router.lifespan_context(fastapi),
        litestar.lifespan(),
        serving(fastapi) as fastapi_port,
        serving(litestar) as litestar_port,
        httpx.AsyncClient(timeout=30) as client,
    ):
        for calls in phases:
            for i, port in enumerate((fastapi_port, litestar_port)):
                base = f"http://127.0.0.1:{port}"
                for method, path, body, keyed in calls:
                    headers = {"x-service-api-key": key} if keyed else {}
                    r = await client.request(method, base + path, json=body, headers=headers)
                    answers[i].append((r.status_code, r.json()))
    return answers


async def test_the_litestar_floor_does_the_fastapi_floors_work_and_holds_the_contract(
    database_url: str,
) -> None:
    """``stack_ratio --raw``'s Litestar + msgspec app answers the six routes as its FastAPI
    + raw asyncpg twin does (same reads, same written fields), and refuses what the contract
    refuses: no or an unknown key 401, another id 404, a malformed id and an unknown body
    field 400 (FastAPI's own answer is 422; officehub turns it into 400)."""
    if not database_url.startswith("postgresql"):
        pytest.skip("the floors of stack_ratio --raw run on raw asyncpg: PostgreSQL only")
    from bench.stack_ratio import seed

    world = await seed(database_url)
    other = "c" + "0" * 24
    reads: list[Call] = [
        ("GET", f"/tag/{world.tag_id}", None, True),
        ("GET", "/people?search=maria%2012", None, True),
        ("GET", f"/funnel/{world.funnel_id}", None, True),
        ("GET", "/conversation", None, True),
    ]
    writes: list[Call] = [
        ("POST", "/people", {"name": "Ana"}, True),
        ("PATCH", f"/conversation/{world.conversation_id}", {"priority": "HIGH"}, True),
    ]
    refused: list[Call] = [
        ("GET", f"/tag/{world.tag_id}", None, False),
        ("GET", f"/tag/{other}", None, True),
        ("GET", f"/funnel/{other}", None, True),
        ("PATCH", f"/conversation/{other}", {"priority": "HIGH"}, True),
        ("GET", "/tag/not-an-id", None, True),
        ("POST", "/people", {"name": "Ana", "nickname": "A"}, True),
        ("PATCH", f"/conversation/{world.conversation_id}", {"priority": "LOW", "x": 1}, True),
    ]
    fastapi, litestar = await _answers(database_url, world.key, [reads, writes + refused])
    assert litestar[: len(reads)] == fastapi[: len(reads)]
    assert all(status == 200 for status, _ in litestar[: len(reads)])
    written = litestar[len(reads) : len(reads) + len(writes)]
    assert [status for status, _ in written] == [201, 200]
    assert written[0][1]["name"] == "Ana"
    assert written[1][1]["id"] == world.conversation_id
    assert written[1][1]["priority"] == "HIGH"
    assert [set(body) for _, body in written] == [
        set(body) for _, body in fastapi[len(reads) : len(reads) + len(writes)]
    ]
    contract = [401, 404, 404, 404, 400, 400, 400]
    assert [status for status, _ in litestar[-len(refused) :]] == contract
    assert [status for status, _ in fastapi[-len(refused) :]] == contract[:4] + [422] * 3
    unknown = litestar[-2][1]["extra"][0]["message"]
    assert "nickname" in unknown
