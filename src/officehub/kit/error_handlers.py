"""The app's exception handlers: a domain error, a refused change, a stale row, a bad request
or an unknown route answered as ``{message, statusCode, code, details}`` (``errors``).

Apart from ``errors`` so that ``integrity`` (which builds on ``errors``) is imported here, at
the top, rather than from inside ``errors``.
"""

from __future__ import annotations

import re

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.exc import StaleDataError
from starlette.exceptions import HTTPException as StarletteHTTPException

from officehub.kit.errors import (
    HTTP_CODES,
    NotFound,
    ServiceError,
    Unauthorized,
    describe_validation_errors,
    error_response,
)
from officehub.kit.integrity import conflict_for


async def _service_error(_request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, ServiceError):
        raise exc
    return error_response(exc.status_code, exc.code, exc.message, exc.details, exc.headers)


def _path_methods(app: FastAPI) -> list[tuple[re.Pattern[str], bool, frozenset[str]]]:
    """(path pattern, has no parameter, methods) of every path of the OpenAPI document."""
    cached: list[tuple[re.Pattern[str], bool, frozenset[str]]] | None = getattr(
        app.state, "path_methods", None
    )
    if cached is None:
        cached = []
        for path, operations in app.openapi().get("paths", {}).items():
            pattern = re.sub(r"\\\{[^/]+?\\\}", "[^/]+", re.escape(path))
            methods = frozenset(m.upper() for m in operations)
            cached.append((re.compile(pattern + r"\Z"), "{" not in path, methods))
        app.state.path_methods = cached
    return cached


def allowed_methods(request: Request) -> list[str]:
    """The methods the document lists at this request's path, sorted: a 405's ``Allow``.

    A fixed path wins over a parameter's (``/conversation/note`` is not the conversation
    ``note``), as the document reads."""
    fixed: set[str] = set()
    templated: set[str] = set()
    for pattern, static, listed in _path_methods(request.app):
        if pattern.match(request.url.path):
            (fixed if static else templated).update(listed)
    return sorted(fixed or templated)


def fixed_path_methods(request: Request) -> list[str]:
    """The methods of the document's fixed (parameterless) path equal to this request's."""
    return sorted(
        m
        for pattern, static, listed in _path_methods(request.app)
        if static and pattern.match(request.url.path)
        for m in listed
    )


def _method_not_allowed(allow: list[str]) -> JSONResponse:
    return error_response(
        405,
        "METHOD_NOT_ALLOWED",
        "Method not allowed",
        "Method Not Allowed",
        {"allow": ", ".join(allow)},
    )


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, RequestValidationError):
        raise exc
    if any(tuple(e.get("loc", ()))[:1] == ("path",) for e in exc.errors()):
        # ``PATCH /conversation/note`` reached ``PATCH /conversation/{id}`` only because
        # ``note`` is no id: the path is a fixed route's, which lacks the method.
        fixed = fixed_path_methods(request)
        if fixed and request.method not in fixed:
            return _method_not_allowed(fixed)
    message, code, details = describe_validation_errors(exc.errors())
    return error_response(400, code, message, details)


_HTTP_MESSAGES = {
    401: Unauthorized.message,  # a body refused unread for want of a key, as OfficeDep says it
    403: "The API key lacks the scope this operation needs",
    404: "Route not found",
    405: "Method not allowed",
}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    if not isinstance(exc, StarletteHTTPException):
        raise exc
    status = exc.status_code
    if status == 405:  # Starlette's Allow names the first route of the path only
        allow = allowed_methods(request)
        if allow:
            return _method_not_allowed(allow)
    code = getattr(exc, "code", None) or HTTP_CODES.get(status, "HTTP_ERROR")
    message = getattr(exc, "message", None) or _HTTP_MESSAGES.get(status, str(exc.detail))
    details = str(exc.detail) if exc.detail else ""
    return error_response(status, code, message, details, dict(exc.headers or {}))


async def _integrity_error(_request: Request, exc: Exception) -> JSONResponse:
    """A change the database refused (a unique index or a foreign key a concurrent request
    won first): 409 with the rule's code, never a 500."""
    if not isinstance(exc, IntegrityError):
        raise exc
    conflict = conflict_for(exc)
    return error_response(conflict.status_code, conflict.code, conflict.message, conflict.details)


async def _stale_data_error(_request: Request, exc: Exception) -> JSONResponse:
    """A row the request changed was deleted under it by a concurrent request: 404, never a
    500. A safety net: a change reads its record locked (``get_scoped(for_change=True)``),
    so the loser of such a race finds nothing and answers 404 before it writes."""
    if not isinstance(exc, StaleDataError):
        raise exc
    return error_response(
        404, NotFound.code, NotFound.message, "The record was deleted by a concurrent request"
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(ServiceError, _service_error)
    app.add_exception_handler(IntegrityError, _integrity_error)
    app.add_exception_handler(StaleDataError, _stale_data_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
