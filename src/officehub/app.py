"""The application factory."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import Depends, FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import HTMLResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from officehub import __version__
from officehub.accounts.throttle import LoginThrottle
from officehub.audit.middleware import AuditMiddleware
from officehub.audit.recorder import AuditRecorder
from officehub.console.router import router as console_router
from officehub.events.router import router as events_router
from officehub.events.router import state_webhook_bodies, webhook_routes
from officehub.health import router as health_router
from officehub.hook_subscriptions import install as install_hooks
from officehub.jobs import periodic_jobs, queue_jobs
from officehub.kit.auth import (
    ROLES_EXTRA,
    SCOPE_EXTRA,
    SESSION_SCHEME,
    KeyCache,
    is_keyless,
    roles_of,
    scope_of,
    security_schemes,
)
from officehub.kit.config import Settings, get_settings, trusted_hosts
from officehub.kit.db import (
    DatabaseTimeouts,
    create_engine,
    create_read_sessionmaker,
    create_sessionmaker,
)
from officehub.kit.encryption import load_secrets_keys
from officehub.kit.error_handlers import install_error_handlers
from officehub.kit.errors import ErrorBody
from officehub.kit.gc_tuning import settle_heap
from officehub.kit.logs import configure_logging, redact_outbound_urls
from officehub.kit.middleware import (
    AccessLogMiddleware,
    ApiKeyMiddleware,
    BodyLimitMiddleware,
    NulGuardMiddleware,
    RequestIdMiddleware,
    TrailingSlashMiddleware,
    UnhandledErrorMiddleware,
)
from officehub.kit.middleware.security_headers import SecurityHeadersMiddleware
from officehub.kit.operation_ids import operation_id
from officehub.kit.ratelimit import RateLimiter
from officehub.kit.request_guards import guard_request
from officehub.kit.stream_slots import StreamSlots
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.live.hub import StreamHub
from officehub.live.presence import PresenceTracker
from officehub.mounted_routers import domain_routers
from officehub.webchat.cors import WebchatCorsMiddleware

logger = logging.getLogger("officehub.app")
# Swagger UI and ReDoc assets shipped by the fastapi-offline package: no CDN, so the docs
# work on an offline or firewalled server.
DOCS_ASSETS = Path(fastapi_offline.__file__).parent / "static"
DOCS_ASSETS_URL = "/docs-assets"


SERVE_WORKER_ENV = "OFFICEHUB_SERVE_EMBEDDED_WORKER"


def served_app() -> FastAPI:
    """The app of each process of ``officehub serve --workers N`` (a uvicorn factory)."""
    settings = get_settings()
    configure_logging(settings.log_level, settings.log_format)
    served = create_app(settings, embedded_worker=os.environ.get(SERVE_WORKER_ENV) == "1")
    settle_heap()
    return served


def create_app(settings: Settings | None = None, *, embedded_worker: bool = False) -> FastAPI:
    settings = settings or get_settings()
    load_secrets_keys(settings)
    install_hooks()
    redact_outbound_urls()

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        engine = create_engine(
            settings.database_url, settings.db_pool_size, DatabaseTimeouts.of(settings)
        )
        app.state.engine = engine
        app.state.sessionmaker = create_sessionmaker(engine)
        app.state.read_sessionmaker = create_read_sessionmaker(engine)
        app.state.stream_hub = StreamHub(app.state.read_sessionmaker, settings.database_url)
        app.state.presence = PresenceTracker(app.state.sessionmaker, settings)
        app.state.audit = AuditRecorder(app.state.sessionmaker, settings.audit_flush_seconds)
        app.state.audit.start()
        worker_task: asyncio.Task[None] | None = None
        worker: Worker | None = None
        if embedded_worker:
            ctx = WorkerContext(settings, engine, app.state.sessionmaker)
            worker = Worker(ctx, queue_jobs(), periodic_jobs())
            worker_task = asyncio.create_task(worker.run())
        try:
            yield
        finally:
            if worker is not None and worker_task is not None:
                worker.stop()
                await worker_task
            await app.state.presence.stop()
            await app.state.stream_hub.close()
            await app.state.audit.stop()
            await engine.dispose()
            await app.state.rate_limiter.close()
            await app.state.webchat_ip_limiter.close()
            await app.state.webchat_visitor_limiter.close()
            await app.state.login_throttle.close()

    app = FastAPI(
        title="officehub",
        version=__version__,
        description="Messaging, CRM and automation for law offices.",
        lifespan=lifespan,
        redirect_slashes=False,
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(guard_request)],
        generate_unique_id_function=operation_id,
    )
    app.state.settings = settings
    app.state.webchat_streams = StreamSlots()
    app.state.office_streams = StreamSlots()
    app.state.key_cache = KeyCache(settings.key_cache_seconds)
    app.state.rate_limiter = RateLimiter(
        settings.rate_limits, settings.redis_url, settings.redis_key_prefix
    )
    app.state.webchat_ip_limiter = RateLimiter(
        settings.webchat_ip_rate_limits,
        settings.redis_url,
        f"{settings.redis_key_prefix}:webchat-ip",
    )
    app.state.webchat_integration_limiter = RateLimiter(
        settings.webchat_starts_per_integration,
        settings.redis_url,
        f"{settings.redis_key_prefix}:webchat-integration",
    )
    app.state.webchat_visitor_limiter = RateLimiter(
        settings.webchat_visitor_rate_limits,
        settings.redis_url,
        f"{settings.redis_key_prefix}:webchat-visitor",
    )
    app.state.totp_clock = utcnow  # TOTP codes are checked against it (tests step their own)
    app.state.login_throttle = LoginThrottle(
        settings.login_email_failure_limits,
        settings.login_address_failure_limits,
        settings.redis_url,
        settings.redis_key_prefix,
    )
    install_error_handlers(app)
    app.include_router(health_router)
    app.include_router(events_router)
    app.webhooks.include_router(webhook_routes())
    for router in domain_routers():
        app.include_router(router)
    _install_docs(app)
    app.include_router(console_router)
    app.add_middleware(WebchatCorsMiddleware)
    # The request layers (``kit.middleware``), added innermost first: the last added runs first.
    # The audit trail's layer runs inside the key's: the actor is known (``kit.actor``).
    app.add_middleware(AuditMiddleware)
    app.add_middleware(ApiKeyMiddleware)
    app.add_middleware(NulGuardMiddleware)
    app.add_middleware(UnhandledErrorMiddleware)
    app.add_middleware(
        BodyLimitMiddleware,
        max_json_body=settings.max_json_body_bytes,
        body_discard=settings.body_discard_bytes,
        discard_seconds=settings.header_timeout_seconds,
    )
    app.add_middleware(AccessLogMiddleware)
    app.add_middleware(RequestIdMiddleware)
    app.add_middleware(TrailingSlashMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
    # Outermost: the client address and scheme every layer sees are the trusted proxy's word
    # (uvicorn's own proxy handling is off: ``officehub serve`` passes proxy_headers=False).
    app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=trusted_hosts(settings))

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = _shared_openapi(app)
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


# The docs pages load nothing from another host: ReDoc's "powered by" logo (an image on
# cdn.redoc.ly inside its script) is never fetched, and neither page can be framed.
# Swagger UI starts from an inline script and both style inline, hence 'unsafe-inline'.
DOCS_CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self' 'unsafe-inline'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "font-src 'self' data:",
        "connect-src 'self'",
        "worker-src 'self' blob:",
        "object-src 'none'",
        "base-uri 'none'",
        "frame-ancestors 'none'",
    ]
)


def _hardened(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = DOCS_CONTENT_SECURITY_POLICY
    page.headers["X-Frame-Options"] = "DENY"
    return page


def _install_docs(app: FastAPI) -> None:
    """``/docs`` (Swagger UI) and ``/redoc``, their scripts served by this process."""
    app.mount(DOCS_ASSETS_URL, StaticFiles(directory=DOCS_ASSETS), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _hardened(
            get_swagger_ui_html(
                openapi_url=f"{root}/openapi.json",
                title="officehub - Swagger UI",
                swagger_js_url=f"{root}{DOCS_ASSETS_URL}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{DOCS_ASSETS_URL}/swagger-ui.css",
                swagger_favicon_url=f"{root}{DOCS_ASSETS_URL}/favicon.png",
                swagger_ui_parameters={"validatorUrl": None},  # no call to validator.swagger.io
            )
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _hardened(
            get_redoc_html(
                openapi_url=f"{root}/openapi.json",
                title="officehub - ReDoc",
                redoc_js_url=f"{root}{DOCS_ASSETS_URL}/redoc.standalone.js",
                redoc_favicon_url=f"{root}{DOCS_ASSETS_URL}/favicon.png",
                with_google_fonts=False,
            )
        )


# The documents built in this process, by what they are built from (``_document_key``): a
# document takes 1-2 s of CPU, and every app of a process (the tests make one per test) has
# the same routes. Each app gets its own copy, so a caller changing it changes no other app's.
_DOCUMENTS: dict[tuple[Any, ...], dict[str, Any]] = {}
_DOCUMENTS_KEPT = 4


def _shared_openapi(app: FastAPI) -> dict[str, Any]:
    key = _document_key(app)
    document = _DOCUMENTS.get(key)
    if document is None:
        document = _openapi(app)
        if len(_DOCUMENTS) >= _DOCUMENTS_KEPT:
            _DOCUMENTS.pop(next(iter(_DOCUMENTS)))
        _DOCUMENTS[key] = document
    return copy.deepcopy(document)


def _document_key(app: FastAPI) -> tuple[Any, ...]:
    """Everything of the app ``get_openapi`` reads: title, description, and each documented
    route's (webhook routes too) path, methods, endpoint, models, status, tags, texts, extras."""

    def of(route: Any) -> tuple[Any, ...]:
        endpoint = getattr(route, "endpoint", None)
        return (
            type(route).__qualname__,
            getattr(route, "path", None),
            tuple(sorted(getattr(route, "methods", None) or ())),
            getattr(endpoint, "__module__", None),
            getattr(endpoint, "__qualname__", None),
            id(endpoint),
            *(
                repr(getattr(route, name, None))
                for name in (
                    "name",
                    "include_in_schema",
                    "response_model",
                    "status_code",
                    "tags",
                    "summary",
                    "description",
                    "response_description",
                    "responses",
                    "deprecated",
                    "operation_id",
                    "openapi_extra",
                    "callbacks",
                    "response_class",
                    "dependencies",
                )
            ),
        )

    return (
        app.title,
        app.version,
        app.description,
        tuple(of(route) for route in app.routes if _in_document(route)),
        tuple(of(route) for route in app.webhooks.routes if _in_document(route)),
    )


