"""The DJEN sync against a local DJEN stand-in answering in its documented shape: new
publications stored once (a duplicate, two lawyers of the office named on one, two syncs at
once), linked to the office's case, announced, with their deadline and the lawyer's ticket;
malformed items skipped and counted; politeness (pace, 429, paging, failures put off); the
daily job and the command."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from datetime import UTC, date, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import ValidationError
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.catalogue import BY_NAME
from officehub.jobs import periodic_jobs
from officehub.kit.config import Settings
from officehub.kit.worker import Worker, WorkerContext
from officehub.publications import sync as sync_module
from officehub.publications.djen import PAGE_SIZE
from officehub.publications.models import Lawyer, Publication
from officehub.publications.sync import ERROR_RETRY, MAX_TRIES, SYNC_JOB, Pacer, Syncer
from officehub.tickets.models import Ticket
from tests import factories as f
from tests.djen_standin import Reply, communication, documented_answer, running_djen
from tests.helpers import OfficeFixture, outbox
from tests.test_cli import officehub
from tests.webhook_helpers import Clock

LAWYER = {"name": "Dra. Ana Lima", "oab": {"number": "123456", "uf": "SP"}}
OTHER_LAWYER = {"name": "Dr. Bruno Reis", "oab": {"number": "654321", "uf": "SP"}}
TJSP = "1009131-52.2024.8.26.0224"
# Monday 30 March 2026, 09:00 in São Paulo: the fixture's item was made available on
# Friday 27 March, counts as published on Monday 30.
NOW = datetime(2026, 3, 30, 12, 0, tzinfo=UTC)


def clock_at(when: datetime = NOW) -> Clock:
    clock = Clock()
    clock.now = when
    return clock


def ctx_for(app: FastAPI, settings: Settings, clock: Clock | None = None) -> WorkerContext:
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    ctx.clock = clock or clock_at()
    return ctx


async def no_sleep(_seconds: float) -> None:
    return None


async def add_lawyer(
    client: httpx.AsyncClient, office: OfficeFixture, body: dict[str, Any] = LAWYER
) -> dict[str, Any]:
    r = await client.post("/lawyers", json=body, headers=office.headers)
    assert r.status_code == 201, r.text
    found: dict[str, Any] = r.json()
    return found


async def publications(client: httpx.AsyncClient, office: OfficeFixture) -> list[dict[str, Any]]:
    r = await client.get("/publications", params={"limit": 100}, headers=office.headers)
    assert r.status_code == 200, r.text
    data: list[dict[str, Any]] = r.json()["data"]
    return data


async def count(app: FastAPI, model: Any, office_id: str) -> int:
    async with app.state.sessionmaker() as s:
        stmt = select(func.count()).select_from(model).where(model.office_id == office_id)
        return int((await s.execute(stmt)).scalar_one())


async def test_a_new_publication_is_stored_once_linked_to_its_case_and_announced(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    r = await client.post(
        "/cases", json={"number": TJSP, "personId": contact.id}, headers=office_a.headers
    )
    case = r.json()
    lawyer = await add_lawyer(client, office_a)
    async with running_djen() as djen:
        djen.add(*documented_answer()["items"])
        todays = communication(5, "2026-03-30", kind="Edital", number=None)
        djen.add(todays)
        syncer = Syncer(sleep=no_sleep)
        report = await syncer.run(ctx_for(app, djen.settings(settings)), only_office=office_a.id)
        assert report.as_dict() == {
            "lawyers": 1,
            "calls": 1,
            "new": 2,
            "duplicates": 0,
            "skipped": 0,
            "failed": 0,
        }
        # today's publication answered again (the range overlaps a day) is a duplicate:
        # stored once, announced once
        again = await syncer.run(ctx_for(app, djen.settings(settings)), only_office=office_a.id)
        assert (again.new, again.duplicates) == (0, 1)
        query = djen.requests[0]
        assert (query["numeroOab"], query["ufOab"]) == ("123456", "SP")
        assert query["dataDisponibilizacaoInicio"] == "2026-03-23"  # 7 days back, first sync
        assert query["dataDisponibilizacaoFim"] == "2026-03-30"
        assert djen.requests[1]["dataDisponibilizacaoInicio"] == "2026-03-29"  # day before
    other, publication = sorted(await publications(client, office_a), key=lambda p: p["djenId"])
    assert other["djenId"] == 5 and other["caseId"] is None
    assert publication["caseId"] == case["id"] and publication["lawyerId"] == lawyer["id"]
    assert (publication["djenId"], publication["caseNumber"]) == (248164095, TJSP)
    assert publication["kind"] == "Intimação" and publication["category"] == "INTIMATION"
    assert publication["certificateUrl"].endswith(
        "/api/v1/comunicacao/geNaPz7wY5Efy1Mc8T9ewzlYBMJpDr/certidao"
    )
    assert publication["read"] is False
    events = await outbox(app, office_a.id, "case.publication.created")
    assert [e.data["id"] for e in events] == [publication["id"], other["id"]]  # by date
    assert set(events[0].data) == set(BY_NAME["case.publication.created"].example)


async def test_a_publication_naming_two_lawyers_of_the_office_is_stored_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    await add_lawyer(client, office_a)
    await add_lawyer(client, office_a, OTHER_LAWYER)
    await add_lawyer(client, office_b)  # another office follows the same lawyer
    item = communication(900, "2026-03-27")
    second = json.loads(json.dumps(item["destinatarioadvogados"][0]))
    second["advogado"].update(numero_oab="654321", uf_oab="SP")
    item["destinatarioadvogados"].append(second)
    async with running_djen() as djen:
        djen.add(item)
        ctx = ctx_for(app, djen.settings(settings))
        report = await Syncer(sleep=no_sleep).run(ctx, only_office=office_a.id)
        assert (report.lawyers, report.new, report.duplicates) == (2, 1, 1)
        assert (await Syncer(sleep=no_sleep).run(ctx, only_office=office_b.id)).new == 1
    assert len(await publications(client, office_a)) == 1
    assert len(await publications(client, office_b)) == 1
    assert len(await outbox(app, office_a.id, "case.publication.created")) == 1


async def test_two_syncs_at_once_store_each_publication_once(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    # two lawyers of the office named on the same 30 publications, synced at the same time
    # by separate runs (each its own lawyer, so neither claim skips the other): only the
    # unique index keeps one of each
    ana = await add_lawyer(client, office_a)
    bruno = await add_lawyer(client, office_a, OTHER_LAWYER)
    items = [communication(1000 + i, "2026-03-26") for i in range(30)]
    for item in items:
        second = json.loads(json.dumps(item["destinatarioadvogados"][0]))
        second["advogado"].update(numero_oab="654321", uf_oab="SP")
        item["destinatarioadvogados"].append(second)
    async with running_djen() as djen:
        djen.add(*items)
        djen.delay = 0.01
        ctx = ctx_for(app, djen.settings(settings))
        reports = await asyncio.gather(
            *(
                Syncer(sleep=no_sleep).run(ctx, only_lawyer=lawyer["id"])
                for lawyer in (ana, bruno, ana, bruno)
            )
        )
    assert sum(r.failed for r in reports) == 0
    assert sum(r.new for r in reports) == 30
    assert sum(r.duplicates for r in reports) >= 30
    assert await count(app, Publication, office_a.id) == 30
    assert await count(app, Ticket, office_a.id) == 30
    assert len(await outbox(app, office_a.id, "case.publication.created")) == 30


async def test_an_intimation_carries_its_deadline_in_business_days(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    # made available Fri 27 Mar 2026, published Mon 30; 5 business days (CPC art. 218 §3):
    # Tue 31 (1), Wed 1 (2), Thu 2 (3), Good Friday 3 Apr, Mon 6 (4), Tue 7 (5). Made
    # available Mon 30, published Tue 31: Wed 8 (5); with 6 Apr a court holiday of the
    # office, Thu 9.
    await add_lawyer(client, office_a)
    holiday = {"date": "2026-04-06", "name": "Feriado forense"}
    async with running_djen() as djen:
        djen.add(communication(1, "2026-03-27"))
        djen.add(communication(2, "2026-03-27", kind="Pauta de julgamento"))
        ctx = ctx_for(app, djen.settings(settings))
        await Syncer(sleep=no_sleep).run(ctx, only_office=office_a.id)
        assert (
            await client.post("/court-holidays", json=holiday, headers=office_a.headers)
        ).is_success
        djen.add(communication(3, "2026-03-30"))
        await Syncer(sleep=no_sleep).run(ctx, only_office=office_a.id)
    by_id = {p["djenId"]: p for p in await publications(client, office_a)}
    first = by_id[1]
    assert (first["madeAvailableOn"], first["publishedOn"]) == ("2026-03-27", "2026-03-30")
    assert (first["deadlineDays"], first["deadlineDaysSource"]) == (5, "KIND")
    assert (first["deadlineOn"], first["deadlineCalendar"]) == ("2026-04-07", "CPC_BUSINESS_DAYS")
    assert by_id[3]["deadlineOn"] == "2026-04-09"
    # the end of that day in the office's time zone (São Paulo, UTC-3)
    assert first["deadlineAt"] == "2026-04-08T02:59:59.999Z"
    # a kind with no period of its own has no deadline until the lawyer chooses one
    assert by_id[2]["category"] == "OTHER" and by_id[2]["deadlineAt"] is None


async def test_a_publication_opens_a_ticket_for_the_lawyer(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await add_lawyer(client, office_a)
    async with running_djen() as djen:
        djen.add(*documented_answer()["items"])
        await Syncer(sleep=no_sleep).run(
            ctx_for(app, djen.settings(settings)), only_office=office_a.id
        )
    [publication] = await publications(client, office_a)
    r = await client.get(f"/ticket/{publication['ticketId']}", headers=office_a.headers)
    assert r.status_code == 200, r.text
    ticket = r.json()
    assert ticket["title"] == f"Prazo até 07/04/2026: Intimação no processo {TJSP}"
    assert ticket["priority"] == "HIGH" and ticket["conversationId"] is None
    assert "Dra. Ana Lima (OAB/SP 123456)" in ticket["description"]
    assert "5 dias úteis, até 07/04/2026" in ticket["description"]
    assert documented_answer()["items"][0]["link"] in ticket["description"]
    assert "/api/v1/comunicacao/geNaPz7wY5Efy1Mc8T9ewzlYBMJpDr/certidao" in ticket["description"]
    # a message to the client is not what a publication makes
    assert await outbox(app, office_a.id, "chat.message.created") == []


async def test_malformed_items_are_skipped_and_counted_never_crash(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await add_lawyer(client, office_a)
    good = communication(7, "2026-03-27")
    good["campoNovo"] = {"unknown": True}  # unknown fields are ignored
    sparse = {"id": 8, "data_disponibilizacao": "2026-03-28"}  # the rest missing
    async with running_djen() as djen:
        djen.raw[("123456", "SP")] = [
            good,
            sparse,
            "not an object",
            {"id": "9", "data_disponibilizacao": "2026-03-27"},
            {"id": True, "data_disponibilizacao": "2026-03-27"},
            {"id": 10, "data_disponibilizacao": "27/03/2026"},
            {"id": 11},
            {**communication(12, "2026-03-27"), "tipoComunicacao": "Intima\nção\x00"},
        ]
        report = await Syncer(sleep=no_sleep).run(
            ctx_for(app, djen.settings(settings)), only_office=office_a.id
        )
    assert (report.new, report.skipped, report.failed) == (3, 5, 0)
    by_id = {p["djenId"]: p for p in await publications(client, office_a)}
    assert set(by_id) == {7, 8, 12}
    assert by_id[8]["caseId"] is None and by_id[8]["caseNumber"] is None
    assert by_id[8]["kind"] == "" and by_id[8]["category"] == "OTHER"
    assert by_id[12]["kind"] == "Intimação" and by_id[12]["deadlineAt"] is not None


async def test_djen_is_asked_politely_paged_paced_and_waiting_after_a_429(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await add_lawyer(client, office_a)
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    ticks = iter([0.0, 0.1, 0.2, 0.3])
    pacer = Pacer(rate=2.0, sleep=sleep, clock=lambda: next(ticks))
    async with running_djen() as djen:
        djen.add(*(communication(100 + i, "2026-03-27") for i in range(PAGE_SIZE + 20)))
        djen.script = [Reply(429, {"Retry-After": "7"}), Reply(503)]
        report = await Syncer(sleep=sleep, pacer=pacer).run(
            ctx_for(app, djen.settings(settings)), only_office=office_a.id
        )
        assert [q["pagina"] for q in djen.requests] == ["1", "1", "1", "2"]
        assert {q["itensPorPagina"] for q in djen.requests} == {str(PAGE_SIZE)}
    assert (report.calls, report.new, report.failed) == (4, PAGE_SIZE + 20, 0)
    # Retry-After 7 s honoured; each call waits its turn, 0.5 s after the one before (2 a
    # second); the 503 waits a growing, spread time (8 s ± 20 %) before the third try
    assert waits[0] == 7.0
    assert waits[1] == pytest.approx(0.4) and 6.4 <= waits[2] <= 9.6
    assert waits[3:] == [pytest.approx(0.8), pytest.approx(1.2)]


async def test_a_lawyer_djen_keeps_failing_for_is_tried_again_later(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
) -> None:
    lawyer = await add_lawyer(client, office_a)
    async with running_djen() as djen:
        djen.script = [Reply(503)] * MAX_TRIES
        report = await Syncer(sleep=no_sleep).run(
            ctx_for(app, djen.settings(settings)), only_office=office_a.id
        )
        assert (report.calls, report.failed) == (MAX_TRIES, 1)
        refused = await Syncer(sleep=no_sleep).run(
            ctx_for(app, djen.settings(settings, djen_url=djen.url + "/nowhere")),
            only_office=office_a.id,
        )
        assert refused.failed == 1 and refused.calls == 1  # a 404 is not tried again
    async with app.state.sessionmaker() as s:
        row = await s.get(Lawyer, lawyer["id"])
        assert row is not None and row.next_sync_at == NOW + ERROR_RETRY
        assert row.synced_through is None
    assert await publications(client, office_a) == []


async def test_the_daily_sync_asks_for_each_due_lawyer_once_a_day(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    await add_lawyer(client, office_a)
    await add_lawyer(client, office_b, OTHER_LAWYER)
    clock = clock_at()
    async with running_djen() as djen:
        djen.add(communication(1, "2026-03-27"))
        ctx = ctx_for(app, djen.settings(settings), clock)
        syncer = Syncer(sleep=no_sleep)
        assert (await syncer.run(ctx)).lawyers == 2  # every office's lawyers, never synced
        assert (await syncer.run(ctx)).lawyers == 0  # not due again yet
        clock.advance(hours=20)
        assert (await syncer.run(ctx)).lawyers == 0
        clock.advance(hours=7)
        djen.add(communication(2, "2026-03-31"))
        report = await syncer.run(ctx)
        assert (report.lawyers, report.new) == (2, 1)
        assert djen.requests[-1]["dataDisponibilizacaoInicio"] == "2026-03-29"
        assert djen.requests[-1]["dataDisponibilizacaoFim"] == "2026-03-31"
    assert len(await publications(client, office_a)) == 2


async def test_publications_sync_command_syncs_an_office_now(
    database_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await add_lawyer(client, office_a)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).date().isoformat()
    async with running_djen() as djen:
        djen.add(communication(1, yesterday))
        env = {**os.environ, "OFFICEHUB_DJEN_URL": djen.url}
        done = await officehub(
            database_url, "publications", "sync", "--office", office_a.id, "--json", env=env
        )
        assert json.loads(done.stdout) == {
            "lawyers": 1,
            "calls": 1,
            "new": 1,
            "duplicates": 0,
            "skipped": 0,
            "failed": 0,
        }, done.stderr
        djen.script = [Reply(404)]
        failed = await officehub(
            database_url, "publications", "sync", "--office", office_a.id, "--json", env=env
        )
        assert failed.returncode == 1 and json.loads(failed.stdout)["failed"] == 1
    assert len(await publications(client, office_a)) == 1


async def test_the_djen_url_setting_is_an_http_url_without_credentials(settings: Settings) -> None:
    for bad in (
        "ftp://comunicaapi.pje.jus.br",
        "comunicaapi.pje.jus.br",
        "https://user:pw@comunicaapi.pje.jus.br",
        "https://comunicaapi.pje.jus.br/?x=1",
        "http://169.254.169.254",
    ):
        with pytest.raises(ValidationError):
            Settings.model_validate({**settings.model_dump(), "djen_url": bad})
    ok = Settings.model_validate({**settings.model_dump(), "djen_url": "https://a.example/"})
    assert ok.djen_url == "https://a.example"
    assert Settings.model_fields["djen_url"].default == "https://comunicaapi.pje.jus.br"


def test_the_fixture_is_djens_documented_answer() -> None:
    answer = documented_answer()
    assert set(answer) == {"status", "message", "count", "items"}
    item = answer["items"][0]
    documented = {
        "id",
        "data_disponibilizacao",
        "siglaTribunal",
        "tipoComunicacao",
        "nomeOrgao",
        "texto",
        "numero_processo",
        "link",
        "hash",
        "destinatarios",
        "destinatarioadvogados",
    }
    assert documented <= set(item)
    assert date.fromisoformat(item["data_disponibilizacao"]) == date(2026, 3, 27)


async def test_the_sync_logs_no_lawyers_registration_or_name(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await add_lawyer(client, office_a)
    caplog.set_level(logging.DEBUG)
    async with running_djen() as djen:
        djen.add(communication(1, "2026-03-27"))
        ctx = ctx_for(app, djen.settings(settings))
        assert (await Syncer(sleep=no_sleep).run(ctx, only_office=office_a.id)).new == 1
        djen.script = [Reply(503)] * MAX_TRIES
        assert (await Syncer(sleep=no_sleep).run(ctx, only_office=office_a.id)).failed == 1
    assert "comunicacao" in caplog.text  # the requests were logged, their query withheld
    assert "123456" not in caplog.text and "Ana Lima" not in caplog.text


async def test_the_worker_runs_the_daily_sync_job(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await add_lawyer(client, office_a)
    assert SYNC_JOB in periodic_jobs()
    async with running_djen() as djen:
        djen.add(communication(1, "2026-03-27"))
        worker = Worker(ctx_for(app, djen.settings(settings)), [], [SYNC_JOB])
        await worker.run_once()
        running = sync_module._running.get("batch")  # a long batch goes on in the background
        if running is not None:
            await asyncio.wait_for(running, timeout=30)
        assert len(djen.requests) == 1
    [publication] = await publications(client, office_a)
    assert publication["djenId"] == 1 and publication["ticketId"] is not None
