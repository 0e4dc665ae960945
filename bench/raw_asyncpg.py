"""The floor of ``bench.stack_ratio --raw``: the bare app's work in raw asyncpg (PostgreSQL).

``raw_app`` is a bare Starlette app, ``fastapi_raw_app`` the same work behind FastAPI
routes (typed path parameters, the key check as a dependency, Pydantic bodies for the
writes, unknown fields refused, dicts returned through FastAPI's encoder): what FastAPI
itself adds to raw asyncpg. ``bench.litestar_raw`` holds the same work behind Litestar.

All use one ``asyncpg`` pool (``RawPool``) of ``DEFAULT_POOL_SIZE`` connections
(officehub's), asyncpg's own prepared-statement cache, the same key check as officehub (one
indexed select by the key's SHA-256), the same indexed selects as ``stack_ratio``'s
SQLAlchemy bare app, and for writes the same insert or update plus an outbox row in one
transaction. Nothing is validated beyond what FastAPI's models do; responses are ``json``
dumps.
"""

import contextlib
import hashlib
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any

import asyncpg
from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from officehub.kit.db import DEFAULT_POOL_SIZE
from officehub.kit.ids import ID_PATTERN, new_id
from officehub.kit.timeutil import utcnow

KEY = "SELECT office_id, permissions FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL"
TAG = (
    "SELECT id, inbox_id, name, color, modules, created_at, updated_at "
    "FROM tags WHERE office_id = $1 AND id = $2"
)
SEARCH = (
    "SELECT id, name, phone, email, created_at, updated_at FROM contacts "
    "WHERE office_id = $1 AND search_name LIKE $2 ORDER BY created_at DESC, id DESC LIMIT 20"
)
FUNNEL = "SELECT id, name FROM crm_funnels WHERE office_id = $1 AND id = $2"
COLUMNS = (
    "SELECT id, name, position FROM crm_columns WHERE office_id = $1 AND funnel_id = $2 "
    "ORDER BY position"
)
CARDS = (
    "SELECT id, person_id, column_changed_at FROM crm_cards WHERE office_id = $1 "
    "AND column_id = $2 ORDER BY column_changed_at DESC, id DESC LIMIT 20"
)
CONVERSATIONS = (
    "SELECT c.id, c.person_id, p.name AS person_name, c.inbox_id, c.status, c.priority, "
    "c.is_fixed, c.is_archived, c.last_message_text, c.last_message_at, c.sorted_at, "
    "c.inbound_count, c.created_at, c.updated_at "
    "FROM conversations c JOIN contacts p ON p.id = c.person_id "
    "WHERE c.office_id = $1 ORDER BY c.is_fixed DESC, c.sorted_at DESC, c.id DESC LIMIT 20"
)
COUNT = "SELECT count(*) FROM conversations WHERE office_id = $1"
INSERT_PERSON = (
    "INSERT INTO contacts (id, office_id, name, search_name, is_blocked, created_at, "
    "updated_at) VALUES ($1, $2, $3, $4, false, $5, $5)"
)
PATCH = (
    "UPDATE conversations SET priority = $1, updated_at = $2 WHERE office_id = $3 AND id = $4 "
    "RETURNING id, person_id, status, priority, updated_at"
)
OUTBOX = (
    "INSERT INTO outbox_events (id, office_id, name, data, created_at, depth) "
    "VALUES ($1, $2, $3, $4, $5, 0)"
)


class NotFound(Exception):
    pass


def dsn_of(url: str) -> str:
    return url.replace("postgresql+asyncpg://", "postgresql://")


def jsonable(row: Any) -> dict[str, Any]:
    return {k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in dict(row).items()}


async def office_of(conn: asyncpg.Connection, key: str) -> str | None:
    row = await conn.fetchrow(KEY, hashlib.sha256(key.encode()).hexdigest())
    return None if row is None else str(row[0])


async def outbox(
    conn: asyncpg.Connection, office: str, name: str, data: dict[str, Any], now: Any
) -> None:
    await conn.execute(OUTBOX, new_id(), office, name, json.dumps(data), now)