def _in_document(route: Any) -> bool:
    return isinstance(route, APIRoute) and route.include_in_schema


def _openapi(app: FastAPI) -> dict[str, Any]:
    """FastAPI's document, told the truth: errors are 400 with our body, never 422."""
    schema = get_openapi(
        title=app.title,
        version="1.0.0",
        description=app.description,
        routes=app.routes,
        webhooks=app.webhooks.routes,
    )
    schema.setdefault("components", {})["securitySchemes"] = security_schemes()
    components = schema["components"].setdefault("schemas", {})
    components["ErrorBody"] = ErrorBody.model_json_schema()
    error_ref = {"$ref": "#/components/schemas/ErrorBody"}
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            # A route's own tag wins over its router's (integrations live in the inboxes
            # router): each operation is listed once in the docs.
            if len(operation.get("tags", [])) > 1:
                operation["tags"] = operation["tags"][-1:]
            responses = operation.setdefault("responses", {})
            responses.pop("422", None)
            statuses = ["500"] if is_keyless(path) else ["400", "401", "403", "429", "500", "503"]
            if "application/json" in operation.get("requestBody", {}).get("content", {}):
                statuses = [*statuses, "415"]  # another media type (request_guards.py)
            for status in statuses:
                responses.setdefault(status, {"description": "Error"})
            for status, response in responses.items():
                if status.startswith(("4", "5")) and not (path == "/readyz" and status == "503"):
                    # A route's own error model (the header-media upload's) is kept.
                    own = response.get("content", {}).get("application/json", {}).get("schema")
                    keep = own is not None and own != error_ref
                    response["content"] = {
                        "application/json": {"schema": own if keep else error_ref}
                    }
    for name in [n for n in components if n in {"HTTPValidationError", "ValidationError"}]:
        components.pop(name)
    _state_scopes(schema)
    _state_no_nul(schema)
    state_webhook_bodies(schema)
    return schema


