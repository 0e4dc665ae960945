"""The hot paths: API keys from a per-process cache (revocation still felt within a second by
every process), read requests without a transaction, and statements per request that do not
grow with the data (no N+1)."""

from __future__ import annotations

import asyncio
import inspect
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import aiosqlite
import httpx
import pytest
from fastapi import FastAPI
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from sqlalchemy import delete, event, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.util import await_only

from officehub.app import create_app
from officehub.contacts.models import Contact, ContactTag
from officehub.conversations.models import Conversation
from officehub.events.models import OutboxEvent
from officehub.events.service import emit
from officehub.kit.auth import KeyCache, OfficeContext
from officehub.kit.config import Settings
from officehub.kit.db import WriteInReadOnlySession
from officehub.kit.gc_tuning import YOUNG_THRESHOLD
from officehub.kit.ids import new_id
from officehub.migrate import migrate_async
from officehub.mounted_routers import domain_routers
from officehub.offices import service as offices
from officehub.tags.models import Tag
from tests import factories as f
from tests.conftest import PG_URL
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of, make_office, quiet_writers
from tests.server_process import running_server


@contextmanager
def counting(app: FastAPI) -> Iterator[list[str]]:
    """The SQL statements the app sends while the block runs."""
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", count)


async def statements_of(
    app: FastAPI, client: httpx.AsyncClient, method: str, url: str, **kwargs: Any
) -> list[str]:
    """The statements of one request, but the API key's lookup (whether the key cache
    still held the key depends on how long the test took). The audit trail's periodic flush
    is stopped first: it writes apart from the request (tests/test_audit.py), and its
    statements landing inside the count would make it depend on timing."""
    await quiet_writers(app)
    with counting(app) as statements:
        response = await client.request(method, url, **kwargs)
        assert response.status_code < 300, response.text
    return [s for s in statements if "FROM api_keys" not in s]


@asynccontextmanager
async def other_process(settings: Settings) -> AsyncIterator[httpx.AsyncClient]:
    """A second app on the same database: another process's caches and pool."""
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://second.test") as c:
            yield c


# -- the key cache ---------------------------------------------------------------------------


async def test_a_resolved_key_is_served_from_the_cache_without_a_query(
    settings: Settings, office_a: OfficeFixture
) -> None:
    app = create_app(settings.model_copy(update={"key_cache_seconds": 60}))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as client:
            with counting(app) as first:
                assert (await client.get("/tag", headers=office_a.headers)).status_code == 200
            with counting(app) as second:
                assert (await client.get("/tag", headers=office_a.headers)).status_code == 200
    assert [s for s in first if "FROM api_keys" in s]
    assert not [s for s in second if "FROM api_keys" in s], second


