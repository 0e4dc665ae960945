"""The official channel's template catalogue: list by device, replace, sync from the
platform (paged, a 429 retried), the CLI and the hourly job, APPROVED-only sends."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.template_sync import TEMPLATE_SYNC_JOB
from officehub.kit.config import Settings
from officehub.kit.worker import Worker, WorkerContext
from officehub.templates.models import WhatsAppTemplate
from tests import factories as f
from tests.helpers import OfficeFixture, error_of
from tests.whatsapp_platform import Platform, Scripted, error
from tests.whatsapp_world import official_integration, worker

MISSING = "c" + "0" * 24


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The test's settings with the platform stand-in as the Cloud API (``conftest``)."""
    return whatsapp_settings


def template(
    name: str, status: str = "APPROVED", language: str = "pt_BR", body: str = "Olá {{1}}!"
) -> dict[str, Any]:
    return {
        "name": name,
        "status": status,
        "category": "UTILITY",
        "language": language,
        "components": [{"type": "BODY", "text": body}],
        "id": f"tpl-{name}-{language}",
    }


async def _put(
    client: httpx.AsyncClient, office: OfficeFixture, integration_id: str, data: list[Any]
) -> httpx.Response:
    return await client.put(
        f"/integration/{integration_id}/whatsapp-templates",
        json={"data": data},
        headers=office.headers,
    )


# PUT /integration/{id}/whatsapp-templates and GET /integration/partner/whatsapp-templates


async def test_put_replaces_the_catalogue_and_get_lists_by_status(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id, device_id="dev-1")
    first = [template("boas_vindas"), template("cobranca", "PENDING"), template("antigo")]
    r = await _put(client, office_a, integration.id, first)
    assert r.status_code == 200, r.text
    assert [t["name"] for t in r.json()["data"]] == ["antigo", "boas_vindas", "cobranca"]
    second = [template("boas_vindas", "PAUSED"), template("cobranca")]
    r = await _put(client, office_a, integration.id, second)
    assert {t["name"]: t["status"] for t in r.json()["data"]} == {
        "boas_vindas": "PAUSED",
        "cobranca": "APPROVED",
    }
    r = await client.get(
        "/integration/partner/whatsapp-templates",
        params={"deviceId": "dev-1"},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    assert r.json() == {"data": [template("cobranca")]}
    r = await client.get(
        "/integration/partner/whatsapp-templates",
        params={"deviceId": "dev-1", "status": "PAUSED"},
        headers=office_a.headers,
    )
    assert [t["name"] for t in r.json()["data"]] == ["boas_vindas"]


async def test_templates_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id, device_id="dev-2")
    r = await client.get("/integration/partner/whatsapp-templates", headers=office_a.headers)
    assert r.status_code == 400 and "query.deviceId" in error_of(r)["details"]
    r = await client.get(
        "/integration/partner/whatsapp-templates",
        params={"deviceId": "dev-2", "status": "GONE"},
        headers=office_a.headers,
    )
    assert r.status_code == 400 and "query.status" in error_of(r)["details"]
    r = await _put(client, office_a, integration.id, [{**template("x"), "status": "LIVE"}])
    assert r.status_code == 400 and "body.data.0.status" in error_of(r)["details"]
    r = await _put(client, office_a, integration.id, [template("x"), template("x")])
    assert r.status_code == 400 and "body.data.1" in error_of(r)["details"]
    r = await _put(client, office_a, "bad-id", [])
    assert r.status_code == 400 and "path.id" in error_of(r)["details"]


