"""The audit trail (issue 30): every read of a client's records and every change, recorded
with its actor; ``GET /audit-log``; the per-office hash chain and ``officehub audit verify``."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.audit.chain import GENESIS, entry_hash
from officehub.audit.models import AuditEntry
from officehub.audit.recorder import AuditRecorder, Pending
from officehub.kit.actor import Actor
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from tests import factories as f
from tests.accounts_helpers import signed_in
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of
from tests.test_cli import officehub
from tests.test_performance import counting

pytestmark = pytest.mark.anyio
MISSING = "c" + "0" * 24


async def _entries(app: FastAPI, office_id: str) -> list[AuditEntry]:
    await app.state.audit.flush()
    async with app.state.sessionmaker() as s:
        stmt = select(AuditEntry).where(AuditEntry.office_id == office_id)
        return list(await s.scalars(stmt.order_by(AuditEntry.seq)))


async def _log(client: httpx.AsyncClient, office: OfficeFixture, **params: Any) -> dict[str, Any]:
    r = await client.get("/audit-log", params=params, headers=office.headers)
    assert r.status_code == 200, r.text
    page: dict[str, Any] = r.json()
    return page


async def _card(session: AsyncSession, world: World) -> str:
    card = await f.make_card(session, world.columns[0], world.contact.id, world.conversation.id)
    await session.commit()
    return card.id


# What is recorded


async def test_audit_records_every_read_of_a_clients_records_with_actor_and_contact(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    card_id = await _card(session, world)
    h = office_a.headers
    contact, conversation = world.contact.id, world.conversation.id
    for path in (
        f"/people/{contact}",
        f"/conversation/{conversation}",
        f"/conversation/{conversation}/messages",
        f"/funnel-column-card/{card_id}",
        "/people",
    ):
        assert (await client.get(path, headers=h)).status_code == 200, path
    entries = await _entries(app, office_a.id)
    seen = [(e.action, e.record_type, e.record_id, e.person_id) for e in entries]
    assert seen == [
        ("getContact", "contact", contact, contact),
        ("getConversation", "conversation", conversation, contact),
        ("listMessages", "conversation", conversation, contact),
        ("getCard", "card", card_id, contact),
        ("listContacts", "contact", None, None),
    ]
    for entry in entries:
        assert (entry.actor_kind, entry.actor_id) == ("apikey", office_a.key_id)
        assert entry.actor_address == "127.0.0.1"
        assert entry.at is not None


async def test_audit_records_every_change_and_a_creations_new_id(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    h = office_a.headers
    r = await client.post("/inbox", json={"name": "Caixa"}, headers=h)
    assert r.status_code == 201, r.text
    inbox_id = r.json()["id"]
    r = await client.patch(
        f"/conversation/{world.conversation.id}", json={"priority": "HIGH"}, headers=h
    )
    assert r.status_code == 200, r.text
    entries = await _entries(app, office_a.id)
    assert [(e.action, e.record_type, e.record_id, e.person_id) for e in entries] == [
        ("createInbox", "inbox", inbox_id, None),
        ("updateConversation", "conversation", world.conversation.id, world.contact.id),
    ]


async def test_audit_names_the_signed_in_user_of_a_session(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A request made with a user's session (issue 29) is recorded as ``user:<id>``; the
    trail itself is for ADMIN only."""
    world = await make_world(session, office_a.id)
    contact, conversation = world.contact.id, world.conversation.id
    async with (
        signed_in(app, office_a, "ADMIN") as admin,
        signed_in(app, office_a, "SUPERVISOR") as supervisor,
    ):
        assert (await admin.request("GET", f"/people/{contact}")).status_code == 200
        r = await admin.request("PATCH", f"/conversation/{conversation}", json={"priority": "LOW"})
        assert r.status_code == 200, r.text
        entries = [e for e in await _entries(app, office_a.id) if e.actor_kind == "user"]
        assert [(e.actor_id, e.action, e.record_id, e.person_id) for e in entries] == [
            (admin.id, "getContact", contact, contact),
            (admin.id, "updateConversation", conversation, contact),
        ]
        assert all(e.actor_address == "127.0.0.1" for e in entries)
        r = await admin.request("GET", "/audit-log", params={"actorId": admin.id})
        assert r.status_code == 200, r.text
        actors = [item["actor"] for item in r.json()["data"]]
        assert actors and all(a["kind"] == "user" and a["id"] == admin.id for a in actors)
        refused = await supervisor.request("GET", "/audit-log")
        assert refused.status_code == 403
        assert error_of(refused)["code"] == "MISSING_PERMISSION"