NO_NUL_PATTERN = r"^[^\u0000]*$"


def _state_no_nul(schema: dict[str, Any]) -> None:
    """Path and query strings may not hold NUL (``kit.middleware.nul_guard``: 400 before the
    route runs): each string parameter without a pattern or an enum states it."""

    def state(node: Any) -> None:
        if not isinstance(node, dict):
            return
        if node.get("type") == "string" and not {"pattern", "enum", "const"} & node.keys():
            node["pattern"] = NO_NUL_PATTERN
        for branch in node.get("anyOf", []):
            state(branch)
        state(node.get("items"))

    for operations in schema.get("paths", {}).values():
        for operation in operations.values():
            for parameter in operation.get("parameters", []):
                if parameter.get("in") in ("path", "query"):
                    state(parameter.get("schema"))


def _state_scopes(schema: dict[str, Any]) -> None:
    """Each keyed operation names its scope and the roles of the users who may call it:
    ``x-required-scope``, ``x-allowed-roles`` (left out when no rule gives them: the role
    matrix test fails), ``security`` (the key, or the session cookie) and a sentence.

    Both come from the operation's method, tags and overrides, as ``OfficeDep`` finds them.
    """
    for path, operations in schema.get("paths", {}).items():
        if is_keyless(path):
            continue
        for method, operation in operations.items():
            scope = scope_of({method.upper()}, operation.get("tags", []), operation)
            operation[SCOPE_EXTRA] = scope
            operation["security"] = [{"APIKeyHeader": [scope]}, {SESSION_SCHEME: []}]
            roles = roles_of({method.upper()}, operation.get("tags", []), operation)
            sentence = f"Needs an API key with the scope `{scope}`"
            if roles is not None:
                operation[ROLES_EXTRA] = sorted(roles)
                sentence += ", or a session of a user whose role is " + ", ".join(
                    f"`{role}`" for role in sorted(roles)
                )
            sentence += "."
            description = operation.get("description", "")
            operation["description"] = f"{description}\n\n{sentence}" if description else sentence
