"""The CLI prints the JSON the issue states, against a real database."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import FastAPI

from tests.helpers import error_of


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


async def officehub(database_url: str, *args: str) -> Result:
    env = {**os.environ, "OFFICEHUB_DATABASE_URL": database_url}
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "officehub",
        *args,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode is not None
    return Result(proc.returncode, out.decode(), err.decode())


def json_of(result: Result) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


async def test_office_and_key_commands_print_json(
    database_url: str, client: httpx.AsyncClient, app: FastAPI
) -> None:
    office = json_of(await officehub(database_url, "office", "create", "Silva Advogados", "--json"))
    assert set(office) == {"id", "name"} and office["name"] == "Silva Advogados"

    created = json_of(
        await officehub(database_url, "apikey", "create", "--office", office["id"], "--json")
    )
    assert set(created) == {"id", "key", "permissions"}
    assert created["permissions"] == ["read", "write", "webhooks", "edit:customer"]
    r = await client.get("/webhooks/events", headers={"x-service-api-key": created["key"]})
    assert r.status_code == 200

    listed = json_of(
        await officehub(database_url, "apikey", "list", "--office", office["id"], "--json")
    )
    assert [k["id"] for k in listed["data"]] == [created["id"]]
    assert created["key"] not in json.dumps(listed)

    revoked = json_of(await officehub(database_url, "apikey", "revoke", created["id"], "--json"))
    assert revoked["id"] == created["id"] and revoked["revokedAt"].endswith("Z")
    r = await client.get("/webhooks/events", headers={"x-service-api-key": created["key"]})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_apikey_with_unknown_permission_is_refused(database_url: str) -> None:
    office = json_of(await officehub(database_url, "office", "create", "X", "--json"))
    result = await officehub(
        database_url,
        "apikey",
        "create",
        "--office",
        office["id"],
        "--permission",
        "root",
        "--json",
    )
    assert result.returncode == 2
    assert "unknown" in result.stdout


async def test_apikey_create_with_permission_read_makes_a_read_only_key(
    database_url: str, client: httpx.AsyncClient, app: FastAPI
) -> None:
    office = json_of(await officehub(database_url, "office", "create", "Y", "--json"))
    args = ["apikey", "create", "--office", office["id"], "--json"]
    created = json_of(await officehub(database_url, *args, "--permission", "read"))
    assert created["permissions"] == ["read"]
    headers = {"x-service-api-key": created["key"]}
    assert (await client.get("/inbox", headers=headers)).status_code == 200
    r = await client.post("/inbox", json={"name": "Caixa"}, headers=headers)
    assert r.status_code == 403
    assert error_of(r)["code"] == "MISSING_PERMISSION" and "write" in error_of(r)["details"]
    both = await officehub(database_url, *args, "--permission", "read", "--permission", "webhooks")
    assert json_of(both)["permissions"] == ["read", "webhooks"]


async def test_serve_help_lists_the_settings(database_url: str) -> None:
    result = await officehub(database_url, "serve", "--help")
    assert result.returncode == 0
    for name in ("OFFICEHUB_DATABASE_URL", "OFFICEHUB_DATA_DIR", "OFFICEHUB_WEBHOOK_ALLOW_PRIVATE"):
        assert name in result.stdout
