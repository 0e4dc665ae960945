"""The ``officehub`` command: serve, worker, migrate, offices and API keys."""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, TypeVar

import typer
import uvicorn
from rich.console import Console
from rich.table import Table
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.channels.template_sync import sync_all
from officehub.config import Settings, get_settings
from officehub.db import create_engine, create_sessionmaker
from officehub.errors import ServiceError
from officehub.logs import configure_logging
from officehub.migrate import migrate
from officehub.offices import service as offices
from officehub.timeutil import isoformat
from officehub.worker.jobs import periodic_jobs, queue_jobs
from officehub.worker.runner import Worker, WorkerContext

T = TypeVar("T")
console = Console()


def _settings_help() -> str:
    lines = ["Settings (environment variables):\n"]
    for name, field in Settings.model_fields.items():
        lines.append(f"OFFICEHUB_{name.upper()}: {field.description} (default: {field.default})\n")
    return "\n".join(lines)


app = typer.Typer(help="officehub: messaging, CRM and automation for law offices.", epilog=None)
office_app = typer.Typer(help="Offices.")
apikey_app = typer.Typer(help="Office API keys.")
app.add_typer(office_app, name="office")
app.add_typer(apikey_app, name="apikey")
templates_app = typer.Typer(help="Official-channel message templates.")
app.add_typer(templates_app, name="templates")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _in_session(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    settings = get_settings()

    async def run() -> T:
        engine = create_engine(settings.database_url)
        try:
            async with create_sessionmaker(engine)() as session:
                result = await work(session)
                await session.commit()
                return result
        finally:
            await engine.dispose()

    migrate(settings.database_url)
    try:
        return asyncio.run(run())
    except ServiceError as exc:
        console.print(f"[red]{exc.message}[/red] {exc.details}")
        raise typer.Exit(2) from exc


def _print(payload: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(payload))
        return
    for key, value in payload.items():
        console.print(f"[bold]{key}[/bold]: {value}")


@app.command(name="migrate")
def migrate_command() -> None:
    """Migrate the database to the newest schema."""
    settings = get_settings()
    migrate(settings.database_url)
    console.print("database migrated")


async def _ensure_demo_office(settings: Settings) -> str | None:
    engine = create_engine(settings.database_url)
    try:
        async with create_sessionmaker(engine)() as session:
            if await offices.first_office(session) is not None:
                return None
            office = await offices.create_office(session, "Demo office")
            created = await offices.create_api_key(session, office.id, "demo")
            await session.commit()
            return f"office {office.id}\nAPI key (shown once): {created.key}"
    finally:
        await engine.dispose()


@app.command(epilog=_settings_help())
def serve(
    host: Annotated[str | None, typer.Option(help="Overrides OFFICEHUB_HOST.")] = None,
    port: Annotated[int | None, typer.Option(help="Overrides OFFICEHUB_PORT.")] = None,
    worker: Annotated[
        bool, typer.Option("--worker/--no-worker", help="Run the background worker in-process.")
    ] = True,
) -> None:
    """Migrate, then serve the API (and, by default, the background worker)."""
    settings = get_settings()
    configure_logging(settings.log_level)
    migrate(settings.database_url)
    demo = asyncio.run(_ensure_demo_office(settings))
    if demo:
        typer.echo(f"First start: created a demo {demo}")
    uvicorn.run(
        create_app(settings, embedded_worker=worker),
        host=host or settings.host,
        port=port or settings.port,
        log_config=None,
        access_log=False,
    )


@app.command(name="worker", epilog=_settings_help())
def worker_command() -> None:
    """Run the background worker alone (deliveries and scheduled jobs)."""
    settings = get_settings()
    configure_logging(settings.log_level)
    migrate(settings.database_url)

    async def run() -> None:
        engine = create_engine(settings.database_url, settings.db_pool_size)
        ctx = WorkerContext(settings, engine, create_sessionmaker(engine))
        runner = Worker(ctx, queue_jobs(), periodic_jobs())
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, runner.stop)
        try:
            await runner.run()
        finally:
            await engine.dispose()

    asyncio.run(run())


@office_app.command("create")
def office_create(name: str, as_json: JsonFlag = False) -> None:
    """Create an office."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        office = await offices.create_office(session, name)
        return {"id": office.id, "name": office.name}

    _print(_in_session(work), as_json)


@apikey_app.command("create")
def apikey_create(
    office: Annotated[str, typer.Option("--office", help="Office id.")],
    name: Annotated[str, typer.Option("--name", help="A label for the key.")] = "default",
    permission: Annotated[
        list[str] | None,
        typer.Option("--permission", help="Grant only these (repeatable); default: all."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create an API key; the key is printed once and stored only as a hash."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        created = await offices.create_api_key(session, office, name, permission or None)
        return {
            "id": created.record.id,
            "key": created.key,
            "permissions": created.record.permissions,
        }

    _print(_in_session(work), as_json)


@apikey_app.command("list")
def apikey_list(
    office: Annotated[str, typer.Option("--office", help="Office id.")],
    as_json: JsonFlag = False,
) -> None:
    """List an office's API keys (never the keys themselves)."""

    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        return [
            {
                "id": k.id,
                "name": k.name,
                "prefix": k.prefix,
                "permissions": k.permissions,
                "createdAt": isoformat(k.created_at),
                "revokedAt": isoformat(k.revoked_at) if k.revoked_at else None,
            }
            for k in await offices.list_api_keys(session, office)
        ]

    keys = _in_session(work)
    if as_json:
        typer.echo(json.dumps({"data": keys}))
        return
    table = Table("id", "name", "prefix", "permissions", "created", "revoked")
    for k in keys:
        table.add_row(
            k["id"],
            k["name"],
            k["prefix"],
            ",".join(k["permissions"]),
            k["createdAt"],
            k["revokedAt"] or "",
        )
    console.print(table)


@apikey_app.command("revoke")
def apikey_revoke(key_id: str, as_json: JsonFlag = False) -> None:
    """Revoke an API key: requests with it answer 401 from now on."""

    async def work(session: AsyncSession) -> dict[str, Any]:
        record = await offices.revoke_api_key(session, key_id)
        revoked_at = record.revoked_at
        return {"id": record.id, "revokedAt": isoformat(revoked_at) if revoked_at else None}

    _print(_in_session(work), as_json)


@templates_app.command("sync")
def templates_sync(
    integration: Annotated[
        str | None, typer.Option("--integration", help="Only this integration id.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Pull the template catalogues of the official integrations from the platform."""
    settings = get_settings()
    migrate(settings.database_url)

    async def run() -> int:
        engine = create_engine(settings.database_url)
        try:
            ctx = WorkerContext(settings, engine, create_sessionmaker(engine))
            return await sync_all(ctx, integration)
        finally:
            await engine.dispose()

    synced = asyncio.run(run())
    _print({"synced": synced}, as_json)
    if integration is not None and synced == 0:
        raise typer.Exit(1)