async def test_audit_skips_reads_of_records_without_client_data_and_failed_requests(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    await make_world(session, office_a.id)
    h = office_a.headers
    assert (await client.get("/tag", headers=h)).status_code == 200
    assert (await client.get("/inbox", headers=h)).status_code == 200
    assert (await client.get(f"/people/{MISSING}", headers=h)).status_code == 404
    assert (await client.patch(f"/people/{MISSING}", json={}, headers=h)).status_code in {400, 404}
    assert (await client.get("/people", headers={"x-service-api-key": "ohk_x"})).status_code == 401
    assert await _entries(app, office_a.id) == []


async def test_audit_costs_a_hot_read_no_statement(
    settings: Settings, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The request only appends to the buffer; the batch is written apart from it (here by
    hand: the app's own flush waits an hour)."""
    world = await make_world(session, office_a.id)
    url = f"/conversation/{world.conversation.id}/messages"
    app = create_app(settings.model_copy(update={"audit_flush_seconds": 3600}))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t.test") as client:
            assert (await client.get(url, headers=office_a.headers)).status_code == 200
            with counting(app) as statements:
                assert (await client.get(url, headers=office_a.headers)).status_code == 200
            assert not [s for s in statements if "audit" in s], statements
            assert app.state.audit.pending == 2
            assert len(await _entries(app, office_a.id)) == 2


# GET /audit-log


async def test_audit_log_lists_newest_first_in_the_list_envelope(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    for _ in range(3):
        await client.get(f"/people/{world.contact.id}", headers=office_a.headers)
    page = await _log(client, office_a, limit=2)
    assert page["totalResults"] == 3 and page["totalPages"] == 2
    assert [e["seq"] for e in page["data"]] == [3, 2]
    first = page["data"][1]
    assert first["actor"] == {"kind": "apikey", "id": office_a.key_id, "address": "127.0.0.1"}
    assert first["action"] == "getContact" and first["personId"] == world.contact.id
    assert first["recordType"] == "contact" and first["recordId"] == world.contact.id
    assert len(first["hash"]) == 64 and first["at"].endswith("Z")
    assert [e["seq"] for e in (await _log(client, office_a, limit=2, page=2))["data"]] == [1]


async def test_audit_log_filters_by_actor_person_action_and_time(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_a_no_permissions: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    other = await f.make_contact(session, office_a.id, name="Pedro")
    await session.commit()
    h = office_a.headers
    await client.get(f"/people/{world.contact.id}", headers=h)
    await client.get(f"/people/{other.id}", headers=h)
    await client.get(f"/conversation/{world.conversation.id}", headers=h)
    person = await _log(client, office_a, personId=world.contact.id)
    assert [e["action"] for e in person["data"]] == ["getConversation", "getContact"]
    action = await _log(client, office_a, action="getContact")
    assert {e["personId"] for e in action["data"]} == {world.contact.id, other.id}
    assert (await _log(client, office_a, actorId=office_a.key_id))["totalResults"] == 3
    assert (await _log(client, office_a, actorId=office_a_no_permissions.key_id))["data"] == []
    now = datetime.now(UTC)
    since = (now - timedelta(minutes=5)).isoformat()
    assert (await _log(client, office_a, **{"from": since}))["totalResults"] == 3
    later = (now + timedelta(minutes=5)).isoformat()
    assert (await _log(client, office_a, **{"from": later}))["totalResults"] == 0
    assert (await _log(client, office_a, to=since))["totalResults"] == 0


async def test_audit_log_bad_filters_are_400_naming_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    for params, field in (
        ({"from": "ontem"}, "from"),
        ({"to": "2026-01-01T10:00:00"}, "to"),  # no offset: ambiguous
        ({"to": "0.5"}, "to"),  # not seconds since 1970
        ({"from": "1767225600"}, "from"),
        ({"personId": "x"}, "personId"),
        ({"limit": "0"}, "limit"),
        ({"from": "2026-02-01T00:00:00Z", "to": "2026-01-01T00:00:00Z"}, "from"),
    ):
        r = await client.get("/audit-log", params=params, headers=h)
        assert r.status_code == 400, (params, r.text)
        assert field in error_of(r)["details"], (params, r.text)


async def test_audit_log_needs_a_key_and_the_audit_scope(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    assert (await client.get("/audit-log")).status_code == 401
    r = await client.get("/audit-log", headers={"x-service-api-key": "ohk_wrong"})
    assert r.status_code == 401
    async with app.state.sessionmaker() as s:
        from officehub.offices import service as offices

        reader = await offices.create_api_key(s, office_a.id, "r", ["read", "write"])
        await s.commit()
    r = await client.get("/audit-log", headers={"x-service-api-key": reader.key})
    assert r.status_code == 403
    assert "audit" in error_of(r)["details"]


async def test_audit_log_of_another_office_shows_nothing_of_it(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    await client.get(f"/people/{world.contact.id}", headers=office_a.headers)
    assert (await _log(client, office_b))["data"] == []
    assert (await _log(client, office_b, personId=world.contact.id))["data"] == []
    assert (await _log(client, office_a))["totalResults"] == 1


# The chain


def _assert_chain(entries: list[AuditEntry]) -> None:
    previous = GENESIS
    for seq, entry in enumerate(entries, start=1):
        assert entry.seq == seq
        assert entry.previous_hash == previous
        assert entry.hash == entry_hash(entry)
        previous = entry.hash


async def test_audit_chain_never_forks_under_concurrent_requests_and_writers(
    app: FastAPI, settings: Settings, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Concurrent requests at a running server, and a second process's recorder writing
    the same office's chain at the same moments: one chain, numbered without a gap."""
    from tests.server import running_server

    world = await make_world(session, office_a.id)
    second = create_app(settings)
    async with second.router.lifespan_context(second):
        other: AuditRecorder = second.state.audit
        actor = Actor("apikey", office_a.key_id, office_id=office_a.id, address="10.0.0.9")
        async with running_server(app) as base_url, httpx.AsyncClient(base_url=base_url) as c:
            for _ in range(3):
                for _ in range(10):
                    other.record(
                        Pending(office_a.id, utcnow(), actor, "getContact", "contact", None, None)
                    )
                urls = [f"/people/{world.contact.id}"] * 10 + [
                    f"/conversation/{world.conversation.id}"
                ] * 10
                answers = await asyncio.gather(
                    *(c.get(u, headers=office_a.headers) for u in urls),
                    other.flush(),
                    app.state.audit.flush(),
                )
                assert all(a.status_code == 200 for a in answers[:-2])
                await asyncio.gather(other.flush(), app.state.audit.flush())
    entries = await _entries(app, office_a.id)
    assert len(entries) == 90
    _assert_chain(entries)
    assert {e.actor_address for e in entries} == {"127.0.0.1", "10.0.0.9"}


async def test_audit_chains_are_per_office(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    a = await make_world(session, office_a.id)
    b = await make_world(session, office_b.id)
    for _ in range(2):
        await client.get(f"/people/{a.contact.id}", headers=office_a.headers)
        await client.get(f"/people/{b.contact.id}", headers=office_b.headers)
    _assert_chain(await _entries(app, office_a.id))
    _assert_chain(await _entries(app, office_b.id))


async def test_audit_verify_passes_an_intact_trail_and_names_the_first_broken_entry(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    database_url: str,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    for _ in range(4):
        await client.get(f"/people/{world.contact.id}", headers=office_a.headers)
    entries = await _entries(app, office_a.id)
    result = await officehub(database_url, "audit", "verify")
    assert result.returncode == 0, result.stderr
    assert f"office {office_a.id}: 4 entries, intact" in result.stdout
    async with app.state.sessionmaker() as s:
        await s.execute(
            update(AuditEntry).where(AuditEntry.id == entries[1].id).values(action="listTags")
        )
        await s.commit()
    result = await officehub(database_url, "audit", "verify")
    assert result.returncode == 1
    assert f"entry 2 ({entries[1].id}): its content changed" in result.stderr
    async with app.state.sessionmaker() as s:
        await s.execute(
            update(AuditEntry).where(AuditEntry.id == entries[1].id).values(action="getContact")
        )
        await s.execute(delete(AuditEntry).where(AuditEntry.id == entries[2].id))
        await s.commit()
    result = await officehub(database_url, "audit", "verify", "--office", office_a.id)
    assert result.returncode == 1
    assert f"entry 4 ({entries[3].id}): expected entry 3 here" in result.stderr
