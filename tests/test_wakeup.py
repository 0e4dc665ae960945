"""Waking what waits for events (``kit.wakeup``): the live streams' hub, the workers and the
web chat visitors' streams are woken once the transaction that emitted commits, not before
(a savepoint released is no commit) and not never (a savepoint rolled back keeps what the
transaction emitted before it).

Before this was held, a WhatsApp delivery status (applied in a savepoint) woke the hub at
the savepoint's release, when nothing was committed yet, and nothing after the commit: on
SQLite the console showed "Entregue" only at the hub's safety read, 30 s later (the reason
the browser tests waited 35 s for live events)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.service import emit
from officehub.kit import wakeup
from officehub.live.hub import SAFETY_READ_SECONDS
from tests.helpers import OfficeFixture
from tests.test_stream import opened, served
from tests.whatsapp_fixtures import fixture, sent_message
from tests.whatsapp_world import official_integration, post_notification

WAKE = 5.0
"""Far below the hub's safety read: an event that waits for that read fails here."""
assert WAKE < SAFETY_READ_SECONDS / 2


@contextlib.contextmanager
def woken() -> Iterator[asyncio.Event]:
    signal = asyncio.Event()
    wakeup.subscribe(signal)
    try:
        yield signal
    finally:
        wakeup.unsubscribe(signal)


async def test_an_event_emitted_in_a_savepoint_wakes_at_the_commit_not_at_the_release(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    with woken() as signal:
        async with app.state.sessionmaker() as s:
            async with s.begin_nested():
                await emit(s, office_a.id, "contact.created", {"n": 1})
            assert not signal.is_set(), "woken when only a savepoint was released"
            await emit(s, office_a.id, "contact.created", {"n": 2})
            await s.commit()
        assert signal.is_set()


async def test_a_savepoint_rolled_back_keeps_the_wake_of_what_was_emitted_before_it(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    with woken() as signal:
        async with app.state.sessionmaker() as s:
            await emit(s, office_a.id, "contact.created", {"n": 1})
            with contextlib.suppress(LookupError):
                async with s.begin_nested():
                    await emit(s, office_a.id, "contact.created", {"n": 2})
                    raise LookupError("the savepoint's work fails")
            await s.commit()
        assert signal.is_set()


async def test_a_transaction_that_emitted_nothing_wakes_no_one(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    with woken() as signal:
        async with app.state.sessionmaker() as s:
            async with s.begin_nested():
                pass
            await s.commit()
        assert not signal.is_set()


@contextlib.asynccontextmanager
async def _official_world(
    database_url: str, tmp_path: Path, session: AsyncSession, office: OfficeFixture
) -> AsyncIterator[tuple[httpx.AsyncClient, str]]:
    integration = await official_integration(session, office.id)
    await sent_message(session, integration)
    await session.commit()
    async with served(database_url, tmp_path) as (_app, http):
        yield http, integration.id


async def test_a_delivery_status_reaches_an_open_stream_at_once(
    database_url: str, tmp_path: Path, session: AsyncSession, office_a: OfficeFixture
) -> None:
    async with _official_world(database_url, tmp_path, session, office_a) as (http, ident):
        async with opened(http, office_a) as stream:
            answer = await post_notification(http, ident, fixture("status/delivered.json"))
            assert answer.status_code == 200, answer.text
            changed = await stream.next(wait=WAKE)
            assert changed.event == "chat.message.status"
            assert changed.data["data"]["status"] == "DELIVERED"