# -- the work, shared by both apps ------------------------------------------------------------


async def tag(conn: asyncpg.Connection, office: str, tag_id: str) -> dict[str, Any]:
    row = await conn.fetchrow(TAG, office, tag_id)
    if row is None:
        raise NotFound
    return jsonable(row)


async def search_people(conn: asyncpg.Connection, office: str, text: str) -> dict[str, Any]:
    rows = await conn.fetch(SEARCH, office, "%" + text.lower() + "%")
    return {"items": [jsonable(r) for r in rows], "page": 1, "limit": 20}


async def funnel(conn: asyncpg.Connection, office: str, funnel_id: str) -> dict[str, Any]:
    head = await conn.fetchrow(FUNNEL, office, funnel_id)
    if head is None:
        raise NotFound
    board = []
    for column in await conn.fetch(COLUMNS, office, funnel_id):
        cards = await conn.fetch(CARDS, office, column["id"])
        board.append({**dict(column), "items": [jsonable(c) for c in cards]})
    return {**dict(head), "columns": board}


async def conversations(conn: asyncpg.Connection, office: str) -> dict[str, Any]:
    rows = await conn.fetch(CONVERSATIONS, office)
    total = await conn.fetchval(COUNT, office)
    return {"items": [jsonable(r) for r in rows], "total": total, "page": 1, "limit": 20}


async def create_person(conn: asyncpg.Connection, office: str, name: str) -> dict[str, Any]:
    now = utcnow()
    person = {"id": new_id(), "name": name, "search_name": name.lower()}
    await conn.execute(INSERT_PERSON, person["id"], office, name, person["search_name"], now)
    await outbox(conn, office, "contact.created", person, now)
    return person


async def patch_conversation(
    conn: asyncpg.Connection, office: str, conversation_id: str, priority: str
) -> dict[str, Any]:
    now = utcnow()
    row = await conn.fetchrow(PATCH, priority, now, office, conversation_id)
    if row is None:
        raise NotFound
    out = jsonable(row)
    await outbox(conn, office, "chat.conversation.updated", out, now)
    return out


# -- the pool, shared by the three apps ---------------------------------------------------------


class RawPool:
    """One asyncpg pool of ``DEFAULT_POOL_SIZE`` connections for an app's lifespan, and its
    connections as generator dependencies: as they are for reads, in a transaction for writes."""

    def __init__(self, url: str) -> None:
        self.url = url
        self._pool: asyncpg.Pool | None = None

    @contextlib.asynccontextmanager
    async def lifespan(self, _app: Any) -> AsyncIterator[None]:
        self._pool = await asyncpg.create_pool(
            dsn_of(self.url), min_size=DEFAULT_POOL_SIZE, max_size=DEFAULT_POOL_SIZE
        )
        try:
            yield
        finally:
            await self._pool.close()

    @property
    def pool(self) -> asyncpg.Pool:
        assert self._pool is not None, "used outside the app's lifespan"
        return self._pool

    async def read_conn(self) -> AsyncIterator[asyncpg.Connection]:
        async with self.pool.acquire() as conn:
            yield conn

    async def write_conn(self) -> AsyncIterator[asyncpg.Connection]:
        async with self.pool.acquire() as conn, conn.transaction():
            yield conn


# -- the bare Starlette app ---------------------------------------------------------------------


