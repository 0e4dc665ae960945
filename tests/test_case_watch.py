"""The case watcher against a local DataJud stand-in: new movements found, stored once and
announced once; politeness (429, a court down); the client told through a rule; the flow
step listing the movements."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta
from email.utils import format_datetime
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.consumer import AUTOMATION
from officehub.cases.models import Case
from officehub.cases.numbers import check_digits
from officehub.cases.watch import BREAKER_THRESHOLD, MAX_TRIES, WATCH_JOB, Watcher
from officehub.events.catalogue import BY_NAME
from officehub.events.consumers import consumer_job
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages.models import Message
from tests import factories as f
from tests.automation_helpers import create_rule
from tests.crm_world import World, make_world
from tests.datajud_standin import API_KEY, Reply, movement, running_datajud
from tests.helpers import OfficeFixture, outbox
from tests.test_cli import officehub
from tests.test_flow_runtime import create_flow, inbound, outbound, system, work
from tests.webhook_helpers import Clock

TJSP = "1009131-52.2024.8.26.0224"
TJSP_DIGITS = "10091315220248260224"
DISTRIBUTED = movement(26, "Distribuição", "2024-05-10T14:22:31.000Z", "sorteio")
PETITION = movement(85, "Petição", "2026-01-05T09:30:00.000Z", "Petição (outras)")
HEARING = movement(970, "Audiência", "20260112150000")


def ctx_for(app: FastAPI, settings: Settings, clock: Clock | None = None) -> WorkerContext:
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    if clock is not None:
        ctx.clock = clock
    return ctx


async def no_sleep(_seconds: float) -> None:
    return None


async def add_case(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    person_id: str,
    number: str = TJSP,
    **more: Any,
) -> dict[str, Any]:
    r = await client.post(
        "/cases", json={"number": number, "personId": person_id, **more}, headers=office.headers
    )
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


async def sync(app: FastAPI, settings: Settings, watcher: Watcher, case_id: str) -> None:
    await watcher.run(ctx_for(app, settings), only_case=case_id)


async def test_a_sync_stores_history_then_announces_two_new_movements_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    w: World = await make_world(session, office_a.id)
    await session.commit()
    h = office_a.headers
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        watcher = Watcher(sleep=no_sleep)
        case = await add_case(client, office_a, w.contact.id)
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED)
        await sync(app, conf, watcher, case["id"])
        # the history the first answer brings is stored, not announced
        assert await outbox(app, office_a.id, "case.movement.created") == []
        datajud.add("tjsp", TJSP_DIGITS, PETITION, HEARING)
        await sync(app, conf, watcher, case["id"])
        await sync(app, conf, watcher, case["id"])
        assert datajud.requests == [("tjsp", TJSP_DIGITS)] * 3
    events = await outbox(app, office_a.id, "case.movement.created")
    assert [e.data["description"] for e in events] == ["Petição - Petição (outras)", "Audiência"]
    assert {e.conversation_id for e in events} == {w.conversation.id}
    assert set(events[0].data) == set(BY_NAME["case.movement.created"].example)
    assert events[1].data["occurredAt"] == "2026-01-12T15:00:00.000Z"
    assert events[0].data["caseNumber"] == TJSP and events[0].data["code"] == 85
    updated = await outbox(app, office_a.id, "case.updated")
    assert [e.data["changes"] for e in updated] == [["movements", "checkStatus"], ["movements"]]
    assert set(updated[0].data) == set(BY_NAME["case.updated"].example)
    r = await client.get(f"/cases/{case['id']}/movements", headers=h)
    assert [m["code"] for m in r.json()["data"]] == [970, 85, 26]
    assert r.json()["totalResults"] == 3
    r = await client.get(f"/cases/{case['id']}", headers=h)
    assert r.json()["checkStatus"] == "OK"
    assert r.json()["lastMovementAt"] == "2026-01-12T15:00:00.000Z"
    # the recorded-movements list shows them too
    r = await client.get("/case-movements", params={"personId": w.contact.id}, headers=h)
    assert r.json()["totalResults"] == 3


async def test_an_unknown_number_is_not_found_and_emits_no_movement(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    async with running_datajud() as datajud:
        case = await add_case(client, office_a, contact.id)
        await sync(app, datajud.settings(settings), Watcher(sleep=no_sleep), case["id"])
    r = await client.get(f"/cases/{case['id']}", headers=office_a.headers)
    assert r.json()["checkStatus"] == "NOT_FOUND" and r.json()["lastCheckedAt"] is not None
    assert await outbox(app, office_a.id, "case.movement.created") == []


async def test_a_429_then_success_honours_retry_after(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    async with running_datajud() as datajud:
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED)
        datajud.script["tjsp"] = [Reply(429, {"Retry-After": "7"}), Reply(502)]
        case = await add_case(client, office_a, contact.id)
        await sync(app, datajud.settings(settings), Watcher(sleep=sleep), case["id"])
        assert datajud.asked("tjsp") == 3
    assert waits[0] == 7.0 and len(waits) == 2 and 0 < waits[1] <= 30
    r = await client.get(f"/cases/{case['id']}", headers=office_a.headers)
    assert r.json()["checkStatus"] == "OK"
    assert (await client.get(f"/cases/{case['id']}/movements", headers=office_a.headers)).json()[
        "totalResults"
    ] == 1


async def test_a_retry_after_given_as_an_http_date_without_a_zone_is_read_as_utc(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """RFC 9110 lets ``Retry-After`` be an HTTP date; one ending ``-0000`` parses with no
    zone. It is UTC: the wait is the seconds to it (once a TypeError that ended the pass)."""
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    when = format_datetime(utcnow().replace(microsecond=0) + timedelta(seconds=20))
    async with running_datajud() as datajud:
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED)
        datajud.script["tjsp"] = [Reply(429, {"Retry-After": when.replace("+0000", "-0000")})]
        case = await add_case(client, office_a, contact.id)
        await sync(app, datajud.settings(settings), Watcher(sleep=sleep), case["id"])
        assert datajud.asked("tjsp") == 2
    assert len(waits) == 1 and 10 < waits[0] <= 20
    r = await client.get(f"/cases/{case['id']}", headers=office_a.headers)
    assert r.json()["checkStatus"] == "OK"


async def test_a_court_down_does_not_hold_up_the_others(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    down = [
        add_case(
            client,
            office_a,
            contact.id,
            f"{i:07d}-{check_digits(f'{i:07d}', '2025', '4', '01', '3400')}.2025.4.01.3400",
        )
        for i in range(1, 11)
    ]
    trf1 = [await c for c in down]
    async with running_datajud() as datajud:
        datajud.down.add("trf1")
        datajud.delay = 0.05
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED)
        tjsp = await add_case(client, office_a, contact.id)
        watcher = Watcher(sleep=no_sleep)
        report = await watcher.run(
            ctx_for(app, datajud.settings(settings)), only_office=office_a.id
        )
        # the breaker opened after BREAKER_THRESHOLD failed cases: the rest were put off
        assert report.checked == 1 + report.failed and report.put_off >= 1
        assert report.failed <= BREAKER_THRESHOLD + 1
        assert datajud.asked("trf1") <= (BREAKER_THRESHOLD + 1) * MAX_TRIES
        assert datajud.asked("tjsp") == 1
    r = await client.get(f"/cases/{tjsp['id']}", headers=office_a.headers)
    assert r.json()["checkStatus"] == "OK"
    statuses = [
        (await client.get(f"/cases/{c['id']}", headers=office_a.headers)).json()["checkStatus"]
        for c in trf1
    ]
    assert statuses.count("ERROR") == report.failed and statuses.count(None) == report.put_off
    later = utcnow() + timedelta(minutes=1)
    for c in trf1:
        r = await client.get(f"/cases/{c['id']}", headers=office_a.headers)
        assert r.json()["nextCheckAt"] > later.isoformat()


async def test_the_periodic_job_checks_due_cases_only_and_spreads_the_next_check(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """Cases checked in the same run are next due the interval later give or take 10 %,
    each at its own moment (not all at once an hour later)."""
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    clock = Clock()
    numbers = [TJSP] + [
        f"{i:07d}-{check_digits(f'{i:07d}', '2024', '8', '26', '0224')}.2024.8.26.0224"
        for i in range(1, 5)
    ]
    async with running_datajud() as datajud:
        conf = datajud.settings(settings, datajud_interval_seconds=3600)
        for number in numbers:
            datajud.add("tjsp", "".join(c for c in number if c.isdigit()), DISTRIBUTED)
        cases = [await add_case(client, office_a, contact.id, number) for number in numbers]
        worker = Worker(ctx_for(app, conf, clock), [], [WATCH_JOB])
        await worker.run_once()  # within the first minute's spread: maybe not due yet
        clock.advance(minutes=2)
        worker._periodic_checked = None
        clock.advance(seconds=WATCH_JOB.interval.total_seconds())
        await worker.run_once()
        assert datajud.asked("tjsp") == len(cases)
        checked_at = clock.now
        clock.advance(minutes=30)
        worker._periodic_checked = None
        await worker.run_once()
        assert datajud.asked("tjsp") == len(cases)  # not due for about an hour
    nexts = []
    for case in cases:
        r = await client.get(f"/cases/{case['id']}", headers=office_a.headers)
        assert r.json()["checkStatus"] == "OK" and r.json()["lastCheckedAt"] is not None
        nexts.append(datetime.fromisoformat(r.json()["nextCheckAt"]))
    for at in nexts:
        assert checked_at + timedelta(minutes=54) <= at <= checked_at + timedelta(minutes=66)
    assert len(set(nexts)) == len(nexts)  # spread: no two at the same moment
    assert max(nexts) - min(nexts) > timedelta(seconds=1)


async def test_a_rule_sends_the_client_a_template_on_a_new_movement(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    w: World = await make_world(session, office_a.id)
    official = await f.make_integration(
        session, office_a.id, w.inbox.id, "WHATSAPP_OFFICIAL", device_id="5511900000009"
    )
    conversation = await f.make_conversation(session, office_a.id, w.contact.id, official)
    await session.commit()
    h = office_a.headers
    template = {
        "name": "movimentacao_processo",
        "status": "APPROVED",
        "category": "UTILITY",
        "language": "pt_BR",
        "components": [{"type": "BODY", "text": "Seu processo teve uma nova movimentação: {{1}}"}],
        "id": "tpl-movimentacao",
    }
    r = await client.put(
        f"/integration/{official.id}/whatsapp-templates", json={"data": [template]}, headers=h
    )
    assert r.status_code == 200, r.text
    rule = await create_rule(
        client,
        office_a,
        triggerEvent="case.movement.created",
        actions=[
            {"action": "SEND_FAST_MESSAGE", "actionParams": {"templateName": template["name"]}}
        ],
    )
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        watcher = Watcher(sleep=no_sleep)
        case = await add_case(client, office_a, w.contact.id, conversationId=conversation.id)
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED)
        await sync(app, conf, watcher, case["id"])
        datajud.add("tjsp", TJSP_DIGITS, PETITION)
        await sync(app, conf, watcher, case["id"])
    ctx = ctx_for(app, settings)
    await Worker(ctx, [consumer_job(AUTOMATION)]).run_until_idle()
    r = await client.get(f"/conversation/{conversation.id}/messages", headers=h)
    sent = [m for m in r.json()["data"] if m["direction"] == "OUTBOUND"]
    assert len(sent) == 1, r.json()
    assert sent[0]["type"] == "TEMPLATE" and sent[0]["templateName"] == template["name"]
    assert sent[0]["status"] == "QUEUED"
    async with app.state.sessionmaker() as s:
        stored = await s.scalar(select(Message).where(Message.id == sent[0]["id"]))
        assert stored is not None
        assert stored.payload["variables"] == ["Petição - Petição (outras)"]
    r = await client.get(f"/automation-rules/{rule['id']}/runs", headers=h)
    assert [run["branch"] for run in r.json()["data"]] == ["then"]


async def test_the_flow_step_lists_the_contacts_cases_movements(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    w: World = await make_world(session, office_a.id)
    await session.commit()
    async with running_datajud() as datajud:
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED, PETITION)
        case = await add_case(client, office_a, w.contact.id)
        await sync(app, datajud.settings(settings), Watcher(sleep=no_sleep), case["id"])
    steps = [system("s1", "SEARCH_MOVEMENTS", {}, None)]
    await create_flow(client, office_a, w.inbox.id, steps)
    await inbound(client, office_a, w.conversation.id, "Oi")
    await work(app, settings)
    assert await outbound(client, office_a, w.conversation.id) == [
        "Movimentações encontradas:\n"
        f"05/01/2026 - {TJSP}: Petição - Petição (outras)\n"
        f"10/05/2024 - {TJSP}: Distribuição - sorteio"
    ]


async def test_another_offices_watch_is_not_touched_by_a_sync_by_office(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    a = await f.make_contact(session, office_a.id)
    b = await f.make_contact(session, office_b.id)
    await session.commit()
    async with running_datajud() as datajud:
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED)
        mine = await add_case(client, office_a, a.id)
        theirs = await add_case(client, office_b, b.id)
        report = await Watcher(sleep=no_sleep).run(
            ctx_for(app, datajud.settings(settings)), only_office=office_a.id
        )
        assert report.checked == 1
    assert (await client.get(f"/cases/{mine['id']}", headers=office_a.headers)).json()[
        "checkStatus"
    ] == "OK"
    r = await client.get(f"/cases/{theirs['id']}", headers=office_b.headers)
    assert r.json()["checkStatus"] is None
    r = await client.get(f"/cases/{mine['id']}/movements", headers=office_b.headers)
    assert r.status_code == 404


async def test_cases_sync_command_checks_a_case_now(
    database_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    case = await add_case(client, office_a, contact.id)
    async with running_datajud() as datajud:
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED, PETITION)
        env = {
            **os.environ,
            "OFFICEHUB_DATAJUD_URL": datajud.url,
            "OFFICEHUB_DATAJUD_API_KEY": API_KEY,
        }
        done = await officehub(
            database_url, "cases", "sync", "--case", case["id"], "--json", env=env
        )
        assert json.loads(done.stdout) == {
            "checked": 1,
            "newMovements": 2,
            "notFound": 0,
            "failed": 0,
            "putOff": 0,
        }, done.stderr
        datajud.down.add("tjsp")
        failed = await officehub(
            database_url, "cases", "sync", "--case", case["id"], "--json", env=env
        )
        assert failed.returncode == 1 and json.loads(failed.stdout)["failed"] == 1
        missing = await officehub(
            database_url, "cases", "sync", "--case", "cnotacase0000000000000000", env=env
        )
        assert missing.returncode == 1 and "checked: 0" in missing.stdout
    r = await client.get(f"/cases/{case['id']}/movements", headers=office_a.headers)
    assert r.json()["totalResults"] == 2


async def test_cases_sync_with_no_option_also_checks_cases_never_checked_yet(
    database_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    case = await add_case(client, office_a, contact.id)
    async with session.begin():  # its first check is spread over a minute: not due yet
        await session.execute(
            update(Case)
            .where(Case.id == case["id"])
            .values(next_check_at=utcnow() + timedelta(seconds=50))
        )
    async with running_datajud() as datajud:
        datajud.add("tjsp", TJSP_DIGITS, DISTRIBUTED, PETITION)
        env = {
            **os.environ,
            "OFFICEHUB_DATAJUD_URL": datajud.url,
            "OFFICEHUB_DATAJUD_API_KEY": API_KEY,
        }
        done = await officehub(database_url, "cases", "sync", "--json", env=env)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["checked"] == 1
        again = await officehub(database_url, "cases", "sync", "--json", env=env)
        assert json.loads(again.stdout)["checked"] == 0  # checked once: due in 6 hours
    r = await client.get(f"/cases/{case['id']}", headers=office_a.headers)
    assert r.json()["checkStatus"] == "OK"
