"""officehub beside a bare Starlette app doing the same work, in one run, same load generator.

The bare app is the ceiling of what Python ASGI does here: the same uvicorn settings (one
process, ``loop``/``http`` "auto", no access log), the same engine (``officehub.kit.db``'s
``create_engine``: same driver, pool and SQLite pragmas), the same key check (one indexed
select by the key's SHA-256), the same indexed selects, and for writes the same insert or
update plus an outbox row in one transaction. It writes its SQL by hand (SQLAlchemy Core
``text()``), validates nothing and serialises with ``json``. officehub runs as
``officehub serve`` runs it: ``configure_logging`` at INFO (stderr to /dev/null).

Both are seeded in one database (SQLite in a temp folder; PostgreSQL in a database of its
own, ``officehub_bench_perf``, created and dropped here) and driven by ``wrk -t1 -c16``
(or, where wrk is missing, an async httpx driver with 16 connections), officehub and bare
alternating per route so both see the same machine load.

    .venv/bin/python -m bench.stack_ratio --quick            # <= 60 s, both databases
    .venv/bin/python -m bench.stack_ratio --seconds 10 --db postgresql
    .venv/bin/python -m bench.stack_ratio --db postgresql --only "GET /tag,POST /people" --repeat 3
    .venv/bin/python -m bench.stack_ratio --floor --db postgresql   # FastAPI itself vs bare
    .venv/bin/python -m bench.stack_ratio --raw --seconds 4 --repeat 5
        # PostgreSQL: officehub, raw asyncpg, SQLAlchemy bare, FastAPI+raw, Litestar+raw

Beside req/s it reports each server's CPU time per request and their ratio ("CPU ratio"):
on a machine shared with other work, req/s swings with the load; CPU per request much less.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.gc_tuning import settle_heap
from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow

PG_ADMIN = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
PG_DB = f"officehub_bench_perf_{os.getpid()}"
"""Of this run alone: another run (another worktree's) drops its own at its end."""
CONNECTIONS = 16
CARDS = 60
CONTACTS = 500
CONVERSATIONS = 60
"""The conversation list's office holds this many (three pages of 20)."""


@dataclass(frozen=True)
class World:
    key: str
    tag_id: str
    funnel_id: str
    conversation_id: str


@dataclass(frozen=True)
class RouteLoad:
    label: str
    method: str
    path: str
    body: str | None = None  # "{n}" is replaced by a counter (unique names)


def routes(world: World) -> list[RouteLoad]:
    return [
        RouteLoad("GET /tag/{id}", "GET", f"/tag/{world.tag_id}"),
        RouteLoad("GET /people?search=", "GET", "/people?search=maria%2012"),
        RouteLoad("GET /funnel/{id}", "GET", f"/funnel/{world.funnel_id}"),
        RouteLoad("POST /people", "POST", "/people", '{{"name": "Bench {n}"}}'),
        RouteLoad("GET /conversation", "GET", "/conversation?limit=20"),  # the bare apps read 20
        RouteLoad(
            "PATCH /conversation/{id}",
            "PATCH",
            f"/conversation/{world.conversation_id}",
            '{{"priority": "{p}"}}',
        ),
    ]


# -- the bare app ---------------------------------------------------------------------------

_KEY = text(
    "SELECT office_id, permissions FROM api_keys WHERE key_hash = :h AND revoked_at IS NULL"
)

_CONVERSATIONS = text(
    "SELECT c.id, c.person_id, p.name AS person_name, c.inbox_id, c.status, c.priority, "
    "c.is_fixed, c.is_archived, c.last_message_text, c.last_message_at, c.sorted_at, "
    "c.inbound_count, c.created_at, c.updated_at "
    "FROM conversations c JOIN contacts p ON p.id = c.person_id "
    "WHERE c.office_id = :o ORDER BY c.is_fixed DESC, c.sorted_at DESC, c.id DESC LIMIT 20"
)
_COUNT = text("SELECT count(*) FROM conversations WHERE office_id = :o")


def bare_app(url: str) -> Starlette:
    engine: AsyncEngine | None = None

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> Any:
        nonlocal engine
        engine = create_engine(url)
        yield
        await engine.dispose()

    def db() -> AsyncEngine:
        assert engine is not None
        return engine

    async def office_of(request: Request, conn: Any) -> str | None:
        key = request.headers.get("x-service-api-key", "")
        digest = hashlib.sha256(key.encode()).hexdigest()
        row = (await conn.execute(_KEY, {"h": digest})).first()
        return None if row is None else str(row[0])

    def unauthorized() -> Response:
        return JSONResponse({"statusCode": 401, "code": "UNAUTHORIZED"}, status_code=401)

    async def tag(request: Request) -> Response:
        async with db().connect() as conn:
            office = await office_of(request, conn)
            if office is None:
                return unauthorized()
            row = (
                await conn.execute(
                    text(
                        "SELECT id, inbox_id, name, color, modules, created_at, updated_at "
                        "FROM tags WHERE office_id = :o AND id = :i"
                    ),
                    {"o": office, "i": request.path_params["id"]},
                )
            ).first()
        if row is None:
            return JSONResponse({"statusCode": 404}, status_code=404)
        return JSONResponse(_jsonable(row._asdict()))

    async def people(request: Request) -> Response:
        search = "%" + request.query_params.get("search", "").lower() + "%"
        async with db().connect() as conn:
            office = await office_of(request, conn)
            if office is None:
                return unauthorized()
            rows = (
                await conn.execute(
                    text(
                        "SELECT id, name, phone, email, created_at, updated_at FROM contacts "
                        "WHERE office_id = :o AND search_name LIKE :q "
                        "ORDER BY created_at DESC, id DESC LIMIT 20"
                    ),
                    {"o": office, "q": search},
                )
            ).all()
        items = [_jsonable(r._asdict()) for r in rows]
        return JSONResponse({"items": items, "page": 1, "limit": 20})

    async def funnel(request: Request) -> Response:
        async with db().connect() as conn:
            office = await office_of(request, conn)
            if office is None:
                return unauthorized()
            params = {"o": office, "f": request.path_params["id"]}
            head = (
                await conn.execute(
                    text("SELECT id, name FROM crm_funnels WHERE office_id = :o AND id = :f"),
                    params,
                )
            ).first()
            if head is None:
                return JSONResponse({"statusCode": 404}, status_code=404)
            columns = (
                await conn.execute(
                    text(
                        "SELECT id, name, position FROM crm_columns "
                        "WHERE office_id = :o AND funnel_id = :f ORDER BY position"
                    ),
                    params,
                )
            ).all()
            board = []
            for column in columns:
                cards = (
                    await conn.execute(
                        text(
                            "SELECT id, person_id, column_changed_at FROM crm_cards "
                            "WHERE office_id = :o AND column_id = :c "
                            "ORDER BY column_changed_at DESC, id DESC LIMIT 20"
                        ),
                        {"o": office, "c": column.id},
                    )
                ).all()
                board.append({**column._asdict(), "items": [_jsonable(c._asdict()) for c in cards]})
        return JSONResponse({**head._asdict(), "columns": board})

    async def create_person(request: Request) -> Response:
        body = await request.json()
        now = utcnow().replace(tzinfo=None) if url.startswith("sqlite") else utcnow()
        person = {"id": new_id(), "name": body["name"], "search_name": body["name"].lower()}
        async with db().begin() as conn:
            office = await office_of(request, conn)
            if office is None:
                return unauthorized()
            await conn.execute(
                text(
                    "INSERT INTO contacts (id, office_id, name, search_name, is_blocked, "
                    "created_at, updated_at) VALUES (:id, :o, :name, :search_name, false, :t, :t)"
                ),
                {**person, "o": office, "t": now},
            )
            await _outbox(conn, office, "contact.created", person, now)
        return JSONResponse(person, status_code=201)

    async def patch_conversation(request: Request) -> Response:
        body = await request.json()
        now = utcnow().replace(tzinfo=None) if url.startswith("sqlite") else utcnow()
        async with db().begin() as conn:
            office = await office_of(request, conn)
            if office is None:
                return unauthorized()
            row = (
                await conn.execute(
                    text(
                        "UPDATE conversations SET priority = :p, updated_at = :t "
                        "WHERE office_id = :o AND id = :i "
                        "RETURNING id, person_id, status, priority, updated_at"
                    ),
                    {"p": body["priority"], "t": now, "o": office, "i": request.path_params["id"]},
                )
            ).first()
            if row is None:
                return JSONResponse({"statusCode": 404}, status_code=404)
            out = _jsonable(row._asdict())
            await _outbox(conn, office, "chat.conversation.updated", out, now)
        return JSONResponse(out)

    async def conversations(request: Request) -> Response:
        async with db().connect() as conn:
            office = await office_of(request, conn)
            if office is None:
                return unauthorized()
            rows = (await conn.execute(_CONVERSATIONS, {"o": office})).all()
            total = (await conn.execute(_COUNT, {"o": office})).scalar_one()
        items = [_jsonable(r._asdict()) for r in rows]
        return JSONResponse({"items": items, "total": total, "page": 1, "limit": 20})

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/tag/{id}", tag),
            Route("/people", people),
            Route("/people", create_person, methods=["POST"]),
            Route("/funnel/{id}", funnel),
            Route("/conversation", conversations),
            Route("/conversation/{id}", patch_conversation, methods=["PATCH"]),
        ],
        lifespan=lifespan,
    )


