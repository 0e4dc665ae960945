"""The CLI prints the JSON the issue states, against a real database."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from officehub.kit.config import Settings
from tests.helpers import error_of, make_office
from tests.server_process import PNG_1X1, clean_env, free_port


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


async def officehub(
    database_url: str | None,
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    stdin: bytes | None = None,
) -> Result:
    """The command in a subprocess; ``database_url`` None leaves the default database."""
    env = dict(env if env is not None else os.environ)
    if database_url is not None:
        env["OFFICEHUB_DATABASE_URL"] = database_url
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "officehub",
        *args,
        cwd=cwd,
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=120)
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
    assert created["permissions"] == [
        "read",
        "write",
        "webhooks",
        "edit:customer",
        "admin",
        "audit",
    ]
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
    assert result.stdout == ""
    error = json.loads(result.stderr)
    assert error["exitCode"] == 2 and error["code"] == "VALIDATION_ERROR"
    assert "unknown" in error["message"]


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


def one_line_error(result: Result) -> str:
    """The error a failing command printed: one line on stderr, nothing on stdout."""
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


async def test_version_prints_the_package_version(tmp_path: Path) -> None:
    result = await officehub(None, "--version", cwd=tmp_path, env=clean_env())
    assert result.returncode == 0
    assert result.stdout.strip() == "officehub 1.0.0"


async def test_usage_error_exits_2_on_stderr(tmp_path: Path) -> None:
    result = await officehub(None, "office", "frobnicate", cwd=tmp_path, env=clean_env())
    assert result.returncode == 2 and result.stdout == ""
    assert "No such command" in result.stderr
    as_json = await officehub(None, "office", "frobnicate", "--json", cwd=tmp_path, env=clean_env())
    assert as_json.returncode == 2 and as_json.stdout == ""
    assert json.loads(as_json.stderr)["code"] == "BAD_USAGE"


async def test_unknown_office_exits_1_and_names_the_database(database_url: str) -> None:
    result = await officehub(database_url, "apikey", "list", "--office", "cnotanoffice01")
    assert result.returncode == 1
    line = one_line_error(result)
    assert line.startswith("error: Office not found") and "database:" in line
    as_json = await officehub(
        database_url, "apikey", "list", "--office", "cnotanoffice01", "--json"
    )
    assert as_json.returncode == 1 and as_json.stdout == ""
    error = json.loads(as_json.stderr)
    assert error == {"message": error["message"], "code": "NOT_FOUND", "exitCode": 1}


async def test_office_list_rename_and_delete(database_url: str, client: httpx.AsyncClient) -> None:
    first = json_of(await officehub(database_url, "office", "create", "Silva", "--json"))
    second = json_of(await officehub(database_url, "office", "create", "Souza", "--json"))
    key = json_of(
        await officehub(database_url, "apikey", "create", "--office", second["id"], "--json")
    )
    listed = json_of(await officehub(database_url, "office", "list", "--json"))["data"]
    assert [(o["id"], o["name"], o["activeKeys"]) for o in listed] == [
        (first["id"], "Silva", 0),
        (second["id"], "Souza", 1),
    ]
    table = await officehub(database_url, "office", "list")
    assert table.returncode == 0
    assert first["id"] in table.stdout and second["id"] in table.stdout

    renamed = json_of(
        await officehub(database_url, "office", "rename", first["id"], "Silva & Lima", "--json")
    )
    assert renamed["name"] == "Silva & Lima"
    bad = await officehub(database_url, "office", "rename", first["id"], "  ", "--json")
    assert bad.returncode == 2 and "name" in json.loads(bad.stderr)["message"]

    deleted = json_of(
        await officehub(database_url, "office", "delete", second["id"], "--yes", "--json")
    )
    assert deleted["id"] == second["id"] and deleted["deleted"] is True
    listed = json_of(await officehub(database_url, "office", "list", "--json"))["data"]
    assert [o["id"] for o in listed] == [first["id"]]
    r = await client.get("/webhooks/events", headers={"x-service-api-key": key["key"]})
    assert r.status_code == 401  # its keys went with it


async def test_office_delete_asks_for_confirmation(database_url: str) -> None:
    office = json_of(await officehub(database_url, "office", "create", "Silva", "--json"))
    refused = await officehub(database_url, "office", "delete", office["id"])
    assert refused.returncode == 2
    assert "--yes" in one_line_error(refused)
    listed = json_of(await officehub(database_url, "office", "list", "--json"))["data"]
    assert [o["id"] for o in listed] == [office["id"]]


async def test_office_list_with_no_offices_says_so(database_url: str) -> None:
    result = await officehub(database_url, "office", "list")
    assert result.returncode == 0 and result.stdout == ""
    assert "no offices in" in result.stderr
    assert json_of(await officehub(database_url, "office", "list", "--json")) == {"data": []}


async def test_apikey_list_prints_full_ids_at_80_columns(database_url: str) -> None:
    office = json_of(await officehub(database_url, "office", "create", "Silva", "--json"))
    created = [
        json_of(
            await officehub(
                database_url, "apikey", "create", "--office", office["id"], "--name", n, "--json"
            )
        )
        for n in ("integration with a rather long label", "second")
    ]
    env = {**os.environ, "COLUMNS": "80"}
    table = await officehub(database_url, "apikey", "list", "--office", office["id"], env=env)
    assert table.returncode == 0
    for key in created:
        assert key["id"] in table.stdout
    assert "integration with a rather long label" in table.stdout


async def test_bad_setting_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    result = await officehub(
        None, "office", "list", cwd=tmp_path, env=clean_env(OFFICEHUB_PORT="eighty")
    )
    assert result.returncode == 2
    line = one_line_error(result)
    assert "OFFICEHUB_PORT" in line and ".env" in line


async def test_bad_database_url_is_one_line_naming_the_variable(tmp_path: Path) -> None:
    env = clean_env(OFFICEHUB_DATABASE_URL="mysqlx://nobody@localhost/db")
    result = await officehub(None, "migrate", cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert "OFFICEHUB_DATABASE_URL" in one_line_error(result)


async def test_every_unsupported_database_url_gets_the_two_accepted_forms(
    tmp_path: Path,
) -> None:
    urls = (
        "postgresql://app:pw@db.internal/officehub",
        "postgres://app@db.internal/officehub",
        "postgresql+psycopg://app@db.internal/officehub",
        "sqlite:///data/officehub.db",
        "mysql://app@db.internal/officehub",
        "not a url at all",
    )
    for url in urls:
        env = clean_env(OFFICEHUB_DATABASE_URL=url)
        for command in (("office", "list"), ("serve", "--port", "1")):
            result = await officehub(None, *command, cwd=tmp_path, env=env)
            assert result.returncode == 2, (url, command, result.stderr)
            line = one_line_error(result)
            assert "OFFICEHUB_DATABASE_URL" in line, line
            assert "sqlite+aiosqlite:///PATH" in line and "postgresql+asyncpg://" in line, line
            assert "unexpected" not in line and ":pw@" not in line, line
    assert not any(tmp_path.iterdir())  # noqa: ASYNC240


async def test_unreachable_database_is_one_line(tmp_path: Path) -> None:
    url = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/officehub"
    result = await officehub(
        None, "migrate", "--json", cwd=tmp_path, env=clean_env(OFFICEHUB_DATABASE_URL=url)
    )
    assert result.returncode == 1 and result.stdout == ""
    error = json.loads(result.stderr)
    assert error["code"] == "DATABASE_UNAVAILABLE" and "OFFICEHUB_DATABASE_URL" in error["message"]


async def test_unwritable_data_dir_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    env = clean_env(OFFICEHUB_DATA_DIR=str(tmp_path / "a-file" / "data"))
    result = await officehub(None, "migrate", cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert "OFFICEHUB_DATA_DIR" in one_line_error(result)


async def test_debug_prints_the_traceback(tmp_path: Path) -> None:
    env = clean_env(OFFICEHUB_DATABASE_URL="mysqlx://nobody@localhost/db")
    result = await officehub(None, "--debug", "migrate", cwd=tmp_path, env=env)
    assert result.returncode == 1
    assert "Traceback" in result.stderr


async def test_cli_from_another_folder_does_not_create_a_database(tmp_path: Path) -> None:
    result = await officehub(None, "office", "list", cwd=tmp_path, env=clean_env())
    assert result.returncode == 1
    line = one_line_error(result)
    assert "no database at" in line and "OFFICEHUB_DATA_DIR" in line
    assert not any(tmp_path.iterdir())  # noqa: ASYNC240


async def test_default_database_lives_in_the_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "office-data"
    env = clean_env(OFFICEHUB_DATA_DIR=str(data_dir))
    run_in = tmp_path / "somewhere"
    run_in.mkdir()
    json_of(await officehub(None, "migrate", "--json", cwd=run_in, env=env))
    office = json_of(
        await officehub(None, "office", "create", "Silva", "--json", cwd=run_in, env=env)
    )
    assert (data_dir / "officehub.db").is_file() and list(run_in.iterdir()) == []
    elsewhere = json_of(await officehub(None, "office", "list", "--json", cwd=tmp_path, env=env))
    assert [o["id"] for o in elsewhere["data"]] == [office["id"]]


async def test_env_file_in_the_working_folder_is_read(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OFFICEHUB_PORT=8123\nOFFICEHUB_DATA_DIR=from-dotenv\n")
    shown = json_of(await officehub(None, "config", "--json", cwd=tmp_path, env=clean_env()))
    settings = shown["settings"]
    assert settings["OFFICEHUB_PORT"] == 8123
    assert settings["OFFICEHUB_PUBLIC_URL"] == "http://127.0.0.1:8123"
    assert settings["OFFICEHUB_DATA_DIR"] == str(tmp_path / "from-dotenv")
    assert settings["OFFICEHUB_DATABASE_URL"].endswith("from-dotenv/officehub.db")
    assert shown["envFile"] == str(tmp_path / ".env")


async def test_config_masks_secrets(tmp_path: Path) -> None:
    env = clean_env(
        OFFICEHUB_SIGNING_KEY="very-secret-signing-key",
        OFFICEHUB_DATABASE_URL="postgresql+asyncpg://app:db-password@db.internal/officehub",
    )
    for args in (("config",), ("config", "--json")):
        result = await officehub(None, *args, cwd=tmp_path, env=env)
        assert result.returncode == 0
        assert "very-secret-signing-key" not in result.stdout
        assert "db-password" not in result.stdout
        assert "db.internal" in result.stdout


async def test_office_delete_removes_its_files_only(
    database_url: str, settings: Settings, client: httpx.AsyncClient, app: FastAPI
) -> None:
    gone = await make_office(app, "Gone")
    kept = await make_office(app, "Kept")
    for office in (gone, kept):
        r = await client.post(
            "/user", json={"name": "Ana", "email": "ana@example.com"}, headers=office.headers
        )
        r = await client.put(
            f"/user/{r.json()['id']}/avatar",
            files={"file": ("a.png", PNG_1X1, "image/png")},
            headers=office.headers,
        )
        assert r.status_code == 200, r.text
    avatars = settings.data_dir / "files" / "avatars"
    env = {**os.environ, "OFFICEHUB_DATA_DIR": str(settings.data_dir)}
    json_of(await officehub(database_url, "office", "delete", gone.id, "--yes", "--json", env=env))
    assert not (avatars / gone.id).exists()
    assert any((avatars / kept.id).rglob("*.png"))


async def test_help_shows_no_bool_placeholder_after_flags(tmp_path: Path) -> None:
    env = clean_env(COLUMNS="80")
    for command in (("serve", "--help"), ("apikey", "list", "--help"), ("--help",)):
        result = await officehub(None, *command, cwd=tmp_path, env=env)
        assert result.returncode == 0, result.stderr
        assert "<bool>" not in result.stdout, result.stdout
        assert (
            "--json" in result.stdout
            or "--worker" in result.stdout
            or "Commands" in (result.stdout)
        )
        assert max(len(line) for line in result.stdout.splitlines()) <= 80


async def test_apikey_list_without_office_lists_every_offices_keys(database_url: str) -> None:
    first = json_of(await officehub(database_url, "office", "create", "Silva", "--json"))
    second = json_of(await officehub(database_url, "office", "create", "Lima", "--json"))
    keys = {}
    for office in (first, second):
        created = await officehub(database_url, "apikey", "create", "--office", office["id"])
        assert created.returncode == 0, created.stderr
        keys[office["id"]] = created.stdout.split("id: ", 1)[1].split()[0]
    listed = json_of(await officehub(database_url, "apikey", "list", "--json"))
    assert {(k["officeId"], k["id"]) for k in listed["data"]} == set(keys.items())
    table = await officehub(database_url, "apikey", "list")
    assert table.returncode == 0, table.stderr
    assert table.stdout.splitlines()[0].split()[0] == "officeId"
    for office_id, key_id in keys.items():
        assert any(office_id in line and key_id in line for line in table.stdout.splitlines())
    only = json_of(
        await officehub(database_url, "apikey", "list", "--office", first["id"], "--json")
    )
    assert [k["id"] for k in only["data"]] == [keys[first["id"]]]


async def test_config_says_where_each_value_comes_from(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OFFICEHUB_LOG_LEVEL=DEBUG\n")
    env = clean_env(OFFICEHUB_PORT="8123")
    shown = json_of(await officehub(None, "config", "--json", cwd=tmp_path, env=env))
    sources = shown["sources"]
    assert sources["OFFICEHUB_PORT"] == "environment"
    assert sources["OFFICEHUB_LOG_LEVEL"] == ".env"
    assert sources["OFFICEHUB_HOST"] == "default"
    assert sources["OFFICEHUB_SIGNING_KEY"].startswith("generated")
    assert shown["settings"]["OFFICEHUB_SIGNING_KEY"] == "(generated)"
    text = await officehub(None, "config", cwd=tmp_path, env=env)
    assert text.returncode == 0, text.stderr
    lines = dict(line.split("=", 1) for line in text.stdout.splitlines() if "=" in line)
    assert lines["OFFICEHUB_PORT"].endswith("(environment)")
    assert lines["OFFICEHUB_LOG_LEVEL"].endswith("(.env)")
    assert lines["OFFICEHUB_HOST"].endswith("(default)")
    assert lines["OFFICEHUB_SIGNING_KEY"].startswith("(generated)")
    given = clean_env(OFFICEHUB_SIGNING_KEY="very-secret-signing-key")
    masked = json_of(await officehub(None, "config", "--json", cwd=tmp_path, env=given))
    assert masked["settings"]["OFFICEHUB_SIGNING_KEY"] == "********"
    assert masked["sources"]["OFFICEHUB_SIGNING_KEY"] == "environment"


async def test_cli_changes_are_audited_with_a_system_actor(
    database_url: str, client: httpx.AsyncClient, app: FastAPI
) -> None:
    office = json_of(await officehub(database_url, "office", "create", "Z", "--json"))
    args = ["apikey", "create", "--office", office["id"], "--json"]
    admin = json_of(await officehub(database_url, *args))
    other = json_of(await officehub(database_url, *args, "--name", "outra"))
    json_of(await officehub(database_url, "apikey", "revoke", other["id"], "--json"))
    headers = {"x-service-api-key": admin["key"]}
    r = await client.get("/audit-log", params={"actorId": "cli:apikey-revoke"}, headers=headers)
    assert r.status_code == 200, r.text
    [revoked] = r.json()["data"]
    assert revoked["actor"] == {"kind": "system", "id": "cli:apikey-revoke", "address": ""}
    assert (revoked["action"], revoked["recordType"], revoked["recordId"]) == (
        "revokeApiKey",
        "apikey",
        other["id"],
    )
    r = await client.get("/audit-log", params={"action": "createApiKey"}, headers=headers)
    made = r.json()["data"]
    assert [e["recordId"] for e in made] == [other["id"], admin["id"]]
    assert {e["actor"]["id"] for e in made} == {"cli:apikey-create"}
    verified = await officehub(database_url, "audit", "verify", "--json")
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_the_cli_knows_the_module_of_every_table_a_foreign_key_names() -> None:
    # A CLI write imports, before its flush, only the modules of the tables its own tables'
    # foreign keys name (cli.TABLES_NAMED); a table missing here or named with the wrong
    # module would cost the command every table, or fail its flush.
    import officehub.models  # noqa: F401
    from officehub.cli import TABLES_NAMED, _missing_tables
    from officehub.kit.db import Base

    defined_in = {t.name: m.class_.__module__ for m in Base.registry.mappers for t in m.tables}
    named = {fk.column.table.name for t in Base.metadata.tables.values() for fk in t.foreign_keys}
    assert TABLES_NAMED == {name: defined_in[name] for name in named}
    assert _missing_tables() == set()
