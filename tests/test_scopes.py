"""API key scopes: read (every GET), write (other changes), webhooks, edit:customer."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from alembic import command
from fastapi import FastAPI
from sqlalchemy import Connection, text

from officehub.kit.auth import SCOPES, is_keyless
from officehub.kit.db import create_engine
from officehub.kit.errors import ValidationFailed
from officehub.kit.ids import new_id
from officehub.migrate import alembic_config
from officehub.offices import service as offices
from tests.conftest import PG_URL, _pg_dsn, _pg_url
from tests.helpers import OfficeFixture, error_of

ID = "cxxxxxxxxxxxxxxxx"
ENDLESS = {("GET", "/stream")}
"""Answered with a stream that stays open: the in-process client would wait for its end.
tests/test_stream.py opens it with a key holding only its scope."""


async def _key(app: FastAPI, office: OfficeFixture, permissions: list[str]) -> dict[str, str]:
    async with app.state.sessionmaker() as s:
        created = await offices.create_api_key(s, office.id, "scoped", permissions)
        await s.commit()
    return {"x-service-api-key": created.key}


async def _keyed_operations(client: httpx.AsyncClient) -> list[tuple[str, str, dict[str, Any]]]:
    doc = (await client.get("/openapi.json")).json()
    return [
        (method.upper(), path, operation)
        for path, operations in doc["paths"].items()
        for method, operation in operations.items()
        if not is_keyless(path)
    ]


def _concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", ID, path)


async def test_every_route_states_its_scope_in_the_openapi_document(
    client: httpx.AsyncClient,
) -> None:
    operations = await _keyed_operations(client)
    assert len(operations) > 80
    for method, path, operation in operations:
        scope = operation["x-required-scope"]
        assert scope in SCOPES, (method, path)
        schemes = [{"APIKeyHeader": [scope]}, {"SessionCookie": []}]
        assert operation["security"] == schemes, (method, path)
        assert f"scope `{scope}`" in operation["description"], (method, path)
        assert "403" in operation["responses"], (method, path)
        expected = "read" if method == "GET" else "write"
        if path.startswith("/integration/partner/contacts/"):
            expected = "edit:customer"
        elif path in {"/people/{id}/erase", "/people/{id}/legal-hold", "/people/{id}/export"} or (
            (method, path) in {("PATCH", "/office"), ("DELETE", "/user/{id}/totp")}
        ):
            expected = "admin"
        elif method != "GET" and (
            path.startswith("/user") or path in {"/auth/password-reset"}
        ):  # managing people (issue 39): make, change, invite, reset, pictures
            expected = "admin"
        elif path.startswith("/webhooks") and path != "/webhooks/events":
            expected = "webhooks"
        elif path == "/audit-log":
            expected = "audit"
        assert scope == expected, (method, path)


async def test_every_route_refuses_a_key_lacking_its_scope_with_403_naming_it(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    lacking = {s: await _key(app, office_a, [o for o in SCOPES if o != s]) for s in SCOPES}
    for method, path, operation in await _keyed_operations(client):
        scope = operation["x-required-scope"]
        r = await client.request(method, _concrete(path), json={}, headers=lacking[scope])
        assert r.status_code == 403, (method, path, r.status_code, r.text)
        body = error_of(r)
        assert body["code"] == "MISSING_PERMISSION", (method, path)
        assert scope in body["details"], (method, path)


# A signed-in user's own sessions: any key is refused 403 there, whatever its scopes
# (test_accounts.py::test_session_routes_need_a_signed_in_user).
SESSION_ONLY = {
    ("GET", "/me/sessions"),
    ("DELETE", "/me/sessions/{id}"),
    ("POST", "/auth/logout"),
    # tests/test_totp.py::test_totp_routes_need_a_signed_in_user
    ("POST", "/me/totp"),
    ("POST", "/me/totp/confirm"),
    ("DELETE", "/me/totp"),
}


async def test_a_key_with_only_a_routes_scope_is_not_refused(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    only = {s: await _key(app, office_a, [s]) for s in SCOPES}
    for method, path, operation in await _keyed_operations(client):
        if (method, path) in SESSION_ONLY or (method, path) in ENDLESS:
            continue
        r = await client.request(
            method, _concrete(path), json={}, headers=only[operation["x-required-scope"]]
        )
        assert r.status_code != 403, (method, path, r.text)
        assert r.status_code in {200, 201, 400, 404, 405, 409, 415}, (method, path, r.text)


async def test_a_read_key_reads_but_does_not_change(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    read = await _key(app, office_a, ["read"])
    assert (await client.get("/inbox", headers=read)).status_code == 200
    r = await client.post("/inbox", json={"name": "Caixa"}, headers=read)
    assert r.status_code == 403
    assert "write" in error_of(r)["details"]
    listed = await client.get("/inbox", headers=office_a.headers)
    assert listed.json()["totalResults"] == 0


async def test_webhooks_need_the_webhooks_scope_even_to_read(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Webhooks hold secrets: a key for reading and writing the rest cannot see them."""
    made = await client.post(
        "/webhooks",
        json={"name": "h", "url": "https://example.com/h", "events": ["contact.created"]},
        headers=office_a.headers,
    )
    assert made.status_code == 201, made.text
    webhook_id = made.json()["id"]
    read_write = await _key(app, office_a, ["read", "write"])
    for method, path in [
        ("GET", f"/webhooks/{webhook_id}"),
        ("GET", "/webhooks"),
        ("GET", f"/webhooks/{webhook_id}/deliveries"),
        ("DELETE", f"/webhooks/{webhook_id}"),
    ]:
        r = await client.request(method, path, headers=read_write)
        assert r.status_code == 403, (method, path)
        assert error_of(r)["details"].endswith("webhooks")
    assert (await client.get("/webhooks/events", headers=read_write)).status_code == 200
    only_webhooks = await _key(app, office_a, ["webhooks"])
    r = await client.get(f"/webhooks/{webhook_id}", headers=only_webhooks)
    assert r.status_code == 200 and r.json()["secret"].startswith("whsec_")


