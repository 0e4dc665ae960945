"""Conversation reports (issue 32): ``GET /reports/conversations``, computed by the database
in the office's time zone, as JSON or CSV, for supervisors (their inboxes) and admins."""

from __future__ import annotations

import csv
import io
import math
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation
from officehub.dashboard.reports import bounds, nearest_rank, offsets
from officehub.inboxes.models import Integration
from officehub.kit.ids import new_id
from tests import factories as f
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, error_of
from tests.test_query_plans import ROWS, bulk, capturing, plan, seed_contacts, the_one, uses

SP = ZoneInfo("America/Sao_Paulo")
PATH = "/reports/conversations"


def _sp(day: int, hour: int, minute: int = 0, month: int = 11) -> datetime:
    return datetime(2026, month, day, hour, minute, tzinfo=SP).astimezone(UTC)


@dataclass
class World:
    office_id: str
    integration: Integration
    session: AsyncSession

    async def conversation(
        self,
        created: datetime,
        *,
        inbound: datetime | None = None,
        response: datetime | None = None,
        closed: datetime | None = None,
        policy: bool = False,
        breached: bool = False,
        integration: Integration | None = None,
        **extra: Any,
    ) -> Conversation:
        contact = await f.make_contact(self.session, self.office_id, phone=None)
        channel = integration or self.integration
        record = Conversation(
            office_id=self.office_id,
            person_id=contact.id,
            inbox_id=channel.inbox_id,
            integration_id=channel.id,
            status="CLOSED" if closed else "OPEN",
            priority="MEDIUM",
            created_at=created,
            first_inbound_at=inbound,
            first_response_at=response,
            resolution_started_at=inbound,
            closed_at=closed,
            sla_policy_id="cslapolicy000000000000001" if policy else None,
            resolution_breached_at=closed if breached else None,
            **extra,
        )
        self.session.add(record)
        await self.session.flush()
        return record


async def _world(session: AsyncSession, office: OfficeFixture, name: str = "Atendimento") -> World:
    inbox = await f.make_inbox(session, office.id, name)
    integration = await f.make_integration(session, office.id, inbox.id)
    return World(office.id, integration, session)


async def _report(
    client: httpx.AsyncClient, office: OfficeFixture, **params: str
) -> dict[str, Any]:
    r = await client.get(PATH, params=params, headers=office.headers)
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()
    return found


def _by_key(report: dict[str, Any]) -> dict[str | None, dict[str, Any]]:
    return {row["key"]: row for row in report["rows"]}