async def test_revocation_is_felt_within_a_second_by_every_process(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with other_process(settings) as second:
        for c in (client, second):  # both processes hold the key in their caches
            assert (await c.get("/tag", headers=office_a.headers)).status_code == 200
        async with app.state.sessionmaker() as s:
            await offices.revoke_api_key(s, office_a.key_id)
            await s.commit()
        await asyncio.sleep(settings.key_cache_seconds)
        for c in (client, second):
            r = await c.get("/tag", headers=office_a.headers)
            assert r.status_code == 401
            assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_a_key_made_a_moment_after_an_unknown_one_works_at_once(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    unknown = await client.get("/tag", headers={"x-service-api-key": "ohk_not_yet"})
    assert unknown.status_code == 401
    async with app.state.sessionmaker() as s:
        created = await offices.create_api_key(s, office_a.id, "fresh")
        await s.commit()
    r = await client.get("/tag", headers={"x-service-api-key": created.key})
    assert r.status_code == 200


def test_the_key_cache_forgets_after_its_ttl_and_starts_over_when_full() -> None:
    now = [100.0]
    cache = KeyCache(ttl=1.0, size=2, clock=lambda: now[0])
    office = OfficeContext("office", "key", frozenset({"read"}))
    cache.put("a", office)
    assert cache.get("a") == office
    now[0] = 100.99
    assert cache.get("a") == office
    now[0] = 101.0
    assert cache.get("a") is None  # exactly at its ttl: forgotten
    cache.put("a", office)
    cache.put("b", office)
    assert (cache.get("a"), cache.get("b")) == (office, office)  # two fit
    cache.put("c", office)  # full: starts over with c alone
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (None, None, office)


def test_the_key_cache_never_holds_more_than_its_size() -> None:
    """The bound holds at the default's scale too (sizes over 256 are no cached small ints
    in CPython: an identity test in place of the comparison would never start over)."""
    cache = KeyCache(ttl=60.0, size=1000, clock=lambda: 100.0)
    office = OfficeContext("office", "key", frozenset({"read"}))
    for n in range(1000):
        cache.put(f"k{n}", office)
    assert cache.get("k0") == office and cache.get("k999") == office
    cache.put("k1000", office)  # full: starts over
    assert (cache.get("k0"), cache.get("k999"), cache.get("k1000")) == (None, None, office)


def test_a_key_cache_of_ttl_zero_keeps_nothing() -> None:
    cache = KeyCache(ttl=0)
    cache.put("a", OfficeContext("office", "key", frozenset()))
    assert cache.get("a") is None
    brief = KeyCache(ttl=0.5, clock=lambda: 100.0)  # under a second still keeps
    brief.put("a", OfficeContext("office", "key", frozenset()))
    assert brief.get("a") is not None


async def test_key_lookups_are_single_flight_per_key_hash() -> None:
    """Waiters share the one lookup under way; a lookup after expiry is a new one."""
    now = [100.0]
    cache = KeyCache(ttl=1.0, clock=lambda: now[0])
    office = OfficeContext("office", "key", frozenset({"read"}))
    calls: list[str] = []
    release = asyncio.Event()

    async def load() -> OfficeContext | None:
        calls.append("load")
        await release.wait()
        return office

    waiters = [asyncio.create_task(cache.resolve("h", load)) for _ in range(16)]
    await asyncio.sleep(0.01)
    assert calls == ["load"]
    waiters[0].cancel()  # a request that goes away does not cancel the others' lookup
    release.set()
    assert await asyncio.gather(*waiters[1:]) == [office] * 15
    assert await cache.resolve("h", load) == office  # cached now
    assert calls == ["load"]
    now[0] += 1.5
    assert await asyncio.gather(*(cache.resolve("h", load) for _ in range(4))) == [office] * 4
    assert calls == ["load", "load"]


async def test_a_failed_key_lookup_fails_its_waiters_and_the_next_asks_again() -> None:
    cache = KeyCache(ttl=1.0)
    office = OfficeContext("office", "key", frozenset({"read"}))
    answers: list[OfficeContext | Exception] = [RuntimeError("db down"), office]

    async def load() -> OfficeContext | None:
        await asyncio.sleep(0.01)
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    failed = await asyncio.gather(
        *(cache.resolve("h", load) for _ in range(3)), return_exceptions=True
    )
    assert [type(r) for r in failed] == [RuntimeError] * 3
    assert await cache.resolve("h", load) == office
    assert answers == []


async def test_concurrent_requests_with_an_uncached_key_cost_one_key_lookup(
    settings: Settings, office_a: OfficeFixture
) -> None:
    app = create_app(settings.model_copy(update={"key_cache_seconds": 60}))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as client:
            with counting(app) as statements:
                answers = await asyncio.gather(
                    *(client.get("/tag", headers=office_a.headers) for _ in range(16))
                )
    assert [r.status_code for r in answers] == [200] * 16
    assert len([s for s in statements if "FROM api_keys" in s]) == 1, statements


# -- read requests ---------------------------------------------------------------------------


async def test_a_read_request_runs_without_a_transaction(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await client.get("/tag", headers=office_a.headers)
    commits: list[object] = []

    def committed(connection: object) -> None:
        commits.append(connection)

    event.listen(app.state.engine.sync_engine, "commit", committed)
    try:
        r = await client.get("/tag", headers=office_a.headers)
        assert r.status_code == 200
        assert commits == []
        r = await client.post("/inbox", json={"name": "Novo"}, headers=office_a.headers)
        assert r.status_code == 201, r.text
        assert len(commits) == 1
    finally:
        event.remove(app.state.engine.sync_engine, "commit", committed)


async def test_a_read_on_sqlite_sends_its_select_and_no_isolation_level_to_restore(
    tmp_path: Path,
) -> None:
    """SQLite's driver reads without a transaction already: a read session that asked for
    ``AUTOCOMMIT`` paid a ``PRAGMA read_uncommitted`` (and a second rollback) every time its
    connection went back to the pool. Checked on a SQLite app of its own in both runs of the
    suite, through SQLite's own trace of what each connection executes."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'reads.db'}"
    await migrate_async(url)
    app = create_app(Settings(database_url=url, data_dir=tmp_path / "data", signing_key="t"))
    sent: list[str] = []

    def trace(dbapi_connection: Any, _record: object) -> None:
        await_only(dbapi_connection.driver_connection.set_trace_callback(sent.append))

    async with app.router.lifespan_context(app):
        office = await make_office(app, "Reads")
        event.listen(app.state.engine.sync_engine, "connect", trace)
        await app.state.engine.dispose()  # every connection from here on is traced
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://reads.test") as c:
            await c.get("/tag", headers=office.headers)  # the key is cached
            sent.clear()
            r = await c.get("/tag", headers=office.headers)
            assert r.status_code == 200, r.text
    assert any(s.startswith("SELECT") and "FROM tags" in s for s in sent), sent
    assert [s for s in sent if s.startswith("PRAGMA")] == []


async def test_a_sqlite_request_hands_aiosqlite_one_job_per_statement_and_no_idle_rollback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every call to SQLite goes through aiosqlite's thread, a hand-off each. The pool's
    reset rolled back each returned connection even after a commit, or after a read (for
    which SQLite's driver opens no transaction): one wasted hand-off per request. Counted
    on aiosqlite's own dispatch, on a SQLite app of its own in both runs of the suite."""
    url = f"sqlite+aiosqlite:///{tmp_path / 'resets.db'}"
    await migrate_async(url)
    # The key stays cached through the test (the default second can run out between two
    # requests on a loaded machine, and its look-up would be counted as the request's).
    settings = Settings(
        database_url=url, data_dir=tmp_path / "data", signing_key="t", key_cache_seconds=60
    )
    app = create_app(settings)
    calls: list[str] = []
    dispatch: Any = aiosqlite.Connection._execute  # untyped in aiosqlite

    async def counted(self: aiosqlite.Connection, fn: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(getattr(fn, "__name__", type(fn).__name__))
        return await dispatch(self, fn, *args, **kwargs)

    async with app.router.lifespan_context(app):
        # The audit trail's periodic flush opens connections of its own at any moment.
        await quiet_writers(app)
        office = await make_office(app, "Resets")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://resets.test") as c:
            inbox = await c.post("/inbox", json={"name": "Geral"}, headers=office.headers)
            assert inbox.status_code == 201, inbox.text  # and the key is cached
            monkeypatch.setattr(aiosqlite.Connection, "_execute", counted)
            read = await c.get("/tag", headers=office.headers)
            assert read.status_code == 200, read.text
            after_read = list(calls)
            calls.clear()
            body = {
                "name": "Urgente",
                "color": "#FF0000",
                "inboxId": inbox.json()["id"],
                "modules": ["crm"],
            }
            write = await c.post("/tag", json=body, headers=office.headers)
            assert write.status_code == 201, write.text
            after_write = list(calls)
            calls.clear()
            refused = await c.post("/tag", json=body, headers=office.headers)
            assert refused.status_code == 409, refused.text
            after_refusal = list(calls)
        async with app.state.sessionmaker() as session:
            stored = await session.scalars(select(Tag.name).where(Tag.office_id == office.id))
            names = stored.all()
    # One hand-off per statement (officehub.kit.sqlite_driver): no cursor opened, fetched from
    # or closed on its own; the stock adapter made four per statement.
    for calls_of_a_request in (after_read, after_write, after_refusal):
        per_statement = [c for c in calls_of_a_request if c not in ("commit", "rollback")]
        assert per_statement and set(per_statement) == {"_run"}, calls_of_a_request
    assert after_read.count("rollback") == 1, after_read  # the session's own, at its close
    assert after_write.count("commit") == 1, after_write
    assert after_write.count("rollback") == 0, after_write
    assert after_refusal.count("rollback") == 1, after_refusal  # the failed one is undone
    assert names == ["Urgente"]


async def test_a_read_only_session_refuses_to_write(app: FastAPI, office_a: OfficeFixture) -> None:
    async with app.state.read_sessionmaker() as s:
        s.add(Contact(office_id=office_a.id, name="X", search_name="x"))
        with pytest.raises(WriteInReadOnlySession):
            await s.flush()
    async with app.state.read_sessionmaker() as s:
        with pytest.raises(WriteInReadOnlySession):
            await s.execute(delete(Contact).where(Contact.office_id == office_a.id))
    async with app.state.sessionmaker() as s:
        assert (await s.scalars(select(Contact))).all() == []


def _sync_calls(dependant: Dependant) -> Iterator[str]:
    call = dependant.call
    if call is not None and not (
        inspect.iscoroutinefunction(call) or inspect.isasyncgenfunction(call)
    ):
        yield f"{call.__module__}.{call.__qualname__}"
    for sub in dependant.dependencies:
        yield from _sync_calls(sub)


def test_no_route_or_dependency_is_a_plain_function_run_in_a_worker_thread() -> None:
    """FastAPI runs a plain ``def`` endpoint or dependency in a worker thread: a hand-off
    and a wake-up per request, for functions that do no blocking work."""
    found = {
        f"{','.join(sorted(route.methods or ()))} {route.path}: {call}"
        for router in domain_routers()
        for route in router.routes
        if isinstance(route, APIRoute)
        for call in _sync_calls(route.dependant)
    }
    assert found == set()


# -- statements per request (no N+1) ---------------------------------------------------------


async def test_reading_a_tag_costs_one_statement(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    url = f"/tag/{world.tag.id}"
    await client.get(url, headers=office_a.headers)  # the key is cached
    assert len(await statements_of(app, client, "GET", url, headers=office_a.headers)) == 1


async def test_searching_people_costs_the_same_statements_for_2_and_20_matches(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    for name, count in (("Joana", 20), ("Pedro", 2)):
        for i in range(count):
            contact = await f.make_contact(session, office_a.id, f"{name} {i}", phone=None)
            await f.make_conversation(session, office_a.id, contact.id, world.integration)
            session.add(
                ContactTag(office_id=office_a.id, contact_id=contact.id, tag_id=world.tag.id)
            )
    await session.commit()
    headers = office_a.headers
    await client.get("/people", headers=headers)
    two = await statements_of(app, client, "GET", "/people?search=pedro", headers=headers)
    twenty = await statements_of(app, client, "GET", "/people?search=joana", headers=headers)
    assert len(two) == len(twenty) <= 3, twenty


async def test_creating_a_person_costs_the_same_statements_with_1_and_5_tags(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    tags = [world.tag] + [
        await f.make_tag(session, office_a.id, world.inbox.id, f"t{i}") for i in range(4)
    ]
    await session.commit()
    headers = office_a.headers
    await client.get("/people", headers=headers)
    one = await statements_of(
        app, client, "POST", "/people", json={"name": "Ana", "tags": [tags[0].id]}, headers=headers
    )
    five = await statements_of(
        app,
        client,
        "POST",
        "/people",
        json={"name": "Bia", "tags": [t.id for t in tags]},
        headers=headers,
    )
    assert len(one) == len(five), (one, five)


async def test_creating_a_person_writes_it_its_event_and_its_counter_in_one_statement_on_pg(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """On PostgreSQL ``POST /people`` is one statement (the key's lookup aside): the contact,
    its ``contact.created`` and its subject's counter (sequence 1), no numbering at commit.
    On SQLite the contact is still written before its event."""
    await client.get("/people", headers=office_a.headers)
    statements = await statements_of(
        app, client, "POST", "/people", json={"name": "Ana"}, headers=office_a.headers
    )
    written = [" ".join(s.split()) for s in statements]
    if app.state.engine.dialect.name == "postgresql":
        [one] = written
        for part in ("INSERT INTO contacts", "INSERT INTO outbox_events", "event_subjects"):
            assert part in one, one
    else:
        first = next(i for i, s in enumerate(written) if "INTO contacts" in s)
        assert first < next(i for i, s in enumerate(written) if "INTO outbox_events" in s)


@contextmanager
def executed_by_sqlalchemy(app: FastAPI) -> Iterator[list[str]]:
    """The statements SQLAlchemy's own execution runs while the block runs (its
    ``before_execute``: a session's or connection's ``execute``), as text."""
    statements: list[str] = []

    def seen(_conn: Any, clause: Any, *_: Any) -> None:
        statements.append(" ".join(str(clause).split()))

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_execute", seen)
    try:
        yield statements
    finally:
        event.remove(engine, "before_execute", seen)


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL only: the raw driver's path")
async def test_the_writes_events_and_tags_are_sent_through_the_raw_driver_on_pg(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """On PostgreSQL the event's statement (``POST /people``'s one: the contact, its event,
    its counter; ``PATCH``'s one: the conversation's change, its event, its numbering) and
    a conversation's tags read by ``PATCH`` are sent on the session's asyncpg connection
    (``kit.raw_read``): the statement listeners see each, SQLAlchemy's execution none of
    them."""
    world = await make_world(session, office_a.id)
    await session.commit()
    headers = office_a.headers
    await client.get("/people", headers=headers)
    await quiet_writers(app)  # the audit trail's entries written before, apart from these
    with executed_by_sqlalchemy(app) as executed:
        sent = await statements_of(
            app, client, "POST", "/people", json={"name": "Ana"}, headers=headers
        )
    assert any("INSERT INTO outbox_events" in s for s in sent), sent
    assert not [s for s in executed if "api_keys" not in s], executed
    url = f"/conversation/{world.conversation.id}"
    await quiet_writers(app)
    with executed_by_sqlalchemy(app) as executed:
        sent = await statements_of(
            app, client, "PATCH", url, json={"priority": "HIGH"}, headers=headers
        )
    sent_text = [" ".join(s.split()) for s in sent]
    for part in ("FROM conversation_tags", "INSERT INTO outbox_events", "UPDATE conversations"):
        assert any(part in s for s in sent_text), (part, sent_text)
        assert not any(part in s for s in executed), (part, executed)
    assert any("FOR UPDATE" in s for s in executed), executed  # the lock: the ORM's read


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL only: the event's statement")
async def test_a_priority_change_is_written_and_numbered_by_its_events_statement_on_pg(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``PATCH /conversation/{id}`` changing the priority on PostgreSQL: the locking read,
    the tags with the inbox's SLA policies, then one statement writing the conversation's
    change, its ``chat.conversation.updated`` and its number (no flush of its own, no
    numbering at commit). The events are numbered in a row and the row holds each
    answer's values."""
    world = await make_world(session, office_a.id)
    await session.commit()
    url = f"/conversation/{world.conversation.id}"
    headers = office_a.headers
    await client.get(url, headers=headers)
    answers = []
    for priority in ("HIGH", "LOW", "HIGH"):
        sent = await statements_of(
            app, client, "PATCH", url, json={"priority": priority}, headers=headers
        )
        text_of = [" ".join(s.split()) for s in sent]
        assert len(text_of) == 3, text_of
        assert "FOR UPDATE" in text_of[0], text_of
        assert "conversation_tags" in text_of[1] and "sla_policies" in text_of[1], text_of
        [event] = [s for s in text_of if "INSERT INTO outbox_events" in s]
        assert "UPDATE conversations SET" in event and "event_subjects" in event, event
        assert not any("UPDATE outbox_events" in s for s in text_of), text_of
        answers.append((await client.get(url, headers=headers)).json())
    async with app.state.sessionmaker() as fresh:
        rows = (
            await fresh.execute(
                select(OutboxEvent.sequence, OutboxEvent.data)
                .where(
                    OutboxEvent.conversation_id == world.conversation.id,
                    OutboxEvent.name == "chat.conversation.updated",
                )
                .order_by(OutboxEvent.sequence)
            )
        ).all()
        stored = await fresh.get(Conversation, world.conversation.id)
    assert [d["priority"] for _, d in rows] == ["HIGH", "LOW", "HIGH"]
    assert [d for _, d in rows] == answers
    sequences = [n for n, _ in rows]
    assert sequences == list(range(sequences[0], sequences[0] + 3)), sequences
    assert stored is not None and stored.priority == "HIGH"


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL only: the event's statement")
async def test_a_change_whose_events_statement_fails_is_read_again_not_kept_as_written(
    session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``emit(…, updating=record)`` marks the record's changes written before its statement
    runs; when the statement fails (here a department that does not exist: the foreign key
    refuses it) inside a savepoint the caller goes on after (an automation's action), the
    savepoint's rollback expires the record (it was changed in the savepoint), so it is read
    again from its row, not left holding values the database never took."""
    world = await make_world(session, office_a.id)
    await session.commit()
    conversation = await session.get(Conversation, world.conversation.id)
    assert conversation is not None
    ident, before = conversation.id, conversation.priority
    with pytest.raises(IntegrityError):
        async with session.begin_nested():
            conversation.priority = "HIGH" if before != "HIGH" else "LOW"
            conversation.department_id = new_id()  # no such department
            await emit(
                session,
                office_a.id,
                "chat.conversation.updated",
                {"id": ident},
                conversation_id=ident,
                updating=conversation,
            )
    reread = (
        await session.execute(select(Conversation).where(Conversation.id == ident))
    ).scalar_one()
    assert reread is conversation
    assert (conversation.priority, conversation.department_id) == (before, None)


async def test_updating_a_conversation_costs_the_same_statements_for_1_and_4_tags(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    tags = [world.tag] + [
        await f.make_tag(session, office_a.id, world.inbox.id, f"t{i}") for i in range(4)
    ]
    await session.commit()
    url = f"/conversation/{world.conversation.id}"
    headers = office_a.headers
    await client.get(url, headers=headers)
    one = await statements_of(
        app, client, "PATCH", url, json={"priority": "HIGH", "tags": [tags[1].id]}, headers=headers
    )
    five = await statements_of(
        app,
        client,
        "PATCH",
        url,
        json={"priority": "LOW", "tags": [t.id for t in tags if t is not tags[1]]},
        headers=headers,
    )
    # one tag swapped for one, then one for four: each set change is one statement
    assert len(one) == len(five), (one, five)


async def test_a_page_of_conversations_is_one_statement_on_pg_with_tags_and_names(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``GET /conversation`` on PostgreSQL: the page, its conversations' tags, the names of
    the users they name and the total in one statement, whether the page holds tags and
    assignees or none; a page past the last (no row to carry the total) counts apart, exact.
    SQLite reads them in statements of their own, as many for 2 conversations as for 20."""
    world = await make_world(session, office_a.id)  # one conversation, one tag
    more = [await f.make_tag(session, office_a.id, world.inbox.id, f"t{i}") for i in range(2)]
    for i in range(21):
        contact = await f.make_contact(session, office_a.id, f"Ana {i}", phone=None)
        await f.make_conversation(
            session,
            office_a.id,
            contact.id,
            world.integration,
            tags=[world.tag, *more][: i % 4],
            assigned_user_id=world.user.id if i % 2 else None,
        )
    await session.commit()
    headers = office_a.headers
    pg = app.state.engine.dialect.name == "postgresql"
    await client.get("/conversation", headers=headers)
    # the first page (20 and 2 conversations) and a deep one (read by ids)
    for url in ("/conversation?limit=20", "/conversation?limit=2", "/conversation?limit=5&page=3"):
        sent = await statements_of(app, client, "GET", url, headers=headers)
        answer = (await client.get(url, headers=headers)).json()
        assert answer["totalResults"] == 22
        assert any(c["tags"] for c in answer["data"]), answer
        if pg:
            [page] = sent
            for part in ("FROM conversation_tags", "FROM users", "FROM conversation_counts"):
                assert part in page, page
        else:  # the total, the page, its tags, its users' names
            assert len(sent) <= 4, sent
    past = "/conversation?limit=20&page=3"
    sent = await statements_of(app, client, "GET", past, headers=headers)
    answer = (await client.get(past, headers=headers)).json()
    assert answer == {"data": [], "totalResults": 22, "totalPages": 2}
    assert len(sent) == 2, sent  # the empty page, then its total


# -- serve --workers -------------------------------------------------------------------------


def _spawned_in(folder: Path) -> list[int]:
    """Processes started by multiprocessing whose working folder is ``folder``."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cwd = (proc / "cwd").resolve()
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if cwd == folder.resolve() and b"spawn_main" in cmdline:
            found.append(int(proc.name))
    return found


async def test_serve_with_workers_runs_that_many_api_processes(tmp_path: Path) -> None:
    async with running_server(tmp_path, "--workers", "2", "--no-worker") as server:
        headers = {"x-service-api-key": server.demo_key}
        async with httpx.AsyncClient(base_url=server.url, timeout=30) as client:
            answers = await asyncio.gather(
                *(client.get("/tag", headers=headers) for _ in range(20))
            )
        assert [r.status_code for r in answers] == [200] * 20
        assert len(_spawned_in(tmp_path)) == 2


def test_a_served_process_keeps_its_startup_heap_out_of_the_collectors_sight(
    tmp_path: Path,
) -> None:
    """``served_app`` (each ``serve --workers`` process; ``serve`` and ``worker`` call the
    same ``settle_heap``) freezes what startup made and collects the young generation less
    often (``officehub.kit.gc_tuning``)."""
    code = (
        "import gc; from officehub.app import served_app; served_app(); "
        "print(gc.get_freeze_count(), gc.get_threshold()[0])"
    )
    env = {
        **os.environ,
        "OFFICEHUB_DATA_DIR": str(tmp_path),
        "OFFICEHUB_DATABASE_URL": f"sqlite+aiosqlite:///{tmp_path}/heap.db",
    }
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    frozen, young = map(int, done.stdout.split())
    assert frozen > 50_000  # the app's modules, models and schemas
    assert young == YOUNG_THRESHOLD


async def test_creating_a_person_constructs_no_record_object(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """``POST /people`` writes its contact from a row and its event from a row: no
    ``Contact`` nor ``OutboxEvent`` goes through its constructor's per-attribute
    instrumentation (the contact never enters the session; the event is returned only).
    The contact and its event are still written (the answer and the outbox)."""
    await client.get("/people", headers=office_a.headers)
    built: list[str] = []

    def seen(target: Any, *_: Any) -> None:
        built.append(type(target).__name__)

    event.listen(Contact, "init", seen)
    event.listen(OutboxEvent, "init", seen)
    try:
        response = await client.post("/people", json={"name": "Ana"}, headers=office_a.headers)
    finally:
        event.remove(Contact, "init", seen)
        event.remove(OutboxEvent, "init", seen)
    assert response.status_code == 201, response.text
    assert built == []
    async with app.state.sessionmaker() as check:
        names = (
            await check.execute(
                select(OutboxEvent.name).where(
                    OutboxEvent.subject == response.json()["id"],
                    OutboxEvent.office_id == office_a.id,
                )
            )
        ).scalars()
        assert list(names) == ["contact.created"]
