"""Onboarding from the command line (issue 42): ``officehub user create`` makes a user with
their role and inboxes and prints the invitation link; ``officehub office create`` invites
the office's first admin. The links set a password at ``POST /auth/invite/accept``."""

from __future__ import annotations

import json

import httpx
from fastapi import FastAPI

from tests.helpers import OfficeFixture
from tests.test_cli import json_of, officehub, one_line_error

NEW_PASSWORD = "Cajueiro florido em maio"


async def _accept(client: httpx.AsyncClient, url: str, email: str) -> dict[str, object]:
    """Sets the password with the link's token and signs in: the signed-in user."""
    assert "/console/#invite=" in url
    token = url.split("#invite=", 1)[1]
    r = await client.post("/auth/invite/accept", json={"token": token, "password": NEW_PASSWORD})
    assert r.status_code == 200, r.text
    r = await client.post("/auth/login", json={"email": email, "password": NEW_PASSWORD})
    assert r.status_code == 200, r.text
    user: dict[str, object] = r.json()["user"]
    return user


async def test_user_create_makes_the_user_with_role_and_inboxes_and_prints_the_invite(
    database_url: str, client: httpx.AsyncClient, app: FastAPI, office_a: OfficeFixture
) -> None:
    inboxes = [
        (await client.post("/inbox", json={"name": n}, headers=office_a.headers)).json()["id"]
        for n in ("Família", "Trabalhista")
    ]
    args = ["user", "create", "--office", office_a.id, "--email", "Lia@Escritorio.example"]
    printed = json_of(
        await officehub(
            database_url,
            *args,
            "--name",
            "Lia Prado",
            "--role",
            "supervisor",
            "--inbox",
            inboxes[0],
            "--inbox",
            inboxes[1],
            "--json",
        )
    )
    assert set(printed) == {
        "userId",
        "officeId",
        "email",
        "role",
        "inboxIds",
        "inviteUrl",
        "expiresAt",
    }
    assert printed["officeId"] == office_a.id and printed["role"] == "SUPERVISOR"
    assert sorted(printed["inboxIds"]) == sorted(inboxes)
    stored = (await client.get(f"/user/{printed['userId']}", headers=office_a.headers)).json()
    assert stored["name"] == "Lia Prado" and stored["hasPassword"] is False
    assert sorted(stored["inboxIds"]) == sorted(inboxes)
    user = await _accept(client, printed["inviteUrl"], "lia@escritorio.example")
    assert user["id"] == printed["userId"] and user["role"] == "SUPERVISOR"

    # the plain output names the link too
    plain = await officehub(
        database_url,
        "user",
        "create",
        "--office",
        office_a.id,
        "--email",
        "ana@e.example",
        "--name",
        "Ana",
    )
    assert plain.returncode == 0, plain.stderr
    assert "inviteUrl: " in plain.stdout and "role: AGENT" in plain.stdout


async def test_user_create_refuses_bad_input_and_another_offices_inbox(
    database_url: str, client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    base = ["user", "create", "--office", office_a.id, "--name", "Rui"]
    bad_role = await officehub(database_url, *base, "--email", "rui@e.example", "--role", "BOSS")
    assert bad_role.returncode == 2
    assert "role" in one_line_error(bad_role)
    bad_email = await officehub(database_url, *base, "--email", "not-an-email", "--json")
    assert bad_email.returncode == 2
    error = json.loads(one_line_error(bad_email))
    assert error["code"] == "VALIDATION_ERROR" and "email" in error["message"]

    theirs = (await client.post("/inbox", json={"name": "B"}, headers=office_b.headers)).json()
    foreign = await officehub(
        database_url, *base, "--email", "rui@e.example", "--inbox", theirs["id"], "--json"
    )
    assert foreign.returncode == 1
    assert json.loads(one_line_error(foreign))["code"] == "NOT_FOUND"
    nowhere = await officehub(
        database_url,
        "user",
        "create",
        "--office",
        "0" * 26,
        "--email",
        "x@e.example",
        "--name",
        "X",
        "--json",
    )
    assert nowhere.returncode == 1
    assert json.loads(one_line_error(nowhere))["code"] == "NOT_FOUND"
    # nothing was made by the refused commands
    listed = (await client.get("/user", headers=office_a.headers)).json()
    assert [u["email"] for u in listed["data"]] == []

    made = await officehub(database_url, *base, "--email", "rui@e.example", "--json")
    assert made.returncode == 0, made.stderr
    again = await officehub(database_url, *base, "--email", "RUI@e.example", "--json")
    assert again.returncode == 1
    assert json.loads(one_line_error(again))["code"] == "EMAIL_TAKEN"


async def test_office_create_invites_the_first_admin(
    database_url: str, client: httpx.AsyncClient, app: FastAPI
) -> None:
    printed = json_of(
        await officehub(
            database_url,
            "office",
            "create",
            "Prado & Lima",
            "--admin-email",
            "socia@prado.example",
            "--admin-name",
            "Helena Prado",
            "--json",
        )
    )
    assert set(printed) == {"id", "name", "adminId", "inviteUrl", "expiresAt"}
    user = await _accept(client, printed["inviteUrl"], "socia@prado.example")
    assert user["id"] == printed["adminId"] and user["role"] == "ADMIN"
    assert user["officeId"] == printed["id"] and user["name"] == "Helena Prado"

    half = await officehub(
        database_url, "office", "create", "Sem nome", "--admin-email", "x@y.example", "--json"
    )
    assert half.returncode == 2
    assert json.loads(one_line_error(half))["code"] == "VALIDATION_ERROR"
    listed = json_of(await officehub(database_url, "office", "list", "--json"))["data"]
    assert "Sem nome" not in [o["name"] for o in listed]