async def test_a_conversation_at_23_30_in_sao_paulo_counts_on_that_local_day(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await world.conversation(_sp(10, 23, 30))  # 02:30 UTC on the 11th
    await world.conversation(_sp(11, 0, 30))
    await session.commit()
    report = await _report(client, office_a, **{"from": "2026-11-10", "to": "2026-11-11"})
    assert report["timeZone"] == "America/Sao_Paulo"
    days = _by_key(report)
    assert [row["key"] for row in report["rows"]] == ["2026-11-10", "2026-11-11"]
    assert days["2026-11-10"]["opened"] == 1 and days["2026-11-11"]["opened"] == 1
    only_the_11th = await _report(client, office_a, **{"from": "2026-11-11", "to": "2026-11-11"})
    assert only_the_11th["totals"]["opened"] == 1
    # In UTC both fall on the 11th.
    r = await client.patch("/office", json={"timeZone": "UTC"}, headers=office_a.headers)
    assert r.status_code == 200, r.text
    in_utc = _by_key(await _report(client, office_a, **{"from": "2026-11-10", "to": "2026-11-11"}))
    assert (in_utc["2026-11-10"]["opened"], in_utc["2026-11-11"]["opened"]) == (0, 2)


async def test_days_across_a_daylight_saving_change_are_local_days(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """New York leaves summer time on 2026-11-01 at 02:00: 23:30 on either side stays on
    its local day (the SQLite path shifts each stretch by its own offset)."""
    ny = ZoneInfo("America/New_York")
    world = await _world(session, office_a)
    await world.conversation(datetime(2026, 10, 31, 23, 30, tzinfo=ny).astimezone(UTC))
    await world.conversation(datetime(2026, 11, 1, 23, 30, tzinfo=ny).astimezone(UTC))
    await world.conversation(datetime(2026, 11, 2, 0, 30, tzinfo=ny).astimezone(UTC))
    await session.commit()
    r = await client.patch(
        "/office", json={"timeZone": "America/New_York"}, headers=office_a.headers
    )
    assert r.status_code == 200
    days = _by_key(await _report(client, office_a, **{"from": "2026-10-31", "to": "2026-11-02"}))
    assert [days[d]["opened"] for d in ("2026-10-31", "2026-11-01", "2026-11-02")] == [1, 1, 1]


async def test_a_midnight_that_happens_twice_starts_the_day_at_the_first(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Havana leaves summer time on 2025-11-02 at 01:00, back to 00:00: both 00:30s are on
    the 2nd, 23:30 before them on the 1st (PostgreSQL's day buckets start at a day's
    earliest instant, ``reports.day_starts``; SQLite shifts by each stretch's offset)."""
    world = await _world(session, office_a)
    await world.conversation(datetime(2025, 11, 2, 3, 30, tzinfo=UTC))  # 23:30 -04, the 1st
    await world.conversation(datetime(2025, 11, 2, 4, 30, tzinfo=UTC))  # 00:30 -04, the 2nd
    await world.conversation(datetime(2025, 11, 2, 5, 30, tzinfo=UTC))  # 00:30 -05, the 2nd
    await session.commit()
    r = await client.patch("/office", json={"timeZone": "America/Havana"}, headers=office_a.headers)
    assert r.status_code == 200
    days = _by_key(await _report(client, office_a, **{"from": "2025-11-01", "to": "2025-11-02"}))
    assert [days[d]["opened"] for d in ("2025-11-01", "2025-11-02")] == [1, 2]


def test_the_zones_offsets_change_where_the_zone_does() -> None:
    ny = ZoneInfo("America/New_York")
    start, end = bounds(datetime(2026, 10, 1).date(), datetime(2026, 12, 1).date(), ny)
    stretches = offsets(start, end, ny)
    assert [offset for _, offset in stretches] == [-4 * 3600, -5 * 3600]
    assert stretches[1][0] == datetime(2026, 11, 1, 6, 0, tzinfo=UTC)  # 02:00 EDT
    sp_start, sp_end = bounds(datetime(2026, 1, 1).date(), datetime(2026, 12, 31).date(), SP)
    assert offsets(sp_start, sp_end, SP) == [(sp_start, -3 * 3600)]  # no summer time


def test_nearest_rank_percentiles() -> None:
    values = [100, 10, 90, 20, 80, 30, 70, 40, 60, 50]
    assert nearest_rank(values, 0.5) == 50  # rank ceil(5) of 10
    assert nearest_rank(values, 0.9) == 90  # rank 9
    assert nearest_rank([7], 0.9) == 7
    assert nearest_rank([1, 2, 3], 0.5) == 2 and nearest_rank([1, 2, 3, 4], 0.5) == 2
    assert nearest_rank([], 0.5) is None


async def test_medians_and_p90_are_the_nearest_rank_of_the_kept_times(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    rng = random.Random(32)
    responses: dict[str, list[int]] = {"2026-11-03": [], "2026-11-04": []}
    resolutions: dict[str, list[int]] = {"2026-11-03": [], "2026-11-04": []}
    for n in range(23):
        day = 3 + n % 2
        inbound = _sp(day, 9) + timedelta(seconds=rng.randrange(0, 3600))
        answer = rng.randrange(1, 7200)
        resolve = answer + rng.randrange(1, 20000)
        response, closed = inbound + timedelta(seconds=answer), inbound + timedelta(seconds=resolve)
        await world.conversation(inbound, inbound=inbound, response=response, closed=closed)
        responses[f"2026-11-0{day}"].append(answer)
        resolutions[f"2026-11-0{day}"].append(resolve)
    await world.conversation(_sp(3, 10))  # opened, never answered: no time
    await session.commit()
    report = await _report(client, office_a, **{"from": "2026-11-03", "to": "2026-11-04"})
    days = _by_key(report)
    for local_day in responses:
        row = days[local_day]
        assert row["firstResponseMedianSeconds"] == nearest_rank(responses[local_day], 0.5)
        assert row["firstResponseP90Seconds"] == nearest_rank(responses[local_day], 0.9)
        assert row["resolutionMedianSeconds"] == nearest_rank(resolutions[local_day], 0.5)
        assert row["resolutionP90Seconds"] == nearest_rank(resolutions[local_day], 0.9)
        assert row["closed"] == len(resolutions[local_day])
    every_response = responses["2026-11-03"] + responses["2026-11-04"]
    every_resolution = resolutions["2026-11-03"] + resolutions["2026-11-04"]
    totals = report["totals"]
    assert totals["opened"] == 24 and totals["closed"] == 23
    assert totals["firstResponseMedianSeconds"] == nearest_rank(every_response, 0.5)
    assert totals["firstResponseP90Seconds"] == nearest_rank(every_response, 0.9)
    assert totals["resolutionMedianSeconds"] == nearest_rank(every_resolution, 0.5)
    assert totals["resolutionP90Seconds"] == nearest_rank(every_resolution, 0.9)


async def test_percentiles_of_few_and_tied_times_are_the_nearest_rank(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """n = 1, 2, 10 and 11 times a day, drawn from a few values (ties): each day's and the
    totals' median and p90 are ``nearest_rank``'s (PostgreSQL picks them with
    ``percentile_disc``, SQLite with ``row_number()``; both must be the oracle's)."""
    world = await _world(session, office_a)
    rng = random.Random(45)
    responses: dict[str, list[int]] = {}
    resolutions: dict[str, list[int]] = {}
    for day, n in ((3, 1), (4, 2), (5, 10), (6, 11)):
        local_day = f"2026-11-0{day}"
        responses[local_day], resolutions[local_day] = [], []
        for k in range(n):
            inbound = _sp(day, 9) + timedelta(minutes=k)
            answer = rng.choice((30, 30, 60, 90, 90, 90, 120))
            resolve = answer + rng.choice((0, 600, 600, 1800))
            response = inbound + timedelta(seconds=answer)
            closed = inbound + timedelta(seconds=resolve)
            await world.conversation(inbound, inbound=inbound, response=response, closed=closed)
            responses[local_day].append(answer)
            resolutions[local_day].append(resolve)
    await session.commit()
    report = await _report(client, office_a, **{"from": "2026-11-03", "to": "2026-11-06"})
    days = _by_key(report)
    for local_day, times in responses.items():
        row = days[local_day]
        assert row["closed"] == len(times)
        assert row["firstResponseMedianSeconds"] == nearest_rank(times, 0.5)
        assert row["firstResponseP90Seconds"] == nearest_rank(times, 0.9)
        assert row["resolutionMedianSeconds"] == nearest_rank(resolutions[local_day], 0.5)
        assert row["resolutionP90Seconds"] == nearest_rank(resolutions[local_day], 0.9)
    every_response = [t for times in responses.values() for t in times]
    every_resolution = [t for times in resolutions.values() for t in times]
    totals = report["totals"]
    assert totals["closed"] == len(every_resolution) == 24
    assert totals["firstResponseMedianSeconds"] == nearest_rank(every_response, 0.5)
    assert totals["firstResponseP90Seconds"] == nearest_rank(every_response, 0.9)
    assert totals["resolutionMedianSeconds"] == nearest_rank(every_resolution, 0.5)
    assert totals["resolutionP90Seconds"] == nearest_rank(every_resolution, 0.9)


def test_percentile_disc_ranks_are_the_nearest_ranks() -> None:
    """``percentile_disc(p)`` takes rank ``ceil(p * n)`` in floating point; for the report's
    p (0.5, 0.9) that is ``nearest_rank``'s integer rank for every n up to ten million."""
    for n in (*range(1, 10_000), *range(10_000, 10_000_000, 997)):
        assert max(1, math.ceil(0.5 * n)) == (n + 1) // 2, n
        assert max(1, math.ceil(0.9 * n)) == (n * 9 + 9) // 10, n


async def test_each_measure_counts_on_the_day_of_its_event(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await world.conversation(
        _sp(5, 9), inbound=_sp(5, 9), response=_sp(6, 9), closed=_sp(7, 9, 0), policy=True
    )
    await session.commit()
    days = _by_key(await _report(client, office_a, **{"from": "2026-11-05", "to": "2026-11-07"}))
    assert days["2026-11-05"]["opened"] == 1 and days["2026-11-05"]["closed"] == 0
    assert days["2026-11-06"]["firstResponseMedianSeconds"] == 86400
    assert days["2026-11-06"]["opened"] == 0
    assert days["2026-11-07"]["closed"] == 1
    assert days["2026-11-07"]["resolutionMedianSeconds"] == 2 * 86400
    assert days["2026-11-07"]["slaTotal"] == 1


async def test_sla_compliance_is_closed_conversations_with_a_policy_and_no_breach(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    for breached in (False, False, True):
        await world.conversation(
            _sp(5, 9), inbound=_sp(5, 9), closed=_sp(5, 12), policy=True, breached=breached
        )
    await world.conversation(_sp(5, 9), inbound=_sp(5, 9), closed=_sp(5, 12))  # no policy
    await world.conversation(_sp(5, 9), inbound=_sp(5, 9), policy=True)  # still open
    await world.conversation(
        _sp(5, 9),
        inbound=_sp(5, 9),
        closed=_sp(5, 13),
        policy=True,
        first_response_breached_at=_sp(5, 10),
    )
    await session.commit()
    totals = (await _report(client, office_a, **{"from": "2026-11-05", "to": "2026-11-05"}))[
        "totals"
    ]
    assert (totals["closed"], totals["slaTotal"], totals["slaMet"]) == (5, 4, 2)
    assert totals["slaCompliance"] == 0.5
    empty = await _report(client, office_a, **{"from": "2026-11-06", "to": "2026-11-06"})
    assert empty["totals"]["slaCompliance"] is None and empty["rows"][0]["opened"] == 0


async def test_each_group_by_groups_by_its_key_with_labels(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a, "Trabalhista")
    other_inbox = await f.make_inbox(session, office_a.id, "Família")
    webchat = await f.make_integration(session, office_a.id, other_inbox.id, type="WEBCHAT")
    user = await f.make_user(session, office_a.id, "Beatriz Rocha")
    area = await f.make_legal_area(session, office_a.id, "Previdenciário")
    await world.conversation(_sp(5, 9), assigned_user_id=user.id, legal_area_id=area.id)
    await world.conversation(_sp(5, 10), assigned_user_id=user.id)
    await world.conversation(_sp(5, 11), integration=webchat)
    await session.commit()
    span = {"from": "2026-11-05", "to": "2026-11-05"}

    inboxes = await _report(client, office_a, groupBy="inbox", **span)
    assert [(r["label"], r["opened"]) for r in inboxes["rows"]] == [
        ("Família", 1),
        ("Trabalhista", 2),
    ]
    assert inboxes["rows"][1]["key"] == world.integration.inbox_id
    users = _by_key(await _report(client, office_a, groupBy="user", **span))
    assert users[user.id]["label"] == "Beatriz Rocha" and users[user.id]["opened"] == 2
    assert users[None]["opened"] == 1 and users[None]["label"] is None
    areas = _by_key(await _report(client, office_a, groupBy="legalArea", **span))
    assert areas[area.id]["label"] == "Previdenciário" and areas[area.id]["opened"] == 1
    assert areas[None]["opened"] == 2
    channels = _by_key(await _report(client, office_a, groupBy="channel", **span))
    assert (channels["WHATSAPP"]["opened"], channels["WEBCHAT"]["opened"]) == (2, 1)
    one_inbox = await _report(client, office_a, inboxId=other_inbox.id, **span)
    assert one_inbox["totals"]["opened"] == 1 and one_inbox["inboxId"] == other_inbox.id


async def test_csv_with_format_or_accept_has_the_same_numbers(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    await world.conversation(_sp(5, 9), inbound=_sp(5, 9), response=_sp(5, 9, 5))
    await session.commit()
    span = {"from": "2026-11-05", "to": "2026-11-06"}
    as_json = await _report(client, office_a, **span)
    by_format = await client.get(PATH, params={**span, "format": "csv"}, headers=office_a.headers)
    by_accept = await client.get(
        PATH, params=span, headers={**office_a.headers, "Accept": "text/csv"}
    )
    for r in (by_format, by_accept):
        assert r.status_code == 200
        assert r.headers["content-type"] == "text/csv; charset=utf-8"
        assert r.headers["content-disposition"] == (
            'attachment; filename="relatorio-conversas-2026-11-05-2026-11-06-day.csv"'
        )
        rows = list(csv.DictReader(io.StringIO(r.text)))
        assert [row["key"] for row in rows] == ["2026-11-05", "2026-11-06", "total"]
        assert rows[0]["opened"] == "1" and rows[0]["firstResponseMedianSeconds"] == "300"
        assert rows[1]["firstResponseMedianSeconds"] == ""
        assert rows[2]["opened"] == str(as_json["totals"]["opened"])
    assert by_accept.text == by_format.text
    json_wins = await client.get(
        PATH,
        params={**span, "format": "json"},
        headers={**office_a.headers, "Accept": "text/csv"},
    )
    assert json_wins.headers["content-type"] == "application/json"
    assert json_wins.json() == as_json


async def test_a_supervisor_sees_only_their_inboxes(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    mine = await _world(session, office_a, "Minha")
    theirs = await _world(session, office_a, "Outra")
    await mine.conversation(_sp(5, 9))
    await theirs.conversation(_sp(5, 9))
    await theirs.conversation(_sp(5, 10))
    await session.commit()
    span = {"from": "2026-11-05", "to": "2026-11-05"}
    async with signed_in(
        app, office_a, "SUPERVISOR", inbox_ids=[mine.integration.inbox_id]
    ) as supervisor:
        r = await supervisor.request("GET", PATH, params={**span, "groupBy": "inbox"})
        assert r.status_code == 200, r.text
        assert [(row["label"], row["opened"]) for row in r.json()["rows"]] == [("Minha", 1)]
        assert r.json()["totals"]["opened"] == 1
        other = await supervisor.request(
            "GET", PATH, params={**span, "inboxId": theirs.integration.inbox_id}
        )
        assert other.status_code == 404 and error_of(other)["code"] == "NOT_FOUND"
    async with signed_in(app, office_a, "ADMIN") as admin:
        r = await admin.request("GET", PATH, params=span)
        assert r.json()["totals"]["opened"] == 3


async def test_an_agent_is_refused(app: FastAPI, office_a: OfficeFixture) -> None:
    async with signed_in(app, office_a, "AGENT") as agent:
        r = await agent.request("GET", PATH, params={"from": "2026-11-05", "to": "2026-11-05"})
        assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"


async def test_another_office_sees_nothing_of_ours(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await _world(session, office_a)
    await world.conversation(_sp(5, 9), inbound=_sp(5, 9), closed=_sp(5, 10), policy=True)
    await session.commit()
    span = {"from": "2026-11-05", "to": "2026-11-05"}
    assert (await _report(client, office_a, **span))["totals"]["opened"] == 1
    for group in ("day", "inbox", "user", "legalArea", "channel"):
        theirs = await _report(client, office_b, groupBy=group, **span)
        assert theirs["totals"]["opened"] == 0 and theirs["totals"]["closed"] == 0
        assert all(row["opened"] == 0 for row in theirs["rows"])
    r = await client.get(
        PATH, params={**span, "inboxId": world.integration.inbox_id}, headers=office_b.headers
    )
    assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"


async def test_bad_input_is_a_400_naming_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    ok = {"from": "2026-11-05", "to": "2026-11-05"}
    cases: list[tuple[dict[str, str], str]] = [
        ({"from": "2999-01-01"}, "query.to"),  # after today, the default `to`
        ({**ok, "from": "05/11/2026"}, "query.from"),
        ({**ok, "to": "2026-02-30"}, "query.to"),
        ({"to": "0"}, "query.to"),  # a number is not a date (pydantic would read 1970-01-01)
        ({**ok, "from": "20261105"}, "query.from"),
        ({"from": "2026-11-05", "to": "2026-11-04"}, "query.to"),
        ({"from": "2025-11-04", "to": "2026-11-05"}, "query.to"),  # 367 days
        ({**ok, "groupBy": "week"}, "query.groupBy"),
        ({**ok, "format": "pdf"}, "query.format"),
        ({**ok, "inboxId": "not an id"}, "query.inboxId"),
    ]
    for params, name in cases:
        r = await client.get(PATH, params=params, headers=office_a.headers)
        assert r.status_code == 400, (params, r.text)
        body = error_of(r)
        assert name in body["message"] + str(body.get("details")), (params, body)
    widest = await client.get(
        PATH, params={"from": "2025-11-05", "to": "2026-11-05"}, headers=office_a.headers
    )
    assert widest.status_code == 200 and len(widest.json()["rows"]) == 366


async def test_without_dates_the_report_is_the_last_30_days_up_to_the_offices_today(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    report = await _report(client, office_a)
    today = datetime.now(SP).date()
    keys = [row["key"] for row in report["rows"]]
    assert len(keys) == 30 and keys[-1] in {today.isoformat(), (today - timedelta(1)).isoformat()}
    assert report["to"] == keys[-1] and report["from"] == keys[0]
    only_to = await _report(client, office_a, to="2026-11-30")
    assert (only_to["from"], len(only_to["rows"])) == ("2026-11-01", 30)


async def test_no_key_is_401(client: httpx.AsyncClient) -> None:
    params = {"from": "2026-11-05", "to": "2026-11-05"}
    assert (await client.get(PATH, params=params)).status_code == 401
    bad = {"x-service-api-key": "nope"}
    assert (await client.get(PATH, params=params, headers=bad)).status_code == 401


async def test_the_report_reads_each_range_through_its_index(
    client: httpx.AsyncClient, app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Opened by ``(office_id, created_at)``, closed by the partial ``(office_id,
    closed_at)``, first responses by ``(office_id, first_response_at)``: only the range's
    rows are read, however many the office holds (bench/conversation_reports.py times it).
    SQLite reads each range in its own part (``row_number``); PostgreSQL reads the three
    ranges' rows once (the three indexes OR'ed, ``percentile_disc``)."""
    world = await _world(session, office_a)
    people = await seed_contacts(session, office_a.id, 50)
    rows = []
    for n in range(ROWS):
        created = _sp(1, 9) - timedelta(hours=n)
        rows.append(
            {
                "id": new_id(),
                "office_id": office_a.id,
                "person_id": people[n % len(people)],
                "inbox_id": world.integration.inbox_id,
                "integration_id": world.integration.id,
                "status": "CLOSED",
                "priority": "MEDIUM",
                "created_at": created,
                "updated_at": created,
                "first_inbound_at": created,
                "first_response_at": created + timedelta(minutes=5),
                "resolution_started_at": created,
                "closed_at": created + timedelta(hours=2),
            }
        )
    await bulk(session, Conversation, rows)
    await session.commit()
    with capturing(app) as sent:
        await _report(
            client, office_a, groupBy="channel", **{"from": "2026-10-20", "to": "2026-10-31"}
        )
    postgresql = session.get_bind().dialect.name == "postgresql"
    picks = "percentile_disc" if postgresql else "row_number"
    found = await plan(session, the_one(sent, "JOIN integrations", picks), "conversations")
    for index in (
        "ix_conversations_office_id_created_at",
        "ix_conversations_office_id_closed_at",
        "ix_conversations_office_id_first_response_at",
    ):
        assert uses(found, index), (index, found)
