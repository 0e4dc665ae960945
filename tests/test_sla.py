"""Service levels (issue 32): SLA policies, the due times counted within business hours,
the times kept for reports, and ``chat.sla.breached`` from the worker's periodic job."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, expect
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import sla
from officehub.conversations.models import Conversation
from officehub.conversations.repository import sla_due
from officehub.conversations.sla_breaches import SLA_BREACH_JOB, report_breaches
from officehub.inboxes.business_hours import Hours, add_business_days, add_business_minutes
from officehub.jobs import periodic_jobs
from officehub.kit.config import Settings
from officehub.kit.timeutil import as_utc, isoformat, utcnow
from officehub.kit.worker import WorkerContext
from officehub.sla.rules import applicable
from tests import factories as f
from tests.automation_helpers import create_rule
from tests.browser import new_page
from tests.helpers import OfficeFixture, error_of, outbox
from tests.test_console_browser import TIMEOUT, log_in_in_portuguese

SP = "America/Sao_Paulo"
WEEKDAYS = [{"day": d, "open": "09:00", "close": "18:00"} for d in range(5)]
BREACHED = "chat.sla.breached"


def _at(year: int, month: int, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=ZoneInfo(SP)).astimezone(UTC)


def _hours(**extra: Any) -> Hours:
    return Hours.of({"timezone": SP, "week": WEEKDAYS, **extra})


# The pure rules: due times within business hours.


def test_friday_17_55_with_ten_minutes_and_closing_at_18_is_due_monday_09_05() -> None:
    friday = _at(2026, 11, 27, 17, 55)
    assert friday.astimezone(ZoneInfo(SP)).weekday() == 4
    assert add_business_minutes(_hours(), friday, 10) == _at(2026, 11, 30, 9, 5)


def test_a_national_holiday_is_skipped() -> None:
    # Friday 2026-11-20 is a national holiday: Thursday 17:55 + 10 min is Monday 09:05.
    assert add_business_minutes(_hours(), _at(2026, 11, 19, 17, 55), 10) == _at(2026, 11, 23, 9, 5)
    # And a date of closedDates, and a holiday made open by openDates.
    closed = _hours(closedDates=["2026-11-30"])
    assert add_business_minutes(closed, _at(2026, 11, 27, 17, 55), 10) == _at(2026, 12, 1, 9, 5)
    opened = _hours(openDates=["2026-11-20"])
    assert add_business_minutes(opened, _at(2026, 11, 19, 17, 55), 10) == _at(2026, 11, 20, 9, 5)


def test_minutes_before_opening_start_at_the_opening_and_span_several_days() -> None:
    assert add_business_minutes(_hours(), _at(2026, 11, 23, 7, 0), 30) == _at(2026, 11, 23, 9, 30)
    # 9 h a day: 20 h from Monday 09:00 is Wednesday 11:00.
    assert add_business_minutes(_hours(), _at(2026, 11, 23, 9, 0), 20 * 60) == _at(
        2026, 11, 25, 11, 0
    )
    assert (
        add_business_minutes(Hours.of({"timezone": SP, "week": []}), _at(2026, 11, 23, 9), 1)
        is None
    )


def test_resolution_business_days_end_at_the_close_of_the_nth_open_day() -> None:
    # Opened Friday 17:55: one business day is Monday's close; three skip nothing else.
    assert add_business_days(_hours(), _at(2026, 11, 27, 17, 55), 1) == _at(2026, 11, 30, 18, 0)
    assert add_business_days(_hours(), _at(2026, 11, 27, 17, 55), 3) == _at(2026, 12, 2, 18, 0)
    # Thursday 19th + 1: Friday 20th is a holiday, so Monday 23rd.
    assert add_business_days(_hours(), _at(2026, 11, 19, 10, 0), 1) == _at(2026, 11, 23, 18, 0)


def test_an_inbox_without_business_hours_counts_around_the_clock() -> None:
    start = _at(2026, 11, 27, 17, 55)
    assert add_business_minutes(None, start, 10) == start + timedelta(minutes=10)
    assert add_business_days(None, start, 2) == start + timedelta(days=2)


@dataclass
class _P:
    name: str
    priority: str | None = None
    legal_area_id: str | None = None


def test_the_most_specific_policy_applies_ties_by_oldest() -> None:
    inbox, high, area, high_area, area2 = (
        _P("inbox"),
        _P("high", priority="HIGH"),
        _P("area", legal_area_id="a1"),
        _P("high+area", priority="HIGH", legal_area_id="a1"),
        _P("area again", legal_area_id="a1"),
    )
    policies = [inbox, area, high, area2, high_area]  # oldest first
    assert applicable(policies, "HIGH", "a1") is high_area
    assert applicable(policies, "LOW", "a1") is area  # the oldest of equally specific ones
    assert applicable(policies, "HIGH", None) is high
    assert applicable(policies, "HIGH", "a2") is high
    assert applicable(policies, "LOW", None) is inbox
    assert applicable([high], "LOW", None) is None


# The world of the route tests.


@dataclass
class World:
    inbox_id: str
    integration_id: str
    people: list[str]


async def _world(session: AsyncSession, office: OfficeFixture, people: int = 1) -> World:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contacts = [
        await f.make_contact(session, office.id, name=f"Cliente {n}", phone=f"+55119876500{n:02d}")
        for n in range(people)
    ]
    await session.commit()
    return World(inbox.id, integration.id, [c.id for c in contacts])


async def _policy(
    client: httpx.AsyncClient, office: OfficeFixture, inbox_id: str, **extra: Any
) -> dict[str, Any]:
    body = {
        "inboxId": inbox_id,
        "firstResponseMinutes": 10,
        "nextResponseMinutes": 30,
        "resolutionBusinessDays": 2,
        **extra,
    }
    r = await client.post("/sla-policies", json=body, headers=office.headers)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


async def _open(
    client: httpx.AsyncClient, office: OfficeFixture, world: World, n: int = 0, **extra: Any
) -> dict[str, Any]:
    body = {
        "personId": world.people[n],
        "inboxId": world.inbox_id,
        "integrationId": world.integration_id,
        **extra,
    }
    r = await client.post("/conversation", json=body, headers=office.headers)
    assert r.status_code == 201, r.text
    opened: dict[str, Any] = r.json()
    return opened


async def _inbound(client: httpx.AsyncClient, office: OfficeFixture, cid: str) -> dict[str, Any]:
    r = await client.post(
        f"/conversation/{cid}/messages/inbound", json={"text": "Olá"}, headers=office.headers
    )
    assert r.status_code == 201, r.text
    message: dict[str, Any] = r.json()
    return message


async def _reply(client: httpx.AsyncClient, office: OfficeFixture, cid: str) -> dict[str, Any]:
    r = await client.post(
        f"/conversation/{cid}/messages", json={"text": "Bom dia!"}, headers=office.headers
    )
    assert r.status_code == 201, r.text
    message: dict[str, Any] = r.json()
    return message


async def _read(client: httpx.AsyncClient, office: OfficeFixture, cid: str) -> dict[str, Any]:
    r = await client.get(f"/conversation/{cid}", headers=office.headers)
    assert r.status_code == 200
    read: dict[str, Any] = r.json()
    return read


def _plus(stamp: str, **delta: float) -> str:
    at = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return isoformat(at + timedelta(**delta))


# Due times on a conversation, with the clock injected at the message.


async def test_a_conversation_opened_friday_17_55_is_due_monday_09_05(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    r = await client.put(
        f"/inbox/{world.inbox_id}/business-hours",
        json={"timezone": SP, "week": WEEKDAYS},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    policy = await _policy(client, office_a, world.inbox_id)
    opened = await _open(client, office_a, world)
    assert opened["sla"] == {
        "policyId": policy["id"],
        "firstResponseDueAt": None,
        "nextResponseDueAt": None,
        "resolutionDueAt": None,
        "breachedAt": None,
    }
    conversation = await session.scalar(select(Conversation).where(Conversation.id == opened["id"]))
    assert conversation is not None
    await sla.on_inbound(session, conversation, _at(2026, 11, 27, 17, 55))
    await session.commit()
    read = await _read(client, office_a, opened["id"])
    assert read["sla"]["firstResponseDueAt"] == isoformat(_at(2026, 11, 30, 9, 5))
    assert read["sla"]["resolutionDueAt"] == isoformat(_at(2026, 12, 1, 18, 0))
    assert read["firstInboundAt"] == isoformat(_at(2026, 11, 27, 17, 55))


async def test_a_holiday_is_skipped_on_a_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await client.put(
        f"/inbox/{world.inbox_id}/business-hours",
        json={"timezone": SP, "week": WEEKDAYS},
        headers=office_a.headers,
    )
    await _policy(client, office_a, world.inbox_id)
    opened = await _open(client, office_a, world)
    conversation = await session.scalar(select(Conversation).where(Conversation.id == opened["id"]))
    assert conversation is not None
    await sla.on_inbound(session, conversation, _at(2026, 11, 19, 17, 55))
    await session.commit()
    read = await _read(client, office_a, opened["id"])
    assert read["sla"]["firstResponseDueAt"] == isoformat(_at(2026, 11, 23, 9, 5))


async def test_sla_is_null_when_no_policy_applies(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await _policy(client, office_a, world.inbox_id, priority="HIGH")
    opened = await _open(client, office_a, world, priority="LOW")
    assert opened["sla"] is None
    await _inbound(client, office_a, opened["id"])
    read = await _read(client, office_a, opened["id"])
    assert read["sla"] is None
    assert read["firstInboundAt"] is not None  # the times are kept for reports anyway


async def test_an_inbox_without_business_hours_is_open_around_the_clock(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await _policy(client, office_a, world.inbox_id)
    opened = await _open(client, office_a, world)
    message = await _inbound(client, office_a, opened["id"])
    read = await _read(client, office_a, opened["id"])
    assert read["firstInboundAt"] == message["createdAt"]
    assert read["sla"]["firstResponseDueAt"] == _plus(message["createdAt"], minutes=10)
    assert read["sla"]["resolutionDueAt"] == _plus(message["createdAt"], days=2)
    assert read["sla"]["nextResponseDueAt"] is None


async def test_the_most_specific_policy_applies_to_a_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a, people=3)
    area = await f.make_legal_area(session, office_a.id)
    await session.commit()
    general = await _policy(client, office_a, world.inbox_id)
    high = await _policy(client, office_a, world.inbox_id, priority="HIGH")
    both = await _policy(client, office_a, world.inbox_id, priority="HIGH", legalAreaId=area.id)
    await _policy(client, office_a, world.inbox_id, priority="HIGH")  # younger tie: loses
    assert (await _open(client, office_a, world, 0))["sla"]["policyId"] == general["id"]
    assert (await _open(client, office_a, world, 1, priority="HIGH"))["sla"]["policyId"] == high[
        "id"
    ]
    third = await _open(client, office_a, world, 2, priority="HIGH", legalAreaId=area.id)
    assert third["sla"]["policyId"] == both["id"]


async def test_changing_priority_or_legal_area_recomputes_the_dues(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    area = await f.make_legal_area(session, office_a.id)
    await session.commit()
    await _policy(client, office_a, world.inbox_id)
    urgent = await _policy(
        client, office_a, world.inbox_id, priority="HIGH", firstResponseMinutes=5
    )
    by_area = await _policy(
        client, office_a, world.inbox_id, legalAreaId=area.id, firstResponseMinutes=60
    )
    opened = await _open(client, office_a, world)
    message = await _inbound(client, office_a, opened["id"])
    h, cid = office_a.headers, opened["id"]
    r = await client.patch(f"/conversation/{cid}", json={"priority": "HIGH"}, headers=h)
    assert r.json()["sla"]["policyId"] == urgent["id"]
    assert r.json()["sla"]["firstResponseDueAt"] == _plus(message["createdAt"], minutes=5)
    r = await client.patch(
        f"/conversation/{cid}", json={"priority": "LOW", "legalAreaId": area.id}, headers=h
    )
    assert r.json()["sla"]["policyId"] == by_area["id"]
    assert r.json()["sla"]["firstResponseDueAt"] == _plus(message["createdAt"], minutes=60)


async def test_a_priority_change_takes_the_oldest_of_equally_specific_policies_and_keeps_tags(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``PATCH``'s change reads the inbox's policies with the conversation's tags (one
    statement on PostgreSQL): the same choice as a read of the policies alone, the same
    tags in the answer."""
    world = await _world(session, office_a)
    tags = [await f.make_tag(session, office_a.id, world.inbox_id, n) for n in ("b", "a")]
    await session.commit()
    general = await _policy(client, office_a, world.inbox_id)
    high = await _policy(client, office_a, world.inbox_id, priority="HIGH", firstResponseMinutes=5)
    await _policy(client, office_a, world.inbox_id, priority="HIGH")  # younger tie: loses
    opened = await _open(client, office_a, world)
    message = await _inbound(client, office_a, opened["id"])
    h, url = office_a.headers, f"/conversation/{opened['id']}"
    r = await client.patch(url, json={"tags": [t.id for t in tags]}, headers=h)
    assert [t["name"] for t in r.json()["tags"]] == ["a", "b"]
    r = await client.patch(url, json={"priority": "HIGH"}, headers=h)
    assert r.json()["sla"]["policyId"] == high["id"]
    assert r.json()["sla"]["firstResponseDueAt"] == _plus(message["createdAt"], minutes=5)
    assert [t["name"] for t in r.json()["tags"]] == ["a", "b"]
    assert r.json() == await _read(client, office_a, opened["id"])
    r = await client.patch(url, json={"priority": "LOW"}, headers=h)
    assert r.json()["sla"]["policyId"] == general["id"]
    assert r.json()["sla"]["firstResponseDueAt"] == _plus(message["createdAt"], minutes=10)


