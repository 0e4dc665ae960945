"""Each test gets a fresh database migrated by Alembic as in production.

SQLite (default): the suite migrates one template file, and each test gets a copy.
PostgreSQL (``OFFICEHUB_TEST_DATABASE_URL`` set): the suite migrates one template
database, and each test gets ``CREATE DATABASE … TEMPLATE`` of it, dropped afterwards.
"""

from __future__ import annotations

import inspect
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Browser, Page
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.kit.ids import new_id
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from tests.browser import launched_browser, new_page
from tests.helpers import OfficeFixture, make_office
from tests.server import running_server
from tests.whatsapp_platform import Platform, running_platform

PG_URL = os.environ.get("OFFICEHUB_TEST_DATABASE_URL", "")


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Marks every coroutine test for anyio before anyio's own hook parametrizes it."""
    if name.startswith("test") and inspect.iscoroutinefunction(obj):
        pytest.mark.anyio(obj)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


def _pg_dsn(url: str, database: str | None = None) -> str:
    parsed = make_url(url).set(drivername="postgresql")
    if database is not None:
        parsed = parsed.set(database=database)
    return parsed.render_as_string(hide_password=False)


@pytest.fixture(scope="session")
async def template_database(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    if not PG_URL:
        path = tmp_path_factory.mktemp("template") / "template.db"
        await migrate_async(f"sqlite+aiosqlite:///{path}")
        yield str(path)
        return
    name = f"officehub_tmpl_{os.getpid()}"
    admin = await asyncpg.connect(_pg_dsn(PG_URL))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
        await migrate_async(_pg_url(name))
        yield name
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def _pg_url(database: str) -> str:
    return make_url(PG_URL).set(database=database).render_as_string(hide_password=False)


@pytest.fixture
async def database_url(template_database: str, tmp_path: Path) -> AsyncIterator[str]:
    """A fresh, migrated database for this test alone."""
    if not PG_URL:
        target = tmp_path / "officehub.db"
        with sqlite3.connect(template_database) as src, sqlite3.connect(target) as dst:
            src.backup(dst)
        yield f"sqlite+aiosqlite:///{target}"
        return
    name = f"officehub_t_{new_id()}"
    admin = await asyncpg.connect(_pg_dsn(PG_URL))
    try:
        await admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template_database}"')
        yield _pg_url(name)
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


@pytest.fixture(autouse=True)
def _processes_share_the_data_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker or server a test starts as a process reads the data folder of the test's
    in-process app (``settings.data_dir``): there it finds the same secrets key
    (``secrets.key``), so it can open the channel tokens and webhook secrets the app sealed.
    A test that gives a process its own ``OFFICEHUB_DATA_DIR`` still does."""
    monkeypatch.setenv("OFFICEHUB_DATA_DIR", str(tmp_path / "data"))


def _test_settings(database_url: str, tmp_path: Path, **extra: Any) -> Settings:
    return Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        webhook_allow_private=True,
        worker_poll_seconds=0.05,
        signing_key="test-signing-key",
        **extra,
    )


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    return _test_settings(database_url, tmp_path)


@pytest.fixture
async def platform() -> AsyncIterator[Platform]:
    """A local stand-in of the WhatsApp Cloud API (``tests/whatsapp_platform.py``)."""
    async with running_platform() as running:
        yield running


@pytest.fixture
def whatsapp_settings(database_url: str, tmp_path: Path, platform: Platform) -> Settings:
    """``settings`` with the stand-in as the Cloud API; a module takes it as its
    ``settings``."""
    return _test_settings(database_url, tmp_path, whatsapp_api_url=platform.url)


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://officehub.test") as c:
        yield c


@pytest.fixture
async def session(app: FastAPI) -> AsyncIterator[AsyncSession]:
    """A session of the test's own, for arranging records and reading what a call did."""
    async with app.state.sessionmaker() as s:
        yield s


@pytest.fixture
async def office_a(app: FastAPI) -> OfficeFixture:
    return await make_office(app, "Office A")


@pytest.fixture
async def office_b(app: FastAPI) -> OfficeFixture:
    return await make_office(app, "Office B")


@pytest.fixture
async def office_a_no_permissions(app: FastAPI, office_a: OfficeFixture) -> OfficeFixture:
    """A second key of office A that holds no permission at all."""
    async with app.state.sessionmaker() as s:
        created = await offices.create_api_key(s, office_a.id, "no-perms", [])
        await s.commit()
    return OfficeFixture(office_a.id, created.key, created.record.id)


@pytest.fixture
async def server_url(app: FastAPI) -> AsyncIterator[str]:
    """The test's app served by uvicorn on 127.0.0.1 (see ``tests/server.py``)."""
    async with running_server(app) as base_url:
        yield base_url


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """A headless Chromium of Debian's package (``tests/browser.py``)."""
    async with launched_browser() as launched:
        yield launched


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A fresh page with its own storage, 1280 by 800."""
    async with new_page(browser) as fresh:
        yield fresh
