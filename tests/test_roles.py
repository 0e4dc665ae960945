"""Roles enforced by the server (issue 29): the role matrix, every route by every role.

Every keyed operation of the OpenAPI document states ``x-allowed-roles`` (from its tag's rule
in ``officehub.kit.auth.TAG_ROLES`` or its own ``role_override``); an operation without a
rule fails ``test_every_operation_has_a_role_rule``. Each operation is then called by a
signed-in ADMIN, SUPERVISOR and AGENT: a role outside the rule answers 403
``MISSING_PERMISSION`` before any body is read; a role inside it gets past the check (its
answer is the route's own: 400, 404…).
"""

from __future__ import annotations

import re
from typing import Any

import httpx
from fastapi import FastAPI

from officehub.kit.auth import ROLES, TAG_ROLES, is_keyless
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, error_of

ID = "cxxxxxxxxxxxxxxxx"
# Called once, last, by test_accounts (it ends the caller's session); GET /stream answers
# an endless stream to every role (what each role sees on it: tests/test_stream.py).
NOT_CALLED_HERE = {("POST", "/auth/logout"), ("GET", "/stream")}


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


async def test_every_operation_has_a_role_rule(client: httpx.AsyncClient) -> None:
    operations = await _keyed_operations(client)
    assert len(operations) > 80
    for method, path, operation in operations:
        roles = operation.get("x-allowed-roles")
        assert roles, f"{method} {path}: no role rule (TAG_ROLES or role_override)"
        assert set(roles) <= set(ROLES), (method, path)
        assert "ADMIN" in roles, (method, path)  # ADMIN: everything


async def test_every_tag_of_the_document_has_a_rule(client: httpx.AsyncClient) -> None:
    for method, path, operation in await _keyed_operations(client):
        assert any(tag in TAG_ROLES for tag in operation["tags"]), (method, path)


async def test_every_route_answers_each_role_as_its_rule_says(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    operations = [
        (m, p, op) for m, p, op in await _keyed_operations(client) if (m, p) not in NOT_CALLED_HERE
    ]
    async with (
        signed_in(app, office_a, "ADMIN") as admin,
        signed_in(app, office_a, "SUPERVISOR") as supervisor,
        signed_in(app, office_a, "AGENT") as agent,
    ):
        for user in (admin, supervisor, agent):
            for method, path, operation in operations:
                r = await user.request(method, _concrete(path), json={})
                refused = r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"
                allowed = user.role in operation["x-allowed-roles"]
                assert refused != allowed, (user.role, method, path, r.status_code, r.text)
                assert r.status_code not in (401, 500), (user.role, method, path, r.text)


async def test_admin_only_areas_refuse_supervisors_and_agents(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """Users, keys' areas, webhooks and settings: ADMIN only, read or written."""
    async with signed_in(app, office_a, "AGENT") as agent:
        for method, path in (
            ("GET", "/webhooks"),
            ("POST", "/user"),
            ("POST", "/inbox"),
            ("GET", "/automation-rules"),
        ):
            r = await agent.request(method, path, json={})
            assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION", path


async def test_reports_are_for_supervisors_and_admins(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    async with (
        signed_in(app, office_a, "SUPERVISOR") as supervisor,
        signed_in(app, office_a, "AGENT") as agent,
    ):
        path = "/homepage-v2/get-clients-map"
        assert (await supervisor.request("GET", path)).status_code == 200
        r = await agent.request("GET", path)
        assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"


async def test_a_refused_role_changes_nothing(app: FastAPI, office_a: OfficeFixture) -> None:
    async with signed_in(app, office_a, "AGENT") as agent:
        r = await agent.request("POST", "/tag", json={"name": "x", "color": "#000000"})
        assert r.status_code == 403
        assert (await agent.request("GET", "/tag")).json()["totalResults"] == 0
