"""Erasure at the client's request (``POST /people/{id}/erase``) and legal holds
(``PUT /people/{id}/legal-hold``): docs/lgpd.md."""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiobotocore.session
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.contacts.erasure import ERASED_JOB
from officehub.contacts.jobs import JOBS
from officehub.kit.config import Settings
from officehub.kit.db import Base
from officehub.kit.scheduled_jobs import ScheduledJob, scheduled_runner
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages.models import Message
from tests import factories as f
from tests.automation_helpers import automation_worker, create_rule
from tests.helpers import OfficeFixture, error_of, make_office, outbox
from tests.receiver import Reply, running_receiver
from tests.server import concurrent_client, fire, running_server
from tests.test_storage_backends import BUCKET, KEYS, _bucket, moto_endpoint  # noqa: F401
from tests.webchat_world import SITE, make_webchat
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import (
    notification,
    official_integration,
    post_notification,
    text_message,
    worker,
)

NAME = "Zebedeu Quintanilha"
WA_ID = "5521987651234"
PHONE = "+5521987651234"
EMAIL = "zebedeu.quintanilha@exemplo.com.br"
WORDS = "xilofone pergaminho setenta"
NOTE = "anotacao sigilosa do abacaxi lunar"
FIELD = "numero secreto 4815162342"
MEDIA = b"\xff\xd8\xff" + b"FOTO-DO-ZEBEDEU-" * 64
MISSING = "cxxxxxxxxxxxxxxxxxxxxxxxx"

SECRETS = [NAME, WA_ID, PHONE, EMAIL, WORDS, NOTE, FIELD, "FOTO-DO-ZEBEDEU", "zebedeu"]
"""Every string of the client's that must be gone (compared case-insensitively)."""


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    return whatsapp_settings


def admin(office: OfficeFixture) -> dict[str, str]:
    return office.headers


@dataclass
class Client:
    contact_id: str
    conversation_id: str
    card_id: str
    case_id: str
    media_key: str


async def an_office_with_a_channel(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture, receiver_url: str
) -> str:
    """An official WhatsApp channel, a webhook (whose receiver echoes what it is told) and
    a rule on every message received; the integration's id."""
    integration = await official_integration(session, office.id)
    made = await client.post(
        "/webhooks",
        json={
            "name": "espelho",
            "url": receiver_url,
            "events": [
                "contact.created",
                "contact.updated",
                "chat.message.received",
                "chat.conversation.created",
                "crm.lead.created",
                "crm.lead.updated",
            ],
        },
        headers=office.headers,
    )
    assert made.status_code == 201, made.text
    await create_rule(client, office)
    return integration.id


async def a_client_with_history(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office: OfficeFixture,
    platform: Platform,
    settings: Settings,
    integration_id: str,
    *,
    name: str = NAME,
    wa_id: str = WA_ID,
    words: str = WORDS,
    media_id: str = "media-z",
    case_number: str = "1009131-52.2024.8.26.0224",
) -> Client:
    """A client met on WhatsApp: messages (one with a photo, fetched), a note, an email, a
    card with a custom field, a case, a rule run and webhook deliveries."""
    platform.media[media_id] = (MEDIA, "image/jpeg")
    photo = {
        "from": wa_id,
        "id": f"wamid.photo.{media_id}",
        "timestamp": "1767268801",
        "type": "image",
        "image": {"id": media_id, "mime_type": "image/jpeg", "caption": f"foto {words}"},
    }
    body = notification(
        [text_message(f"wamid.text.{media_id}", wa_id, f"Olá, {words}"), photo],
        name=name,
        sender=wa_id,
    )
    assert (await post_notification(client, integration_id, body)).status_code == 200
    assert await worker(app, settings, media=True).run_once() == 1
    contact = (await client.get("/people", params={"search": name}, headers=office.headers)).json()
    [person] = contact["data"]
    email = EMAIL if name == NAME else f"outro.{media_id}@exemplo.com.br"
    patched = await client.patch(
        f"/people/{person['id']}", json={"email": email}, headers=office.headers
    )
    assert patched.status_code == 200, patched.text
    [message] = list(
        await session.scalars(
            select(Message).where(Message.external_id == f"wamid.photo.{media_id}")
        )
    )
    assert message.media_url is not None
    key = message.media_url.split("/media/", 1)[1].split("?", 1)[0]
    note = await client.post(
        "/conversation/note",
        json={"conversationId": message.conversation_id, "text": f"{NOTE} {words}"},
        headers=office.headers,
    )
    assert note.status_code == 201, note.text
    inbox_id = (await client.get(f"/integration/{integration_id}", headers=office.headers)).json()
    _funnel, columns = await f.make_funnel(session, office.id, inbox_id["inboxId"])
    await session.commit()
    card = await client.post(
        "/funnel-column-card",
        json={
            "columnId": columns[0].id,
            "personId": person["id"],
            "conversationId": message.conversation_id,
            "customFields": [{"id": "cf1", "name": "Processo", "type": "text", "value": FIELD}],
        },
        headers=office.headers,
    )
    assert card.status_code == 201, card.text
    case = await client.post(
        "/cases",
        json={"number": case_number, "personId": person["id"], "watch": False},
        headers=office.headers,
    )
    assert case.status_code == 201, case.text
    ran = await automation_worker(app, settings).run_until_idle()
    assert ran > 0
    return Client(person["id"], message.conversation_id, card.json()["id"], case.json()["id"], key)