async def test_a_key_made_without_permissions_holds_every_scope(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        created = await offices.create_api_key(s, office_a.id)
        assert created.record.permissions == [
            "read",
            "write",
            "webhooks",
            "edit:customer",
            "admin",
            "audit",
        ]
        with pytest.raises(ValidationFailed):
            await offices.create_api_key(s, office_a.id, "x", ["read", "superuser"])


async def test_scope_is_checked_after_the_key_and_before_the_body(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """401 for no key, then 403 for the scope, then 400 for the body."""
    read = await _key(app, office_a, ["read"])
    assert (await client.post("/tag", json={"name": 5})).status_code == 401
    r = await client.post("/tag", json={"name": 5}, headers=read)
    assert r.status_code == 403
    r = await client.post("/tag", json={"name": 5}, headers=office_a.headers)
    assert r.status_code == 400


async def test_a_body_is_not_read_for_a_key_lacking_the_scope(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Malformed or too large, the body of a key lacking the scope is refused unread: 403,
    the same answer ``OfficeDep`` gives a route without a body."""
    read = await _key(app, office_a, ["read"])
    json_headers = {**read, "content-type": "application/json"}
    for content in (b'{"name": ', b"x" * (2 * 1024 * 1024)):
        r = await client.post("/tag", content=content, headers=json_headers)
        assert r.status_code == 403, r.text
        assert error_of(r)["code"] == "MISSING_PERMISSION"
        assert error_of(r)["details"] == "This operation needs the scope write"
    no_body = await client.delete(f"/tag/{ID}", headers=read)
    assert error_of(no_body) == error_of(r)
    assert r.headers["connection"] == "close"


@pytest.fixture
async def empty_database_url(tmp_path: Path) -> AsyncIterator[str]:
    """A database with no schema at all, to migrate step by step."""
    if not PG_URL:
        target = tmp_path / "empty.db"
        sqlite3.connect(target).close()
        yield f"sqlite+aiosqlite:///{target}"
        return
    name = f"officehub_e_{new_id()}"
    admin = await asyncpg.connect(_pg_dsn(PG_URL))
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield _pg_url(name)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def _to(revision: str, down: bool = False) -> Any:
    def run(connection: Connection) -> None:
        config = alembic_config()
        config.attributes["connection"] = connection
        (command.downgrade if down else command.upgrade)(config, revision)

    return run


async def test_keys_made_before_scopes_keep_what_they_could_do(empty_database_url: str) -> None:
    """0005_key_scopes: a default key (``edit:customer``) gets every scope; a key made
    without ``edit:customer`` keeps reading, changing and managing webhooks only."""
    engine = create_engine(empty_database_url)
    before = "0005_key_scopes-1"
    insert = text(
        "INSERT INTO api_keys (id, office_id, name, key_hash, prefix, permissions, created_at)"
        " VALUES (:id, 'c-office', :id, :id, 'ohk_', :perms, CURRENT_TIMESTAMP)"
    )
    read = text("SELECT id, permissions FROM api_keys ORDER BY id")
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_to(before))
            await conn.execute(
                text(
                    "INSERT INTO offices (id, name, created_at, updated_at)"
                    " VALUES ('c-office', 'O', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            await conn.execute(insert, {"id": "ckey-all", "perms": '["edit:customer"]'})
            await conn.execute(insert, {"id": "ckey-none", "perms": "[]"})
            await conn.run_sync(_to("0005_key_scopes"))
            rows = {r.id: r.permissions for r in await conn.execute(read)}
            assert _listed(rows["ckey-all"]) == ["read", "write", "webhooks", "edit:customer"]
            assert _listed(rows["ckey-none"]) == ["read", "write", "webhooks"]
            await conn.run_sync(_to(before, down=True))
            rows = {r.id: r.permissions for r in await conn.execute(read)}
            assert _listed(rows["ckey-all"]) == ["edit:customer"]
            assert _listed(rows["ckey-none"]) == []
    finally:
        await engine.dispose()


def _listed(value: Any) -> list[str]:
    return list(json.loads(value) if isinstance(value, str) else value)


async def test_keys_holding_every_scope_get_admin_and_restricted_keys_do_not(
    empty_database_url: str,
) -> None:
    """0015_privacy: a key that held every scope (made without ``--permission``) holds
    ``admin`` too, as a key made now does; a restricted key stays as it was."""
    engine = create_engine(empty_database_url)
    insert = text(
        "INSERT INTO api_keys (id, office_id, name, key_hash, prefix, permissions, created_at)"
        " VALUES (:id, 'c-office', :id, :id, 'ohk_', :perms, CURRENT_TIMESTAMP)"
    )
    read = text("SELECT id, permissions FROM api_keys ORDER BY id")
    every = ["read", "write", "webhooks", "edit:customer"]
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_to("0014_casetoken"))
            await conn.execute(
                text(
                    "INSERT INTO offices (id, name, created_at, updated_at)"
                    " VALUES ('c-office', 'O', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            await conn.execute(insert, {"id": "ckey-all", "perms": json.dumps(every)})
            await conn.execute(insert, {"id": "ckey-rw", "perms": '["read", "write"]'})
            await conn.run_sync(_to("0015_privacy"))
            rows = {r.id: r.permissions for r in await conn.execute(read)}
            assert _listed(rows["ckey-all"]) == [*every, "admin"]
            assert _listed(rows["ckey-rw"]) == ["read", "write"]
            await conn.run_sync(_to("0014_casetoken", down=True))
            rows = {r.id: r.permissions for r in await conn.execute(read)}
            assert _listed(rows["ckey-all"]) == every
    finally:
        await engine.dispose()


def test_a_route_answering_get_and_head_needs_read_and_any_other_method_write() -> None:
    """With no override and no tag of its own, a route that only reads (GET, and the HEAD
    that goes with it) needs ``read``; one that may change anything needs ``write``. The
    roles follow the same split of the tag's (reads, changes)."""
    from officehub.kit.auth import EVERYONE, MANAGERS, READ, WRITE, roles_of, scope_of

    assert scope_of({"GET"}, [], {}) == READ
    assert scope_of({"GET", "HEAD"}, [], {}) == READ
    assert scope_of({"GET", "POST"}, [], {}) == WRITE
    assert scope_of({"DELETE"}, [], {}) == WRITE
    assert roles_of({"GET", "HEAD"}, ["Tags"], {}) == EVERYONE
    assert roles_of({"GET", "PATCH"}, ["Tags"], {}) == MANAGERS
