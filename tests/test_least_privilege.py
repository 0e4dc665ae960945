"""Least privilege for people (issue 39, item 1): no key or person reaches more than it was
given.

- Managing people (make, change role or inboxes, invite, reset, deactivate, pictures) needs
  the ``admin`` scope or an ADMIN session; a ``write`` key is refused (403
  ``MISSING_PERMISSION``) and nothing changes.
- Nobody grants a role or scope above their own: a key holding ``admin`` but lacking a
  scope of the ADMIN role (``audit``) cannot make, promote, invite or reset an ADMIN.
- A session holds its role's scopes and no more; the roles' scopes are one table in
  ``docs/security.md`` (``Roles and their scopes``), which the role matrix walks route by
  route (``test_every_route_answers_each_role_as_the_scope_table_says``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from officehub.kit.auth import ROLE_SCOPES, ROLES, SCOPES, is_keyless
from officehub.offices import service as offices
from tests.accounts_helpers import PASSWORD, signed_in
from tests.helpers import OfficeFixture, error_of

DOC = Path(__file__).resolve().parents[1] / "docs" / "security.md"
ID = "cxxxxxxxxxxxxxxxx"
NOT_CALLED_HERE = {("POST", "/auth/logout"), ("GET", "/stream")}


async def _key(app: FastAPI, office: OfficeFixture, scopes: list[str]) -> dict[str, str]:
    async with app.state.sessionmaker() as s:
        created = await offices.create_api_key(s, office.id, "narrow", scopes)
        await s.commit()
    return {"x-service-api-key": created.key}


def _refused(r: httpx.Response) -> bool:
    return r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"


def _user(role: str = "AGENT", **extra: Any) -> dict[str, Any]:
    email = f"pessoa.{role.lower()}.{len(extra)}@escritorio.example"
    return {"name": "Tereza Batista", "email": email, "role": role, "inboxIds": [], **extra}


def _doc_table() -> dict[str, frozenset[str]]:
    """The roles' scopes as docs/security.md writes them (``Roles and their scopes``)."""
    text = DOC.read_text()
    section = text.split("### Roles and their scopes", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    header = [cell.strip().strip("`") for cell in rows[0].strip("|").split("|")]
    table: dict[str, frozenset[str]] = {}
    for row in rows[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        role = cells[0].strip("`")
        table[role] = frozenset(s for s, c in zip(header[1:], cells[1:], strict=True) if c == "✓")
    return table


def test_the_documented_scope_table_is_the_one_the_server_applies() -> None:
    table = _doc_table()
    assert set(table) == set(ROLES)
    assert table == ROLE_SCOPES
    assert all(scopes <= set(SCOPES) for scopes in table.values())


async def test_every_route_answers_each_role_as_the_scope_table_says(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Route by route, a role passes when its tag's rule names it AND the documented table
    gives the role the route's scope; else 403 ``MISSING_PERMISSION`` (both read from the
    document and docs/security.md, not from the code's tables)."""
    table = _doc_table()
    doc = (await client.get("/openapi.json")).json()
    operations = [
        (method.upper(), path, operation)
        for path, ops in doc["paths"].items()
        for method, operation in ops.items()
        if not is_keyless(path) and (method.upper(), path) not in NOT_CALLED_HERE
    ]
    assert len(operations) > 80
    checked_by_scope = 0
    async with (
        signed_in(app, office_a, "ADMIN") as admin,
        signed_in(app, office_a, "SUPERVISOR") as supervisor,
        signed_in(app, office_a, "AGENT") as agent,
    ):
        for user in (admin, supervisor, agent):
            for method, path, operation in operations:
                scope = operation["x-required-scope"]
                allowed = user.role in operation["x-allowed-roles"] and scope in table[user.role]
                checked_by_scope += scope not in table[user.role]
                r = await user.request(method, re.sub(r"\{[^}]+\}", ID, path), json={})
                assert _refused(r) != allowed, (user.role, method, path, r.status_code, r.text)
                assert r.status_code not in (401, 500), (user.role, method, path, r.text)
    assert checked_by_scope > 20  # the table, not only the tags, refuses routes


async def test_a_write_key_cannot_make_change_invite_reset_or_deactivate_people(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    writer = await _key(app, office_a, ["read", "write"])
    made = await client.post("/user", json=_user("AGENT"), headers=office_a.headers)
    agent_id = made.json()["id"]
    attempts = [
        ("POST", "/user", _user("ADMIN")),
        ("POST", "/user", _user("AGENT", name="Outra")),
        ("PATCH", f"/user/{agent_id}", {"role": "ADMIN"}),
        ("PATCH", f"/user/{agent_id}", {"isActive": False}),
        ("PATCH", f"/user/{agent_id}", {"email": "tomado@fora.example"}),
        ("POST", f"/user/{agent_id}/invite", None),
        ("POST", "/auth/password-reset", {"userId": agent_id}),
        ("DELETE", f"/user/{agent_id}/avatar", None),
    ]
    for method, path, body in attempts:
        r = await client.request(method, path, json=body, headers=writer)
        assert _refused(r), (method, path, r.status_code, r.text)
        assert "admin" in error_of(r)["details"], (method, path)
    users = (await client.get("/user", headers=office_a.headers)).json()
    assert [(u["id"], u["role"], u["isActive"]) for u in users["data"]] == [
        (agent_id, "AGENT", True)
    ]


async def test_a_key_lacking_a_scope_of_the_admin_role_cannot_grant_or_take_over_an_admin(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """``admin`` without ``audit``: people of lesser roles yes, an ADMIN no."""
    narrow = await _key(app, office_a, ["read", "write", "admin"])
    boss = await client.post("/user", json=_user("ADMIN"), headers=office_a.headers)
    boss_id = boss.json()["id"]
    made = await client.post("/user", json=_user("SUPERVISOR"), headers=narrow)
    assert made.status_code == 201, made.text
    for method, path, body in (
        ("POST", "/user", _user("ADMIN", name="Chefe")),
        ("PATCH", f"/user/{made.json()['id']}", {"role": "ADMIN"}),
        ("PATCH", f"/user/{boss_id}", {"email": "tomado@fora.example"}),
        ("POST", f"/user/{boss_id}/invite", None),
        ("POST", "/auth/password-reset", {"userId": boss_id}),
        ("DELETE", f"/user/{boss_id}/totp", None),
    ):
        r = await client.request(method, path, json=body, headers=narrow)
        assert _refused(r), (method, path, r.status_code, r.text)
        assert "audit" in error_of(r)["details"], (method, path)
    boss_now = (await client.get(f"/user/{boss_id}", headers=office_a.headers)).json()
    assert boss_now["email"] == boss.json()["email"] and boss_now["role"] == "ADMIN"
    role = (await client.get(f"/user/{made.json()['id']}", headers=office_a.headers)).json()
    assert role["role"] == "SUPERVISOR"


async def test_a_supervisor_session_cannot_manage_people(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a, "SUPERVISOR") as supervisor:
        for method, path, body in (
            ("POST", "/user", _user("ADMIN")),
            ("PATCH", f"/user/{supervisor.id}", {"role": "ADMIN"}),
            ("POST", "/auth/password-reset", {"userId": supervisor.id}),
        ):
            r = await supervisor.request(method, path, json=body)
            assert _refused(r), (method, path, r.status_code, r.text)
        me = (await supervisor.request("GET", "/me")).json()
        assert me["role"] == "SUPERVISOR" and me["scopes"] == ["read", "write"]


async def test_end_to_end_a_write_key_is_refused_and_an_admins_invite_gives_the_roles_scopes(
    app: FastAPI, server_url: str, office_a: OfficeFixture
) -> None:
    """Through a running server: the escalation of issue 39 (a ``write`` key makes an
    ADMIN, invites them, resets a password) refused; an ADMIN's invitation works, and the
    invited user's session holds exactly its role's scopes."""
    writer = await _key(app, office_a, ["read", "write"])
    async with httpx.AsyncClient(base_url=server_url, timeout=30) as http:
        r = await http.post("/user", json=_user("ADMIN"), headers=writer)
        assert _refused(r), r.text
        target = await http.post("/user", json=_user("AGENT"), headers=office_a.headers)
        target_id = target.json()["id"]
        r = await http.post(f"/user/{target_id}/invite", headers=writer)
        assert _refused(r), r.text
        r = await http.post("/auth/password-reset", json={"userId": target_id}, headers=writer)
        assert _refused(r), r.text
        listed = (await http.get("/user", headers=office_a.headers)).json()
        assert [u["role"] for u in listed["data"]] == ["AGENT"]

    async with signed_in(app, office_a, "ADMIN") as admin:
        admin_http = httpx.AsyncClient(base_url=server_url, timeout=30)
        async with admin_http:
            login = await admin_http.post(
                "/auth/login", json={"email": admin.email, "password": PASSWORD}
            )
            assert login.status_code == 200, login.text
            csrf = {"x-csrf-token": login.json()["csrfToken"]}
            invite = await admin_http.post(f"/user/{target_id}/invite", headers=csrf)
            assert invite.status_code == 201, invite.text
    async with httpx.AsyncClient(base_url=server_url, timeout=30) as invited:
        accepted = await invited.post(
            "/auth/invite/accept", json={"token": invite.json()["token"], "password": PASSWORD}
        )
        assert accepted.status_code == 200, accepted.text
        email = target.json()["email"]
        login = await invited.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert login.status_code == 200, login.text
        me = (await invited.get("/me")).json()
        assert me["role"] == "AGENT" and me["scopes"] == sorted(
            ROLE_SCOPES["AGENT"], key=SCOPES.index
        )
        for path in ("/audit-log", "/webhooks", "/user/" + target_id + "/totp"):
            method = "DELETE" if path.endswith("/totp") else "GET"
            headers = {"x-csrf-token": login.json()["csrfToken"]}
            r = await invited.request(method, path, headers=headers)
            assert _refused(r), (path, r.status_code, r.text)
