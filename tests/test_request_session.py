"""The request's session (``kit.db.get_session``): a write is committed before its answer
is sent, one that fails is rolled back and its side effects undone, and every dependency
of a request shares one session."""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import httpx
import pytest
from fastapi import Depends, FastAPI
from sqlalchemy import event, func, select
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.util import await_only
from starlette.types import Message, Receive, Scope, Send

from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep, on_rollback
from officehub.kit.indexed_router import Router
from officehub.tags.models import Tag
from tests.helpers import OfficeFixture, error_of


async def _tags_named(app: FastAPI, name: str) -> int:
    """Counted on a connection of its own: only what was committed."""
    async with app.state.read_sessionmaker() as other:
        return int(await other.scalar(select(func.count()).where(Tag.name == name)) or 0)


async def test_a_write_is_committed_before_its_answer_is_sent(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    inbox = (await client.post("/inbox", json={"name": "Geral"}, headers=office_a.headers)).json()
    seen_when_sent: list[int] = []

    async def watching(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                seen_when_sent.append(await _tags_named(app, "Vista"))
            await send(message)

        await app(scope, receive, send_watched)

    transport = httpx.ASGITransport(app=watching)
    async with httpx.AsyncClient(transport=transport, base_url="http://officehub.test") as c:
        answer = await c.post(
            "/tag",
            json={"name": "Vista", "color": "#FF0000", "inboxId": inbox["id"], "modules": ["crm"]},
            headers=office_a.headers,
        )
    assert answer.status_code == 201, answer.text
    assert seen_when_sent == [1]  # committed when the answer's first message left


def _probes() -> Router:
    router = Router()

    async def same_session(session: SessionDep) -> AsyncSession:
        return session

    @router.post("/_session/shared")
    async def shared(
        office: OfficeDep, session: SessionDep, other: AsyncSession = Depends(same_session)
    ) -> dict[str, bool]:
        return {"same": session is other}

    @router.post("/_session/commit-fails")
    async def commit_fails(office: OfficeDep, session: SessionDep) -> dict[str, str]:
        undone.append("registered")
        session.add(Tag(office_id=office.office_id, inbox_id=inbox_of[0], name="Perdida"))

        async def undo() -> None:
            undone.append("undone")

        on_rollback(session, undo)

        def refuse(_session: Any) -> None:
            raise sqlite3.OperationalError("database is locked")

        event.listen(session.sync_session, "before_commit", refuse)
        return {"ok": "yes"}

    @router.post("/_session/commit-cancelled")
    async def commit_cancelled(office: OfficeDep, session: SessionDep) -> dict[str, str]:
        undone.append("registered")
        session.add(Tag(office_id=office.office_id, inbox_id=inbox_of[0], name="Talvez"))

        async def undo() -> None:
            undone.append("undone")

        on_rollback(session, undo)

        def slow(_session: Any) -> None:  # the commit waits: the request is cancelled then
            committing.set()
            await_only(asyncio.sleep(30))

        event.listen(session.sync_session, "before_commit", slow)
        return {"ok": "yes"}

    return router


undone: list[str] = []
committing = asyncio.Event()
inbox_of: list[str] = []


async def test_every_dependency_of_a_request_gets_its_one_session(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    app.include_router(_probes())
    answer = await client.post("/_session/shared", headers=office_a.headers)
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"same": True}


async def test_a_commit_that_fails_is_rolled_back_undone_and_answered(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    inbox = (await client.post("/inbox", json={"name": "Geral"}, headers=office_a.headers)).json()
    inbox_of[:] = [inbox["id"]]
    undone.clear()
    app.include_router(_probes())
    answer = await client.post("/_session/commit-fails", headers=office_a.headers)
    assert answer.status_code == 503, answer.text  # the write lock not had: a retry may pass
    assert error_of(answer)["code"] == "DATABASE_UNAVAILABLE"
    assert undone == ["registered", "undone"]
    assert await _tags_named(app, "Perdida") == 0


async def test_a_request_cancelled_in_its_commit_keeps_its_side_effects(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """The shutdown's grace cancels what still runs; one cancelled in its commit may have
    committed, so what it did outside the database (a file) is not undone."""
    inbox = (await client.post("/inbox", json={"name": "Geral"}, headers=office_a.headers)).json()
    inbox_of[:] = [inbox["id"]]
    undone.clear()
    committing.clear()
    app.include_router(_probes())
    request = asyncio.create_task(
        client.post("/_session/commit-cancelled", headers=office_a.headers)
    )
    await asyncio.wait_for(committing.wait(), 10)
    request.cancel()
    with pytest.raises(asyncio.CancelledError):
        await request
    assert undone == ["registered"]  # not undone
    assert await _tags_named(app, "Talvez") == 0  # cancelled before its COMMIT went out