async def _outbox(conn: Any, office: str, name: str, data: dict[str, Any], now: Any) -> None:
    await conn.execute(
        text(
            "INSERT INTO outbox_events (id, office_id, name, data, created_at, depth) "
            "VALUES (:id, :o, :n, :d, :t, 0)"
        ),
        {"id": new_id(), "o": office, "n": name, "d": json.dumps(data), "t": now},
    )


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in row.items()}


# -- servers --------------------------------------------------------------------------------


def serve(kind: str, url: str, port: int, data_dir: str) -> None:
    """One server process, the same uvicorn settings for both kinds."""
    if kind == "bare":
        app: Any = bare_app(url)
    elif kind == "fastapi":
        from bench.fastapi_floor import fastapi_app

        app = fastapi_app(url)
    elif kind == "raw":
        from bench.raw_asyncpg import raw_app

        app = raw_app(url)
    elif kind == "fastapi-raw":
        from bench.raw_asyncpg import fastapi_raw_app

        app = fastapi_raw_app(url)
    elif kind == "litestar-raw":
        from bench.litestar_raw import litestar_raw_app

        app = litestar_raw_app(url)
    else:
        from officehub.app import create_app
        from officehub.kit.config import Settings
        from officehub.kit.logs import configure_logging

        # The limiter runs (its cost is part of a request) but never refuses: a run sends
        # far more than the default 6,000 a minute through one key.
        settings = Settings(
            database_url=url,
            data_dir=Path(data_dir),
            signing_key="bench",
            port=port,
            rate_limits="10000000/minute",
        )
        configure_logging("INFO", "json")
        app = create_app(settings)
    # What ``officehub serve`` does before serving, for both kinds: a server setting.
    settle_heap()
    uvicorn.run(app, host="127.0.0.1", port=port, log_config=None, access_log=False)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def await_health(base: str, proc: subprocess.Popen[bytes], name: str, seconds: float) -> None:
    """Waits until the server ``proc`` at ``base`` answers ``/healthz``; raises if it exits
    first or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if httpx.get(f"{base}/healthz", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError(f"{name} exited with {proc.returncode} before answering")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not answer /healthz within {seconds:g} s")
        time.sleep(0.1)


@contextlib.contextmanager
def server(kind: str, url: str, data_dir: str) -> Iterator[str]:
    port = free_port()
    args = [sys.executable, "-m", "bench.stack_ratio", "--serve", kind, url, str(port), data_dir]
    proc = subprocess.Popen(args, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        await_health(base, proc, f"{kind} server", 30)
        _PIDS[base] = proc.pid
        yield base
    finally:
        _PIDS.pop(base, None)
        proc.terminate()
        proc.wait(10)


# -- load -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    cpu_ms: float = 0.0  # the server process's CPU time (user + system) per request


_PIDS: dict[str, int] = {}
"""The server process behind each base URL (for its CPU time)."""


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux ``/proc``; 0 elsewhere)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


_LUA = """
local n = {start}
request = function()
  n = n + 1
  local p = (n % 2 == 0) and "HIGH" or "LOW"
  local body = {body}
  return wrk.format("{method}", "{path}", {{["x-service-api-key"] = "{key}",
    ["content-type"] = "application/json"}}, body)