def raw_app(url: str) -> Starlette:
    pools = RawPool(url)

    def unauthorized() -> Response:
        return JSONResponse({"statusCode": 401, "code": "UNAUTHORIZED"}, status_code=401)

    def not_found() -> Response:
        return JSONResponse({"statusCode": 404}, status_code=404)

    async def read(request: Request, work: Any, *args: Any) -> Response:
        async with pools.pool.acquire() as conn:
            office = await office_of(conn, request.headers.get("x-service-api-key", ""))
            if office is None:
                return unauthorized()
            try:
                return JSONResponse(await work(conn, office, *args))
            except NotFound:
                return not_found()

    async def write(request: Request, work: Any, *args: Any, status: int = 200) -> Response:
        body = await request.json()
        async with pools.pool.acquire() as conn, conn.transaction():
            office = await office_of(conn, request.headers.get("x-service-api-key", ""))
            if office is None:
                return unauthorized()
            try:
                return JSONResponse(await work(conn, office, *args, *body.values()), status)
            except NotFound:
                return not_found()

    async def get_tag(request: Request) -> Response:
        return await read(request, tag, request.path_params["id"])

    async def get_people(request: Request) -> Response:
        return await read(request, search_people, request.query_params.get("search", ""))

    async def get_funnel(request: Request) -> Response:
        return await read(request, funnel, request.path_params["id"])

    async def get_conversations(request: Request) -> Response:
        return await read(request, conversations)

    async def post_people(request: Request) -> Response:
        return await write(request, create_person, status=201)

    async def patch(request: Request) -> Response:
        return await write(request, patch_conversation, request.path_params["id"])

    async def healthz(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/healthz", healthz),
            Route("/tag/{id}", get_tag),
            Route("/people", get_people),
            Route("/people", post_people, methods=["POST"]),
            Route("/funnel/{id}", get_funnel),
            Route("/conversation", get_conversations),
            Route("/conversation/{id}", patch, methods=["PATCH"]),
        ],
        lifespan=pools.lifespan,
    )


# -- the same work behind FastAPI ---------------------------------------------------------------


class PersonIn(BaseModel):
    """Unknown fields refused (422), as officehub's bodies and the Litestar twin's."""

    model_config = ConfigDict(extra="forbid")

    name: str


class PriorityIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    priority: str


def fastapi_raw_app(url: str) -> FastAPI:
    """FastAPI's floor on raw asyncpg: a connection (and for writes a transaction) from a
    generator dependency, the key check a dependency on it, path ids checked by pattern."""
    pools = RawPool(url)
    ReadConn = Annotated[asyncpg.Connection, Depends(pools.read_conn)]
    WriteConn = Annotated[asyncpg.Connection, Depends(pools.write_conn)]

    async def read_office(request: Request, conn: ReadConn) -> str:
        office = await office_of(conn, request.headers.get("x-service-api-key", ""))
        if office is None:
            raise HTTPException(401)
        return office

    async def write_office(request: Request, conn: WriteConn) -> str:
        office = await office_of(conn, request.headers.get("x-service-api-key", ""))
        if office is None:
            raise HTTPException(401)
        return office

    ReadOffice = Annotated[str, Depends(read_office)]
    WriteOffice = Annotated[str, Depends(write_office)]
    PathId = Annotated[str, PathParam(pattern=ID_PATTERN)]

    async def found(work: Any) -> Any:
        try:
            return await work
        except NotFound:
            raise HTTPException(404) from None

    app = FastAPI(lifespan=pools.lifespan)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/tag/{id}")
    async def get_tag(id: PathId, office: ReadOffice, conn: ReadConn) -> dict[str, Any]:
        return await found(tag(conn, office, id))  # type: ignore[no-any-return]

    @app.get("/people")
    async def get_people(office: ReadOffice, conn: ReadConn, search: str = "") -> dict[str, Any]:
        return await search_people(conn, office, search)

    @app.get("/funnel/{id}")
    async def get_funnel(id: PathId, office: ReadOffice, conn: ReadConn) -> dict[str, Any]:
        return await found(funnel(conn, office, id))  # type: ignore[no-any-return]

    @app.get("/conversation")
    async def get_conversations(office: ReadOffice, conn: ReadConn) -> dict[str, Any]:
        return await conversations(conn, office)

    @app.post("/people", status_code=201)
    async def post_people(body: PersonIn, office: WriteOffice, conn: WriteConn) -> dict[str, Any]:
        return await create_person(conn, office, body.name)

    @app.patch("/conversation/{id}")
    async def patch(
        id: PathId, body: PriorityIn, office: WriteOffice, conn: WriteConn
    ) -> dict[str, Any]:
        return await found(  # type: ignore[no-any-return]
            patch_conversation(conn, office, id, body.priority)
        )

    return app
