"""A stale source (issue 31): a watched case DataJud has given no usable answer for a day
makes ``case.source.stale`` once, shows ``sourceStaleSince``, and its next answer makes
``case.source.recovered``. Time is the watcher's injected clock; DataJud is the stand-in."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.consumer import AUTOMATION
from officehub.cases.watch import Watcher
from officehub.events.catalogue import BY_NAME
from officehub.events.consumers import consumer_job
from officehub.kit.config import Settings
from officehub.kit.worker import Worker
from tests import factories as f
from tests.automation_helpers import create_rule, runs
from tests.crm_world import World, make_world
from tests.datajud_standin import DataJud, running_datajud
from tests.helpers import OfficeFixture, outbox
from tests.test_case_watch import DISTRIBUTED, TJSP_DIGITS, add_case, ctx_for, no_sleep
from tests.webhook_helpers import Clock


async def check(app: FastAPI, conf: Settings, watcher: Watcher, clock: Clock, case_id: str) -> None:
    await watcher.run(ctx_for(app, conf, clock), only_case=case_id)


async def read(client: httpx.AsyncClient, office: OfficeFixture, case_id: str) -> dict[str, Any]:
    r = await client.get(f"/cases/{case_id}", headers=office.headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def watched(
    client: httpx.AsyncClient, office: OfficeFixture, person_id: str, datajud: DataJud
) -> dict[str, Any]:
    datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED)
    return await add_case(client, office, person_id)


async def test_a_source_silent_for_a_day_makes_case_source_stale_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    clock, watcher = Clock(), Watcher(sleep=no_sleep)
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        case = await watched(client, office_a, contact.id, datajud)
        await check(app, conf, watcher, clock, case["id"])  # the history, OK
        datajud.down.add("tjsp")
        first_failure = clock.now + timedelta(hours=6)
        clock.now = first_failure
        await check(app, conf, watcher, clock, case["id"])
        clock.advance(hours=12)
        await check(app, conf, watcher, clock, case["id"])
        clock.advance(hours=11, minutes=59)
        await check(app, conf, watcher, clock, case["id"])
        # a day less a minute of failures: not stale yet
        assert await outbox(app, office_a.id, "case.source.stale") == []
        assert (await read(client, office_a, case["id"]))["sourceStaleSince"] is None
        clock.advance(minutes=1)
        stale_at = clock.now
        await check(app, conf, watcher, clock, case["id"])
        for _ in range(3):  # the failures go on: no second event
            clock.advance(minutes=30)
            await check(app, conf, watcher, clock, case["id"])
    [event] = await outbox(app, office_a.id, "case.source.stale")
    assert set(event.data) == set(BY_NAME["case.source.stale"].example)
    assert event.data["failingSince"] == first_failure.isoformat(timespec="milliseconds").replace(
        "+00:00", "Z"
    )
    assert event.data["error"] == "HTTP 503" and event.data["checkStatus"] == "ERROR"
    body = await read(client, office_a, case["id"])
    assert body["sourceStaleSince"] == event.data["sourceStaleSince"]
    assert body["sourceStaleSince"].startswith(stale_at.strftime("%Y-%m-%dT%H:%M"))
    updated = await outbox(app, office_a.id, "case.updated")
    assert ["sourceStaleSince" in e.data["changes"] for e in updated].count(True) == 1


async def test_the_next_answer_recovers_the_source_and_a_new_silence_is_stale_again(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    clock, watcher = Clock(), Watcher(sleep=no_sleep)
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        case = await watched(client, office_a, contact.id, datajud)
        await check(app, conf, watcher, clock, case["id"])
        datajud.down.add("tjsp")
        for _ in range(3):
            clock.advance(hours=12)
            await check(app, conf, watcher, clock, case["id"])
        stale_since = (await read(client, office_a, case["id"]))["sourceStaleSince"]
        assert stale_since is not None
        datajud.down.discard("tjsp")
        clock.advance(hours=1)
        await check(app, conf, watcher, clock, case["id"])
        [recovered] = await outbox(app, office_a.id, "case.source.recovered")
        assert set(recovered.data) == set(BY_NAME["case.source.recovered"].example)
        assert recovered.data["staleFrom"] == stale_since
        assert recovered.data["sourceStaleSince"] is None
        assert recovered.data["checkStatus"] == "OK"
        assert (await read(client, office_a, case["id"]))["sourceStaleSince"] is None
        # it answers for a while, then goes silent again: a second stale, a day later
        clock.advance(hours=6)
        await check(app, conf, watcher, clock, case["id"])
        datajud.down.add("tjsp")
        clock.advance(hours=6)
        await check(app, conf, watcher, clock, case["id"])
        clock.advance(hours=23)
        await check(app, conf, watcher, clock, case["id"])
        assert len(await outbox(app, office_a.id, "case.source.stale")) == 1
        clock.advance(hours=1)
        await check(app, conf, watcher, clock, case["id"])
    assert len(await outbox(app, office_a.id, "case.source.stale")) == 2
    assert len(await outbox(app, office_a.id, "case.source.recovered")) == 1


async def test_failures_shorter_than_a_day_between_answers_are_never_stale(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """The silence is counted from the first failure after an answer: an answer in between
    starts it again."""
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    clock, watcher = Clock(), Watcher(sleep=no_sleep)
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        case = await watched(client, office_a, contact.id, datajud)
        for _ in range(4):
            datajud.down.add("tjsp")
            for _ in range(2):
                await check(app, conf, watcher, clock, case["id"])
                clock.advance(hours=12)
            datajud.down.discard("tjsp")
            await check(app, conf, watcher, clock, case["id"])
    assert await outbox(app, office_a.id, "case.source.stale") == []
    assert await outbox(app, office_a.id, "case.source.recovered") == []


async def test_the_stale_setting_shortens_the_silence(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    clock, watcher = Clock(), Watcher(sleep=no_sleep)
    async with running_datajud() as datajud:
        conf = datajud.settings(settings, datajud_stale_after_seconds=3600)
        case = await watched(client, office_a, contact.id, datajud)
        datajud.down.add("tjsp")
        await check(app, conf, watcher, clock, case["id"])
        clock.advance(hours=1)
        await check(app, conf, watcher, clock, case["id"])
    assert len(await outbox(app, office_a.id, "case.source.stale")) == 1


async def test_unwatching_a_stale_case_clears_it_and_rewatching_starts_afresh(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    clock, watcher = Clock(), Watcher(sleep=no_sleep)
    h = office_a.headers
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        case = await watched(client, office_a, contact.id, datajud)
        datajud.down.add("tjsp")
        await check(app, conf, watcher, clock, case["id"])
        clock.advance(hours=24)
        await check(app, conf, watcher, clock, case["id"])
        assert (await read(client, office_a, case["id"]))["sourceStaleSince"] is not None
        r = await client.patch(f"/cases/{case['id']}", json={"watch": False}, headers=h)
        assert r.status_code == 200 and r.json()["sourceStaleSince"] is None
        r = await client.patch(f"/cases/{case['id']}", json={"watch": True}, headers=h)
        assert r.status_code == 200
        clock.advance(hours=1)
        await check(app, conf, watcher, clock, case["id"])  # a first failure again
    assert (await read(client, office_a, case["id"]))["sourceStaleSince"] is None
    assert len(await outbox(app, office_a.id, "case.source.stale")) == 1
    assert await outbox(app, office_a.id, "case.source.recovered") == []


async def test_a_stale_source_triggers_an_automation_rule_on_the_cases_conversation(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    w: World = await make_world(session, office_a.id)
    await session.commit()
    h = office_a.headers
    rule = await create_rule(
        client,
        office_a,
        triggerEvent="case.source.stale",
        actions=[{"action": "TAG_CONVERSATION", "actionParams": {"tagId": w.tag.id}}],
    )
    clock, watcher = Clock(), Watcher(sleep=no_sleep)
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        case = await watched(client, office_a, w.contact.id, datajud)
        datajud.down.add("tjsp")
        await check(app, conf, watcher, clock, case["id"])
        clock.advance(hours=24)
        await check(app, conf, watcher, clock, case["id"])
    [event] = await outbox(app, office_a.id, "case.source.stale")
    assert event.conversation_id == w.conversation.id
    await Worker(ctx_for(app, settings), [consumer_job(AUTOMATION)]).run_until_idle()
    assert [run["branch"] for run in await runs(client, office_a, rule["id"])] == ["then"]
    r = await client.get(f"/conversation/{w.conversation.id}", headers=h)
    assert w.tag.id in {t["id"] for t in r.json()["tags"]}


async def test_two_watchers_checking_a_silent_case_at_once_make_one_stale_event(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """Two workers (or a worker and ``cases sync --case``) asking at the same moment: the
    case's claim and its row, locked by the first write before it is read, let one record
    the stale moment; the silence is reported once."""
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    clock = Clock()
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        case = await watched(client, office_a, contact.id, datajud)
        datajud.down.add("tjsp")
        await check(app, conf, Watcher(sleep=no_sleep), clock, case["id"])
        clock.advance(hours=25)
        datajud.delay = 0.05  # both claims are taken before either answer is recorded
        await asyncio.gather(
            *(check(app, conf, Watcher(sleep=no_sleep), clock, case["id"]) for _ in range(2))
        )
    assert len(await outbox(app, office_a.id, "case.source.stale")) == 1