end
"""


def _lua_body(template: str | None) -> str:
    if template is None:
        return "nil"
    parts = re.split(r"(\{n\}|\{p\})", template.replace("{{", "{").replace("}}", "}"))
    out = []
    for part in parts:
        if part == "{n}":
            out.append("n")
        elif part == "{p}":
            out.append("p")
        elif part:
            out.append(json.dumps(part).replace("'", "\\'"))
    return " .. ".join(out)


def _ms(value: str, unit: str) -> float:
    return float(value) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def run_wrk(base: str, load: RouteLoad, key: str, seconds: float, start: int) -> Result:
    script = _LUA.format(
        start=start, body=_lua_body(load.body), method=load.method, path=load.path, key=key
    )
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as handle:
        handle.write(script)
    try:
        out = subprocess.run(
            [
                "wrk",
                "-t1",
                f"-c{CONNECTIONS}",
                f"-d{round(seconds)}s",
                "--latency",
                "-s",
                handle.name,
                base,
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    finally:
        os.unlink(handle.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    lat = dict(re.findall(r"^\s+(50|99)%\s+([\d.]+\w+)", out, re.M))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    return Result(
        rps,
        _ms(*re.match(r"([\d.]+)(\w+)", lat["50"]).groups()),  # type: ignore[union-attr]
        _ms(*re.match(r"([\d.]+)(\w+)", lat["99"]).groups()),  # type: ignore[union-attr]
        int(errors.group(1)) if errors else 0,
    )


async def run_httpx(base: str, load: RouteLoad, key: str, seconds: float, start: int) -> Result:
    limits = httpx.Limits(max_connections=CONNECTIONS, max_keepalive_connections=CONNECTIONS)
    latencies: list[float] = []
    errors = 0
    counter = start
    headers = {"x-service-api-key": key, "content-type": "application/json"}
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:
        deadline = time.perf_counter() + seconds

        async def one() -> None:
            nonlocal counter, errors
            while time.perf_counter() < deadline:
                counter += 1
                body = None
                if load.body is not None:
                    p = "HIGH" if counter % 2 == 0 else "LOW"
                    body = load.body.format(n=counter, p=p)
                began = time.perf_counter()
                r = await client.request(load.method, load.path, content=body, headers=headers)
                latencies.append(time.perf_counter() - began)
                errors += r.status_code >= 300

        began = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(CONNECTIONS)))
        elapsed = time.perf_counter() - began
    q = statistics.quantiles(latencies, n=100)
    return Result(len(latencies) / elapsed, q[49] * 1000, q[98] * 1000, errors)


def warm(base: str, load: RouteLoad, key: str, start: int) -> None:
    """A few requests first: pooled connections open, statements compiled, caches filled."""
    headers = {"x-service-api-key": key, "content-type": "application/json"}
    with httpx.Client(base_url=base, timeout=30) as client:
        for n in range(start, start + 30):
            body = None if load.body is None else load.body.format(n=n, p="HIGH")
            r = client.request(load.method, load.path, content=body, headers=headers)
            if r.status_code >= 300:
                raise RuntimeError(f"{base} {load.label}: {r.status_code} {r.text[:200]}")


def drive(base: str, load: RouteLoad, key: str, seconds: float, start: int) -> Result:
    """Loads ``base``; also the server's CPU time per request, which a shared machine's
    other work disturbs far less than req/s (the server waits for a core, not using it)."""
    httpx.get(f"{base}/healthz")
    pid = _PIDS.get(base, 0)
    cpu_before, began = cpu_seconds(pid), time.perf_counter()
    if shutil.which("wrk"):
        result = run_wrk(base, load, key, seconds, start)
    else:
        result = asyncio.run(run_httpx(base, load, key, seconds, start))
    requests = result.rps * (time.perf_counter() - began)
    cpu_ms = (cpu_seconds(pid) - cpu_before) * 1000 / requests if requests else 0.0
    return dataclasses.replace(result, cpu_ms=cpu_ms)


# -- databases and seeding ------------------------------------------------------------------


async def seed(url: str) -> World:
    from officehub.offices import service as offices
    from tests import factories

    engine = create_engine(url)
    try:
        async with create_sessionmaker(engine)() as session:
            office = await offices.create_office(session, "Bench")
            key = (await offices.create_api_key(session, office.id, "bench")).key
            inbox = await factories.make_inbox(session, office.id)
            integration = await factories.make_integration(session, office.id, inbox.id)
            tag = await factories.make_tag(session, office.id, inbox.id)
            people = [
                await factories.make_contact(session, office.id, f"Maria {i}", phone=None)
                for i in range(CONTACTS)
            ]
            conversation = await factories.make_conversation(
                session, office.id, people[0].id, integration
            )
            for person in people[CONTACTS - CONVERSATIONS + 1 :]:
                await factories.make_conversation(session, office.id, person.id, integration)
            funnel, columns = await factories.make_funnel(session, office.id, inbox.id, 3)
            for i in range(CARDS):
                await factories.make_card(session, columns[i % 3], people[i + 1].id)
            await session.commit()
    finally:
        await engine.dispose()
    return World(key, tag.id, funnel.id, conversation.id)


async def _pg(statement: str) -> None:
    engine = create_engine(PG_ADMIN)
    try:
        async with engine.connect() as conn:
            await conn.execution_options(isolation_level="AUTOCOMMIT")
            await conn.execute(text(statement))
    finally:
        await engine.dispose()


@contextlib.contextmanager
def database(kind: str, tmp: str) -> Iterator[str]:
    if kind == "sqlite":
        yield f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        return
    asyncio.run(_pg(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)"))
    asyncio.run(_pg(f"CREATE DATABASE {PG_DB}"))
    try:
        yield f"postgresql+asyncpg://postgres@127.0.0.1:5432/{PG_DB}"
    finally:
        asyncio.run(_pg(f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)"))


def bench(
    kind: str, seconds: float, only: str = "", ours_kind: str = "officehub"
) -> list[tuple[str, Result, Result]]:
    from officehub.migrate import migrate

    rows: list[tuple[str, Result, Result]] = []
    with tempfile.TemporaryDirectory() as tmp, database(kind, tmp) as url:
        migrate(url)
        world = asyncio.run(seed(url))
        with server(ours_kind, url, tmp) as ours, server("bare", url, tmp) as bare:
            for i, load in enumerate(routes(world)):
                if only and not any(part in load.label for part in only.split(",")):
                    continue
                # warm both (connections, caches), then measure officehub and bare in turn
                warm(ours, load, world.key, 1_000_000 * (4 * i + 1))
                warm(bare, load, world.key, 1_000_000 * (4 * i + 2))
                mine = drive(ours, load, world.key, seconds, 1_000_000 * (4 * i + 3))
                theirs = drive(bare, load, world.key, seconds, 1_000_000 * (4 * i + 4))
                rows.append((load.label, mine, theirs))
    return rows


RAW_KINDS = ("officehub", "raw", "bare", "fastapi-raw", "litestar-raw")
"""``--raw``'s servers, in the order measured for each route (PostgreSQL only)."""
RAW_NAMES = {
    "officehub": "officehub",
    "raw": "raw asyncpg",
    "bare": "SQLAlchemy bare",
    "fastapi-raw": "FastAPI+raw",
    "litestar-raw": "Litestar+raw",
}


