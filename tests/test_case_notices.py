"""Case notices: a new movement worth telling becomes a notice the lawyer approves, edits
or discards; sent as text inside the client's window and as the office's template outside
it (the WhatsApp stand-in), never in quiet hours, never to an unverified contact."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.case_notices import service
from officehub.case_notices.models import CaseNotice
from officehub.case_notices.quiet import Quiet, next_allowed, parse_clock
from officehub.case_notices.sender import send_due
from officehub.cases.watch import Watcher
from officehub.contacts.models import Contact
from officehub.kit.config import Settings
from officehub.kit.worker import WorkerContext
from officehub.templates.models import WhatsAppTemplate
from tests import factories as f
from tests.datajud_standin import movement, running_datajud
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire, running_server
from tests.test_case_watch import TJSP, TJSP_DIGITS, add_case, ctx_for, no_sleep
from tests.webhook_helpers import Clock
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import official_integration, worker

SP = ZoneInfo("America/Sao_Paulo")
TEMPLATE = "aviso_processo"
TEMPLATE_BODY = "Olá {{1}}, novidade no processo {{2}}: {{3}} ({{4}})"
HISTORY = movement(26, "Distribuição", "2024-05-10T14:22:31.000Z", "sorteio")
JUDGMENT = movement(219, "Procedência", "2026-01-05T13:30:00.000Z")
CONCLUSION = movement(51, "Conclusão", "2026-01-04T13:00:00.000Z", "para decisão")
QUIET_OFF = {"quietHours": {"enabled": False}}
WITH_TEMPLATE = {**QUIET_OFF, "templateName": TEMPLATE, "templateLanguage": "pt_BR"}


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The test's settings with the platform stand-in as the Cloud API (``conftest``)."""
    return whatsapp_settings


async def _client(
    session: AsyncSession, office: OfficeFixture, *, verified: bool = True
) -> tuple[Contact, str]:
    """A client (Maria Souza) with a conversation on the official channel whose window is
    closed (she never wrote), and the office's approved utility template."""
    integration = await official_integration(session, office.id)
    session.add(
        WhatsAppTemplate(
            office_id=office.id,
            integration_id=integration.id,
            name=TEMPLATE,
            language="pt_BR",
            status="APPROVED",
            category="UTILITY",
            components=[{"type": "BODY", "text": TEMPLATE_BODY}],
        )
    )
    contact = await f.make_contact(session, office.id)
    contact.verified = verified
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    await session.commit()
    return contact, conversation.id


async def _notices_from_watch(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office: OfficeFixture,
    contact_id: str,
    conversation_id: str,
    *new: dict[str, Any],
    clock: Clock | None = None,
) -> dict[str, Any]:
    """A watched case whose history is stored, then ``new`` movements found (by the watcher
    with ``clock``); the case."""
    case = await add_case(client, office, contact_id, conversationId=conversation_id)
    watcher = Watcher(sleep=no_sleep)
    async with running_datajud() as datajud:
        conf = datajud.settings(settings)
        datajud.add("tjsp", TJSP_DIGITS, HISTORY)
        await watcher.run(ctx_for(app, conf), only_case=case["id"])
        datajud.add("tjsp", TJSP_DIGITS, *new)
        await watcher.run(ctx_for(app, conf, clock), only_case=case["id"])
    return case


async def _put_settings(
    client: httpx.AsyncClient, office: OfficeFixture, body: dict[str, Any]
) -> dict[str, Any]:
    r = await client.put("/case-notice-settings", json=body, headers=office.headers)
    assert r.status_code == 200, r.text
    out: dict[str, Any] = r.json()
    return out


async def _only_notice(client: httpx.AsyncClient, office: OfficeFixture) -> dict[str, Any]:
    r = await client.get("/case-notices", headers=office.headers)
    assert r.status_code == 200, r.text
    [notice] = r.json()["data"]
    out: dict[str, Any] = notice
    return out


# The end-to-end story


