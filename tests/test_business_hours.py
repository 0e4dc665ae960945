"""Business hours of an inbox (issue 32): the pure rules (``is_open``,
``closed_period_start``), ``GET|PUT /inbox/{id}/business-hours``, the away message and the
automation condition ``withinBusinessHours``."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation
from officehub.events.models import OutboxEvent
from officehub.inboxes.business_hours import (
    NEVER_OPEN,
    Hours,
    closed_period_start,
    is_open,
    national_holidays,
)
from officehub.inboxes.models import InboxBusinessHours
from officehub.kit.config import Settings
from officehub.messages.models import Message
from officehub.templates.models import WhatsAppTemplate
from tests import factories as f
from tests.automation_helpers import automation_worker, create_rule, runs
from tests.helpers import OfficeFixture, error_of
from tests.whatsapp_world import official_integration

pytestmark = pytest.mark.anyio
SP = "America/Sao_Paulo"
WEEKDAYS = [{"day": d, "open": "09:00", "close": "18:00"} for d in range(5)]
ALL_DAY = [{"day": d, "open": "00:00", "close": "24:00"} for d in range(7)]


def _hours(week: list[dict[str, Any]], tz: str = SP, **extra: Any) -> Hours:
    return Hours.of({"timezone": tz, "week": week, **extra})


def _at(tz: str, year: int, month: int, day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=ZoneInfo(tz)).astimezone(UTC)


# The pure rules.


def test_friday_17_55_is_open_and_18_00_closed_until_monday() -> None:
    hours = _hours(WEEKDAYS)
    friday = date(2026, 11, 27)
    assert friday.weekday() == 4
    assert is_open(hours, _at(SP, 2026, 11, 27, 17, 55))
    assert closed_period_start(hours, _at(SP, 2026, 11, 27, 17, 55)) is None
    assert not is_open(hours, _at(SP, 2026, 11, 27, 18, 0))
    six_pm = _at(SP, 2026, 11, 27, 18, 0)
    assert six_pm == datetime(2026, 11, 27, 21, 0, tzinfo=UTC)  # UTC-3, no DST since 2019
    for later in (six_pm, _at(SP, 2026, 11, 28, 12, 0), _at(SP, 2026, 11, 30, 8, 59)):
        assert not is_open(hours, later)
        assert closed_period_start(hours, later) == six_pm
    assert is_open(hours, _at(SP, 2026, 11, 30, 9, 0))


def test_a_national_holiday_is_closed_unless_in_open_dates() -> None:
    # 2026-11-20 (a Friday): Dia Nacional de Zumbi e da Consciência Negra (national since 2024).
    hours = _hours(WEEKDAYS)
    noon = _at(SP, 2026, 11, 20, 12, 0)
    assert not is_open(hours, noon)
    assert closed_period_start(hours, noon) == _at(SP, 2026, 11, 19, 18, 0)
    opened = _hours(WEEKDAYS, openDates=["2026-11-20"])
    assert is_open(opened, noon)
    # Christmas is closed too, and a date of closedDates.
    assert not is_open(hours, _at(SP, 2026, 12, 25, 10, 0))
    closed = _hours(WEEKDAYS, closedDates=["2026-11-26"])
    assert not is_open(closed, _at(SP, 2026, 11, 26, 10, 0))
    assert is_open(hours, _at(SP, 2026, 11, 26, 10, 0))


def test_several_ranges_a_day_and_a_night_shift_over_midnight_is_two_ranges() -> None:
    week = [
        {"day": 0, "open": "08:00", "close": "12:00"},
        {"day": 0, "open": "14:00", "close": "24:00"},
        {"day": 1, "open": "00:00", "close": "02:00"},
    ]
    hours = _hours(week)
    assert is_open(hours, _at(SP, 2026, 11, 23, 11, 59))
    assert not is_open(hours, _at(SP, 2026, 11, 23, 13, 0))
    assert closed_period_start(hours, _at(SP, 2026, 11, 23, 13, 0)) == _at(SP, 2026, 11, 23, 12)
    assert is_open(hours, _at(SP, 2026, 11, 23, 23, 59))
    assert is_open(hours, _at(SP, 2026, 11, 24, 1, 30))
    # The night joins Monday's 24:00 to Tuesday's 00:00: the period closes at 02:00.
    assert closed_period_start(hours, _at(SP, 2026, 11, 24, 3, 0)) == _at(SP, 2026, 11, 24, 2)


def test_another_time_zone_with_daylight_saving() -> None:
    # New York: EDT (UTC-4) until 1 November 2026, EST (UTC-5) after.
    ny = "America/New_York"
    hours = _hours(WEEKDAYS, tz=ny)
    summer = datetime(2026, 10, 30, 13, 30, tzinfo=UTC)  # Friday 09:30 EDT
    winter = datetime(2026, 11, 6, 13, 30, tzinfo=UTC)  # Friday 08:30 EST
    assert is_open(hours, summer) and not is_open(hours, winter)
    assert closed_period_start(hours, winter) == datetime(2026, 11, 5, 23, 0, tzinfo=UTC)
    # The same instant is 10:30 in São Paulo: open there (holidays are Brazil's).
    assert is_open(_hours(WEEKDAYS), winter)


def test_an_inbox_never_open_has_one_closed_period() -> None:
    hours = _hours([])
    assert closed_period_start(hours, _at(SP, 2026, 11, 27, 10, 0)) == NEVER_OPEN


# GET|PUT /inbox/{id}/business-hours


async def _inbox(session: AsyncSession, office: OfficeFixture) -> str:
    inbox = await f.make_inbox(session, office.id)
    await session.commit()
    return inbox.id


BODY: dict[str, Any] = {
    "timezone": SP,
    "week": WEEKDAYS,
    "closedDates": ["2026-12-24"],
    "openDates": ["2026-11-20"],
    "awayMessage": {"text": "Estamos fechados; respondemos no próximo dia útil."},
}


async def test_put_and_get_business_hours(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a)
    path = f"/inbox/{inbox_id}/business-hours"
    r = await client.get(path, headers=office_a.headers)
    assert r.status_code == 200 and r.json() is None  # no hours: always open
    r = await client.put(path, json=BODY, headers=office_a.headers)
    assert r.status_code == 200, r.text
    out = r.json()
    # The away message's other kinds answer null: {text} | {fastMessageId} | {templateName}.
    unset = {"fastMessageId": None, "templateName": None, "language": None}
    assert {k: out[k] for k in BODY} == {**BODY, "awayMessage": {**BODY["awayMessage"], **unset}}
    assert out["updatedAt"].endswith("Z")
    assert (await client.get(path, headers=office_a.headers)).json() == out
    r = await client.put(
        path, json={"timezone": "UTC", "week": [], "awayMessage": None}, headers=office_a.headers
    )
    assert r.status_code == 200
    assert r.json()["closedDates"] == [] and r.json()["awayMessage"] is None


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"timezone": "America/Atlantis"}, "body.timezone"),
        ({"week": [{"day": 7, "open": "09:00", "close": "18:00"}]}, "body.week.0.day"),
        ({"week": [{"day": 0, "open": "9:00", "close": "18:00"}]}, "body.week.0.open"),
        ({"week": [{"day": 0, "open": "24:00", "close": "24:00"}]}, "body.week.0.open"),
        ({"week": [{"day": 0, "open": "18:00", "close": "09:00"}]}, "body.week[0].close"),
        (
            {
                "week": [
                    {"day": 2, "open": "08:00", "close": "12:00"},
                    {"day": 2, "open": "11:00", "close": "14:00"},
                ]
            },
            "body.week[1].open",
        ),
        ({"closedDates": ["27/11/2026"]}, "body.closedDates.0"),
        ({"awayMessage": {"text": ""}}, "body.awayMessage.text"),
        ({"awayMessage": {"fastMessageId": "cxxxxxxxxxxxx"}}, "body.awayMessage.fastMessageId"),
        ({"awayMessage": {}}, "body.awayMessage"),
        ({"awayMessage": {"text": "Fechado", "templateName": "fechado"}}, "body.awayMessage"),
        ({"awayMessage": {"text": "Fechado", "language": "pt_BR"}}, "body.awayMessage"),
        ({"awayMessage": {"templateName": "nao_existe"}}, "body.awayMessage.templateName"),
        ({"awayMessage": {"text": "x", "html": "<b>x</b>"}}, "body.awayMessage.html"),
    ],
)
async def test_bad_business_hours_are_400_naming_the_field_and_change_nothing(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    change: dict[str, Any],
    field: str,
) -> None:
    inbox_id = await _inbox(session, office_a)
    path = f"/inbox/{inbox_id}/business-hours"
    before = (await client.put(path, json=BODY, headers=office_a.headers)).json()
    r = await client.put(path, json={**BODY, **change}, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field in error_of(r)["details"]
    assert (await client.get(path, headers=office_a.headers)).json() == before


async def test_ranges_of_different_days_may_share_hours(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a)
    r = await client.put(
        f"/inbox/{inbox_id}/business-hours",
        json={"timezone": SP, "week": [*WEEKDAYS, {"day": 0, "open": "19:00", "close": "20:00"}]},
        headers=office_a.headers,
    )
    assert r.status_code == 200 and len(r.json()["week"]) == 6


async def test_another_offices_inbox_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox_id = await _inbox(session, office_a)
    path = f"/inbox/{inbox_id}/business-hours"
    for method in ("GET", "PUT"):
        r = await client.request(method, path, json=BODY, headers=office_b.headers)
        assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"
    assert (await session.scalars(select(InboxBusinessHours))).first() is None


async def test_business_hours_need_a_key(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a)
    for method in ("GET", "PUT"):
        for headers in ({}, {"x-service-api-key": "nope"}):
            r = await client.request(
                method, f"/inbox/{inbox_id}/business-hours", json=BODY, headers=headers
            )
            assert r.status_code == 401


# The away message.


async def _conversation(session: AsyncSession, office: OfficeFixture) -> tuple[str, str]:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id)
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    await session.commit()
    return inbox.id, conversation.id


async def _outbound(session: AsyncSession, conversation_id: str) -> list[Message]:
    session.expire_all()
    stmt = select(Message).where(
        Message.conversation_id == conversation_id, Message.direction == "OUTBOUND"
    )
    return list((await session.scalars(stmt)).all())


async def _inbound(client: httpx.AsyncClient, office: OfficeFixture, cid: str) -> None:
    r = await client.post(
        f"/conversation/{cid}/messages/inbound", json={"text": "Olá"}, headers=office.headers
    )
    assert r.status_code == 201, r.text


async def test_the_away_message_is_sent_once_per_closed_period(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id, cid = await _conversation(session, office_a)
    away = "Estamos fechados agora."
    r = await client.put(
        f"/inbox/{inbox_id}/business-hours",
        json={"timezone": SP, "week": [], "awayMessage": {"text": away}},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    await _inbound(client, office_a, cid)
    [sent] = await _outbound(session, cid)
    assert (sent.text, sent.status, sent.type) == (away, "QUEUED", "TEXT")
    events = (
        await session.scalars(select(OutboxEvent).where(OutboxEvent.name == "chat.message.sent"))
    ).all()
    assert [e.data["text"] for e in events] == [away]
    await _inbound(client, office_a, cid)
    assert len(await _outbound(session, cid)) == 1  # same closed period: not again


async def test_a_new_closed_period_sends_the_away_message_again(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    # Open every hour except yesterday, today and tomorrow (local): the closed period
    # began at yesterday's midnight, whenever the test runs.
    inbox_id, cid = await _conversation(session, office_a)
    today = datetime.now(ZoneInfo(SP)).date()
    closed = [(today + timedelta(days=d)).isoformat() for d in (-1, 0, 1)]
    r = await client.put(
        f"/inbox/{inbox_id}/business-hours",
        json={
            "timezone": SP,
            "week": ALL_DAY,
            "closedDates": closed,
            "awayMessage": {"text": "Fechado"},
        },
        headers=office_a.headers,
    )
    assert r.status_code == 200
    yesterday = today - timedelta(days=1)
    start = _at(SP, yesterday.year, yesterday.month, yesterday.day, 0)
    for sent_at, expected in ((start + timedelta(minutes=1), 0), (start - timedelta(minutes=1), 1)):
        await session.execute(
            update(Conversation).where(Conversation.id == cid).values(away_sent_at=sent_at)
        )
        await session.commit()
        before = len(await _outbound(session, cid))
        await _inbound(client, office_a, cid)
        assert len(await _outbound(session, cid)) == before + expected, sent_at


async def test_no_away_message_when_open_without_hours_or_without_a_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id, cid = await _conversation(session, office_a)
    path = f"/inbox/{inbox_id}/business-hours"
    await _inbound(client, office_a, cid)  # no hours: always open
    await client.put(
        path,
        json={"timezone": SP, "week": ALL_DAY, "awayMessage": {"text": "x"}},
        headers=office_a.headers,
    )
    await _inbound(client, office_a, cid)  # open now (unless today is a holiday)
    today = datetime.now(ZoneInfo(SP)).date()
    holiday = today in national_holidays(today.year)
    await client.put(
        path, json={"timezone": SP, "week": [], "awayMessage": None}, headers=office_a.headers
    )
    await _inbound(client, office_a, cid)  # closed, but no message
    assert len(await _outbound(session, cid)) == (1 if holiday else 0)


async def test_concurrent_inbound_messages_get_one_away_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id, cid = await _conversation(session, office_a)
    await client.put(
        f"/inbox/{inbox_id}/business-hours",
        json={"timezone": SP, "week": [], "awayMessage": {"text": "Fechado"}},
        headers=office_a.headers,
    )
    await asyncio.gather(*(_inbound(client, office_a, cid) for _ in range(6)))
    assert [m.text for m in await _outbound(session, cid)] == ["Fechado"]


# The automation condition withinBusinessHours, at the event's time.


async def test_within_business_hours_condition_reads_the_events_time(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id, cid = await _conversation(session, office_a)
    await client.put(
        f"/inbox/{inbox_id}/business-hours",
        json={"timezone": SP, "week": WEEKDAYS},
        headers=office_a.headers,
    )
    await _inbound(client, office_a, cid)
    event = (
        await session.scalars(
            select(OutboxEvent).where(OutboxEvent.name == "chat.message.received")
        )
    ).one()
    rule = await create_rule(client, office_a, conditions={"withinBusinessHours": True})
    for at, holds in (
        (_at(SP, 2026, 11, 27, 17, 55), True),  # Friday 17:55
        (_at(SP, 2026, 11, 27, 18, 5), False),  # Friday 18:05
        (_at(SP, 2026, 11, 20, 10, 0), False),  # a national holiday
    ):
        await session.execute(
            update(OutboxEvent).where(OutboxEvent.id == event.id).values(created_at=at)
        )
        await session.commit()
        r = await client.post(
            f"/automation-rules/{rule['id']}/test",
            json={"eventId": event.id},
            headers=office_a.headers,
        )
        assert r.status_code == 200, r.text
        [check] = r.json()["conditions"]
        assert check["key"] == "withinBusinessHours" and check["expected"] == "true"
        assert check["actual"] == str(holds).lower(), at
        assert r.json()["branch"] == ("then" if holds else "skipped")


async def test_within_business_hours_false_runs_the_rule_when_closed(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    inbox_id, cid = await _conversation(session, office_a)
    await client.put(
        f"/inbox/{inbox_id}/business-hours",
        json={"timezone": SP, "week": []},
        headers=office_a.headers,
    )
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    closed = await create_rule(client, office_a, conditions={"withinBusinessHours": False})
    opened = await create_rule(
        client, office_a, conditions={"withinBusinessHours": True}, elseActions=[pause]
    )
    await _inbound(client, office_a, cid)
    await automation_worker(app, settings).run_until_idle()
    assert [r["branch"] for r in await runs(client, office_a, closed["id"])] == ["then"]
    assert [r["branch"] for r in await runs(client, office_a, opened["id"])] == ["else"]


# The away message as a fast message or a template.


async def _put_away(
    client: httpx.AsyncClient, office: OfficeFixture, inbox_id: str, away: dict[str, Any]
) -> httpx.Response:
    return await client.put(
        f"/inbox/{inbox_id}/business-hours",
        json={"timezone": SP, "week": [], "awayMessage": away},
        headers=office.headers,
    )


async def test_the_away_message_may_be_a_text_fast_message_sent_as_it_stands(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id, cid = await _conversation(session, office_a)
    fast = await client.post(
        "/fast-message",
        json={"inboxId": inbox_id, "title": "Fora do horário", "kind": "TEXT", "text": "Antigo"},
        headers=office_a.headers,
    )
    assert fast.status_code == 201, fast.text
    r = await _put_away(client, office_a, inbox_id, {"fastMessageId": fast.json()["id"]})
    assert r.status_code == 200, r.text
    assert r.json()["awayMessage"]["fastMessageId"] == fast.json()["id"]
    assert r.json()["awayMessage"]["text"] is None
    edited = await client.patch(
        f"/fast-message/{fast.json()['id']}",
        json={"text": "Voltamos segunda às 9h."},
        headers=office_a.headers,
    )
    assert edited.status_code == 200, edited.text
    await _inbound(client, office_a, cid)
    [sent] = await _outbound(session, cid)
    assert (sent.type, sent.text, sent.status) == ("TEXT", "Voltamos segunda às 9h.", "QUEUED")


async def test_a_fast_message_that_is_not_text_or_of_another_office_is_refused_as_away_message(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox_id, _cid = await _conversation(session, office_a)
    sequence = await client.post(
        "/fast-message",
        json={
            "inboxId": inbox_id,
            "title": "Sequência",
            "kind": "SEQUENCE",
            "blocks": [{"kind": "TEXT", "text": "Oi", "typingSeconds": 1, "waitSeconds": 0}],
        },
        headers=office_a.headers,
    )
    assert sequence.status_code == 201, sequence.text
    other_inbox = await f.make_inbox(session, office_b.id)
    await session.commit()
    theirs = await client.post(
        "/fast-message",
        json={"inboxId": other_inbox.id, "title": "t", "kind": "TEXT", "text": "deles"},
        headers=office_b.headers,
    )
    assert theirs.status_code == 201, theirs.text
    for ident in (sequence.json()["id"], theirs.json()["id"]):
        r = await _put_away(client, office_a, inbox_id, {"fastMessageId": ident})
        assert r.status_code == 400, r.text
        assert "body.awayMessage.fastMessageId" in error_of(r)["details"]
    assert (
        await client.get(f"/inbox/{inbox_id}/business-hours", headers=office_a.headers)
    ).json() is None


async def test_a_deleted_away_fast_message_sends_nothing_and_the_message_is_kept(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id, cid = await _conversation(session, office_a)
    fast = await client.post(
        "/fast-message",
        json={"inboxId": inbox_id, "title": "t", "kind": "TEXT", "text": "Fechado"},
        headers=office_a.headers,
    )
    r = await _put_away(client, office_a, inbox_id, {"fastMessageId": fast.json()["id"]})
    assert r.status_code == 200, r.text
    gone = await client.delete(f"/fast-message/{fast.json()['id']}", headers=office_a.headers)
    assert gone.status_code == 200, gone.text
    await _inbound(client, office_a, cid)
    assert await _outbound(session, cid) == []
    session.expire_all()
    inbound = (await session.scalars(select(Message).where(Message.conversation_id == cid))).all()
    assert [m.direction for m in inbound] == ["INBOUND"]


async def _official_conversation(
    session: AsyncSession,
    office: OfficeFixture,
    *,
    category: str = "UTILITY",
    body: str = "Fechados",
) -> tuple[str, str]:
    integration = await official_integration(session, office.id)
    session.add(
        WhatsAppTemplate(
            office_id=office.id,
            integration_id=integration.id,
            name="fora_do_horario",
            language="pt_BR",
            status="APPROVED",
            category="UTILITY",
            components=[{"type": "BODY", "text": body}],
        )
    )
    contact = await f.make_contact(session, office.id)
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    await session.commit()
    return integration.inbox_id, conversation.id


async def test_the_away_message_may_be_an_approved_template(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id, cid = await _official_conversation(session, office_a)
    away = {"templateName": "fora_do_horario", "language": "pt_BR"}
    r = await _put_away(client, office_a, inbox_id, away)
    assert r.status_code == 200, r.text
    assert r.json()["awayMessage"] | away == r.json()["awayMessage"]
    await _inbound(client, office_a, cid)
    [sent] = await _outbound(session, cid)
    assert (sent.type, sent.template_name, sent.status) == ("TEMPLATE", "fora_do_horario", "QUEUED")
    assert sent.payload is not None and sent.payload["language"] == "pt_BR"
    assert sent.payload["variables"] == []


async def test_an_away_template_the_channel_cannot_send_sends_nothing_and_keeps_the_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A template with a placeholder (no value to fill it) and the same template named on
    an inbox whose channel has no templates (a plain WhatsApp number): nothing sent, the
    client's message stored."""
    inbox_id, cid = await _official_conversation(session, office_a, body="Olá {{1}}")
    r = await _put_away(client, office_a, inbox_id, {"templateName": "fora_do_horario"})
    assert r.status_code == 200, r.text
    await _inbound(client, office_a, cid)
    assert await _outbound(session, cid) == []
    plain_inbox, plain_cid = await _conversation(session, office_a)
    r = await _put_away(client, office_a, plain_inbox, {"templateName": "fora_do_horario"})
    assert r.status_code == 200, r.text
    await _inbound(client, office_a, plain_cid)
    assert await _outbound(session, plain_cid) == []
    for conversation_id in (cid, plain_cid):
        stmt = select(Message).where(Message.conversation_id == conversation_id)
        assert [m.direction for m in (await session.scalars(stmt)).all()] == ["INBOUND"]
