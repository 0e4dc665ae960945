"""Settings: ``OFFICEHUB_*`` environment variables, then a ``.env`` file in the working folder.

Two defaults follow other settings rather than being fixed: the SQLite database lives in
``DATA_DIR`` (``DATA_DIR/officehub.db``), and the public URL is the address actually
served (``http://HOST:PORT``, re-derived when ``officehub serve --host/--port`` override
them). Setting either variable explicitly wins.
"""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, PrivateAttr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

DATABASE_FILE = "officehub.db"
# Settings whose value is shown masked by ``officehub config``.
SECRETS = frozenset({"signing_key", "datajud_api_key", "secrets_key", "smtp_url"})
# The two database URL forms the service runs on (SQLAlchemy's async drivers it ships).
DATABASE_URL_FORMS = (
    "sqlite+aiosqlite:///PATH",
    "postgresql+asyncpg://USER:PASSWORD@HOST:PORT/DB",
)
_DRIVERS = frozenset({"sqlite+aiosqlite", "postgresql+asyncpg"})
_ANY_ADDRESS = {"0.0.0.0", "::", ""}  # noqa: S104 - compared against, never bound


class Settings(BaseSettings):
    """Every setting is read from the environment with the prefix ``OFFICEHUB_``."""

    model_config = SettingsConfigDict(
        env_prefix="OFFICEHUB_", env_file=".env", env_file_encoding="utf-8", extra="ignore"
    )

    database_url: str = Field(
        "", description="SQLAlchemy async database URL; empty: SQLite file DATA_DIR/officehub.db"
    )
    data_dir: Path = Field(Path("./data"), description="Folder for the SQLite file and uploads")
    host: str = Field("127.0.0.1", description="Address the API listens on")
    port: int = Field(8000, ge=1, le=65535, description="Port the API listens on")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        "INFO", description="Log level (DEBUG, INFO, WARNING, ERROR)"
    )
    log_format: Literal["auto", "json", "text"] = Field(
        "auto", description="Log lines: text on a terminal, JSON otherwise (auto), or forced"
    )
    public_url: str = Field(
        "", description="Base URL the service is reached at (signed links); empty: http://HOST:PORT"
    )
    signing_key: str = Field(
        "", description="Key for signed media links; generated under DATA_DIR when empty"
    )
    media_url_ttl_seconds: int = Field(
        7 * 24 * 3600, description="How long a signed media link stays valid"
    )
    webhook_allow_private: bool = Field(
        False, description="Allow webhook URLs that resolve to private or loopback addresses"
    )
    webhook_timeout_seconds: float = Field(10.0, description="Timeout of one webhook delivery")
    delivery_lease_seconds: float = Field(
        6.0,
        gt=0,
        description="How long a claimed delivery is held before others may retry it; the "
        "worker renews it every third of this while the attempt runs",
    )
    delivery_batch_size: int = Field(50, description="Deliveries a worker claims at once")
    delivery_concurrency: int = Field(20, description="Deliveries a worker sends at once")
    delivery_endpoint_concurrency: int = Field(
        10,
        ge=1,
        description="Of those, at most this many to one URL (one for a minute after it timed "
        "out), so a slow receiver cannot hold the others' deliveries back",
    )
    delivery_retention_days: int = Field(90, description="Days delivery records are kept")
    outbox_retention_days: int = Field(
        7, description="Days an outbox event is kept once every consumer has processed it"
    )
    worker_poll_seconds: float = Field(1.0, description="How often an idle worker looks for work")
    key_cache_seconds: float = Field(
        1.0,
        ge=0,
        le=60,
        description="How long a process trusts an API key it resolved (a revoked key is "
        "refused within this time); 0 looks every key up",
    )
    rate_limits: str = Field(
        "6000/minute",
        description="Requests each API key may make, e.g. '100/second;6000/minute' (every "
        "limit holds); empty: unlimited",
    )
    webchat_ip_rate_limits: str = Field(
        "120/minute",
        description="Requests to the web chat's visitor API each client IP may make (empty: "
        "unlimited)",
    )
    webchat_starts_per_integration: str = Field(
        "60/minute;600/hour",
        description="Chats each web chat integration may start, whoever starts them (every "
        "limit holds; empty: unlimited): past it, 429 and a chat.webchat.flooded alert, so "
        "one widget flooded from many addresses cannot fill the office with contacts",
    )
    webchat_visitor_rate_limits: str = Field(
        "30/minute;600/hour",
        description="Requests each web chat visitor may make (empty: unlimited)",
    )
    webchat_streams_per_visitor: int = Field(
        2, ge=1, description="Live streams one web chat visitor may hold open at once (per process)"
    )
    webchat_streams_per_address: int = Field(
        20,
        ge=1,
        description="Live streams one client address may hold open at once (per process)",
    )
    streams_per_key: int = Field(
        20,
        ge=1,
        description="GET /stream connections one API key (or, with sessions, one user) may "
        "hold open at once (per process)",
    )
    streams_per_address: int = Field(
        50,
        ge=1,
        description="GET /stream connections one client address may hold open at once "
        "(per process)",
    )
    stream_heartbeat_seconds: float = Field(
        15.0, gt=0, le=120, description="GET /stream: a comment line after this long idle"
    )
    presence_grace_seconds: float = Field(
        60.0,
        ge=0,
        le=3600,
        description="A signed-in user is OFFLINE this long after their last console stream "
        "closed (a reload within it changes nothing); their first stream makes them ONLINE",
    )
    stream_max_seconds: float = Field(
        600.0,
        gt=0,
        le=86_400,
        description="GET /stream ends after this long; the browser reconnects with "
        "Last-Event-ID and is sent what it missed (a key revoked meanwhile is refused then)",
    )
    webchat_poll_seconds: float = Field(
        20.0,
        gt=0,
        le=300,
        description=(
            "Safety poll of a visitor's live stream: how often it reads the database without"
            " being woken (wake-ups come from this process's commits; the poll brings what"
            " another process wrote)"
        ),
    )
    redis_url: str = Field(
        "", description="Redis for rate limit counts shared by every process (empty: in memory)"
    )
    redis_key_prefix: str = Field("officehub", description="Prefix of this service's Redis keys")
    db_pool_size: int = Field(
        20,
        description="PostgreSQL connections each process keeps open (up to half as many more "
        "under load, closed when returned)",
    )
    db_connect_timeout_seconds: float = Field(
        5.0, gt=0, description="Longest wait for a new PostgreSQL connection to open"
    )
    db_statement_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="Longest wait for PostgreSQL to answer one statement (the statement is "
        "then cancelled and the request answers 503)",
    )
    db_pool_timeout_seconds: float = Field(
        5.0,
        gt=0,
        description="Longest wait for a free connection of the pool when all are in use",
    )
    db_keepalive_seconds: int = Field(
        10,
        ge=1,
        description="Idle seconds before TCP keepalive probes a PostgreSQL connection (3 "
        "unanswered probes, this far apart, end it)",
    )
    max_json_body_bytes: int = Field(1024 * 1024, description="Largest JSON body accepted")
    body_discard_bytes: int = Field(
        4 * 1024 * 1024,
        ge=0,
        description="After a 413, up to this much of the rest of the body is read and "
        "discarded so the client, still sending, reads the answer (0: none)",
    )
    max_header_bytes: int = Field(
        32 * 1024,
        ge=1024,
        description="Largest request line plus headers of one request; more: 431",
    )
    header_timeout_seconds: float = Field(
        10.0,
        gt=0,
        description="Time a client has to send a request's line and headers (also a new "
        "connection's first request); then the connection is closed",
    )
    body_timeout_seconds: float = Field(
        30.0,
        gt=0,
        description="Longest pause while a request's body arrives (between two of its "
        "reads); then 408 and the connection is closed",
    )
    send_timeout_seconds: float = Field(
        60.0,
        gt=0,
        description="Longest time a client may take no part of an answer waiting for it "
        "(its reading stalled); then the connection is closed",
    )
    keepalive_timeout_seconds: int = Field(
        5, ge=1, description="An idle keep-alive connection is closed after this long"
    )
    shutdown_grace_seconds: float = Field(
        20.0,
        gt=0,
        le=3600,
        description="On SIGTERM, requests still in progress this long after it are cancelled "
        "(their changes roll back) so the process exits; live streams close at once",
    )
    max_connections: int = Field(
        1000,
        ge=1,
        description="Connections (or requests in progress) each API process serves at once; "
        "a request beyond them: 503 SERVER_BUSY",
    )
    trusted_proxies: str = Field(
        "",
        description="Addresses or networks (comma-separated, e.g. 172.28.0.1,10.0.0.0/8) of "
        "the reverse proxies whose X-Forwarded-For and X-Forwarded-Proto are believed: the "
        "client address (rate limits) and https (HSTS) come from them; empty (the "
        "default): none, so no local process forges them (compose.yaml names its own)",
    )
    secrets_key: str = Field(
        "",
        description="Key (32 bytes, URL-safe base64) that encrypts stored secrets (AES-GCM); "
        "empty: generated once in DATA_DIR/secrets.key, outside the database",
    )
    time_zone: str = Field(
        "America/Sao_Paulo",
        description="The office's time zone (IANA name): times in evidence transcripts",
    )
    audit_flush_seconds: float = Field(
        0.2, gt=0, description="How often the audit trail's buffered entries are written"
    )
    storage_backend: Literal["local", "s3"] = Field(
        "local", description="Where uploaded files live: the data folder or an S3 bucket"
    )
    s3_endpoint_url: str = Field("", description="S3-compatible endpoint (empty: AWS)")
    s3_bucket: str = Field("", description="Bucket of the S3 storage")
    s3_region: str = Field("us-east-1", description="Region of the S3 storage")
    s3_access_key_id: str = Field("", description="Access key of the S3 storage")
    s3_secret_access_key: str = Field("", description="Secret key of the S3 storage")
    smtp_url: str = Field(
        "",
        description="The mail server the service writes to offices' admins through (a "
        "webhook paused after its retry window): smtp://user:password@host:587 (STARTTLS "
        "when the server offers it), smtps://… (TLS from the start); empty: no e-mail",
    )
    mail_from: str = Field(
        "officehub <nao-responda@localhost>", description="The From of the service's e-mails"
    )
    whatsapp_media_upload: Literal["auto", "always", "never"] = Field(
        "auto",
        description=(
            "Stored files sent on the official channel: uploaded through the platform's media "
            "API (always), sent as links (never), or uploaded when the storage's links are not "
            "publicly reachable: a loopback, private or single-label host (auto)"
        ),
    )
    whatsapp_api_url: str = Field(
        "https://graph.facebook.com/v26.0",
        description="Base URL of the official WhatsApp Cloud API, its Graph API version last "
        "(operator configuration: a newer version is a setting away; v21.0 is retired on "
        "21 January 2027)",
    )
    whatsapp_timeout_seconds: float = Field(10.0, description="Timeout of one platform call")
    dispatch_batch_size: int = Field(100, description="Outbound messages a worker claims at once")
    retention_batch_size: int = Field(
        100,
        ge=1,
        description="Closed conversations (and, apart, webhook delivery logs) one retention "
        "transaction removes",
    )
    dispatch_concurrency: int = Field(20, description="Conversations a worker sends to at once")
    dispatch_integration_concurrency: int = Field(
        10, ge=1, description="Of those, at most this many through one integration (at most half)"
    )
    dispatch_lease_seconds: float = Field(
        6.0,
        description="How long a worker holds a claimed send before another may take it over "
        "(renewed by a heartbeat while the send runs)",
    )
    dispatch_max_attempts: int = Field(
        8, description="Sends of one message tried before it is FAILED (429 and 5xx only)"
    )

    datajud_url: str = Field(
        "https://api-publica.datajud.cnj.jus.br",
        description="Base URL of the CNJ's public DataJud API (operator configuration)",
    )
    datajud_api_key: str = Field(
        "cDZHYzlZa0JadVREZDJCendQbXY6SkJlTzNjLV9TRENyQk1RdnFKZGRQdw==",
        description="DataJud's public API key (sent as 'Authorization: APIKey <key>'); the "
        "CNJ publishes it and may change it",
    )
    datajud_interval_seconds: float = Field(
        6 * 3600, gt=0, description="How often each watched case is checked on DataJud"
    )
    datajud_timeout_seconds: float = Field(20.0, gt=0, description="Timeout of one DataJud call")
    datajud_court_concurrency: int = Field(
        2, ge=1, description="DataJud calls in flight at once per court"
    )
    datajud_batch_size: int = Field(
        200, ge=1, description="Watched cases the watcher claims per run"
    )
    datajud_stale_after_seconds: float = Field(
        24 * 3600,
        gt=0,
        description="A watched case whose checks have all failed this long (since the first "
        "failure) makes case.source.stale",
    )

    djen_url: str = Field(
        "https://comunicaapi.pje.jus.br",
        description="Base URL of the CNJ's public communications API (DJEN; operator "
        "configuration, http or https only)",
    )
    djen_timeout_seconds: float = Field(30.0, gt=0, description="Timeout of one DJEN call")
    djen_requests_per_second: float = Field(
        1.0, gt=0, description="DJEN calls one sync makes per second at most (politeness)"
    )
    djen_interval_seconds: float = Field(
        24 * 3600, gt=0, description="How often each lawyer's publications are synced"
    )
    djen_lookback_days: int = Field(
        7, ge=1, le=60, description="Days a lawyer's first sync looks back"
    )

    session_idle_seconds: int = Field(
        2 * 3600,
        ge=60,
        description="A signed-in session unused this long ends (the idle timeout)",
    )
    session_absolute_seconds: int = Field(
        12 * 3600,
        ge=60,
        description="A signed-in session ends this long after sign-in, however used (the "
        "absolute timeout)",
    )
    login_email_failure_limits: str = Field(
        "5 per 15 minutes",
        description="Wrong passwords one email may be sent before sign-ins for it answer 429 "
        "until the window ends (the right password included); empty: no limit",
    )
    login_address_failure_limits: str = Field(
        "20 per 15 minutes",
        description="Wrong passwords one client address may send before its sign-ins answer "
        "429 until the window ends; empty: no limit",
    )

    _public_url_derived: bool = PrivateAttr(False)

    @field_validator("time_zone")
    @classmethod
    def _known_time_zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError) as exc:
            raise ValueError(f"{value!r} is not an IANA time zone") from exc
        return value

    @field_validator("djen_url")
    @classmethod
    def _djen_http_url(cls, value: str) -> str:
        parsed = urlsplit(value.strip())
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ValueError("an http(s) URL with a host, such as https://comunicaapi.pje.jus.br")
        if parsed.username or parsed.password or parsed.query or parsed.fragment:
            raise ValueError("a base URL without credentials, query or fragment")
        try:
            literal = ipaddress.ip_address(parsed.hostname.strip("[]"))
        except ValueError:
            literal = None
        if literal is not None and (literal.is_link_local or literal.is_multicast):
            raise ValueError("not a link-local or multicast address (the cloud's metadata)")
        return value.strip().rstrip("/")

    @field_validator("trusted_proxies")
    @classmethod
    def _proxy_addresses(cls, value: str) -> str:
        items = [item.strip() for item in value.split(",") if item.strip()]
        for item in items:
            try:
                ipaddress.ip_network(item)
            except ValueError as exc:
                raise ValueError(f"{item!r} is not an IP address or network") from exc
        return ",".join(items)

    @model_validator(mode="before")
    @classmethod
    def _upper_log_level(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name in ("log_level", "LOG_LEVEL"):
                if isinstance(data.get(name), str):
                    data[name] = data[name].upper()
        return data

    @field_validator("database_url")
    @classmethod
    def _supported_database_url(cls, value: str) -> str:
        if not value:
            return value
        from sqlalchemy.engine import make_url  # SQLAlchemy's import waits for a value
        from sqlalchemy.exc import ArgumentError

        try:
            driver = make_url(value).drivername
        except (ArgumentError, ValueError):
            driver = None
        if driver not in _DRIVERS:
            raise ValueError(unsupported_database_url(value))
        return value

    @model_validator(mode="after")
    def _derive_defaults(self) -> Settings:
        if not self.database_url:
            self.database_url = f"sqlite+aiosqlite:///{self.data_dir.resolve() / DATABASE_FILE}"
        if not self.public_url:
            self.public_url = address_url(self.host, self.port)
            self._public_url_derived = True
        self.public_url = self.public_url.rstrip("/")
        return self

    def served_at(self, host: str | None, port: int | None) -> Settings:
        """These settings for a server on ``host:port``; a derived public URL follows them."""
        host = self.host if host is None else host
        port = self.port if port is None else port
        update: dict[str, Any] = {"host": host, "port": port}
        if self._public_url_derived:
            update["public_url"] = address_url(host, port)
        return self.model_copy(update=update)

    def sqlite_path(self) -> Path | None:
        """The database file when the database is SQLite on disk."""
        from sqlalchemy.engine import make_url

        url = make_url(self.database_url)
        if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
            return None
        return Path(url.database).resolve()

    def effective(self) -> dict[str, Any]:
        """Every setting as used, secrets and database passwords masked."""
        from sqlalchemy.engine import make_url

        shown: dict[str, Any] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if name in SECRETS:
                value = "********" if value else ""
            elif name == "database_url":
                value = make_url(value).render_as_string(hide_password=True)
            elif isinstance(value, Path):
                value = str(value.resolve())
            shown[f"OFFICEHUB_{name.upper()}"] = value
        return shown


def unsupported_database_url(value: str) -> str:
    """Why ``value`` is no database URL of ours, and the two forms that are."""
    scheme = value.split("://", 1)[0] if "://" in value else ""
    said = f"'{scheme}://' is not supported" if scheme else "not a database URL"
    hint = ""
    if scheme.split("+")[0] in ("postgres", "postgresql"):
        hint = "; for PostgreSQL write postgresql+asyncpg:// (the async driver)"
    elif scheme.split("+")[0] == "sqlite":
        hint = "; for SQLite write sqlite+aiosqlite:/// (the async driver)"
    return f"{said}{hint}; use {DATABASE_URL_FORMS[0]} or {DATABASE_URL_FORMS[1]}"


def address_url(host: str, port: int) -> str:
    """The URL a client on this machine reaches a server listening on ``host:port`` at."""
    if host in _ANY_ADDRESS:
        host = "127.0.0.1"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


@lru_cache
def get_settings() -> Settings:
    return Settings()


def trusted_hosts(settings: Settings) -> list[str]:
    """``OFFICEHUB_TRUSTED_PROXIES`` as the list uvicorn's ProxyHeadersMiddleware takes."""
    return [item for item in settings.trusted_proxies.split(",") if item]