async def test_a_notice_waits_for_approval_is_edited_approved_and_goes_out_as_a_template(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    h = office_a.headers
    contact, conversation_id = await _client(session, office_a)
    await _put_settings(client, office_a, WITH_TEMPLATE)
    case = await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, CONCLUSION, JUDGMENT
    )
    # the judgment makes a notice; the conclusion (internal) does not
    notice = await _only_notice(client, office_a)
    assert (notice["status"], notice["category"], notice["caseId"]) == (
        "PENDING",
        "decision",
        case["id"],
    )
    assert notice["text"].startswith("Olá, Maria! Há uma novidade no seu processo nº " + TJSP)
    assert "registrada em 05/01/2026" in notice["text"]
    assert notice["explanation"] in notice["text"]
    assert (notice["sentAs"], notice["messageId"], notice["conversationId"]) == (
        None,
        None,
        conversation_id,
    )
    [created] = await outbox(app, office_a.id, "case.notice.created")
    assert created.data["id"] == notice["id"] and created.conversation_id == conversation_id
    assert platform.sent == []  # it waits for the lawyer
    r = await client.get("/case-notices", params={"status": "PENDING"}, headers=h)
    assert r.json()["totalResults"] == 1
    r = await client.get("/case-notices", params={"status": "SENT"}, headers=h)
    assert r.json()["totalResults"] == 0
    # the lawyer edits it
    edited = {"text": "Maria, você ganhou em primeira instância!", "explanation": "Você ganhou."}
    r = await client.patch(f"/case-notices/{notice['id']}", json=edited, headers=h)
    assert r.status_code == 200, r.text
    assert (r.json()["text"], r.json()["explanation"]) == (edited["text"], "Você ganhou.")
    # approved: the window is closed, so the office's template goes out
    r = await client.post(f"/case-notices/{notice['id']}/approve", headers=h)
    assert r.status_code == 200, r.text
    sent = r.json()
    assert (sent["status"], sent["sentAs"], sent["messageStatus"]) == ("SENT", "TEMPLATE", "QUEUED")
    assert sent["approvedAt"] is not None and sent["sentAt"] is not None
    await worker(app, settings).run_once()
    [out] = platform.sent
    assert out["type"] == "template"
    assert out["template"]["name"] == TEMPLATE
    [body] = out["template"]["components"]
    assert [p["text"] for p in body["parameters"]] == ["Maria", TJSP, "Você ganhou.", "05/01/2026"]
    r = await client.get(f"/case-notices/{notice['id']}", headers=h)
    assert (r.json()["messageId"], r.json()["messageStatus"]) == (sent["messageId"], "SENT")
    [event] = await outbox(app, office_a.id, "case.notice.sent")
    assert (event.data["sentAs"], event.data["messageId"]) == ("TEMPLATE", sent["messageId"])
    # sent: it can be neither edited, approved again nor discarded
    for path, body_ in (("", {"text": "de novo"}), ("/approve", None), ("/discard", None)):
        call = client.patch if not path else client.post
        r = await call(f"/case-notices/{notice['id']}{path}", json=body_, headers=h)
        assert (r.status_code, error_of(r)["code"]) == (409, "NOTICE_CLOSED")


async def test_inside_the_window_a_notice_goes_out_as_text(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    h = office_a.headers
    contact, conversation_id = await _client(session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound", json={"text": "Oi"}, headers=h
    )
    assert r.status_code == 201, r.text
    await _put_settings(client, office_a, WITH_TEMPLATE)
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    notice = await _only_notice(client, office_a)
    r = await client.post(f"/case-notices/{notice['id']}/approve", headers=h)
    assert (r.status_code, r.json()["sentAs"]) == (200, "TEXT"), r.text
    await worker(app, settings).run_once()
    [out] = platform.sent
    assert (out["type"], out["text"]["body"]) == ("text", notice["text"])


async def test_outside_the_window_without_a_template_approval_is_409_and_changes_nothing(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a)
    await _put_settings(client, office_a, QUIET_OFF)
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    notice = await _only_notice(client, office_a)
    r = await client.post(f"/case-notices/{notice['id']}/approve", headers=office_a.headers)
    assert (r.status_code, error_of(r)["code"]) == (409, "NOTICE_NOT_SENT")
    assert "OUTSIDE_SERVICE_WINDOW" in error_of(r)["details"]
    assert (await _only_notice(client, office_a))["status"] == "PENDING"
    assert await outbox(app, office_a.id, "case.notice.sent") == []


# Which movements make a notice


async def test_internal_moves_and_never_categories_make_no_notice(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a)
    await _put_settings(client, office_a, {"categories": {"decision": "NEVER"}})
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, CONCLUSION, JUDGMENT
    )
    r = await client.get("/case-notices", headers=office_a.headers)
    assert r.json()["totalResults"] == 0
    assert await outbox(app, office_a.id, "case.notice.created") == []
    # the movements themselves were still announced
    assert len(await outbox(app, office_a.id, "case.movement.created")) == 2