def raw_kinds() -> tuple[str, ...]:
    """``RAW_KINDS``, less Litestar where it is not installed (a development dependency)."""
    if importlib.util.find_spec("litestar") and importlib.util.find_spec("msgspec"):
        return RAW_KINDS
    print("litestar or msgspec not installed (pip install -e '.[dev]'): no Litestar column")
    return RAW_KINDS[:-1]


@contextlib.contextmanager
def seeded_postgresql() -> Iterator[tuple[str, str, World]]:
    """A PostgreSQL database of this run's own, migrated and seeded (``seed``), with a
    temporary folder: its URL, the folder and the world seeded; dropped at the end."""
    from officehub.migrate import migrate

    with tempfile.TemporaryDirectory() as tmp, database("postgresql", tmp) as url:
        migrate(url)
        yield url, tmp, asyncio.run(seed(url))


def bench_raw(
    seconds: float, only: str = "", kinds: tuple[str, ...] = RAW_KINDS
) -> list[tuple[str, dict[str, Result]]]:
    """Each route on the servers of ``kinds`` in turn, in one database."""
    rows: list[tuple[str, dict[str, Result]]] = []
    with seeded_postgresql() as (url, tmp, world), contextlib.ExitStack() as stack:
        bases = {kind: stack.enter_context(server(kind, url, tmp)) for kind in kinds}
        for i, load in enumerate(routes(world)):
            if only and not any(part in load.label for part in only.split(",")):
                continue
            starts = {kind: 1_000_000 * (10 * i + 2 * k) for k, kind in enumerate(kinds)}
            for kind, base in bases.items():
                warm(base, load, world.key, starts[kind])
            results = {
                kind: drive(base, load, world.key, seconds, starts[kind] + 1000)
                for kind, base in bases.items()
            }
            rows.append((load.label, results))
    return rows


