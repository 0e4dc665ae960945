"""The ``officehub`` command: serve, worker, migrate, config, offices, API keys, backups.

Results go to stdout (one JSON object with ``--json``); errors go to stderr as one line
(one JSON object with ``--json``). Exit codes: 0 success, 2 bad input (usage, a bad
value, a bad setting), 1 any other failure (not found, database unreachable, …).
A traceback is printed only with ``--debug``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, Protocol, TypeVar

import pydantic
import typer
from rich.console import Console
from rich.panel import Panel
from rich.progress import BarColumn, Progress, TaskID, TextColumn
from typer.exceptions import TyperException

from officehub import __version__
from officehub.kit.config import DATABASE_URL_FORMS, Settings, get_settings
from officehub.kit.errors import ServiceError
from officehub.kit.gc_tuning import settle_heap
from officehub.kit.logs import configure_logging
from officehub.kit.timeutil import isoformat, utcnow

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncSession

    from officehub import backup as backups
    from officehub.kit.worker import WorkerContext
    from officehub.offices.models import Office

# SQLAlchemy, Alembic, uvicorn and the domain modules are imported by the commands that use
# them (about 1.5 s of CPU at every start otherwise): `officehub --help` and a command that
# does not touch the database answer at once.

T = TypeVar("T")
EXIT_BAD_INPUT = 2
EXIT_FAILURE = 1
stderr = Console(stderr=True, highlight=False)


class CliError(Exception):
    """A failure the command explains in one line."""

    def __init__(self, message: str, exit_code: int = EXIT_FAILURE, code: str = "FAILED") -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.code = code


def _settings_help() -> str:
    lines = ["Settings (environment variables, or a .env file in the working folder):\n"]
    for name, field in Settings.model_fields.items():
        lines.append(f"OFFICEHUB_{name.upper()}: {field.description} (default: {field.default})\n")
    return "\n".join(lines)


EPILOG = (
    "Exit codes: 0 success; 2 bad input (usage, a bad value or setting); 1 any other failure. "
    "Errors go to stderr (one JSON object with --json)."
)
app = typer.Typer(
    help="officehub: messaging, CRM and automation for law offices.",
    epilog=EPILOG,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: no "<bool>" after flags, fits 80 columns
)
office_app = typer.Typer(help="Offices.", no_args_is_help=True)
apikey_app = typer.Typer(help="Office API keys.", no_args_is_help=True)
app.add_typer(office_app, name="office")
app.add_typer(apikey_app, name="apikey")
templates_app = typer.Typer(help="Official-channel message templates.")
app.add_typer(templates_app, name="templates")
cases_app = typer.Typer(help="Court cases watched on DataJud.")
app.add_typer(cases_app, name="cases")
publications_app = typer.Typer(help="Court publications of the office's lawyers (DJEN).")
app.add_typer(publications_app, name="publications")
user_app = typer.Typer(help="Users who sign in.", no_args_is_help=True)
app.add_typer(user_app, name="user")
people_app = typer.Typer(help="Contacts (people).", no_args_is_help=True)
app.add_typer(people_app, name="people")
audit_app = typer.Typer(help="The audit trail.", no_args_is_help=True)
app.add_typer(audit_app, name="audit")
secrets_app = typer.Typer(help="Secrets stored sealed (encrypted) at rest.", no_args_is_help=True)
app.add_typer(secrets_app, name="secrets")
evidence_app = typer.Typer(help="Evidence bundles of conversations.", no_args_is_help=True)
app.add_typer(evidence_app, name="evidence")

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"officehub {__version__}")
        raise typer.Exit()


@app.callback()
def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", help="Print the traceback of a failure.")
    ] = False,
) -> None:
    """officehub: messaging, CRM and automation for law offices."""


# --- output -------------------------------------------------------------------------------


def _print(payload: dict[str, Any], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(payload))
        return
    for key, value in payload.items():
        typer.echo(f"{key}: {value}")


def _print_rows(rows: list[dict[str, Any]], columns: list[str]) -> None:
    """A plain table: every value in full, whatever the terminal's width."""
    cells = [[("" if r[c] is None else str(r[c])) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    typer.echo("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    for row in cells:
        typer.echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip())


def _database_label(settings: Settings) -> str:
    from sqlalchemy.engine import make_url

    path = settings.sqlite_path()
    if path is not None:
        return str(path)
    return make_url(settings.database_url).render_as_string(hide_password=True)


# --- the database ---------------------------------------------------------------------------


def _settings() -> Settings:
    return get_settings()


def _require_database(settings: Settings) -> None:
    """Commands that read offices never create an empty database by accident."""
    path = settings.sqlite_path()
    if path is not None and not path.is_file():
        raise CliError(
            f"no database at {path}. Run the command from the folder you ran `officehub serve` "
            "in, or set OFFICEHUB_DATA_DIR (or OFFICEHUB_DATABASE_URL) to where the database "
            "is; `officehub migrate` creates a new one there.",
            code="NO_DATABASE",
        )


def _install_hooks() -> None:
    from officehub.hook_subscriptions import install

    install()


TABLES_NAMED: dict[str, str] = {
    "automation_rules": "officehub.automation.models",
    "case_movements": "officehub.cases.models",
    "cases": "officehub.cases.models",
    "contacts": "officehub.contacts.models",
    "conversations": "officehub.conversations.models",
    "crm_columns": "officehub.crm.models",
    "crm_funnels": "officehub.crm.models",
    "departments": "officehub.departments.models",
    "flows": "officehub.flows.models",
    "inboxes": "officehub.inboxes.models",
    "integrations": "officehub.inboxes.models",
    "lawyers": "officehub.publications.models",
    "legal_areas": "officehub.legal_areas.models",
    "messages": "officehub.messages.models",
    "offices": "officehub.offices.models",
    "outbox_events": "officehub.events.models",
    "tags": "officehub.tags.models",
    "ticket_statuses": "officehub.tickets.models",
    "tickets": "officehub.tickets.models",
    "users": "officehub.users.models",
    "webhook_deliveries": "officehub.webhooks.models",
    "webhooks": "officehub.webhooks.models",
}
"""Each table a foreign key names, and the module that defines it (``test_cli.py`` holds this
to the tables ``officehub.models`` defines)."""


def _missing_tables() -> set[str]:
    """The tables that a defined table's foreign keys name and no imported module defined."""
    from officehub.kit.db import Base

    tables = Base.metadata.tables
    named = {
        fk.target_fullname.rpartition(".")[0] for t in tables.values() for fk in t.foreign_keys
    }
    return named - tables.keys()


def _define_named_tables(*_args: object) -> None:
    """Before each flush: the flush sorts a table's rows by its foreign keys, so every table
    these name must be defined, and a command's own imports may not define them (a password
    reset's token names the office, which nothing on that path imports). Imports the module
    of each one missing (``TABLES_NAMED``), and of the tables those name in turn; every
    table (``officehub.models``, about 0.4 s) only for a table the map does not know."""
    import importlib

    missing = _missing_tables()
    while missing:
        modules = {TABLES_NAMED.get(name, "officehub.models") for name in missing}
        for module in sorted(modules):
            importlib.import_module(module)
        still = _missing_tables()
        if still & missing:  # a module that does not define its table: take them all
            import officehub.models  # noqa: F401

            return
        missing = still


def _in_session(work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Run `work` in one transaction of the migrated database. The domains' hook
    subscriptions are wired on demand (``transaction_hooks.wire_on_demand``): the first hook
    fired, event emitted or audit entry written installs them, so a command that does none
    of these (a read, an office or key made) never imports every domain (about a second)."""
    from sqlalchemy import event

    from officehub.kit.db import create_engine, create_sessionmaker
    from officehub.kit.transaction_hooks import wire_on_demand
    from officehub.migrate import migrate

    settings = _settings()
    _require_database(settings)
    wire_on_demand(_install_hooks)

    async def run() -> T:
        engine = create_engine(settings.database_url)
        try:
            async with create_sessionmaker(engine)() as session:
                event.listen(session.sync_session, "before_flush", _define_named_tables)
                result = await work(session)
                await session.commit()
                return result
        finally:
            await engine.dispose()

    migrate(settings.database_url)
    try:
        return asyncio.run(run())
    except ServiceError as exc:
        if exc.status_code == 404:
            exc.details = f"{exc.details} (database: {_database_label(settings)})".lstrip()
        raise


async def _audited(
    session: AsyncSession,
    office_id: str,
    command: str,
    action: str,
    record_type: str,
    record_id: str | None,
) -> None:
    """An operator's command that changed an office goes in its audit trail, in the
    command's transaction, the actor being the service itself (``system``,
    ``cli:<command>``): the CLI knows no person."""
    from officehub.audit.recorder import Pending, append_now
    from officehub.kit.actor import system_actor

    await append_now(
        session,
        Pending(
            office_id=office_id,
            at=utcnow(),
            actor=system_actor(f"cli:{command}"),
            action=action,
            record_type=record_type,
            record_id=record_id,
            person_id=None,
        ),
    )


# --- commands -------------------------------------------------------------------------------


@app.command(name="migrate")
def migrate_command(as_json: JsonFlag = False) -> None:
    """Migrate the database to the newest schema (creating it if needed)."""
    from officehub.migrate import migrate

    settings = _settings()
    with stderr.status("migrating the database…", spinner="line"):
        migrate(settings.database_url)
    _print({"migrated": True, "database": _database_label(settings)}, as_json)


@app.command(name="openapi")
def openapi_command(
    output: Annotated[
        Path | None, typer.Option("--output", help="Write it to this file (default: stdout).")
    ] = None,
) -> None:
    """Print the OpenAPI document (the source of generated clients: `make sdk`)."""
    from officehub.app import create_app

    document = json.dumps(create_app(_settings()).openapi(), indent=1, ensure_ascii=False)
    if output is None:
        typer.echo(document)
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(document + "\n", encoding="utf-8")


@app.command(name="config")
def config_command(as_json: JsonFlag = False) -> None:
    """Print the effective settings (secrets masked) and where each comes from."""
    settings = _settings()
    shown = settings.effective()
    env_file = Path(".env").resolve()
    in_file = _dotenv_names(env_file)
    sources = {name: _source(name, settings, in_file) for name in shown}
    if _signing_key_generated(settings):
        shown["OFFICEHUB_SIGNING_KEY"] = "(generated)"
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "settings": shown,
                    "sources": sources,
                    "envFile": str(env_file) if env_file.is_file() else None,
                }
            )
        )
        return
    for name, value in shown.items():
        typer.echo(f"{name}={value}    ({sources[name]})")
    typer.echo(f"# .env: {env_file if env_file.is_file() else 'none in ' + str(Path.cwd())}")


def _dotenv_names(env_file: Path) -> set[str]:
    from dotenv import dotenv_values  # pydantic-settings' own reader of .env

    if not env_file.is_file():
        return set()
    return {name.upper() for name in dotenv_values(env_file)}


def _source(name: str, settings: Settings, in_file: set[str]) -> str:
    from officehub import backup as backups

    if name in os.environ:
        return "environment"
    if name in in_file:
        return ".env"
    if name == "OFFICEHUB_SIGNING_KEY" and _signing_key_generated(settings):
        return f"generated, kept in {settings.data_dir.resolve() / backups.SIGNING_KEY}"
    if name in ("OFFICEHUB_DATABASE_URL", "OFFICEHUB_PUBLIC_URL"):
        return "default, derived"
    return "default"


def _signing_key_generated(settings: Settings) -> bool:
    return not settings.signing_key


async def _ensure_demo_office(settings: Settings) -> tuple[str, str] | None:
    from officehub.kit.db import create_engine, create_sessionmaker
    from officehub.offices import service as offices

    engine = create_engine(settings.database_url)
    try:
        async with create_sessionmaker(engine)() as session:
            if await offices.first_office(session) is not None:
                return None
            office = await offices.create_office(session, "Demo office")
            created = await offices.create_api_key(session, office.id, "demo")
            await session.commit()
            return office.id, created.key
    finally:
        await engine.dispose()


FRAME_WIDTH = 80
"""The first-start frame fits an 80-column terminal, the key on a line of its own."""


def _command() -> str:
    """How to run this command again from here: ``officehub`` when that is on the PATH."""
    invoked = Path(sys.argv[0])
    if invoked.name != "officehub":
        return f"{_shortest(Path(sys.executable))} -m officehub"
    found = shutil.which("officehub")
    if found is not None and Path(found).resolve() == invoked.resolve():
        return "officehub"
    return _shortest(invoked)


def _shortest(path: Path) -> str:
    absolute = path.absolute()
    try:
        return str(absolute.relative_to(Path.cwd()))
    except ValueError:
        return str(absolute)


def _first_start_banner(settings: Settings, office_id: str, key: str) -> None:
    command = _command()
    body = (
        f"officehub is starting at {settings.public_url}\n"
        f"Created a demo office: {office_id}\n"
        "Its API key (shown once, keep it):\n"
        f"  {key}\n\n"
        "Try it:\n"
        f"  export OFFICEHUB_URL={settings.public_url}\n"
        f"  export OFFICEHUB_API_KEY={key}\n"
        "  examples/quickstart.sh\n"
        f"Docs: {settings.public_url}/docs\n"
        "Lost the key? Make another:\n"
        f"  {command} apikey create --office {office_id}"
    )
    panel = Panel(body, title="First start", expand=False, border_style="green")
    Console(stderr=True, highlight=False, width=FRAME_WIDTH, soft_wrap=False).print(panel)


def _listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything is created (as uvicorn binds it)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family=family)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise CliError(
            f"cannot listen on {host}:{port}: {exc.strerror}; another program holds the "
            f"port? Choose another: `make run PORT={port + 1}` or `officehub serve --port "
            f"{port + 1}` (or OFFICEHUB_PORT)",
            EXIT_FAILURE,
            "PORT_UNAVAILABLE",
        ) from exc
    return sock


@app.command(epilog=_settings_help())
def serve(
    host: Annotated[
        str | None, typer.Option("--host", metavar="HOST", help="Overrides OFFICEHUB_HOST.")
    ] = None,
    port: Annotated[
        int | None,
        typer.Option("--port", min=1, max=65535, metavar="PORT", help="Overrides OFFICEHUB_PORT."),
    ] = None,
    worker: Annotated[
        bool, typer.Option("--worker/--no-worker", help="Run the background worker in-process.")
    ] = True,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=1,
            max=64,
            metavar="N",
            help="API processes sharing the port (each with its own background worker "
            "unless --no-worker).",
        ),
    ] = 1,
) -> None:
    """Migrate, then serve the API (and, by default, the background worker)."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from officehub.app import SERVE_WORKER_ENV, create_app  # the app's imports cost a second
    from officehub.migrate import migrate

    settings = _settings().served_at(host, port)
    # The port first: a demo office (and its key, shown once) only for a server that runs.
    listener = _listen(settings.host, settings.port)
    migrate(settings.database_url)
    demo = asyncio.run(_ensure_demo_office(settings))
    if demo:
        _first_start_banner(settings, *demo)
    configure_logging(settings.log_level, settings.log_format)
    options: dict[str, Any] = {
        "host": settings.host,
        "port": settings.port,
        "log_config": None,
        "access_log": False,
        "proxy_headers": False,  # the app believes OFFICEHUB_TRUSTED_PROXIES only
        **_connection_limits(settings),
    }
    if workers == 1:
        served = create_app(settings, embedded_worker=worker)
        settle_heap()
        server = uvicorn.Server(uvicorn.Config(served, **options))
        try:
            server.run(sockets=[listener])
        except KeyboardInterrupt:
            pass
        if not server.started:
            raise CliError("the server did not start (see the log above)")
        return
    # Each process builds its app from the environment: pass on what the options decided.
    os.environ.update(
        {
            "OFFICEHUB_DATABASE_URL": settings.database_url,
            "OFFICEHUB_HOST": settings.host,
            "OFFICEHUB_PORT": str(settings.port),
            "OFFICEHUB_PUBLIC_URL": settings.public_url,
            SERVE_WORKER_ENV: "1" if worker else "0",
        }
    )
    config = uvicorn.Config("officehub.app:served_app", factory=True, workers=workers, **options)
    try:
        Multiprocess(config, sockets=[listener]).run()
    except KeyboardInterrupt:
        pass


def _connection_limits(settings: Settings) -> dict[str, Any]:
    """uvicorn's options for what one client may hold (``officehub.kit.http_protocol``)."""
    from officehub.kit.http_protocol import PROTOCOL

    return {
        "http": PROTOCOL,
        "limit_concurrency": settings.max_connections,
        "timeout_keep_alive": settings.keepalive_timeout_seconds,
        # a request still running this long after SIGTERM (a client dripping its body, say)
        # is cancelled: a deploy is never held past the orchestrator's own deadline
        "timeout_graceful_shutdown": settings.shutdown_grace_seconds,
    }


@app.command(name="worker", epilog=_settings_help())
def worker_command() -> None:
    """Run the background worker alone (deliveries and scheduled jobs)."""
    from officehub.jobs import periodic_jobs, queue_jobs
    from officehub.kit.db import DatabaseTimeouts, create_engine, create_sessionmaker
    from officehub.kit.worker import Worker, WorkerContext
    from officehub.migrate import migrate

    settings = _settings()
    migrate(settings.database_url)
    configure_logging(settings.log_level, settings.log_format)

    async def run() -> None:
        engine = create_engine(
            settings.database_url, settings.db_pool_size, DatabaseTimeouts.of(settings)
        )
        ctx = WorkerContext(settings, engine, create_sessionmaker(engine))
        runner = Worker(ctx, queue_jobs(), periodic_jobs())
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, runner.stop)
        try:
            await runner.run()
        finally:
            await engine.dispose()

    settle_heap()
    asyncio.run(run())


def _office_out(office: Office, active_keys: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": office.id,
        "name": office.name,
        "createdAt": isoformat(office.created_at),
    }
    if active_keys is not None:
        out["activeKeys"] = active_keys
    return out


def _user_body(name: str, email: str, role: str, inbox_ids: list[str]) -> Any:
    """The API's own body for a new user (its checks and messages), a bad value exiting 2."""
    from officehub.kit.errors import describe_validation_errors
    from officehub.users.schemas import UserCreate

    try:
        return UserCreate(name=name, email=email, role=role, inbox_ids=inbox_ids)
    except pydantic.ValidationError as exc:
        message, code, details = describe_validation_errors(exc.errors())
        raise CliError(f"{message}: {details}", EXIT_BAD_INPUT, code) from None


async def _invited_user(session: AsyncSession, office_id: str, body: Any, command: str) -> Any:
    """Creates the user in the office and the invitation link of it (72 h, once)."""
    from officehub.accounts import service as accounts
    from officehub.offices import service as offices
    from officehub.users import service as users

    await offices.get_office(session, office_id)
    user = await users.create_user(session, office_id, body)
    await _audited(session, office_id, command, "createUser", "user", user.id)
    link = await accounts.create_link(
        session, office_id, user.id, accounts.INVITE, _settings().public_url
    )
    await _audited(session, office_id, command, "inviteUser", "user", user.id)
    return user, link


@office_app.command("create")
def office_create(
    name: str,
    admin_email: Annotated[
        str | None,
        typer.Option("--admin-email", help="Invite the office's first admin at this email."),
    ] = None,
    admin_name: Annotated[
        str | None,
        typer.Option("--admin-name", help="The first admin's name (with --admin-email)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create an office; with --admin-email and --admin-name, also its first admin and the
    link (72 h, once) for them to choose a password."""
    from officehub.offices import service as offices

    if (admin_email is None) != (admin_name is None):
        raise CliError(
            "--admin-email and --admin-name go together", EXIT_BAD_INPUT, "VALIDATION_ERROR"
        )
    body = None
    if admin_email is not None and admin_name is not None:
        body = _user_body(admin_name, admin_email, "ADMIN", [])

    async def work(session: AsyncSession) -> dict[str, Any]:
        office = await offices.create_office(session, name)
        out: dict[str, Any] = {"id": office.id, "name": office.name}
        if body is not None:
            user, link = await _invited_user(session, office.id, body, "office-create")
            out |= {
                "adminId": user.id,
                "inviteUrl": link.url,
                "expiresAt": isoformat(link.expires_at),
            }
        return out

    _print(_in_session(work), as_json)


@office_app.command("list")
def office_list(as_json: JsonFlag = False) -> None:
    """List every office (oldest first) with its number of active keys."""
    from officehub.offices import service as offices

    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        return [_office_out(s.office, s.active_keys) for s in await offices.list_offices(session)]

    rows = _in_session(work)
    if as_json:
        typer.echo(json.dumps({"data": rows}))
        return
    if not rows:
        typer.echo(
            f"no offices in {_database_label(_settings())}; "
            "create one with `officehub office create NAME`",
            err=True,
        )
        return
    _print_rows(rows, ["id", "name", "createdAt", "activeKeys"])


@office_app.command("rename")
def office_rename(office_id: str, name: str, as_json: JsonFlag = False) -> None:
    """Rename an office."""
    from officehub.offices import service as offices

    async def work(session: AsyncSession) -> dict[str, Any]:
        renamed = await offices.rename_office(session, office_id, name)
        await _audited(session, office_id, "office-rename", "renameOffice", "office", office_id)
        return _office_out(renamed)

    _print(_in_session(work), as_json)


@office_app.command("delete")
def office_delete(
    office_id: str,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    as_json: JsonFlag = False,
) -> None:
    """Delete an office with everything it holds (contacts, keys, files…). Cannot be undone."""
    from officehub.offices import service as offices

    async def read(session: AsyncSession) -> Office:
        return await offices.get_office(session, office_id)

    office = _in_session(read)
    if not yes:
        if not sys.stdin.isatty():
            raise CliError(
                "refusing to delete without confirmation: add --yes",
                EXIT_BAD_INPUT,
                "NOT_CONFIRMED",
            )
        typer.confirm(
            f"Delete office {office.id} ({office.name}) and everything it holds?", abort=True
        )

    async def work(session: AsyncSession) -> dict[str, Any]:
        return _office_out(await offices.delete_office(session, office_id))

    deleted = _in_session(work)
    files = _settings().data_dir / "files"
    for folder in files.glob(f"*/{office_id}"):
        shutil.rmtree(folder, ignore_errors=True)
    _print({**deleted, "deleted": True}, as_json)


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
    from officehub.offices import service as offices

    async def work(session: AsyncSession) -> dict[str, Any]:
        created = await offices.create_api_key(session, office, name, permission or None)
        await _audited(
            session, office, "apikey-create", "createApiKey", "apikey", created.record.id
        )
        return {
            "id": created.record.id,
            "key": created.key,
            "permissions": created.record.permissions,
        }

    _print(_in_session(work), as_json)


@apikey_app.command("list")
def apikey_list(
    office: Annotated[
        str | None, typer.Option("--office", help="Only this office id (default: every office).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """List API keys with their office (never the keys themselves)."""
    from officehub.offices import service as offices

    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        return [
            {
                "id": k.id,
                "officeId": k.office_id,
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
    rows = [{**k, "permissions": ",".join(k["permissions"])} for k in keys]
    _print_rows(rows, ["officeId", "id", "name", "prefix", "permissions", "createdAt", "revokedAt"])


@apikey_app.command("revoke")
def apikey_revoke(key_id: str, as_json: JsonFlag = False) -> None:
    """Revoke an API key: requests with it answer 401 from now on."""
    from officehub.offices import service as offices

    async def work(session: AsyncSession) -> dict[str, Any]:
        record = await offices.revoke_api_key(session, key_id)
        await _audited(
            session, record.office_id, "apikey-revoke", "revokeApiKey", "apikey", record.id
        )
        revoked_at = record.revoked_at
        return {"id": record.id, "revokedAt": isoformat(revoked_at) if revoked_at else None}

    _print(_in_session(work), as_json)


@user_app.command("create")
def user_create(
    office: Annotated[str, typer.Option("--office", help="The office id.")],
    email: Annotated[str, typer.Option("--email", help="The user's email (their sign-in).")],
    name: Annotated[str, typer.Option("--name", help="The user's name.")],
    role: Annotated[
        str, typer.Option("--role", help="ADMIN, SUPERVISOR or AGENT.", case_sensitive=False)
    ] = "AGENT",
    inbox: Annotated[
        list[str] | None,
        typer.Option("--inbox", help="An inbox id the user works in (repeatable)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Create a user and print the invitation link (72 h, once) to choose a password."""
    body = _user_body(name, email, role.upper(), inbox or [])

    async def work(session: AsyncSession) -> dict[str, Any]:
        user, link = await _invited_user(session, office, body, "user-create")
        return {
            "userId": user.id,
            "officeId": user.office_id,
            "email": user.email,
            "role": user.role,
            "inboxIds": list(body.inbox_ids),
            "inviteUrl": link.url,
            "expiresAt": isoformat(link.expires_at),
        }

    _print(_in_session(work), as_json)


@user_app.command("reset-password")
def user_reset_password(
    email: Annotated[str, typer.Option("--email", help="The user's email (any case).")],
    office: Annotated[
        str | None,
        typer.Option("--office", help="The user's office (needed when several have the email)."),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """A one-use link (72 h) for the user to choose a new password; earlier links stop."""
    from officehub.accounts import service as accounts

    public_url = _settings().public_url

    async def work(session: AsyncSession) -> dict[str, Any]:
        user, link = await accounts.reset_by_email(session, email, office, public_url)
        await _audited(
            session, user.office_id, "user-reset-password", "resetPassword", "user", user.id
        )
        return {
            "userId": user.id,
            "officeId": user.office_id,
            "resetUrl": link.url,
            "expiresAt": isoformat(link.expires_at),
        }

    _print(_in_session(work), as_json)


@templates_app.command("sync")
def templates_sync(
    integration: Annotated[
        str | None, typer.Option("--integration", help="Only this integration id.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Pull the template catalogues of the official integrations from the platform."""
    from officehub.channels.template_sync import sync_all
    from officehub.hook_subscriptions import install as install_hooks
    from officehub.kit.db import create_engine, create_sessionmaker
    from officehub.kit.worker import WorkerContext
    from officehub.migrate import migrate

    settings = _settings()
    _require_database(settings)
    migrate(settings.database_url)
    install_hooks()

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


@people_app.command("duplicates")
def people_duplicates(
    office: Annotated[str | None, typer.Option("--office", help="Only this office id.")] = None,
    merge: Annotated[
        bool, typer.Option("--merge", help="Merge each pair into its older contact.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """List contacts that are one person: a Brazilian mobile stored with and without its
    ninth digit (and, with --merge, merge each pair into the older contact)."""
    from officehub.contacts import merge as merging
    from officehub.offices import service as offices

    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        if office is not None:
            await offices.get_office(session, office)
        rows = []
        for pair in await merging.find_duplicates(session, office):
            if merge:
                await merging.merge_contacts(session, pair.office_id, pair.kept_id, pair.other_id)
            rows.append(
                {
                    "officeId": pair.office_id,
                    "keptId": pair.kept_id,
                    "otherId": pair.other_id,
                    "merged": merge,
                }
            )
        return rows

    pairs = _in_session(work)
    if as_json:
        typer.echo(json.dumps({"data": pairs}))
        return
    if not pairs:
        typer.echo("no duplicates")
        return
    _print_rows(
        [{**p, "merged": "yes" if p["merged"] else "no"} for p in pairs],
        ["officeId", "keptId", "otherId", "merged"],
    )


@audit_app.command("verify")
def audit_verify(
    office: Annotated[str | None, typer.Option("--office", help="Only this office id.")] = None,
    as_json: JsonFlag = False,
) -> None:
    """Check every office's audit chain (each entry's hash, its link to the one before, no
    gap); exit 1 naming the first broken entry of each broken chain."""
    from officehub.audit import service as audit
    from officehub.offices import service as offices

    async def work(session: AsyncSession) -> list[dict[str, Any]]:
        if office is not None:
            await offices.get_office(session, office)
        ids = [office] if office is not None else await audit.offices_with_entries(session)
        results = []
        for office_id in ids:
            checked, broken = await audit.first_break(session, office_id)
            results.append(
                {
                    "officeId": office_id,
                    "entries": checked,
                    "firstBroken": None if broken is None else str(broken),
                }
            )
        return results

    results = _in_session(work)
    broken = [r for r in results if r["firstBroken"] is not None]
    if as_json:
        typer.echo(json.dumps({"valid": not broken, "offices": results}))
    else:
        for result in results:
            if result["firstBroken"] is None:
                typer.echo(f"office {result['officeId']}: {result['entries']} entries, intact")
        for result in broken:
            typer.echo(f"broken: {result['firstBroken']}", err=True)
    if broken:
        raise typer.Exit(1)


@secrets_app.command("rotate")
def secrets_rotate(as_json: JsonFlag = False) -> None:
    """Seal every stored secret under a new key (DATA_DIR/secrets.key), with the service
    stopped; the old key is kept beside it as secrets.key.old-<id> for the backups made
    before (store it with them, then delete it)."""
    import officehub.models  # noqa: F401 - every table, so every sealed column is known
    from officehub.kit import encryption
    from officehub.kit.db import Base

    settings = _settings()
    _require_database(settings)
    if settings.secrets_key:
        raise CliError(
            "the secrets key is set by OFFICEHUB_SECRETS_KEY: rotate by hand (see "
            "docs/deployment.md, Secrets at rest), or unset it to use DATA_DIR/secrets.key",
            EXIT_BAD_INPUT,
            "KEY_IN_SETTING",
        )
    old = encryption.load_secrets_keys(settings)
    data_dir = Path(settings.data_dir)
    next_path = data_dir / encryption.NEXT_KEY_FILE
    text = encryption.new_key_text()
    encryption.publish_key(next_path, text, replace=True)
    new = encryption.parse_key(text)
    encryption.keyring.use(new, old)

    async def work(session: AsyncSession) -> int:
        return await encryption.reseal(session, Base.metadata)

    rows = _in_session(work)
    kept = data_dir / f"{encryption.KEY_FILE}.old-{old.ident}"
    os.link(encryption.key_path(settings), kept)  # secrets.key is never absent
    os.replace(next_path, encryption.key_path(settings))
    _print(
        {"rows": rows, "oldKey": old.ident, "newKey": new.ident, "oldKeyKeptIn": str(kept)},
        as_json,
    )


@evidence_app.command("verify")
def evidence_verify(
    file: Annotated[Path, typer.Argument(help="The bundle (zip) to check.")],
    key: Annotated[
        Path | None,
        typer.Option(
            "--key", help="The office's published public key (PEM); default: the bundle's own."
        ),
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Check an evidence bundle: its signature, the chain of its entries and every file;
    exit 1 naming each thing that changed."""
    from officehub.evidence.chain import verify_bundle

    try:
        data = file.read_bytes()
        trusted = None if key is None else key.read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {exc.filename}: {exc.strerror}", EXIT_BAD_INPUT) from exc
    verdict = verify_bundle(data, trusted)
    report = {
        "valid": verdict.ok,
        "entries": verdict.entries,
        "keyFingerprint": verdict.fingerprint,
        "problems": verdict.problems,
    }
    if as_json:
        typer.echo(json.dumps(report))
    elif verdict.ok:
        typer.echo(f"valid: {verdict.entries} entries, signed by key {verdict.fingerprint}")
        if key is None:
            typer.echo("compare this fingerprint with GET /office/evidence-key of the office")
    else:
        for problem in verdict.problems:
            typer.echo(f"changed: {problem}", err=True)
    if not verdict.ok:
        raise typer.Exit(1)


_SYNC_BATCHES = 1000
"""Batches one ``cases sync`` or ``publications sync`` claims at most (by hand: one, of
every record it names)."""


class _BatchReport(Protocol):
    def add(self, other: Any, /) -> None: ...

    @property
    def idle(self) -> bool: ...


R = TypeVar("R", bound=_BatchReport)


def _in_batches(
    settings: Settings,
    total: R,
    batch_of: Callable[[WorkerContext], Callable[[], Awaitable[R]]],
    by_hand: bool,
) -> R:
    """The reports, added into ``total``, of one batch after another (``batch_of`` gives
    the pass, in a worker context of its own) until one finds nothing due, at most
    ``_SYNC_BATCHES``; a single batch by hand (the records named are all in it)."""
    from officehub.kit.db import create_engine, create_sessionmaker
    from officehub.kit.worker import WorkerContext

    async def run() -> R:
        engine = create_engine(settings.database_url)
        try:
            one_batch = batch_of(WorkerContext(settings, engine, create_sessionmaker(engine)))
            for _batch in range(_SYNC_BATCHES):
                report = await one_batch()
                total.add(report)
                if by_hand or report.idle:
                    break
            return total
        finally:
            await engine.dispose()

    return asyncio.run(run())


@cases_app.command("sync")
def cases_sync(
    case: Annotated[str | None, typer.Option("--case", help="Only this case id.")] = None,
    office: Annotated[
        str | None, typer.Option("--office", help="Only the watched cases of this office id.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Check watched cases on DataJud now (all due ones and all never checked yet, or every
    watched case of --case or --office, due or not); exit 1 when a check failed."""
    from officehub.cases.service import FIRST_CHECK_SPREAD
    from officehub.cases.watch import Report, Watcher
    from officehub.hook_subscriptions import install as install_hooks
    from officehub.migrate import migrate

    settings = _settings()
    _require_database(settings)
    migrate(settings.database_url)
    install_hooks()  # a check's events go to the outbox's consumers

    def batch_of(ctx: WorkerContext) -> Callable[[], Awaitable[Report]]:
        # A case added a moment ago is not due yet (its first check is spread over a
        # minute) but is expected to be looked up: every case never checked, once.
        watcher, new_until = Watcher(), ctx.now() + FIRST_CHECK_SPREAD
        return lambda: watcher.run(
            ctx, only_case=case, only_office=office, never_checked_until=new_until
        )

    by_hand = case is not None or office is not None
    report = _in_batches(settings, Report(), batch_of, by_hand)
    _print(report.as_dict(), as_json)
    if report.failed or (case is not None and report.checked == 0):
        raise typer.Exit(1)


@publications_app.command("sync")
def publications_sync(
    office: Annotated[
        str | None, typer.Option("--office", help="Every lawyer of this office id, due or not.")
    ] = None,
    lawyer: Annotated[
        str | None, typer.Option("--lawyer", help="Only this lawyer id, due or not.")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Ask DJEN now for the publications of the lawyers due (or of --office / --lawyer) and
    store the new ones; exit 1 when a lawyer's sync failed."""
    from officehub.hook_subscriptions import install as install_hooks
    from officehub.migrate import migrate
    from officehub.publications.sync import Report, Syncer

    settings = _settings()
    _require_database(settings)
    migrate(settings.database_url)
    install_hooks()  # a publication's event goes to the outbox's consumers

    def batch_of(ctx: WorkerContext) -> Callable[[], Awaitable[Report]]:
        syncer = Syncer()
        return lambda: syncer.run(ctx, only_office=office, only_lawyer=lawyer)

    by_hand = office is not None or lawyer is not None
    report = _in_batches(settings, Report(), batch_of, by_hand)
    _print(report.as_dict(), as_json)
    if report.failed:
        raise typer.Exit(1)


@contextmanager
def _progress(enabled: bool) -> Iterator[backups.Progress | None]:
    if not enabled:
        yield None
        return
    tasks: dict[str, TaskID] = {}
    with Progress(
        TextColumn("{task.description:<9}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        console=stderr,
        transient=True,
    ) as bar:

        def update(step: str, done: int, total: int) -> None:
            if step not in tasks:
                tasks[step] = bar.add_task(step, total=total)
            bar.update(tasks[step], completed=done, total=total)

        yield update


def _embedded_database(settings: Settings, command: str) -> Path:
    path = settings.sqlite_path()
    if path is None:
        raise CliError(
            f"`officehub {command}` works on the embedded SQLite database; "
            "OFFICEHUB_DATABASE_URL is PostgreSQL: use pg_dump/pg_restore (docs/deployment.md)",
            EXIT_BAD_INPUT,
            "NOT_EMBEDDED",
        )
    return path


@app.command(name="backup")
def backup_command(
    path: Annotated[Path, typer.Argument(help="A new (or empty) folder for the backup.")],
    as_json: JsonFlag = False,
) -> None:
    """Copy the embedded database (consistently, while the server runs) and the files."""
    from officehub import backup as backups

    settings = _settings()
    database = _embedded_database(settings, "backup")
    _require_database(settings)
    with _progress(not as_json and sys.stderr.isatty()) as progress:
        try:
            made = backups.backup(database, settings.data_dir, path, progress)
        except backups.BackupError as exc:
            raise CliError(str(exc), EXIT_BAD_INPUT, "BAD_TARGET") from exc
    _print(
        {
            "path": str(made.path.resolve()),
            "databaseBytes": made.database_bytes,
            "files": made.files,
        },
        as_json,
    )


@app.command(name="restore")
def restore_command(
    path: Annotated[Path, typer.Argument(help="A folder made by `officehub backup`.")],
    as_json: JsonFlag = False,
) -> None:
    """Restore a backup into an empty OFFICEHUB_DATA_DIR (then start the server as usual)."""
    from officehub import backup as backups
    from officehub.migrate import migrate

    settings = _settings()
    database = _embedded_database(settings, "restore")
    with _progress(not as_json and sys.stderr.isatty()) as progress:
        try:
            made = backups.restore(path, database, settings.data_dir, progress)
        except backups.BackupError as exc:
            raise CliError(str(exc), EXIT_BAD_INPUT, "BAD_SOURCE") from exc
    migrate(settings.database_url)
    _print(
        {
            "database": str(database),
            "dataDir": str(settings.data_dir.resolve()),
            "files": made.files,
        },
        as_json,
    )


# --- errors -----------------------------------------------------------------------------------


def _settings_error(exc: pydantic.ValidationError) -> CliError:
    problems = []
    for error in exc.errors():
        name = "OFFICEHUB_" + "_".join(str(p) for p in error["loc"]).upper()
        message = str(error["msg"]).removeprefix("Value error, ")
        problems.append(f"{name}: {message}")
    return CliError(
        "bad setting " + "; ".join(problems) + " (fix it in the environment or .env)",
        EXIT_BAD_INPUT,
        "BAD_SETTING",
    )


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _explain(exc: BaseException) -> CliError | None:
    """One line for a configuration or database failure; None when not one of those."""
    from sqlalchemy import exc as sa_exc

    try:
        settings = get_settings()
    except pydantic.ValidationError:
        return None
    for cause in _chain(exc):
        if isinstance(cause, sa_exc.ArgumentError | sa_exc.NoSuchModuleError):
            return CliError(
                f"OFFICEHUB_DATABASE_URL is not a usable database URL ({cause}); use "
                f"{DATABASE_URL_FORMS[0]} or {DATABASE_URL_FORMS[1]}",
                EXIT_BAD_INPUT,
                "BAD_SETTING",
            )
        if isinstance(cause, OSError) and _in_data_dir(cause.filename, settings):
            return CliError(
                f"cannot write {cause.filename}: {cause.strerror}; make OFFICEHUB_DATA_DIR "
                f"({settings.data_dir.resolve()}) a folder this user can create and write",
                EXIT_FAILURE,
                "DATA_DIR_NOT_WRITABLE",
            )
    for cause in _chain(exc):
        if isinstance(cause, sa_exc.OperationalError) and "unable to open" in str(cause):
            return CliError(
                f"cannot open the database file {_database_label(settings)}; make "
                "OFFICEHUB_DATA_DIR a folder this user can write",
                EXIT_FAILURE,
                "DATA_DIR_NOT_WRITABLE",
            )
    for cause in _chain(exc):
        if isinstance(cause, OSError | socket.gaierror | sa_exc.DBAPIError) or (
            type(cause).__module__.startswith("asyncpg")
        ):
            reason = str(cause).splitlines()[0] if str(cause) else type(cause).__name__
            return CliError(
                f"cannot use the database {_database_label(settings)}: {reason}; check "
                "OFFICEHUB_DATABASE_URL (and that the database server is running)",
                EXIT_FAILURE,
                "DATABASE_UNAVAILABLE",
            )
    return None


def _in_data_dir(filename: object, settings: Settings) -> bool:
    if not isinstance(filename, str):
        return False
    path = Path(filename).resolve()
    database = settings.sqlite_path()
    roots = [settings.data_dir.resolve(), *([database.parent] if database else [])]
    return any(
        path == root or root.is_relative_to(path) or path.is_relative_to(root) for root in roots
    )


def _fail(error: CliError, as_json: bool) -> NoReturn:
    if as_json:
        body = {"message": error.message, "code": error.code, "exitCode": error.exit_code}
        typer.echo(json.dumps(body), err=True)
    else:
        typer.echo(f"error: {error.message}", err=True)
    sys.exit(error.exit_code)


def _service_error(exc: ServiceError) -> CliError:
    message = exc.message + (f": {exc.details}" if exc.details else "")
    exit_code = EXIT_BAD_INPUT if exc.status_code == 400 else EXIT_FAILURE
    return CliError(message, exit_code, exc.code)


def main(argv: list[str] | None = None) -> None:
    """The console entry point: runs a command and turns every failure into one line."""
    args = sys.argv[1:] if argv is None else argv
    as_json = "--json" in args
    debug = "--debug" in args or os.environ.get("OFFICEHUB_DEBUG", "") not in ("", "0", "false")
    command = typer.main.get_command(app)
    try:
        result = command.main(args, prog_name="officehub", standalone_mode=False)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        _fail(CliError("aborted", EXIT_FAILURE, "ABORTED"), as_json)
    except TyperException as exc:  # usage errors: exit code 2
        show = getattr(exc, "show", None)
        if as_json or show is None:
            _fail(CliError(exc.format_message(), exc.exit_code, "BAD_USAGE"), as_json)
        show()
        sys.exit(exc.exit_code)
    except CliError as exc:
        if debug:
            raise
        _fail(exc, as_json)
    except ServiceError as exc:
        if debug:
            raise
        _fail(_service_error(exc), as_json)
    except Exception as exc:
        if debug:
            raise
        if isinstance(exc, pydantic.ValidationError) and exc.title == Settings.__name__:
            _fail(_settings_error(exc), as_json)
        explained = _explain(exc)
        if explained is None:
            explained = CliError(
                f"unexpected {type(exc).__name__}: {exc}; run again with --debug for the traceback"
            )
        _fail(explained, as_json)
    sys.exit(result if isinstance(result, int) else 0)