async def test_the_history_of_a_case_makes_no_notice(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a)
    case = await add_case(client, office_a, contact.id, conversationId=conversation_id)
    async with running_datajud() as datajud:
        datajud.add("tjsp", TJSP_DIGITS, HISTORY, JUDGMENT)
        await Watcher(sleep=no_sleep).run(
            ctx_for(app, datajud.settings(settings)), only_case=case["id"]
        )
    r = await client.get("/case-notices", headers=office_a.headers)
    assert r.json()["totalResults"] == 0


# Quiet hours


def _quiet(**changes: Any) -> Quiet:
    values: dict[str, Any] = {
        "enabled": True,
        "start": parse_clock("20:00"),
        "end": parse_clock("08:00"),
        "sundays": True,
        "zone": SP,
    }
    return Quiet(**{**values, **changes})


def _sp(year: int, month: int, day: int, hour: int = 0, minute: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, tzinfo=SP)


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (_sp(2026, 1, 7, 14, 0), _sp(2026, 1, 7, 14, 0)),  # a Wednesday afternoon: at once
        (_sp(2026, 1, 7, 21, 30), _sp(2026, 1, 8, 8, 0)),  # at night: the next morning
        (_sp(2026, 1, 8, 2, 0), _sp(2026, 1, 8, 8, 0)),  # after midnight: the same morning
        (_sp(2026, 1, 8, 8, 0), _sp(2026, 1, 8, 8, 0)),  # the quiet hours end at 08:00
        (_sp(2026, 1, 10, 22, 0), _sp(2026, 1, 12, 8, 0)),  # Saturday night: Monday
        (_sp(2026, 1, 11, 12, 0), _sp(2026, 1, 12, 8, 0)),  # Sunday noon: Monday
    ],
)
def test_quiet_hours_put_a_notice_off_to_the_next_allowed_morning(
    now: datetime, expected: datetime
) -> None:
    assert next_allowed(now.astimezone(UTC), _quiet()) == expected.astimezone(UTC)


def test_quiet_hours_off_or_sundays_allowed_or_a_daytime_span() -> None:
    sunday_night = _sp(2026, 1, 11, 22, 0)
    assert next_allowed(sunday_night, _quiet(enabled=False)) == sunday_night
    assert next_allowed(sunday_night, _quiet(sundays=False)) == _sp(2026, 1, 12, 8, 0)
    assert next_allowed(_sp(2026, 1, 11, 12, 0), _quiet(sundays=False)) == _sp(2026, 1, 11, 12)
    lunch = _quiet(start=parse_clock("12:00"), end=parse_clock("14:00"), sundays=False)
    assert next_allowed(_sp(2026, 1, 7, 13, 0), lunch) == _sp(2026, 1, 7, 14, 0)
    assert next_allowed(_sp(2026, 1, 7, 22, 0), lunch) == _sp(2026, 1, 7, 22, 0)


