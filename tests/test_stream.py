"""``GET /stream`` (issue 29, a live inbox): the office's events as server-sent events, as
they are recorded, resumed from ``Last-Event-ID``, scoped to the office, capped per key and
address, with a heartbeat and no database read per idle stream; on PostgreSQL another
process's write reaches the stream by ``NOTIFY``."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.events.models import OutboxEvent
from officehub.kit.auth import Actor, OfficeContext
from officehub.kit.timeutil import utcnow
from officehub.live.hub import stream_event
from officehub.live.visibility import visible
from officehub.offices import service as offices
from tests import factories as f
from tests.accounts_helpers import PASSWORD, make_account
from tests.conftest import PG_URL, _test_settings
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import running_server
from tests.server_process import clean_env
from tests.server_process import running_server as running_process

WAIT = 15.0
LIVE = 15.0
"""What a session's stream waits for: half the hub's 30 s safety read, so an event left to
that read fails here (tests/test_wakeup.py)."""


@dataclass
class Sse:
    id: str | None
    event: str
    data: dict[str, Any]


class Reader:
    """The events of one open stream, parsed as a browser's EventSource would, by a task
    of its own (a wait with a deadline never cuts a read in half)."""

    def __init__(self, response: httpx.Response) -> None:
        self.events: asyncio.Queue[Sse | None] = asyncio.Queue()
        self.comments = 0
        self.ticked = asyncio.Event()
        self.task = asyncio.create_task(self._read(response))

    async def next(self, *, skip: tuple[str, ...] = ("ready",), wait: float = WAIT) -> Sse:
        async with asyncio.timeout(wait):
            while True:
                found = await self.events.get()
                if found is None:
                    raise AssertionError("the stream ended")
                if found.event not in skip:
                    return found

    async def _read(self, response: httpx.Response) -> None:
        fields: dict[str, str] = {}
        try:
            async for line in response.aiter_lines():
                if line == "":
                    if "data" in fields:
                        data = json.loads(fields["data"])
                        self.events.put_nowait(Sse(fields.get("id"), fields["event"], data))
                    fields.clear()
                elif line.startswith(":"):
                    self.comments += 1
                    self.ticked.set()
                else:
                    name, _, value = line.partition(": ")
                    fields[name] = value
        finally:
            self.events.put_nowait(None)

    async def until(self, comments: int) -> None:
        async with asyncio.timeout(WAIT):
            while self.comments < comments:
                self.ticked.clear()
                await self.ticked.wait()


@contextlib.asynccontextmanager
async def served(
    database_url: str, tmp_path: Path, **extra: Any
) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    app = create_app(_test_settings(database_url, tmp_path, **extra))
    async with (
        app.router.lifespan_context(app),
        running_server(app) as url,
        httpx.AsyncClient(base_url=url, timeout=WAIT) as http,
    ):
        yield app, http


@contextlib.asynccontextmanager
async def opened(
    http: httpx.AsyncClient, office: OfficeFixture, last_event_id: str | None = None
) -> AsyncIterator[Reader]:
    headers = dict(office.headers)
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    async with http.stream("GET", "/stream", headers=headers) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        reader = Reader(response)
        try:
            yield reader
        finally:
            reader.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader.task


async def _world(session: AsyncSession, office: OfficeFixture) -> dict[str, str]:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id)
    await session.commit()
    return {"personId": contact.id, "inboxId": inbox.id, "integrationId": integration.id}


async def _opened_conversation(
    http: httpx.AsyncClient, office: OfficeFixture, body: dict[str, str]
) -> str:
    r = await http.post("/conversation", json=body, headers=office.headers)
    assert r.status_code == 201, r.text
    ident: str = r.json()["id"]
    return ident


async def _inbound(http: httpx.AsyncClient, office: OfficeFixture, ident: str, text: str) -> str:
    r = await http.post(
        f"/conversation/{ident}/messages/inbound", json={"text": text}, headers=office.headers
    )
    assert r.status_code == 201, r.text
    message_id: str = r.json()["id"]
    return message_id


async def test_an_event_a_request_records_appears_on_an_open_stream(
    database_url: str, tmp_path: Path, session: AsyncSession, office_a: OfficeFixture
) -> None:
    body = await _world(session, office_a)
    async with served(database_url, tmp_path) as (app, http), opened(http, office_a) as stream:
        ident = await _opened_conversation(http, office_a, body)
        created = await stream.next()
        assert created.event == "chat.conversation.created"
        assert created.data["data"]["id"] == ident
        assert created.data["officeId"] == office_a.id
        message_id = await _inbound(http, office_a, ident, "Bom dia")
        received = await stream.next()
        assert received.event == "chat.message.received"
        assert received.data["data"]["id"] == message_id
        recorded = await outbox(app, office_a.id)
        assert [created.id, received.id] == [e.id for e in recorded[:2]]


async def test_a_resumed_stream_is_sent_the_events_missed_while_away(
    database_url: str, tmp_path: Path, session: AsyncSession, office_a: OfficeFixture
) -> None:
    body = await _world(session, office_a)
    async with served(database_url, tmp_path) as (_app, http):
        async with opened(http, office_a) as stream:
            ident = await _opened_conversation(http, office_a, body)
            last = (await stream.next()).id
        assert last is not None
        missed = [await _inbound(http, office_a, ident, text) for text in ("um", "dois")]
        async with opened(http, office_a, last_event_id=last) as stream:
            replayed = [await stream.next(), await stream.next()]
            assert [e.data["data"]["id"] for e in replayed] == missed
            live = await _inbound(http, office_a, ident, "três")
            assert (await stream.next()).data["data"]["id"] == live


async def test_a_fresh_stream_says_where_it_starts_so_a_reconnect_misses_nothing(
    database_url: str, tmp_path: Path, session: AsyncSession, office_a: OfficeFixture
) -> None:
    body = await _world(session, office_a)
    async with served(database_url, tmp_path) as (_app, http):
        ident = await _opened_conversation(http, office_a, body)
        async with opened(http, office_a) as stream:
            ready = await stream.next(skip=())
        assert ready.event == "ready" and ready.id is not None
        missed = await _inbound(http, office_a, ident, "enquanto fora")
        async with opened(http, office_a, last_event_id=ready.id) as stream:
            assert (await stream.next()).data["data"]["id"] == missed


async def test_another_offices_events_never_appear(
    database_url: str,
    tmp_path: Path,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    mine, theirs = await _world(session, office_a), await _world(session, office_b)
    async with served(database_url, tmp_path) as (app, http), opened(http, office_a) as stream:
        other = await _opened_conversation(http, office_b, theirs)
        await _inbound(http, office_b, other, "de outro escritório")
        ident = await _opened_conversation(http, office_a, mine)
        first = await stream.next()
        assert first.data["officeId"] == office_a.id and first.data["data"]["id"] == ident
        # Nor does a resume from another office's event: it is unknown here.
        b_event = (await outbox(app, office_b.id))[0].id
        async with opened(http, office_a, last_event_id=b_event) as resumed:
            assert (await resumed.next()).event == "reset"


async def test_a_resume_from_an_unknown_event_says_reset_then_goes_live(
    database_url: str, tmp_path: Path, session: AsyncSession, office_a: OfficeFixture
) -> None:
    body = await _world(session, office_a)
    async with served(database_url, tmp_path) as (_app, http):
        async with opened(http, office_a, last_event_id="c" + "0" * 24) as stream:
            assert (await stream.next()).event == "reset"
            ident = await _opened_conversation(http, office_a, body)
            assert (await stream.next()).data["data"]["id"] == ident


async def test_an_idle_stream_sends_heartbeats_and_no_statement(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    """No per-client poll: three idle streams send the database nothing while their
    heartbeats go out."""
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    async with (
        served(database_url, tmp_path, stream_heartbeat_seconds=0.2) as (app, http),
        AsyncExitStack() as streams,
    ):
        readers = [await streams.enter_async_context(opened(http, office_a)) for _ in range(3)]
        for reader in readers:  # each past its start (the reads of ``ready``)
            await reader.until(1)
        engine = app.state.engine.sync_engine
        event.listen(engine, "before_cursor_execute", record)
        try:
            for reader in readers:
                await reader.until(reader.comments + 3)
        finally:
            event.remove(engine, "before_cursor_execute", record)
    assert statements == []


async def test_streams_are_capped_per_key_and_per_address(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    async with served(database_url, tmp_path, streams_per_key=2) as (app, http):
        async with AsyncExitStack() as streams:
            for _ in range(2):
                await streams.enter_async_context(opened(http, office_a))
            third = await http.get("/stream", headers=office_a.headers)
            assert third.status_code == 429
            assert error_of(third)["code"]
        async with asyncio.timeout(WAIT):
            while app.state.office_streams.open:  # noqa: ASYNC110 (the slots hold no event)
                await asyncio.sleep(0.05)
        async with opened(http, office_a):  # a slot given back is taken again
            pass
    async with served(database_url, tmp_path, streams_per_address=1) as (_app, http):
        async with opened(http, office_a):
            second = await http.get("/stream", headers=office_a.headers)
            assert second.status_code == 429


async def test_a_stream_needs_the_read_scope_and_no_other(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    async with served(database_url, tmp_path) as (app, http):
        async with app.state.sessionmaker() as s:
            read = await offices.create_api_key(s, office_a.id, "leitura", ["read"])
            write = (await offices.create_api_key(s, office_a.id, "escrita", ["write"])).key
            await s.commit()
        refused = await http.get("/stream", headers={"x-service-api-key": write})
        assert refused.status_code == 403
        assert error_of(refused)["code"] == "MISSING_PERMISSION"
        reader = OfficeFixture(office_a.id, read.key, read.record.id)
        async with opened(http, reader):
            pass


async def test_a_stream_needs_a_valid_key(client: httpx.AsyncClient) -> None:
    for headers in ({}, {"x-service-api-key": "ohk_wrong"}):
        r = await client.get("/stream", headers=headers)
        assert r.status_code == 401
        assert error_of(r)["statusCode"] == 401


async def test_a_last_event_id_too_long_is_refused_naming_it(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/stream", headers={**office_a.headers, "Last-Event-ID": "c" + "x" * 100})
    assert r.status_code == 400
    assert "Last-Event-ID" in str(error_of(r)["details"])


def test_visible_keeps_to_the_office_and_leaves_out_events_for_one_webhook() -> None:
    def made(office_id: str, target: str | None = None) -> Any:
        return stream_event(
            OutboxEvent(
                id="c" + "1" * 24,
                office_id=office_id,
                name="webhook.test",
                data={},
                created_at=utcnow(),
                target_webhook_id=target,
            )
        )

    key = OfficeContext(office_id="coffice-a", key_id="ckey", permissions=frozenset())
    assert visible(made("coffice-a"), key)
    assert not visible(made("coffice-b"), key)
    assert not visible(made("coffice-a", target="cwebhook"), key)


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL-only: another process wakes by NOTIFY")
async def test_a_second_processs_write_reaches_a_stream_on_postgresql(
    database_url: str, tmp_path: Path, session: AsyncSession, office_a: OfficeFixture
) -> None:
    body = await _world(session, office_a)
    env = clean_env(OFFICEHUB_DATABASE_URL=database_url, OFFICEHUB_LOG_LEVEL="WARNING")
    (tmp_path / "other").mkdir()
    async with (
        running_process(tmp_path / "other", "--no-worker", env=env) as other,
        httpx.AsyncClient(base_url=other.url, timeout=WAIT) as elsewhere,
        served(database_url, tmp_path) as (_app, http),
        opened(http, office_a) as stream,
    ):
        ident = await _opened_conversation(elsewhere, office_a, body)
        created = await stream.next()
        assert created.data["data"]["id"] == ident


def test_a_users_stream_gets_only_the_events_of_conversations_they_may_see() -> None:
    def made(conversation_id: str | None, inbox_id: str | None, assigned: str | None) -> Any:
        row = OutboxEvent(
            id="c" + "1" * 24,
            office_id="coffice-a",
            name="message.created" if conversation_id else "contact.updated",
            data={},
            created_at=utcnow(),
            conversation_id=conversation_id,
        )
        return stream_event(row, inbox_id, assigned)

    def session_of(role: str, only_assigned: bool = False) -> OfficeContext:
        user = Actor(
            "user",
            "cuser",
            role,
            "coffice-a",
            inbox_ids=frozenset({"cfamily"}),
            only_assigned_conversations=only_assigned,
        )
        return OfficeContext("coffice-a", "csession", frozenset(), actor=user)

    family, labour = made("cconv", "cfamily", None), made("cconv", "clabour", None)
    no_conversation, gone = made(None, None, None), made("cconv", None, None)
    for role in ("SUPERVISOR", "AGENT"):
        user = session_of(role)
        assert visible(family, user) and not visible(labour, user)
        assert not visible(no_conversation, user) and not visible(gone, user)
    admin = session_of("ADMIN")
    assert all(visible(e, admin) for e in (family, labour, no_conversation))
    agent = session_of("AGENT", only_assigned=True)
    assert visible(family, agent)  # unassigned
    assert visible(made("cconv", "cfamily", "cuser"), agent)
    assert not visible(made("cconv", "cfamily", "ccolleague"), agent)
    assert visible(made("cconv", "cfamily", "ccolleague"), session_of("SUPERVISOR"))


async def test_a_supervisors_stream_gets_their_inboxs_events_and_none_of_another(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """End to end: a SUPERVISOR of the family inbox, signed in, on a real stream; the labour
    inbox's conversation and message (recorded first) never reach it, the family's do."""
    family = await _world(session, office_a)
    labour_inbox = await f.make_inbox(session, office_a.id, "Trabalhista")
    labour_channel = await f.make_integration(session, office_a.id, labour_inbox.id)
    labour_client = await f.make_contact(session, office_a.id, "João Pereira", phone=None)
    await session.commit()
    labour = {
        "personId": labour_client.id,
        "inboxId": labour_inbox.id,
        "integrationId": labour_channel.id,
    }
    async with httpx.AsyncClient(base_url=server_url, timeout=WAIT) as http:
        _, email = await make_account(http, office_a, "SUPERVISOR", inbox_ids=[family["inboxId"]])
        async with httpx.AsyncClient(base_url=server_url, timeout=WAIT) as boss:
            r = await boss.post("/auth/login", json={"email": email, "password": PASSWORD})
            assert r.status_code == 200, r.text
            async with boss.stream("GET", "/stream") as response:
                assert response.status_code == 200
                reader = Reader(response)
                try:
                    hidden = await _opened_conversation(http, office_a, labour)
                    await _inbound(http, office_a, hidden, "Sobre a rescisão")
                    shown = await _opened_conversation(http, office_a, family)
                    message = await _inbound(http, office_a, shown, "Sobre a pensão")
                    seen: list[Sse] = []
                    while not seen or seen[-1].data.get("data", {}).get("id") != message:
                        seen.append(await reader.next(wait=LIVE))
                finally:
                    reader.task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await reader.task
    assert {e.event for e in seen} >= {"chat.conversation.created", "chat.message.received"}
    assert all(hidden not in json.dumps(e.data) for e in seen)
    assert any(shown in json.dumps(e.data) for e in seen)


async def test_an_event_stamped_after_the_first_stream_subscribed_is_sent_however_soon_it_committed(
    database_url: str, tmp_path: Path, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The hub's first read counted as already sent every event of the last 10 s, including
    one committed between the first stream's subscription and that read: the console saw it
    only when something else about its conversation came, seconds later (decisions: the
    console's live inbox). An event stamped a moment ahead, committed before the stream
    opens, stands for that commit: its stamp is after the subscription."""
    ahead = OutboxEvent(
        office_id=office_a.id,
        name="contact.updated",
        data={"id": "cxxxxxxxxxxxxxxxxxxxxxxxx"},
        created_at=utcnow() + timedelta(seconds=5),
    )
    session.add(ahead)
    await session.commit()
    async with served(database_url, tmp_path) as (_, http), opened(http, office_a) as stream:
        got = await stream.next(wait=4.0)  # before the 30 s safety read could
        assert got.id == ahead.id and got.event == "contact.updated"


