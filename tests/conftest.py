"""Each test gets a database migrated by Alembic as in production, as the migrations left it.

SQLite (default): the suite migrates one template file, and each test gets a copy.
PostgreSQL (``OFFICEHUB_TEST_DATABASE_URL`` set): the suite migrates one template
database and makes one database of it for the session; after each test the other
connections to it are ended and its tables emptied back to the migrations' seeded rows
(``_SessionDatabase``), or, when the test changed the schema, the database is made again.
A test marked ``fresh_database`` gets ``CREATE DATABASE … TEMPLATE`` of its own, dropped
afterwards; ``fresh_database_url`` is such a database besides the test's own.
"""

from __future__ import annotations

import functools
import inspect
import os
import shutil
import sqlite3
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
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
from tests.browser import SharedBrowser, new_page
from tests.helpers import OfficeFixture, make_office
from tests.server import running_server
from tests.whatsapp_platform import Platform, running_platform

PG_URL = os.environ.get("OFFICEHUB_TEST_DATABASE_URL", "")


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector: pytest.Collector, name: str, obj: object) -> None:
    """Marks every coroutine test for anyio before anyio's own hook parametrizes it."""
    if name.startswith("test") and inspect.iscoroutinefunction(obj):
        pytest.mark.anyio(obj)


DATABASE_FIXTURES = frozenset(
    {"database_url", "fresh_database_url", "template_database", "_session_database"}
)
"""The fixtures through which a test reaches the test database: a test that asks for none of
them (directly or through another fixture) runs the same on either database."""
_MODULE_CHOOSES_DATABASE = ("PG_URL", "_pg_url", "_pg_dsn", "OFFICEHUB_TEST_DATABASE_URL")
"""Names through which a test module reaches PostgreSQL without those fixtures."""


def needs_the_test_database(item: pytest.Item) -> bool:
    """Whether a test can tell the SQLite leg from the PostgreSQL one: it asks for the test
    database, or its module reads the PostgreSQL URL itself (a fixture of its own, a skip)."""
    if DATABASE_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    module = getattr(item, "module", None)
    return module is not None and _module_chooses_database(module)


@functools.cache
def _module_chooses_database(module: ModuleType) -> bool:
    source = inspect.getsource(module)
    return any(name in source for name in _MODULE_CHOOSES_DATABASE)


SECOND_LEG = bool(PG_URL) and os.environ.get("OFFICEHUB_TEST_SECOND_LEG") == "1"
"""``.ci/run``'s PostgreSQL leg, run beside ``make test`` (the SQLite leg) on a 2-core machine."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The second leg (``OFFICEHUB_TEST_SECOND_LEG=1`` on PostgreSQL) leaves out the tests that
    never reach the test database (deselected, not skipped): the first leg ran them, and they
    would run the same here."""
    if not SECOND_LEG:
        return
    kept = [item for item in items if needs_the_test_database(item)]
    if len(kept) < len(items):
        left = {id(item) for item in kept}
        config.hook.pytest_deselected(items=[item for item in items if id(item) not in left])
        items[:] = kept


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "fresh_database: the test's database_url is a database made for it alone"
        " (PostgreSQL; SQLite always copies the template)",
    )


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


# What a schema is made of, as one hash: relations, columns, constraints, triggers, functions
# and the migration revision. A test that changes any of them (a migration taken down, a
# trigger made to fail writes) leaves a database the next test cannot reuse.
_SCHEMA_FINGERPRINT = """
SELECT md5(string_agg(item, ',' ORDER BY item)) FROM (
    SELECT c.relkind::text || ':' || n.nspname || '.' || c.relname
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE left(n.nspname, 3) <> 'pg_' AND n.nspname <> 'information_schema'
    UNION ALL
    SELECT 'a:' || a.attrelid::regclass::text || '.' || a.attname || ':' || a.atttypid::text
        || ':' || a.attnotnull::text
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped
    UNION ALL
    SELECT 'c:' || conname || ':' || conrelid::regclass::text FROM pg_constraint
    WHERE connamespace = 'public'::regnamespace
    UNION ALL
    SELECT 't:' || tgname || ':' || tgrelid::regclass::text FROM pg_trigger
    UNION ALL
    SELECT 'f:' || p.oid::regprocedure::text
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE left(n.nspname, 3) <> 'pg_' AND n.nspname <> 'information_schema'
    UNION ALL
    SELECT 'v:' || version_num FROM alembic_version
) AS schema(item)
"""