def cleanup_worker(app: FastAPI, settings: Settings) -> Worker:
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    return Worker(ctx, [scheduled_runner(JOBS.scheduled)])


async def rows_naming(
    app: FastAPI, needles: list[str], *, skip: frozenset[str] = frozenset()
) -> list[tuple[str, str]]:
    """Every row of every table (but ``skip``) whose text form holds one of ``needles``
    (any case)."""
    found = []
    async with app.state.engine.connect() as connection:
        for table in Base.metadata.sorted_tables:
            if table.name in skip:
                continue
            rows = await connection.execute(select(table))
            for row in rows:
                line = repr(tuple(row)).lower()
                found += [(table.name, n) for n in needles if n.lower() in line]
    return found


def bytes_naming(folder: Path, needles: list[str]) -> list[tuple[str, str]]:
    """Every file under ``folder`` whose bytes hold one of ``needles`` (any case)."""
    found = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        content = path.read_bytes().lower()
        found += [(path.name, n) for n in needles if n.lower().encode() in content]
    return found


async def test_an_erased_client_leaves_no_byte_in_the_database_files_or_logs(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
    settings: Settings,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    async with running_receiver(lambda _n: Reply(body=f"recebido {NAME} {PHONE}")) as receiver:
        channel = await an_office_with_a_channel(client, session, office_a, receiver.url)
        erased = await a_client_with_history(
            app, client, session, office_a, platform, settings, channel
        )
        assert len(receiver.received) >= 4
    assert await rows_naming(app, SECRETS), "the arrangement holds the client's data"
    assert (settings.data_dir / "files" / erased.media_key).exists()

    r = await client.post(f"/people/{erased.contact_id}/erase", headers=admin(office_a))
    assert r.status_code == 200, r.text
    assert r.json()["id"] == erased.contact_id and r.json()["erasedAt"].endswith("Z")
    assert await cleanup_worker(app, settings).run_once() == 1

    assert await rows_naming(app, SECRETS) == []
    # The audit trail keeps the ids of the records read or changed (no name, phone, email or
    # words: it is checked with every other table just above): it is the record of who
    # touched a client's file, append-only and hash-chained (docs/lgpd.md).
    ids = [erased.conversation_id, erased.card_id]
    assert await rows_naming(app, ids, skip=frozenset({"audit_entries"})) == []
    assert not (settings.data_dir / "files" / erased.media_key).exists()
    if app.state.engine.dialect.name == "sqlite":
        assert bytes_naming(tmp_path, SECRETS) == []
    logged = "\n".join(f"{r.getMessage()} {r.args!r}" for r in caplog.records).lower()
    assert [s for s in SECRETS if s.lower() in logged] == []


async def test_erasure_emits_contact_deleted_with_ids_only(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    contact = await f.make_contact(session, office_a.id, name=NAME, phone=PHONE)
    await session.commit()
    r = await client.post(f"/people/{contact.id}/erase", headers=admin(office_a))
    assert r.status_code == 200, r.text
    [deleted] = await outbox(app, office_a.id, "contact.deleted")
    assert deleted.data == {"id": contact.id, "erased": True, "mergedIntoId": None}
    assert await outbox(app, office_a.id, "contact.created") == []
    gone = await client.get(f"/people/{contact.id}", headers=office_a.headers)
    assert gone.status_code == 404


async def test_erasure_leaves_other_clients_untouched(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
    settings: Settings,
) -> None:
    async with running_receiver() as receiver:
        channel = await an_office_with_a_channel(client, session, office_a, receiver.url)
        erased = await a_client_with_history(
            app, client, session, office_a, platform, settings, channel
        )
        kept = await a_client_with_history(
            app,
            client,
            session,
            office_a,
            platform,
            settings,
            channel,
            name="Outra Pessoa",
            wa_id="5531991112222",
            words="cliente que fica",
            media_id="media-k",
            case_number="5046420-77.2020.4.04.7000",
        )
    before = await rows_naming(app, ["cliente que fica", kept.conversation_id])
    r = await client.post(f"/people/{erased.contact_id}/erase", headers=admin(office_a))
    assert r.status_code == 200, r.text
    assert await cleanup_worker(app, settings).run_once() == 1
    assert await rows_naming(app, ["cliente que fica", kept.conversation_id]) == before
    assert (settings.data_dir / "files" / kept.media_key).exists()
    listed = await client.get(
        "/conversation/notes",
        params={"conversationId": kept.conversation_id},
        headers=office_a.headers,
    )
    assert listed.json()["totalResults"] == 1


async def test_the_erasure_job_vacuums_postgresql_and_is_done(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    """PostgreSQL: the rows are gone at once and a VACUUM is scheduled through the queue,
    not run in the request."""
    contact = await f.make_contact(session, office_a.id, name=NAME, phone=PHONE)
    await session.commit()
    r = await client.post(f"/people/{contact.id}/erase", headers=admin(office_a))
    assert r.status_code == 200, r.text
    [job] = list(await session.scalars(select(ScheduledJob).where(ScheduledJob.kind == ERASED_JOB)))
    assert job.done_at is None and job.office_id == office_a.id
    assert await cleanup_worker(app, app.state.settings).run_once() == 1
    await session.refresh(job)
    assert job.done_at is not None and job.error is None
    if app.state.engine.dialect.name == "postgresql":
        async with app.state.engine.connect() as connection:
            vacuumed = await connection.scalar(
                text("SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'contacts'")
            )
        assert vacuumed is not None


# Legal hold


async def test_legal_hold_makes_erasure_and_deletion_409_LEGAL_HOLD(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    contact = await f.make_contact(session, office_a.id, name=NAME, phone=PHONE)
    await session.commit()
    held = await client.put(
        f"/people/{contact.id}/legal-hold",
        json={"legalHold": True, "legalHoldReason": "Processo 1009131-52"},
        headers=admin(office_a),
    )
    assert held.status_code == 200, held.text
    assert held.json()["legalHold"] is True
    assert held.json()["legalHoldReason"] == "Processo 1009131-52"
    for method, path in [
        ("POST", f"/people/{contact.id}/erase"),
        ("DELETE", f"/people/{contact.id}"),
    ]:
        r = await client.request(method, path, headers=admin(office_a))
        assert r.status_code == 409, (path, r.text)
        assert error_of(r)["code"] == "LEGAL_HOLD"
    read = await client.get(f"/people/{contact.id}", headers=office_a.headers)
    assert read.status_code == 200 and read.json()["legalHold"] is True
    [updated] = await outbox(app, office_a.id, "contact.updated")
    assert updated.data["legalHold"] is True
    released = await client.put(
        f"/people/{contact.id}/legal-hold", json={"legalHold": False}, headers=admin(office_a)
    )
    assert released.status_code == 200
    assert (released.json()["legalHold"], released.json()["legalHoldReason"]) == (False, None)
    r = await client.post(f"/people/{contact.id}/erase", headers=admin(office_a))
    assert r.status_code == 200, r.text


async def test_holding_needs_a_reason_and_a_same_hold_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    path = f"/people/{contact.id}/legal-hold"
    for body, field in [
        ({"legalHold": True}, "body.legalHoldReason"),
        ({"legalHold": True, "legalHoldReason": ""}, "body.legalHoldReason"),
        ({"legalHold": "sim", "legalHoldReason": "x"}, "body.legalHold"),
        ({"legalHoldReason": "x"}, "body.legalHold"),
        ({"legalHold": True, "legalHoldReason": "x" * 501}, "body.legalHoldReason"),
    ]:
        r = await client.put(path, json=body, headers=admin(office_a))
        assert r.status_code == 400, (body, r.text)
        assert field in error_of(r)["details"], body
    assert (await client.get(f"/people/{contact.id}", headers=office_a.headers)).json()[
        "legalHold"
    ] is False
    body = {"legalHold": True, "legalHoldReason": "Ordem judicial"}
    assert (await client.put(path, json=body, headers=admin(office_a))).status_code == 200
    assert (await client.put(path, json=body, headers=admin(office_a))).status_code == 200
    assert len(await outbox(app, office_a.id, "contact.updated")) == 1


async def test_a_merged_held_contact_passes_its_hold_to_the_kept_one(
    client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    kept = await f.make_contact(session, office_a.id, name="Fica")
    other = await f.make_contact(session, office_a.id, name="Vai")
    await session.commit()
    hold = {"legalHold": True, "legalHoldReason": "Disputa"}
    assert (
        await client.put(f"/people/{other.id}/legal-hold", json=hold, headers=admin(office_a))
    ).status_code == 200
    merged = await client.post(
        f"/people/{kept.id}/merge", json={"otherId": other.id}, headers=office_a.headers
    )
    assert merged.status_code == 200, merged.text
    assert (merged.json()["legalHold"], merged.json()["legalHoldReason"]) == (True, "Disputa")


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [("POST", "erase", None), ("PUT", "legal-hold", {"legalHold": False})],
)
async def test_erasure_and_hold_routes_refuse_another_offices_contact_no_key_and_no_admin(
    app: FastAPI,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
    session: AsyncSession,
    method: str,
    suffix: str,
    body: dict[str, Any] | None,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    path = f"/people/{contact.id}/{suffix}"
    other = await client.request(method, path, json=body, headers=office_b.headers)
    assert other.status_code == 404 and error_of(other)["code"] == "NOT_FOUND"
    missing = await client.request(
        method, f"/people/{MISSING}/{suffix}", json=body, headers=office_a.headers
    )
    assert missing.status_code == 404
    assert (await client.request(method, path, json=body)).status_code == 401
    assert (
        await client.request(method, path, json=body, headers={"x-service-api-key": "ohk_nope"})
    ).status_code == 401
    async with app.state.sessionmaker() as s:
        from officehub.offices import service as offices

        made = await offices.create_api_key(s, office_a.id, "rw", ["read", "write"])
        await s.commit()
    r = await client.request(method, path, json=body, headers={"x-service-api-key": made.key})
    assert r.status_code == 403 and "admin" in error_of(r)["details"]
    assert (await client.get(f"/people/{contact.id}", headers=office_a.headers)).status_code == 200


async def test_erasure_racing_a_legal_hold_never_erases_a_held_contact(
    app: FastAPI, office_a: OfficeFixture, session: AsyncSession
) -> None:
    """The hold and the erasure both lock the contact's row: either the hold came first
    (erasure 409) or the erasure did (the hold 404); never an erased held contact."""
    contacts = [await f.make_contact(session, office_a.id) for _ in range(6)]
    await session.commit()
    hold = {"legalHold": True, "legalHoldReason": "Disputa"}
    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        answers = await fire(
            2 * len(contacts),
            lambda i: (
                client.post(f"/people/{contacts[i // 2].id}/erase", headers=admin(office_a))
                if i % 2 == 0
                else client.put(
                    f"/people/{contacts[i // 2].id}/legal-hold", json=hold, headers=admin(office_a)
                )
            ),
        )
    for erase, held in zip(answers[::2], answers[1::2], strict=True):
        assert (erase.status_code, held.status_code) in {(200, 404), (409, 200)}, (
            erase.text,
            held.text,
        )


async def test_erasure_drops_the_cached_clients_map(
    client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    contact = await f.make_contact(session, office_a.id, name=NAME, phone=PHONE)
    await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    path = "/homepage-v2/get-clients-map"
    before = await client.get(path, headers=office_a.headers)
    assert before.json()["data"]["total"] == 1
    r = await client.post(f"/people/{contact.id}/erase", headers=admin(office_a))
    assert r.status_code == 200, r.text
    after = await client.get(path, headers=office_a.headers)
    assert after.json()["data"]["total"] == 0


async def test_a_file_fetched_while_its_client_is_erased_is_not_kept(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
    settings: Settings,
) -> None:
    """The download's outcome finds no message to write to: the file it stored goes."""
    integration = await official_integration(session, office_a.id)
    photo = {
        "from": WA_ID,
        "id": "wamid.slow",
        "timestamp": "1767268801",
        "type": "image",
        "image": {"id": "media-slow", "mime_type": "image/jpeg"},
    }
    body = notification([photo], name=NAME, sender=WA_ID)
    assert (await post_notification(client, integration.id, body)).status_code == 200
    [person] = (await client.get("/people", headers=office_a.headers)).json()["data"]
    slow = Reply(body="FOTO-DO-ZEBEDEU " * 8, headers={"content-type": "image/jpeg"}, delay=3)
    async with running_receiver(lambda _n: slow) as files:
        platform.media["media-slow"] = (b"", "image/jpeg")
        platform.media_url_override = files.url
        download = asyncio.create_task(worker(app, settings, media=True).run_once())
        await files.wait_for(1)  # the download is in flight, its answer held back
        r = await client.post(f"/people/{person['id']}/erase", headers=admin(office_a))
        assert r.status_code == 200, r.text
        assert await download == 1
    stored = settings.data_dir / "files" / "inbound-media"
    assert [p for p in stored.rglob("*") if p.is_file()] == []


async def test_erasure_scrubs_tickets_quoting_the_client(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    erased = await f.make_contact(session, office_a.id, name=NAME, phone=PHONE)
    kept = await f.make_contact(session, office_a.id, name="Outra Pessoa", phone=None)
    await session.commit()
    status = await client.post(
        "/ticket-statuses", json={"name": "Aberto"}, headers=office_a.headers
    )
    assert status.status_code == 201, status.text
    made = {}
    for key, title, description in (
        ("quoting", f"Ligar para {NAME.upper()}", f"Telefone {PHONE[1:]}; falar com {NAME}"),
        ("other", "Ligar para Outra Pessoa", "nada do cliente apagado"),
    ):
        r = await client.post(
            "/ticket",
            json={"title": title, "description": description, "statusId": status.json()["id"]},
            headers=office_a.headers,
        )
        assert r.status_code == 201, r.text
        made[key] = r.json()["id"]
    r = await client.post(f"/people/{erased.id}/erase", headers=admin(office_a))
    assert r.status_code == 200, r.text
    assert await rows_naming(app, [NAME, PHONE, PHONE[1:]]) == []
    scrubbed = (await client.get(f"/ticket/{made['quoting']}", headers=office_a.headers)).json()
    assert scrubbed["title"] == "Ligar para [dado apagado]"
    assert scrubbed["description"] == "Telefone [dado apagado]; falar com [dado apagado]"
    other = (await client.get(f"/ticket/{made['other']}", headers=office_a.headers)).json()
    assert other["title"] == "Ligar para Outra Pessoa"
    assert (await client.get(f"/people/{kept.id}", headers=office_a.headers)).status_code == 200


PDF = b"%PDF-1.7\n" + b"PETICAO-DO-ZEBEDEU " * 64


async def _upload_header_media(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str
) -> str:
    r = await client.post(
        f"/conversation/{conversation_id}/template-header-media",
        files={"file": ("peticao.pdf", PDF, "application/pdf")},
        headers=office.headers,
    )
    assert r.status_code == 201, r.text
    path: str = r.json()["storagePath"]
    return path


async def test_erasure_deletes_the_clients_uploaded_files_and_others_claims_of_their_phone(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
    settings: Settings,
    tmp_path: Path,
) -> None:
    """Template header media uploaded for the client's conversation, and a web-chat
    visitor who typed the client's phone (``claimedPhone``, in the visitor's earlier
    ``contact.created`` of the outbox and of the webhook's delivery log): after the erasure
    no file of the data folder and no row of any table holds the client's data."""
    async with running_receiver() as receiver:
        channel = await an_office_with_a_channel(client, session, office_a, receiver.url)
        erased = await a_client_with_history(
            app, client, session, office_a, platform, settings, channel
        )
        key = await _upload_header_media(client, office_a, erased.conversation_id)
        chat = await make_webchat(client, office_a)
        started = await client.post(
            f"/webchat/{chat['id']}/start",
            json={"name": "Visitante do site", "phone": PHONE},
            headers={"origin": SITE},
        )
        assert started.status_code == 201, started.text
        await automation_worker(app, settings).run_until_idle()
    files = settings.data_dir / "files"
    assert (files / key).exists()
    claimed = await outbox(app, office_a.id, "contact.created")
    assert any(e.data.get("claimedPhone") == PHONE for e in claimed)
    assert [r for r in receiver.received if PHONE in r.body.decode()]

    r = await client.post(f"/people/{erased.contact_id}/erase", headers=admin(office_a))
    assert r.status_code == 200, r.text
    assert await cleanup_worker(app, settings).run_once() == 1

    assert await rows_naming(app, SECRETS) == []
    assert bytes_naming(files, [*SECRETS, "PETICAO-DO-ZEBEDEU"]) == []
    assert not (files / key).exists()
    if app.state.engine.dialect.name == "sqlite":
        assert bytes_naming(tmp_path, [*SECRETS, "PETICAO-DO-ZEBEDEU"]) == []
    # The visitor stays, without the claim.
    listed = await client.get(
        "/people", params={"search": "Visitante do site"}, headers=office_a.headers
    )
    [visitor] = listed.json()["data"]
    assert visitor["claimedPhone"] is None


async def test_erasure_deletes_the_clients_files_from_an_s3_bucket(
    moto_endpoint: str,  # noqa: F811
    database_url: str,
    tmp_path: Path,
) -> None:
    bucket = f"{BUCKET}-erasure-{time.time_ns()}"
    await _bucket(moto_endpoint, bucket)
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        signing_key="test-signing-key",
        storage_backend="s3",
        s3_endpoint_url=moto_endpoint,
        s3_bucket=bucket,
        s3_access_key_id="testing",
        s3_secret_access_key="testing",
    )
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        office = await make_office(application, "Office S3", ["read", "write", "admin"])
        async with application.state.sessionmaker() as s:
            inbox = await f.make_inbox(s, office.id)
            integration = await f.make_integration(
                s, office.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-s3-erasure"
            )
            erased = await f.make_contact(s, office.id)
            kept = await f.make_contact(s, office.id)
            ours = await f.make_conversation(s, office.id, erased.id, integration)
            theirs = await f.make_conversation(s, office.id, kept.id, integration)
            await s.commit()
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://officehub.test") as c:
            gone = await _upload_header_media(c, office, ours.id)
            stays = await _upload_header_media(c, office, theirs.id)
            assert set(await _bucket_keys(moto_endpoint, bucket)) == {gone, stays}
            r = await c.post(f"/people/{erased.id}/erase", headers=admin(office))
            assert r.status_code == 200, r.text
        assert await cleanup_worker(application, settings).run_once() == 1
    assert await _bucket_keys(moto_endpoint, bucket) == [stays]


async def _bucket_keys(endpoint: str, bucket: str) -> list[str]:
    async with aiobotocore.session.get_session().create_client(
        "s3", region_name="us-east-1", endpoint_url=endpoint, **KEYS
    ) as s3:
        listed = await s3.list_objects_v2(Bucket=bucket)
    return sorted(item["Key"] for item in listed.get("Contents", []))