def raw_table(rows: list[tuple[str, dict[str, Result]]]) -> str:
    """req/s and CPU ms per request of each server; officehub, then every other server but
    raw over raw asyncpg (req/s ratio for officehub, then CPU ratios: raw's CPU per request
    over theirs)."""
    kinds = [kind for kind in RAW_KINDS if rows and kind in rows[0][1]]
    others = [kind for kind in kinds if kind not in ("officehub", "raw")]
    head = ["route"]
    for kind in kinds:
        head += [f"{RAW_NAMES[kind]} req/s", "CPU ms/req"]
    head += ["officehub/raw", "CPU ratio"]
    head += [f"{RAW_NAMES[kind].split('+')[0].split()[-1]}/raw" for kind in others]
    lines = [
        "| " + " | ".join(head) + " |",
        "|---|" + "---:|" * (len(head) - 1),
    ]
    for label, res in rows:
        raw = res["raw"]
        cells = [f"| `{label}`"]
        for kind in kinds:
            cells.append(f"{res[kind].rps:,.0f}")
            cells.append(f"{res[kind].cpu_ms:.2f}")
        errors = any(r.errors for r in res.values())
        cells.append(f"{res['officehub'].rps / raw.rps:.2f}x" + (" (errors!)" if errors else ""))
        cells.append(f"{cpu_ratio(res['officehub'], raw):.2f}x")
        cells += [f"{cpu_ratio(res[kind], raw):.2f}x" for kind in others]
        lines.append(" | ".join(cells) + " |")
    return "\n".join(lines)