def _exited(pid: int) -> bool:
    """Whether the child ``pid`` has exited (gone, or a zombie not waited for yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (FileNotFoundError, ProcessLookupError):
        return True


async def test_a_server_told_to_stop_closes_its_open_streams_and_exits_at_once(
    database_url: str, tmp_path: Path, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A restart or a deploy (SIGTERM) is not held by a console's open stream: uvicorn
    waited for the stream to end, its whole lifetime (10 minutes)."""
    await _world(session, office_a)
    env = clean_env(OFFICEHUB_DATABASE_URL=database_url, OFFICEHUB_LOG_LEVEL="WARNING")
    async with (
        running_process(tmp_path, "--no-worker", env=env) as server,
        httpx.AsyncClient(base_url=server.url, timeout=WAIT) as http,
        http.stream("GET", "/stream", headers=office_a.headers) as response,
    ):
        assert response.status_code == 200
        lines = response.aiter_lines()
        assert (await anext(lines)).startswith("retry:")  # open and answering
        os.kill(server.pid, signal.SIGTERM)
        async with asyncio.timeout(WAIT):
            with contextlib.suppress(httpx.RemoteProtocolError):  # closed mid-stream
                async for _line in lines:
                    pass
            while not _exited(server.pid):  # noqa: ASYNC110 (a process's state, polled)
                await asyncio.sleep(0.1)
