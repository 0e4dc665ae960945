"""Console presence sets availability (issue 29): a signed-in user's first open console
stream (``GET /stream``) makes them ONLINE, which lets their inboxes' queued
conversations reach them; when their last stream has closed and the grace period has
passed they are OFFLINE. A hand-set availability holds until presence next changes.
docs/decisions.md, "Console presence sets availability". Real server, real streams."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext
from officehub.live.presence import PresenceTracker, stale_after, sweep
from officehub.users import presence
from officehub.users.models import UserPresence
from tests import factories as f
from tests.accounts_helpers import PASSWORD, make_account
from tests.helpers import OfficeFixture

WAIT = 15.0


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """A short grace, so a departure shows within the tests' waits."""
    return settings.model_copy(update={"presence_grace_seconds": 0.3})


async def _until(check: Callable[[], Awaitable[bool]]) -> None:
    """Waits for ``check`` to hold (polled: the database tells nothing), at most WAIT s."""
    async with asyncio.timeout(WAIT):
        while not await check():  # noqa: ASYNC110 (rows)
            await asyncio.sleep(0.05)


async def _availability(http: httpx.AsyncClient, office: OfficeFixture, user_id: str) -> str:
    r = await http.get(f"/user/{user_id}", headers=office.headers)
    assert r.status_code == 200, r.text
    return str(r.json()["availability"])


async def _agent(
    http: httpx.AsyncClient, office: OfficeFixture, inbox_id: str, availability: str = "OFFLINE"
) -> tuple[str, str]:
    user_id, email = await make_account(http, office, "AGENT", inbox_ids=[inbox_id])
    r = await http.patch(
        f"/user/{user_id}", json={"availability": availability}, headers=office.headers
    )
    assert r.status_code == 200, r.text
    return user_id, email


@asynccontextmanager
async def _console(server_url: str, email: str) -> AsyncIterator[httpx.AsyncClient]:
    """A browser-like client signed in as ``email`` (the session cookie)."""
    async with httpx.AsyncClient(base_url=server_url, timeout=WAIT) as client:
        r = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert r.status_code == 200, r.text
        yield client


@asynccontextmanager
async def _stream(client: httpx.AsyncClient) -> AsyncIterator[httpx.Response]:
    """An open ``GET /stream`` (its first line read); closed on leaving."""
    async with client.stream("GET", "/stream") as response:
        assert response.status_code == 200
        lines = response.aiter_lines()
        assert (await anext(lines)).startswith("retry:")
        yield response


async def _routed_world(
    session: AsyncSession, http: httpx.AsyncClient, office: OfficeFixture
) -> tuple[str, str, str]:
    """An inbox routed ROUND_ROBIN, its channel and a client: (inbox, integration, contact)."""
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id, name="Cliente Fila", phone="+5511988887777")
    await session.commit()
    r = await http.patch(
        f"/inbox/{inbox.id}",
        json={"assignment": {"policy": "ROUND_ROBIN"}},
        headers=office.headers,
    )
    assert r.status_code == 200, r.text
    return inbox.id, integration.id, contact.id


async def test_opening_the_console_makes_a_user_online_and_takes_queued_conversations(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    async with httpx.AsyncClient(base_url=server_url, timeout=WAIT) as http:
        inbox_id, integration_id, contact_id = await _routed_world(session, http, office_a)
        user_id, email = await _agent(http, office_a, inbox_id)
        r = await http.post(
            "/conversation",
            json={"personId": contact_id, "inboxId": inbox_id, "integrationId": integration_id},
            headers=office_a.headers,
        )
        assert r.status_code == 201, r.text
        waiting = r.json()
        assert waiting["assignedUserId"] is None  # nobody ONLINE: it queues
        async with _console(server_url, email) as console, _stream(console):
            assert await _availability(http, office_a, user_id) == "ONLINE"
            r = await http.get(f"/conversation/{waiting['id']}", headers=office_a.headers)
            assert r.json()["assignedUserId"] == user_id


async def test_the_last_stream_closing_makes_the_user_offline_after_the_grace(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=WAIT) as http:
        user_id, email = await _agent(http, office_a, inbox.id)
        async with _console(server_url, email) as console:
            async with _stream(console):
                async with _stream(console):
                    assert await _availability(http, office_a, user_id) == "ONLINE"
                # One of two closed, the grace long past: the other keeps the user present.
                later = utcnow() + timedelta(minutes=10)
                settings = app.state.settings
                async with app.state.sessionmaker() as s, s.begin():
                    assert not await presence.leave(
                        s,
                        office_a.id,
                        user_id,
                        later,
                        timedelta(seconds=settings.presence_grace_seconds),
                        timedelta(hours=1),
                    )
                assert await _availability(http, office_a, user_id) == "ONLINE"

            async def offline() -> bool:
                return await _availability(http, office_a, user_id) == "OFFLINE"

            await _until(offline)
        async with app.state.sessionmaker() as s:
            rows = await s.scalars(select(UserPresence).where(UserPresence.user_id == user_id))
            assert rows.all() == []


async def test_a_hand_set_availability_holds_while_the_console_stays_open(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    tracker: PresenceTracker = app.state.presence
    # A long grace: a reload is well within it, whatever the machine's speed.
    tracker.settings = app.state.settings.model_copy(update={"presence_grace_seconds": 600})
    async with httpx.AsyncClient(base_url=server_url, timeout=WAIT) as http:
        user_id, email = await _agent(http, office_a, inbox.id)
        async with _console(server_url, email) as console:
            async with _stream(console):
                assert await _availability(http, office_a, user_id) == "ONLINE"
                # Set by hand (an ADMIN's change: users are theirs to change).
                r = await http.patch(
                    f"/user/{user_id}", json={"availability": "AWAY"}, headers=office_a.headers
                )
                assert r.status_code == 200, r.text
            # A reload: the stream closes and opens again within the grace.
            async with _stream(console):
                assert await _availability(http, office_a, user_id) == "AWAY"
    # Presence ends (the grace passed by the sweep's clock): OFFLINE.
    later = utcnow() + timedelta(seconds=601)
    ctx = WorkerContext(
        tracker.settings, app.state.engine, app.state.sessionmaker, clock=lambda: later
    )
    assert await sweep(ctx) == 1
    async with httpx.AsyncClient(base_url=server_url, timeout=WAIT) as http:
        assert await _availability(http, office_a, user_id) == "OFFLINE"


async def test_a_stream_of_a_process_that_died_is_swept_and_keys_make_no_presence(
    app: FastAPI, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    settings: Settings = app.state.settings
    async with httpx.AsyncClient(base_url=server_url, timeout=WAIT) as http:
        user_id, _ = await _agent(http, office_a, inbox.id)
        # A row left open by a process that stopped refreshing it.
        opened_at = utcnow() - stale_after(settings) - timedelta(seconds=5)
        async with app.state.sessionmaker() as s, s.begin():
            await presence.opened(
                s, office_a.id, user_id, opened_at, timedelta(seconds=1), stale_after(settings)
            )
        assert await _availability(http, office_a, user_id) == "ONLINE"
        ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
        assert await sweep(ctx) == 1
        assert await _availability(http, office_a, user_id) == "OFFLINE"
        # An API key's stream is no one's presence.
        async with http.stream("GET", "/stream", headers=office_a.headers) as r:
            assert r.status_code == 200
        async with app.state.sessionmaker() as s:
            assert (await s.scalars(select(UserPresence))).all() == []