def raw_medians(runs: list[list[tuple[str, dict[str, Result]]]]) -> str:
    """Over several ``--raw`` runs: each server's median CPU ms per request and req/s, and
    the median of each run's ratio to raw asyncpg (CPU; req/s for officehub too)."""
    kinds = [kind for kind in RAW_KINDS if runs and runs[0] and kind in runs[0][0][1]]
    head = ["route"] + [f"{RAW_NAMES[kind]} CPU ms/req" for kind in kinds]
    head += ["officehub/raw req/s"] + [
        f"{RAW_NAMES[kind]}/raw CPU" for kind in kinds if kind != "raw"
    ]
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    labels = [label for label, _ in runs[0]] if runs else []
    for label in labels:
        results = [dict(run)[label] for run in runs]
        cells = [f"| `{label}`"]
        cells += [f"{statistics.median(r[kind].cpu_ms for r in results):.2f}" for kind in kinds]
        rps = statistics.median(r["officehub"].rps / r["raw"].rps for r in results)
        cells.append(f"{rps:.2f}x")
        cells += [
            f"{statistics.median(cpu_ratio(r[kind], r['raw']) for r in results):.2f}x"
            for kind in kinds
            if kind != "raw"
        ]
        lines.append(" | ".join(cells) + " |")
    return "\n".join(lines)


def cpu_ratio(mine: Result, theirs: Result) -> float:
    """The bare app's CPU per request over ours: the req/s ratio of two CPU-bound servers."""
    return theirs.cpu_ms / mine.cpu_ms if mine.cpu_ms else 0.0