class _SessionDatabase:
    """One PostgreSQL database for the whole pytest session, made from the migrated template
    and emptied after each test: the tables back to what the migrations left (the rows they
    seed, every sequence at its start), the other connections to it ended first. A test
    that changed the schema gets the database made again from the template."""

    def __init__(self, template: str, name: str | None = None) -> None:
        self.template = template
        self.name = name or f"officehub_s_{os.getpid()}"
        self.tables: list[str] = []
        self.seeded: dict[str, tuple[list[str], list[Any]]] = {}
        self.fingerprint = ""
        self.probe = ""

    async def create(self) -> None:
        admin = await asyncpg.connect(_pg_dsn(PG_URL))
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
            await admin.execute(f'CREATE DATABASE "{self.name}" TEMPLATE "{self.template}"')
        finally:
            await admin.close()
        if self.fingerprint:
            return
        conn = await asyncpg.connect(_pg_dsn(PG_URL, self.name))
        try:
            self.fingerprint = await conn.fetchval(_SCHEMA_FINGERPRINT)
            self.tables = [
                row["name"]
                for row in await conn.fetch(
                    "SELECT quote_ident(tablename) AS name FROM pg_tables"
                    " WHERE schemaname = 'public' AND tablename <> 'alembic_version'"
                    " ORDER BY tablename"
                )
            ]
            self.probe = " UNION ALL ".join(
                f"SELECT {i} WHERE EXISTS (SELECT 1 FROM {table})"  # noqa: S608 (catalog names)
                for i, table in enumerate(self.tables)
            )
            for table in self.tables:
                rows = await conn.fetch(f"SELECT * FROM {table}")  # noqa: S608 (catalog names)
                if rows:
                    self.seeded[table] = (list(rows[0].keys()), [tuple(r) for r in rows])
        finally:
            await conn.close()

    async def drop(self) -> None:
        admin = await asyncpg.connect(_pg_dsn(PG_URL))
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')
        finally:
            await admin.close()

    async def reset(self) -> None:
        """Back to the template's state; made again from it when that cannot be done."""
        try:
            if await self._empty():
                return
        except (asyncpg.PostgresError, OSError):
            pass
        await self.create()

    async def _empty(self) -> bool:
        conn = await asyncpg.connect(_pg_dsn(PG_URL, self.name))
        try:
            # Connections a test left open (a killed process's, an app not shut down) would
            # hold locks or write on; none may outlive its test.
            await conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            if await conn.fetchval(_SCHEMA_FINGERPRINT) != self.fingerprint:
                return False
            async with conn.transaction():
                # Rows deleted, not tables truncated: TRUNCATE makes every table (and each
                # table referencing it) new files, about ten times the time of a DELETE of
                # a test's few rows. Foreign keys and triggers are off meanwhile (replica).
                await conn.execute(
                    "SET LOCAL lock_timeout = '10s'; SET LOCAL synchronous_commit = off;"
                    " SET LOCAL session_replication_role = replica"
                )
                used = [self.tables[row[0]] for row in await conn.fetch(self.probe)]
                dirty = sorted(set(used) | set(self.seeded))
                await conn.execute("".join(f"DELETE FROM {table};" for table in dirty))  # noqa: S608
                for table, (columns, rows) in self.seeded.items():
                    await conn.copy_records_to_table(
                        table.strip('"'), records=rows, columns=columns
                    )
                await conn.execute(
                    "SELECT setval(format('%I.%I', schemaname, sequencename), start_value, false)"
                    " FROM pg_sequences WHERE schemaname = 'public'"
                    " AND last_value IS NOT NULL"
                )
            return True
        finally:
            await conn.close()


@pytest.fixture(scope="session")
async def _session_database(template_database: str) -> AsyncIterator[_SessionDatabase | None]:
    if not PG_URL:
        yield None
        return
    database = _SessionDatabase(template_database)
    await database.create()
    try:
        yield database
    finally:
        await database.drop()


def _copy_sqlite(template: str, target: Path) -> None:
    if os.path.exists(f"{template}-wal"):
        with sqlite3.connect(template) as src, sqlite3.connect(target) as dst:
            src.backup(dst)
    else:  # nothing of it outside the file (closed): its bytes, 30 times faster (1 ms)
        shutil.copyfile(template, target)


@asynccontextmanager
async def _fresh_database(template_database: str, target: Path) -> AsyncIterator[str]:
    if not PG_URL:
        _copy_sqlite(template_database, target)
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


@pytest.fixture
async def fresh_database_url(template_database: str, tmp_path: Path) -> AsyncIterator[str]:
    """A second migrated database made for this test alone (a copy of the SQLite template,
    or ``CREATE DATABASE … TEMPLATE`` on PostgreSQL), dropped afterwards. A test marked
    ``fresh_database`` gets a database of its own as its ``database_url``."""
    async with _fresh_database(template_database, tmp_path / "fresh.db") as url:
        yield url


@pytest.fixture
async def database_url(
    request: pytest.FixtureRequest,
    template_database: str,
    _session_database: _SessionDatabase | None,
    tmp_path: Path,
) -> AsyncIterator[str]:
    """A migrated database as the migrations leave it, for this test alone.

    SQLite: a copy of the template. PostgreSQL: the session's database, emptied after the
    test (``_SessionDatabase``); a test marked ``fresh_database`` gets a database of its own
    (``fresh_database_url``)."""
    if _session_database is None or request.node.get_closest_marker("fresh_database"):
        async with _fresh_database(template_database, tmp_path / "officehub.db") as url:
            yield url
        return
    try:
        yield _pg_url(_session_database.name)
    finally:
        await _session_database.reset()


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


@pytest.fixture(scope="session")
async def _shared_browser() -> AsyncIterator[SharedBrowser]:
    shared = SharedBrowser()
    try:
        yield shared
    finally:
        await shared.close()


@pytest.fixture
async def browser(_shared_browser: SharedBrowser) -> AsyncIterator[Browser]:
    """A headless Chromium of Debian's package (``tests/browser.py``), shared by the
    session's tests; the contexts a test opened are closed after it."""
    async with _shared_browser.lend() as launched:
        yield launched


@pytest.fixture
async def page(browser: Browser) -> AsyncIterator[Page]:
    """A fresh page with its own storage, 1280 by 800."""
    async with new_page(browser) as fresh:
        yield fresh