async def test_a_notice_sent_at_once_waits_out_the_quiet_hours_with_the_workers_clock(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    contact, conversation_id = await _client(session, office_a)
    rules = {"categories": {"decision": "SEND"}, "templateName": TEMPLATE}
    await _put_settings(client, office_a, rules)
    clock = Clock()
    clock.now = _sp(2026, 1, 10, 23, 30).astimezone(UTC)  # a Saturday night
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT, clock=clock
    )
    notice = await _only_notice(client, office_a)
    assert notice["status"] == "APPROVED"
    assert notice["sendAfter"] == "2026-01-12T11:00:00.000Z"  # Monday 08:00 in São Paulo
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, clock=clock)
    clock.now = _sp(2026, 1, 11, 12, 0).astimezone(UTC)  # Sunday noon: still waiting
    assert await send_due(ctx) == 0
    clock.now = _sp(2026, 1, 12, 8, 0).astimezone(UTC)
    assert await send_due(ctx) == 1
    sent = await _only_notice(client, office_a)
    assert (sent["status"], sent["sentAs"], sent["sendAfter"]) == ("SENT", "TEMPLATE", None)
    assert await send_due(ctx) == 0
    await worker(app, settings).run_once()
    assert [s["type"] for s in platform.sent] == ["template"]


async def test_approving_in_quiet_hours_sends_in_the_morning(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a)
    await _put_settings(client, office_a, {"templateName": TEMPLATE})
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    notice = await _only_notice(client, office_a)
    night = _sp(2026, 1, 7, 23, 0).astimezone(UTC)
    async with app.state.sessionmaker() as s, s.begin():
        out = await service.approve_notice(s, office_a.id, notice["id"], now=night)
    assert (out.status, out.send_after) == ("APPROVED", _sp(2026, 1, 8, 8, 0).astimezone(UTC))
    assert out.sent_as is None and out.message_id is None


# Who is told


async def test_an_unverified_contact_is_refused(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a, verified=False)
    await _put_settings(client, office_a, WITH_TEMPLATE)
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    notice = await _only_notice(client, office_a)
    r = await client.post(f"/case-notices/{notice['id']}/approve", headers=office_a.headers)
    assert (r.status_code, error_of(r)["code"]) == (409, "CONTACT_NOT_VERIFIED")
    assert (await _only_notice(client, office_a))["status"] == "PENDING"


async def test_an_unverified_contact_sent_at_once_is_failed_by_the_worker(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a, verified=False)
    await _put_settings(client, office_a, {**WITH_TEMPLATE, "categories": {"decision": "SEND"}})
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    assert await send_due(ctx) == 1
    notice = await _only_notice(client, office_a)
    assert notice["status"] == "FAILED" and notice["error"].startswith("CONTACT_NOT_VERIFIED")
    assert await outbox(app, office_a.id, "case.notice.sent") == []


# One decision per notice


async def test_approve_and_discard_at_once_one_wins(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a)
    await _put_settings(client, office_a, WITH_TEMPLATE)
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    notice = await _only_notice(client, office_a)
    paths = [f"/case-notices/{notice['id']}/{a}" for a in ("approve", "discard")] * 3
    async with running_server(app) as url, concurrent_client(url) as c:
        answers = await fire(len(paths), lambda i: c.post(paths[i], headers=office_a.headers))
    codes = sorted(a.status_code for a in answers)
    assert codes == [200, 409, 409, 409, 409, 409], [a.text for a in answers]
    winner = next(a.json() for a in answers if a.status_code == 200)
    assert winner["status"] in ("SENT", "DISCARDED")
    assert (await _only_notice(client, office_a))["status"] == winner["status"]
    session.expire_all()
    sent = await outbox(app, office_a.id, "case.notice.sent")
    assert len(sent) == (1 if winner["status"] == "SENT" else 0)


# Each route: bad input, another office, no key


