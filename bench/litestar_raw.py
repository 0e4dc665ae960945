"""Litestar + msgspec on raw asyncpg: ``bench.raw_asyncpg``'s FastAPI app's work in Litestar.

Issue 45, item 1 asks whether a framework faster than FastAPI at the same contract would
bring officehub's goals within reach. ``litestar_raw_app`` does what
``bench.raw_asyncpg.fastapi_raw_app`` does for the same six routes, the Litestar way:
a connection (and for writes a transaction) from a generator dependency, the key check a
dependency on it (401 when it fails), path ids typed and checked by ``ID_PATTERN``, request
bodies as msgspec ``Struct``\\ s that refuse unknown fields (``forbid_unknown_fields``: 400,
as the contract asks), the same SQL through the same functions, and the answers (dicts)
encoded by Litestar's msgspec encoder. Debug, logging and the OpenAPI routes are off (the
document is built on first read, not per request).

litestar and msgspec are development dependencies (``pyproject.toml``'s ``dev`` extra):
officehub itself does not use them.
"""

from typing import Annotated, Any

import asyncpg
import msgspec
from litestar import Litestar, Request, get, patch, post
from litestar.di import NamedDependency, Provide
from litestar.exceptions import NotAuthorizedException, NotFoundException
from litestar.params import FromQuery, JSONBody, PathParameter

from bench.raw_asyncpg import (
    NotFound,
    RawPool,
    conversations,
    create_person,
    funnel,
    office_of,
    patch_conversation,
    search_people,
    tag,
)
from officehub.kit.ids import ID_PATTERN


class PersonIn(msgspec.Struct, forbid_unknown_fields=True):
    name: str


class PriorityIn(msgspec.Struct, forbid_unknown_fields=True):
    priority: str


PathId = Annotated[str, PathParameter(pattern=ID_PATTERN)]
Conn = NamedDependency[asyncpg.Connection]
Office = NamedDependency[str]
"""Parameters and dependencies declared, as Litestar 2.23+ asks (it infers them with a
deprecation warning)."""


async def found(work: Any) -> Any:
    try:
        return await work
    except NotFound:
        raise NotFoundException from None


def litestar_raw_app(url: str) -> Litestar:
    """Litestar's floor on raw asyncpg (the FastAPI app's twin)."""
    pools = RawPool(url)

    async def key_office(request: Request[Any, Any, Any], conn: Conn) -> str:
        office = await office_of(conn, request.headers.get("x-service-api-key", ""))
        if office is None:
            raise NotAuthorizedException
        return office

    reads = {"conn": Provide(pools.read_conn), "office": Provide(key_office)}
    writes = {"conn": Provide(pools.write_conn), "office": Provide(key_office)}

    @get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @get("/tag/{id:str}", dependencies=reads)
    async def get_tag(id: PathId, office: Office, conn: Conn) -> dict[str, Any]:
        return await found(tag(conn, office, id))  # type: ignore[no-any-return]

    @get("/people", dependencies=reads)
    async def get_people(office: Office, conn: Conn, search: FromQuery[str] = "") -> dict[str, Any]:
        return await search_people(conn, office, search)

    @get("/funnel/{id:str}", dependencies=reads)
    async def get_funnel(id: PathId, office: Office, conn: Conn) -> dict[str, Any]:
        return await found(funnel(conn, office, id))  # type: ignore[no-any-return]

    @get("/conversation", dependencies=reads)
    async def get_conversations(office: Office, conn: Conn) -> dict[str, Any]:
        return await conversations(conn, office)

    @post("/people", dependencies=writes)  # Litestar's POST answers 201
    async def post_people(data: JSONBody[PersonIn], office: Office, conn: Conn) -> dict[str, Any]:
        return await create_person(conn, office, data.name)

    @patch("/conversation/{id:str}", dependencies=writes)
    async def patch_one(
        id: PathId, data: JSONBody[PriorityIn], office: Office, conn: Conn
    ) -> dict[str, Any]:
        return await found(  # type: ignore[no-any-return]
            patch_conversation(conn, office, id, data.priority)
        )

    return Litestar(
        route_handlers=[
            healthz,
            get_tag,
            get_people,
            get_funnel,
            get_conversations,
            post_people,
            patch_one,
        ],
        lifespan=[pools.lifespan],
        openapi_config=None,
        logging_config=None,
        debug=False,
    )