def table(kind: str, rows: list[tuple[str, Result, Result]], ours: str = "officehub") -> str:
    lines = [
        f"{kind}:",
        "",
        f"| route | {ours} req/s | p50 ms | p99 ms | CPU ms/req | bare req/s | p50 ms "
        "| p99 ms | CPU ms/req | ratio | CPU ratio |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for label, mine, theirs in rows:
        flag = " (errors!)" if mine.errors or theirs.errors else ""
        lines.append(
            f"| `{label}` | {mine.rps:,.0f} | {mine.p50_ms:.2f} | {mine.p99_ms:.2f} "
            f"| {mine.cpu_ms:.2f} | {theirs.rps:,.0f} | {theirs.p50_ms:.2f} "
            f"| {theirs.p99_ms:.2f} | {theirs.cpu_ms:.2f} "
            f"| {mine.rps / theirs.rps:.2f}x{flag} | {cpu_ratio(mine, theirs):.2f}x |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--serve", nargs=4, metavar=("KIND", "URL", "PORT", "DATA_DIR"))
    parser.add_argument("--quick", action="store_true", help="2 s per route and app (<= 60 s)")
    parser.add_argument("--seconds", type=int, default=5, help="seconds per route and app")
    parser.add_argument("--db", choices=["sqlite", "postgresql", "both"], default="both")
    parser.add_argument(
        "--only", default="", help="routes whose label contains one of these (comma-separated)"
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="a bare FastAPI app (the same SQL through FastAPI's dependencies and models) "
        "instead of officehub, for GET /tag and POST /people: what the framework costs",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs per database; prints each and the median ratio"
    )
    parser.add_argument(
        "--raw",
        action="store_true",
        help="PostgreSQL: officehub, a raw asyncpg Starlette app, the SQLAlchemy bare app, "
        "FastAPI on raw asyncpg and Litestar + msgspec on raw asyncpg (where installed), "
        "each route on all five (ratios are over raw asyncpg)",
    )
    args = parser.parse_args()
    if args.serve:
        kind, url, port, data_dir = args.serve
        serve(kind, url, int(port), data_dir)
        return
    seconds = 2.0 if args.quick else args.seconds
    driver = "wrk -t1 -c16" if shutil.which("wrk") else "httpx, 16 connections"
    print(f"driver: {driver}; {seconds:g} s per route and app\n")
    if args.raw:
        servers = raw_kinds()
        raw_runs: list[list[tuple[str, dict[str, Result]]]] = []
        for _ in range(max(1, args.repeat)):
            print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            raw_rows = bench_raw(seconds, args.only, servers)
            print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            print(raw_table(raw_rows), "\n", flush=True)
            raw_runs.append(raw_rows)
        if args.repeat > 1:
            print(f"medians of {args.repeat} runs (ratios: over raw asyncpg)\n")
            print(raw_medians(raw_runs), flush=True)
        return
    kinds = ["sqlite", "postgresql"] if args.db == "both" else [args.db]
    for kind in kinds:
        ratios: dict[str, list[float]] = {}
        cpu_ratios: dict[str, list[float]] = {}
        for _ in range(max(1, args.repeat)):
            print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
            if args.floor:
                rows = bench(kind, seconds, args.only or "GET /tag,POST /people", "fastapi")
                print(table(kind, rows, "FastAPI"), "\n", flush=True)
            else:
                rows = bench(kind, seconds, args.only)
                print(table(kind, rows), "\n", flush=True)
            for label, mine, theirs in rows:
                ratios.setdefault(label, []).append(mine.rps / theirs.rps)
                cpu_ratios.setdefault(label, []).append(cpu_ratio(mine, theirs))
        if args.repeat > 1:
            print(f"{kind}: median ratio of {args.repeat} runs")
            for label, values in ratios.items():
                runs = ", ".join(f"{v:.2f}" for v in values)
                cpu = cpu_ratios[label]
                print(
                    f"  {label}: req/s {statistics.median(values):.2f}x ({runs}); "
                    f"CPU {statistics.median(cpu):.2f}x ({', '.join(f'{v:.2f}' for v in cpu)})"
                )
            print(flush=True)


if __name__ == "__main__":
    main()