async def test_creating_changing_or_deleting_a_policy_recomputes_open_conversations(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    opened = await _open(client, office_a, world)
    message = await _inbound(client, office_a, opened["id"])
    assert (await _read(client, office_a, opened["id"]))["sla"] is None
    policy = await _policy(client, office_a, world.inbox_id)
    read = await _read(client, office_a, opened["id"])
    assert read["sla"]["policyId"] == policy["id"]
    assert read["sla"]["firstResponseDueAt"] == _plus(message["createdAt"], minutes=10)
    r = await client.patch(
        f"/sla-policies/{policy['id']}", json={"firstResponseMinutes": 45}, headers=office_a.headers
    )
    assert r.status_code == 200 and r.json()["firstResponseMinutes"] == 45
    read = await _read(client, office_a, opened["id"])
    assert read["sla"]["firstResponseDueAt"] == _plus(message["createdAt"], minutes=45)
    r = await client.delete(f"/sla-policies/{policy['id']}", headers=office_a.headers)
    assert r.status_code == 200
    assert (await _read(client, office_a, opened["id"]))["sla"] is None


async def test_a_reply_by_an_api_key_is_the_first_response(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await _policy(client, office_a, world.inbox_id)
    opened = await _open(client, office_a, world)
    early = await _reply(client, office_a, opened["id"])  # before the client wrote: none
    assert (await _read(client, office_a, opened["id"]))["firstResponseAt"] is None
    assert early["createdAt"]
    await _inbound(client, office_a, opened["id"])
    reply = await _reply(client, office_a, opened["id"])
    read = await _read(client, office_a, opened["id"])
    assert read["firstResponseAt"] == reply["createdAt"]
    assert read["awaitingSince"] is None


async def test_the_away_message_is_no_response(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await client.put(
        f"/inbox/{world.inbox_id}/business-hours",
        json={"timezone": SP, "week": [], "awayMessage": {"text": "Fechado"}},
        headers=office_a.headers,
    )
    await _policy(client, office_a, world.inbox_id)
    opened = await _open(client, office_a, world)
    await _inbound(client, office_a, opened["id"])
    messages = await client.get(f"/conversation/{opened['id']}/messages", headers=office_a.headers)
    assert [m["text"] for m in messages.json()["data"] if m["direction"] == "OUTBOUND"] == [
        "Fechado"
    ]
    read = await _read(client, office_a, opened["id"])
    assert read["firstResponseAt"] is None
    assert read["sla"]["firstResponseDueAt"] is None  # never open: no due time


async def test_a_client_message_after_a_response_sets_the_next_response_due(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await _policy(client, office_a, world.inbox_id)
    cid = (await _open(client, office_a, world))["id"]
    await _inbound(client, office_a, cid)
    await _reply(client, office_a, cid)
    second = await _inbound(client, office_a, cid)
    await _inbound(client, office_a, cid)  # still the oldest unanswered one counts
    read = await _read(client, office_a, cid)
    assert read["awaitingSince"] == second["createdAt"]
    assert read["sla"]["nextResponseDueAt"] == _plus(second["createdAt"], minutes=30)
    reply = await _reply(client, office_a, cid)
    read = await _read(client, office_a, cid)
    assert read["awaitingSince"] is None and read["sla"]["nextResponseDueAt"] is None
    row = await session.scalar(select(Conversation).where(Conversation.id == cid))
    assert row is not None and row.last_response_at is not None
    assert isoformat(as_utc(row.last_response_at)) == reply["createdAt"]


async def test_closing_resolves_and_reopening_restarts_the_resolution_clock(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await _policy(client, office_a, world.inbox_id)
    cid = (await _open(client, office_a, world))["id"]
    message = await _inbound(client, office_a, cid)
    h = office_a.headers
    closed = (
        await client.patch(f"/conversation/{cid}", json={"status": "CLOSED"}, headers=h)
    ).json()
    assert closed["resolvedAt"] == closed["updatedAt"]
    row = await session.scalar(select(Conversation).where(Conversation.id == cid))
    assert row is not None and row.sla_check_at is None  # nothing to watch when closed
    reopened = (
        await client.patch(f"/conversation/{cid}", json={"status": "OPEN"}, headers=h)
    ).json()
    assert reopened["resolvedAt"] is None
    assert reopened["sla"]["resolutionDueAt"] == _plus(reopened["updatedAt"], days=2)
    assert reopened["firstInboundAt"] == message["createdAt"]


# Breaches: the worker's job, with an injected clock.


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _contexts(app: FastAPI, settings: Settings, clock: Clock, n: int = 2) -> list[WorkerContext]:
    settings = settings.model_copy(update={"outbox_retention_days": 30})
    return [
        WorkerContext(
            settings, app.state.engine, app.state.sessionmaker, clock=clock, worker_id=f"w{i}"
        )
        for i in range(n)
    ]


async def test_the_breach_job_is_registered() -> None:
    assert SLA_BREACH_JOB in periodic_jobs()


async def test_a_breach_emits_chat_sla_breached_once_per_due(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    world = await _world(session, office_a)
    await _policy(client, office_a, world.inbox_id, resolutionBusinessDays=1)
    cid = (await _open(client, office_a, world))["id"]
    message = await _inbound(client, office_a, cid)
    clock = Clock(utcnow())
    contexts = _contexts(app, settings, clock)
    for ctx in contexts:
        assert await report_breaches(ctx) == 0
    clock.now += timedelta(minutes=11)
    for ctx in contexts:
        await report_breaches(ctx)
    [event] = await outbox(app, office_a.id, BREACHED)
    assert event.data["breach"] == "FIRST_RESPONSE" and event.data["id"] == cid
    assert event.data["dueAt"] == _plus(message["createdAt"], minutes=10)
    assert event.data["sla"]["breachedAt"] == isoformat(clock.now)
    read = await _read(client, office_a, cid)
    assert read["sla"]["breachedAt"] == isoformat(clock.now)

    await _reply(client, office_a, cid)  # late: met, and not reported again
    second = await _inbound(client, office_a, cid)
    clock.now = datetime.fromisoformat(second["createdAt"].replace("Z", "+00:00")) + timedelta(
        minutes=31
    )
    for _ in range(2):
        for ctx in contexts:
            await report_breaches(ctx)
    kinds = [e.data["breach"] for e in await outbox(app, office_a.id, BREACHED)]
    assert kinds == ["FIRST_RESPONSE", "NEXT_RESPONSE"]

    clock.now += timedelta(days=1)
    for ctx in contexts:
        await report_breaches(ctx)
    kinds = [e.data["breach"] for e in await outbox(app, office_a.id, BREACHED)]
    assert kinds == ["FIRST_RESPONSE", "NEXT_RESPONSE", "RESOLUTION"]
    clock.now += timedelta(days=3)
    for ctx in contexts:
        assert await report_breaches(ctx) == 0


async def test_a_closed_or_answered_conversation_is_no_breach(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    world = await _world(session, office_a, people=2)
    await _policy(client, office_a, world.inbox_id)
    answered = (await _open(client, office_a, world, 0))["id"]
    closed = (await _open(client, office_a, world, 1))["id"]
    for cid in (answered, closed):
        await _inbound(client, office_a, cid)
    await _reply(client, office_a, answered)
    await client.patch(
        f"/conversation/{answered}", json={"status": "CLOSED"}, headers=office_a.headers
    )
    await client.patch(
        f"/conversation/{closed}", json={"status": "CLOSED"}, headers=office_a.headers
    )
    clock = Clock(utcnow() + timedelta(days=30))
    for ctx in _contexts(app, settings, clock):
        await report_breaches(ctx)
    assert await outbox(app, office_a.id, BREACHED) == []


CONVERSATIONS = 12


async def test_concurrent_workers_emit_one_event_per_breach(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    world = await _world(session, office_a, people=CONVERSATIONS)
    await _policy(client, office_a, world.inbox_id)
    ids = []
    for n in range(CONVERSATIONS):
        cid = (await _open(client, office_a, world, n))["id"]
        await _inbound(client, office_a, cid)
        ids.append(cid)
    clock = Clock(utcnow() + timedelta(minutes=11))
    counts = await asyncio.gather(
        *(report_breaches(ctx) for ctx in _contexts(app, settings, clock, n=4))
    )
    assert sum(counts) == CONVERSATIONS
    events = await outbox(app, office_a.id, BREACHED)
    assert sorted(e.data["id"] for e in events) == sorted(ids)


async def test_the_breach_job_finds_due_conversations_through_its_index(
    session: AsyncSession,
) -> None:
    stmt = sla_due(utcnow(), 200)
    bind = session.get_bind()
    sql = str(stmt.compile(bind, compile_kwargs={"literal_binds": True}))
    if bind.dialect.name == "postgresql":
        await session.execute(text("SET LOCAL enable_seqscan = off"))
        plan = (await session.execute(text(f"EXPLAIN {sql}"))).scalars().all()
    else:
        plan = [row[-1] for row in await session.execute(text(f"EXPLAIN QUERY PLAN {sql}"))]
    assert any("ix_conversations_sla_check_due" in line for line in plan), plan


async def test_a_rule_can_trigger_on_chat_sla_breached(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    rule = await create_rule(client, office_a, triggerEvent=BREACHED)
    assert rule["triggerEvent"] == BREACHED


# The routes: success, bad input, another office, no key.


async def test_sla_policy_routes(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    other = await f.make_inbox(session, office_a.id, name="Outra")
    await session.commit()
    policy = await _policy(client, office_a, world.inbox_id, priority="HIGH")
    await _policy(client, office_a, other.id)
    h = office_a.headers
    assert policy["priority"] == "HIGH" and policy["legalAreaId"] is None
    r = await client.get(f"/sla-policies/{policy['id']}", headers=h)
    assert r.status_code == 200 and r.json() == policy
    listed = (await client.get("/sla-policies", headers=h)).json()
    assert listed["totalResults"] == 2
    listed = (
        await client.get("/sla-policies", params={"inboxId": world.inbox_id}, headers=h)
    ).json()
    assert [p["id"] for p in listed["data"]] == [policy["id"]]
    r = await client.patch(f"/sla-policies/{policy['id']}", json={"priority": None}, headers=h)
    assert r.status_code == 200 and r.json()["priority"] is None


async def test_bad_sla_policies_are_400_naming_the_field_and_change_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    h = office_a.headers
    good = {
        "inboxId": world.inbox_id,
        "firstResponseMinutes": 10,
        "nextResponseMinutes": 30,
        "resolutionBusinessDays": 2,
    }
    for change, field in (
        ({"firstResponseMinutes": 0}, "firstResponseMinutes"),
        ({"nextResponseMinutes": "10"}, "nextResponseMinutes"),
        ({"resolutionBusinessDays": 366}, "resolutionBusinessDays"),
        ({"priority": "URGENT"}, "priority"),
        ({"inboxId": None}, "inboxId"),
    ):
        r = await client.post("/sla-policies", json={**good, **change}, headers=h)
        assert r.status_code == 400, (change, r.text)
        assert field in error_of(r)["details"], r.text
    missing = {k: v for k, v in good.items() if k != "resolutionBusinessDays"}
    r = await client.post("/sla-policies", json=missing, headers=h)
    assert r.status_code == 400 and "resolutionBusinessDays" in error_of(r)["details"]
    assert (await client.get("/sla-policies", headers=h)).json()["totalResults"] == 0
    policy = await _policy(client, office_a, world.inbox_id)
    r = await client.patch(
        f"/sla-policies/{policy['id']}", json={"firstResponseMinutes": None}, headers=h
    )
    assert r.status_code == 400 and "firstResponseMinutes" in error_of(r)["details"]
    assert (await client.get(f"/sla-policies/{policy['id']}", headers=h)).json() == policy


async def test_another_offices_records_are_404_and_nothing_changes(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await _world(session, office_a)
    theirs = await _world(session, office_b)
    their_area = await f.make_legal_area(session, office_b.id)
    await session.commit()
    h = office_a.headers
    body = {
        "inboxId": theirs.inbox_id,
        "firstResponseMinutes": 10,
        "nextResponseMinutes": 30,
        "resolutionBusinessDays": 2,
    }
    assert (await client.post("/sla-policies", json=body, headers=h)).status_code == 404
    body["inboxId"], body["legalAreaId"] = world.inbox_id, their_area.id
    assert (await client.post("/sla-policies", json=body, headers=h)).status_code == 404
    r = await client.get("/sla-policies", params={"inboxId": theirs.inbox_id}, headers=h)
    assert r.status_code == 404
    their_policy = await _policy(client, office_b, theirs.inbox_id)
    path = f"/sla-policies/{their_policy['id']}"
    assert (await client.get(path, headers=h)).status_code == 404
    assert (await client.patch(path, json={"priority": "HIGH"}, headers=h)).status_code == 404
    assert (await client.delete(path, headers=h)).status_code == 404
    assert (await client.get(path, headers=office_b.headers)).json() == their_policy
    assert (await client.get("/sla-policies", headers=h)).json()["totalResults"] == 0
    assert await outbox(app, office_b.id, BREACHED) == []


async def test_sla_policies_need_a_key(client: httpx.AsyncClient) -> None:
    for method, path in (
        ("POST", "/sla-policies"),
        ("GET", "/sla-policies"),
        ("GET", "/sla-policies/c0000000000000000000000000"),
        ("PATCH", "/sla-policies/c0000000000000000000000000"),
        ("DELETE", "/sla-policies/c0000000000000000000000000"),
    ):
        for headers in ({}, {"x-service-api-key": "wrong"}):
            r = await client.request(method, path, json={}, headers=headers)
            assert r.status_code == 401, (method, path)


async def test_the_console_marks_breached_and_at_risk_conversations_in_the_list(
    browser: Browser,
    server_url: str,
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    world = await _world(session, office_a, people=3)
    await _policy(client, office_a, world.inbox_id, priority="HIGH", firstResponseMinutes=1)
    await _policy(client, office_a, world.inbox_id, priority="MEDIUM")
    breached = (await _open(client, office_a, world, 0, priority="HIGH"))["id"]
    at_risk = (await _open(client, office_a, world, 1))["id"]
    calm = (await _open(client, office_a, world, 2, priority="LOW"))["id"]
    for cid in (breached, at_risk, calm):
        await _inbound(client, office_a, cid)
    clock = Clock(utcnow() + timedelta(minutes=2))
    [ctx] = _contexts(app, settings, clock, n=1)
    assert await report_breaches(ctx) == 1

    async with new_page(browser, 1280, 800) as page:
        await log_in_in_portuguese(page, server_url, office_a.key)
        await page.get_by_role("link", name="Conversas").click()

        def item(cid: str) -> Any:
            return page.locator(f'.conversation-item[data-conversation-id="{cid}"]')

        await expect(item(breached).locator(".badge.sla")).to_have_text(
            "SLA vencido", timeout=TIMEOUT
        )
        await expect(item(at_risk).locator(".badge.sla")).to_have_text("SLA em risco")
        await expect(item(calm)).to_be_visible()
        await expect(item(calm).locator(".badge.sla")).to_have_count(0)
    assert (await _read(client, office_a, breached))["sla"]["breachedAt"] is not None
    assert (await _read(client, office_a, calm))["sla"] is None
