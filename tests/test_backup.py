"""``officehub backup`` while the service writes, and ``officehub restore`` into a new folder."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import httpx

from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.migrate import migrate_async
from tests.helpers import make_office
from tests.server_process import PNG_1X1, clean_env
from tests.test_cli import json_of, officehub


def _settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, worker_poll_seconds=0.05, _env_file=None)


async def test_backup_while_writes_go_on_restores_with_nothing_missing(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    settings = _settings(data_dir)
    await migrate_async(settings.database_url)
    app = create_app(settings)
    committed: list[str] = []  # contacts whose creation answered 201
    avatars: list[str] = []
    async with app.router.lifespan_context(app):
        office = await make_office(app, "Silva")
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            r = await client.post(
                "/user", json={"name": "Ana", "email": "ana@example.com"}, headers=office.headers
            )
            user_id = r.json()["id"]

            two_avatars = asyncio.Event()
            stop = asyncio.Event()

            async def write() -> None:
                n = 0
                while not stop.is_set():
                    n += 1
                    r = await client.post(
                        "/people", json={"name": f"Cliente {n}"}, headers=office.headers
                    )
                    assert r.status_code == 201, r.text
                    committed.append(r.json()["id"])
                    if n % 10 == 0:
                        r = await client.put(
                            f"/user/{user_id}/avatar",
                            files={"file": ("a.png", PNG_1X1, "image/png")},
                            headers=office.headers,
                        )
                        assert r.status_code == 200, r.text
                        avatars.append(r.json()["imageUrl"])
                        if len(avatars) >= 2:
                            two_avatars.set()
                    await asyncio.sleep(0)

            writer = asyncio.create_task(write())
            await asyncio.wait_for(two_avatars.wait(), 30)
            before_backup = list(committed)
            env = clean_env(OFFICEHUB_DATA_DIR=str(data_dir))
            made = json_of(await officehub(None, "backup", str(tmp_path / "bk"), "--json", env=env))
            during = len(committed) - len(before_backup)
            stop.set()  # finishes the request under way: a cancelled upload leaves a file open
            await writer
    assert during > 0  # the writes really went on while the backup ran
    assert made["files"] >= 1

    restored_dir = tmp_path / "restored"
    env = clean_env(OFFICEHUB_DATA_DIR=str(restored_dir))
    json_of(await officehub(None, "restore", str(tmp_path / "bk"), "--json", env=env))
    with sqlite3.connect(restored_dir / "officehub.db") as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"

    restored = _settings(restored_dir)
    app = create_app(restored)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            for person_id in before_backup:
                r = await client.get(f"/people/{person_id}", headers=office.headers)
                assert r.status_code == 200, person_id
            user = (await client.get(f"/user/{user_id}", headers=office.headers)).json()
            link = user["imageUrl"]
            assert link is not None
            r = await client.get(link.replace("http://127.0.0.1:8000", ""))
            assert r.status_code == 200 and r.content == PNG_1X1


async def test_restore_refuses_a_data_dir_that_is_not_empty(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    settings = _settings(data_dir)
    await migrate_async(settings.database_url)
    env = clean_env(OFFICEHUB_DATA_DIR=str(data_dir))
    json_of(await officehub(None, "backup", str(tmp_path / "bk"), "--json", env=env))
    result = await officehub(None, "restore", str(tmp_path / "bk"), "--json", env=env)
    assert result.returncode == 2 and result.stdout == ""
    assert "already exists" in json.loads(result.stderr)["message"]


async def test_backup_refuses_a_folder_that_is_not_empty(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    await migrate_async(_settings(data_dir).database_url)
    (tmp_path / "bk").mkdir()
    (tmp_path / "bk" / "something").write_text("x")
    env = clean_env(OFFICEHUB_DATA_DIR=str(data_dir))
    result = await officehub(None, "backup", str(tmp_path / "bk"), env=env)
    assert result.returncode == 2
    assert "not empty" in result.stderr


async def test_backup_of_postgresql_points_at_pg_dump(tmp_path: Path) -> None:
    env = clean_env(OFFICEHUB_DATABASE_URL="postgresql+asyncpg://postgres@127.0.0.1/officehub")
    result = await officehub(None, "backup", str(tmp_path / "bk"), cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert "pg_dump" in result.stderr
    assert not (tmp_path / "bk").exists()