async def test_templates_of_another_office_are_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    integration = await official_integration(session, office_a.id, device_id="dev-3")
    await _put(client, office_a, integration.id, [template("boas_vindas")])
    r = await client.get(
        "/integration/partner/whatsapp-templates",
        params={"deviceId": "dev-3"},
        headers=office_b.headers,
    )
    assert r.status_code == 404
    r = await _put(client, office_b, integration.id, [template("boas_vindas")])
    assert r.status_code == 404
    r = await client.post(
        f"/integration/{integration.id}/whatsapp-templates/sync", headers=office_b.headers
    )
    assert r.status_code == 404
    inbox = await f.make_inbox(session, office_a.id)
    plain = await f.make_integration(session, office_a.id, inbox.id, device_id="dev-plain")
    await session.commit()
    r = await client.get(
        "/integration/partner/whatsapp-templates",
        params={"deviceId": "dev-plain"},
        headers=office_a.headers,
    )
    assert r.status_code == 404
    assert (await _put(client, office_a, plain.id, [])).status_code == 404


async def test_templates_without_a_key_are_401(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    bad = {"x-service-api-key": "ohk_wrong"}
    for headers in ({}, bad):
        r = await client.get(
            "/integration/partner/whatsapp-templates", params={"deviceId": "x"}, headers=headers
        )
        assert r.status_code == 401
        r = await client.put(
            f"/integration/{integration.id}/whatsapp-templates", json={"data": []}, headers=headers
        )
        assert r.status_code == 401
        r = await client.post(
            f"/integration/{integration.id}/whatsapp-templates/sync", headers=headers
        )
        assert r.status_code == 401


async def test_concurrent_catalogue_replacements_keep_one_entry_per_name_and_language(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    answers = await asyncio.gather(
        *(
            _put(client, office_a, integration.id, [template("boas_vindas"), template(f"t{n}")])
            for n in range(8)
        )
    )
    assert {a.status_code for a in answers} == {200}
    names = list(
        await session.scalars(
            select(WhatsAppTemplate.name).where(WhatsAppTemplate.office_id == office_a.id)
        )
    )
    assert names.count("boas_vindas") == 1 and len(names) == 2


# POST /integration/{id}/whatsapp-templates/sync


async def test_sync_follows_pages_and_retries_a_429(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    await _put(client, office_a, integration.id, [template("removido"), template("a0", "PENDING")])
    platform.templates = [template(f"a{n}") for n in range(5)] + [
        {**template("em_recurso"), "status": "IN_APPEAL"}
    ]
    platform.script["templates"] = [
        Scripted(429, error(429, 4, "Application request limit reached").body, {"Retry-After": "0"})
    ]
    r = await client.post(
        f"/integration/{integration.id}/whatsapp-templates/sync", headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    got = {t["name"]: t["status"] for t in r.json()["data"]}
    assert got == {**{f"a{n}": "APPROVED" for n in range(5)}, "em_recurso": "PENDING"}
    assert platform.template_calls == 1 + 3  # the 429, then three pages of two
    changed = await session.scalar(
        select(WhatsAppTemplate).where(
            WhatsAppTemplate.office_id == office_a.id, WhatsAppTemplate.name == "a0"
        )
    )
    assert changed is not None and changed.status == "APPROVED"
    assert changed.status_changed_at is not None


async def test_sync_when_the_platform_refuses_is_502(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    await _put(client, office_a, integration.id, [template("fica")])
    platform.script["templates"] = [error(400, 100, "Invalid parameter")]
    r = await client.post(
        f"/integration/{integration.id}/whatsapp-templates/sync", headers=office_a.headers
    )
    assert r.status_code == 502
    assert error_of(r)["code"] == "PLATFORM_ERROR"
    r = await client.get(
        "/integration/partner/whatsapp-templates",
        params={"deviceId": integration.device_id},
        headers=office_a.headers,
    )
    assert [t["name"] for t in r.json()["data"]] == ["fica"]


async def test_hourly_job_syncs_every_official_integration(
    app: FastAPI,
    settings: Settings,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
    platform: Platform,
) -> None:
    first = await official_integration(session, office_a.id, device_id="d-a")
    second = await official_integration(session, office_b.id, device_id="d-b")
    platform.templates = [template("boas_vindas")]
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    await Worker(ctx, [], [TEMPLATE_SYNC_JOB]).run_once()
    await Worker(ctx, [], [TEMPLATE_SYNC_JOB]).run_once()  # within the hour: not again
    rows = list(await session.scalars(select(WhatsAppTemplate.integration_id)))
    assert sorted(rows) == sorted([first.id, second.id])
    assert platform.template_calls == 2


async def test_templates_sync_command(
    database_url: str,
    tmp_path: Path,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    platform.templates = [template("boas_vindas"), template("lembrete")]
    env = {
        **os.environ,
        "OFFICEHUB_DATABASE_URL": database_url,
        "OFFICEHUB_WHATSAPP_API_URL": platform.url,
    }
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "officehub",
        "templates",
        "sync",
        "--integration",
        integration.id,
        "--json",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out) == {"synced": 1}
    names = await session.scalars(
        select(WhatsAppTemplate.name).where(WhatsAppTemplate.integration_id == integration.id)
    )
    assert sorted(names) == ["boas_vindas", "lembrete"]


# Template sends


async def test_only_an_approved_template_can_be_sent(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _put(
        client,
        office_a,
        integration.id,
        [template("aprovado"), template("pendente", "PENDING"), template("pausado", "PAUSED")],
    )
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    url = f"/conversation/{conversation.id}/messages"
    for name in ("pendente", "pausado", "inexistente"):
        body = {"templateName": name, "language": "pt_BR", "variables": ["Maria"]}
        r = await client.post(url, json=body, headers=office_a.headers)
        assert r.status_code == 409
        assert error_of(r)["code"] == "TEMPLATE_NOT_APPROVED"
    body = {"templateName": "aprovado", "language": "pt_BR", "variables": ["Maria"]}
    r = await client.post(url, json=body, headers=office_a.headers)
    assert r.status_code == 201


async def test_template_variables_are_checked_against_its_placeholders(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _put(client, office_a, integration.id, [template("dois", body="{{1}} e {{2}}")])
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    url = f"/conversation/{conversation.id}/messages"
    for variables in ([], ["só um"], ["um", "dois", "três"]):
        body = {"templateName": "dois", "language": "pt_BR", "variables": variables}
        r = await client.post(url, json=body, headers=office_a.headers)
        assert r.status_code == 400
        assert "body.variables" in error_of(r)["details"]


async def test_a_template_with_an_image_header_is_sent_with_the_uploaded_media(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    header = {"type": "HEADER", "format": "IMAGE"}
    with_header = {
        **template("com_imagem", body="Olá {{1}}"),
        "components": [header, {"type": "BODY", "text": "Olá {{1}}"}],
    }
    await _put(client, office_a, integration.id, [with_header])
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    jpeg = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"x" * 500
    upload = await client.post(
        f"/conversation/{conversation.id}/template-header-media",
        files={"file": ("logo.jpg", jpeg, "image/jpeg")},
        headers=office_a.headers,
    )
    path = upload.json()["storagePath"]
    url = f"/conversation/{conversation.id}/messages"
    body: dict[str, Any] = {"templateName": "com_imagem", "language": "pt_BR", "variables": ["Ana"]}
    r = await client.post(url, json=body, headers=office_a.headers)
    assert r.status_code == 400 and "body.headerMediaPath" in error_of(r)["details"]
    foreign = path.replace(conversation.id, MISSING)
    r = await client.post(url, json={**body, "headerMediaPath": foreign}, headers=office_a.headers)
    assert r.status_code == 400 and "body.headerMediaPath" in error_of(r)["details"]
    r = await client.post(url, json={**body, "headerMediaPath": path}, headers=office_a.headers)
    assert r.status_code == 201, r.text
    as_links = settings.model_copy(update={"whatsapp_media_upload": "never"})
    assert await worker(app, as_links).run_once() == 1  # (uploads: test_whatsapp_outbound)
    [sent] = platform.sent
    [header_part, body_part] = sent["template"]["components"]
    link = header_part["parameters"][0]["image"]["link"]
    assert header_part["type"] == "header" and body_part["type"] == "body"
    fetched = await client.get(link.removeprefix(settings.public_url))
    assert fetched.status_code == 200 and fetched.content == jpeg