async def test_case_notice_routes_refuse_bad_input_naming_the_field(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    h = office_a.headers
    contact, conversation_id = await _client(session, office_a)
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    notice = await _only_notice(client, office_a)
    r = await client.get("/case-notices", params={"status": "LOST"}, headers=h)
    assert r.status_code == 400 and "status" in error_of(r)["details"]
    r = await client.get("/case-notices", params={"caseId": "not an id"}, headers=h)
    assert r.status_code == 400 and "caseId" in error_of(r)["details"]
    for bad in ({}, {"text": ""}, {"text": "x" * 1025}, {"explanation": "a\nb"}):
        r = await client.patch(f"/case-notices/{notice['id']}", json=bad, headers=h)
        assert r.status_code == 400, (bad, r.text)
    r = await client.patch(f"/case-notices/{notice['id']}", json={"text": ""}, headers=h)
    assert "body.text" in error_of(r)["details"]
    for path in ("/case-notices/bad id", "/case-notices/bad id/approve"):
        r = await (client.get if path.count("/") == 2 else client.post)(path, headers=h)
        assert r.status_code == 400, path
    bad_settings = (
        ({"timeZone": "Mars/Olympus"}, "body.timeZone"),
        ({"quietHours": {"from": "25:00"}}, "quietHours.from"),
        ({"categories": {"hearing": "SOMETIMES"}}, "categories.hearing"),
        ({"templateName": ""}, "templateName"),
    )
    for body, field in bad_settings:
        r = await client.put("/case-notice-settings", json=body, headers=h)
        assert r.status_code == 400 and field in error_of(r)["details"], (body, r.text)
    r = await client.get("/case-notice-settings", headers=h)
    assert r.json()["updatedAt"] is None and r.json()["timeZone"] == "America/Sao_Paulo"
    assert (await _only_notice(client, office_a))["text"] == notice["text"]


async def test_case_notice_routes_answer_404_for_another_offices_notice_and_401_without_a_key(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a)
    case = await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    notice = await _only_notice(client, office_a)
    b = office_b.headers
    at = f"/case-notices/{notice['id']}"
    assert (await client.get(at, headers=b)).status_code == 404
    assert (await client.patch(at, json={"text": "B"}, headers=b)).status_code == 404
    assert (await client.post(f"{at}/approve", headers=b)).status_code == 404
    assert (await client.post(f"{at}/discard", headers=b)).status_code == 404
    r = await client.get("/case-notices", params={"caseId": case["id"]}, headers=b)
    assert r.status_code == 404
    assert (await client.get("/case-notices", headers=b)).json()["totalResults"] == 0
    await _put_settings(client, office_b, {"categories": {"decision": "NEVER"}})
    r = await client.get("/case-notice-settings", headers=office_a.headers)
    assert r.json()["categories"]["decision"] == "ASK"
    for method, path in (
        ("GET", "/case-notices"),
        ("GET", at),
        ("PATCH", at),
        ("POST", f"{at}/approve"),
        ("POST", f"{at}/discard"),
        ("GET", "/case-notice-settings"),
        ("PUT", "/case-notice-settings"),
    ):
        r = await client.request(method, path, json={})
        assert r.status_code == 401, (method, path)
    assert (await _only_notice(client, office_a))["status"] == "PENDING"


async def test_settings_are_saved_and_read_back(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    body = {
        "categories": {"hearing": "SEND", "archive": "NEVER"},
        "templateName": TEMPLATE,
        "templateLanguage": "pt_BR",
        "quietHours": {"enabled": True, "from": "21:30", "until": "07:15", "sundays": False},
        "timeZone": "America/Manaus",
    }
    saved = await _put_settings(client, office_a, body)
    again = await _put_settings(client, office_a, body)
    r = await client.get("/case-notice-settings", headers=office_a.headers)
    assert r.json() == again
    assert saved["categories"] == {
        "hearing": "SEND",
        "decision": "ASK",
        "deadline": "ASK",
        "filing": "ASK",
        "archive": "NEVER",
    }
    assert saved["quietHours"] == body["quietHours"] and saved["updatedAt"] is not None


async def test_a_merged_contacts_notices_follow_the_kept_contact(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact, conversation_id = await _client(session, office_a)
    await _notices_from_watch(
        app, settings, client, office_a, contact.id, conversation_id, JUDGMENT
    )
    kept = await f.make_contact(session, office_a.id, name="Maria S.", phone="+5511987650999")
    kept_id, other_id = kept.id, contact.id
    await session.commit()
    r = await client.post(
        f"/people/{kept_id}/merge", json={"otherId": other_id}, headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    session.expire_all()
    [row] = list(await session.scalars(select(CaseNotice)))
    assert row.person_id == kept_id
