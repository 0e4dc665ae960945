"""The bare app's ``GET /tag/{id}`` and ``POST /people`` through FastAPI (``bench.stack_ratio
--floor``): what the framework adds to the same SQL.

No ``from __future__ import annotations`` here: FastAPI reads the handlers' annotations,
which name classes local to ``fastapi_app``.
"""

import contextlib
import hashlib
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench.stack_ratio import _KEY, _outbox
from officehub.kit.db import create_engine
from officehub.kit.ids import ID_PATTERN, new_id
from officehub.kit.timeutil import utcnow


def fastapi_app(url: str) -> Any:
    """The bare app's ``GET /tag/{id}`` and ``POST /people`` as a FastAPI user writes them at
    the least: the connection from a generator dependency (``scope="function"``: closed or
    committed before the response, as officehub's session), the key from a dependency, the
    id checked by a path pattern, a Pydantic body and response model. No middleware, no
    logging, no ORM: what FastAPI itself adds to the bare app's work (``--floor``)."""
    engine: AsyncEngine | None = None

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> Any:
        nonlocal engine
        engine = create_engine(url)
        yield
        await engine.dispose()

    async def read_conn() -> AsyncIterator[Any]:
        assert engine is not None
        async with engine.connect() as conn:
            yield conn

    async def write_conn() -> AsyncIterator[Any]:
        assert engine is not None
        async with engine.begin() as conn:
            yield conn

    async def office(request: Request, conn: Annotated[Any, Depends(read_conn)]) -> str:
        key = request.headers.get("x-service-api-key", "")
        digest = hashlib.sha256(key.encode()).hexdigest()
        row = (await conn.execute(_KEY, {"h": digest})).first()
        if row is None:
            raise HTTPException(401)
        return str(row[0])

    class TagOut(BaseModel):
        model_config = ConfigDict(from_attributes=True)
        id: str
        inbox_id: str | None
        name: str
        color: str
        modules: Any
        created_at: Any
        updated_at: Any

    class PersonIn(BaseModel):
        name: str

    class PersonOut(BaseModel):
        id: str
        name: str

    app = FastAPI(lifespan=lifespan)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/tag/{id}", response_model=TagOut)
    async def tag(
        id: Annotated[str, PathParam(pattern=ID_PATTERN)],
        office_id: Annotated[str, Depends(office)],
        conn: Annotated[Any, Depends(read_conn)],
    ) -> Any:
        row = (
            await conn.execute(
                text(
                    "SELECT id, inbox_id, name, color, modules, created_at, updated_at "
                    "FROM tags WHERE office_id = :o AND id = :i"
                ),
                {"o": office_id, "i": id},
            )
        ).first()
        if row is None:
            raise HTTPException(404)
        return row

    async def write_office(request: Request, conn: Annotated[Any, Depends(write_conn)]) -> str:
        return await office(request, conn)

    @app.post("/people", response_model=PersonOut, status_code=201)
    async def create_person(
        body: PersonIn,
        office_id: Annotated[str, Depends(write_office)],
        conn: Annotated[Any, Depends(write_conn)],
    ) -> Any:
        now = utcnow().replace(tzinfo=None) if url.startswith("sqlite") else utcnow()
        person = {"id": new_id(), "name": body.name, "search_name": body.name.lower()}
        await conn.execute(
            text(
                "INSERT INTO contacts (id, office_id, name, search_name, is_blocked, "
                "created_at, updated_at) VALUES (:id, :o, :name, :search_name, false, :t, :t)"
            ),
            {**person, "o": office_id, "t": now},
        )
        await _outbox(conn, office_id, "contact.created", person, now)
        return person

    return app
