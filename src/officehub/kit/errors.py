"""Domain exceptions and the one renderer of ``{message, statusCode, code, details}``."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm.exc import StaleDataError
from starlette.exceptions import HTTPException as StarletteHTTPException

from officehub.kit.ids import ID_MISMATCH, ID_PATTERN

logger = logging.getLogger("officehub.errors")


class ErrorBody(BaseModel):
    message: str
    statusCode: int
    code: str
    details: str


class ServiceError(Exception):
    status_code = 500
    code = "INTERNAL_ERROR"
    message = "Internal server error"

    def __init__(
        self,
        message: str | None = None,
        *,
        details: str = "",
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message or self.message)
        self.message = message or self.message
        self.details = details
        self.headers = headers
        if code is not None:
            self.code = code


class ValidationFailed(ServiceError):
    status_code = 400
    code = "VALIDATION_ERROR"
    message = "Validation failed"

    @classmethod
    def field(cls, path: str, reason: str, *, code: str | None = None) -> ValidationFailed:
        return cls(f"Invalid value for {path}", details=f"{path}: {reason}", code=code)


class Unauthorized(ServiceError):
    status_code = 401
    code = "UNAUTHORIZED"
    message = "Missing or invalid API key"


class Forbidden(ServiceError):
    status_code = 403
    code = "FORBIDDEN"
    message = "The API key lacks the permission for this operation"


class NotFound(ServiceError):
    status_code = 404
    code = "NOT_FOUND"
    message = "Not found"

    @classmethod
    def of(cls, what: str, ident: str) -> NotFound:
        return cls(f"{what} not found", details=f"No {what.lower()} with id {ident}")


class Conflict(ServiceError):
    status_code = 409
    code = "CONFLICT"
    message = "Conflict"


class PayloadTooLarge(ServiceError):
    status_code = 413
    code = "PAYLOAD_TOO_LARGE"
    message = "Request body too large"


class UnsupportedMediaType(ServiceError):
    status_code = 415
    code = "UNSUPPORTED_MEDIA_TYPE"
    message = "Unsupported media type"


class RateLimited(ServiceError):
    status_code = 429
    code = "RATE_LIMITED"
    message = "Too many requests"


class BadGateway(ServiceError):
    """A platform the service depends on (the messaging platform) failed to answer."""

    status_code = 502
    code = "PLATFORM_ERROR"
    message = "The messaging platform failed"


class DatabaseUnavailable(ServiceError):
    """The database cannot be reached (a restart, a failover, the network): try again soon."""

    status_code = 503
    code = "DATABASE_UNAVAILABLE"
    message = "The service is briefly unavailable"
    retry_after_seconds = 5


class InsufficientStorage(ServiceError):
    """The disk (or the storage's quota) is full: nothing of the upload is kept."""

    status_code = 507
    code = "INSUFFICIENT_STORAGE"
    message = "No room to store the file"


HTTP_CODES = {
    400: "BAD_REQUEST",
    401: "UNAUTHORIZED",
    403: "FORBIDDEN",
    404: "NOT_FOUND",
    405: "METHOD_NOT_ALLOWED",
    409: "CONFLICT",
    413: "PAYLOAD_TOO_LARGE",
    415: "UNSUPPORTED_MEDIA_TYPE",
    429: "RATE_LIMITED",
    502: "PLATFORM_ERROR",
    503: "DATABASE_UNAVAILABLE",
    507: "INSUFFICIENT_STORAGE",
}


def error_payload(status: int, code: str, message: str, details: str) -> dict[str, Any]:
    return {"message": message, "statusCode": status, "code": code, "details": details}


def error_response(
    status: int, code: str, message: str, details: str = "", headers: dict[str, str] | None = None
) -> JSONResponse:
    return JSONResponse(error_payload(status, code, message, details), status, headers=headers)


def _readable(err: Any) -> str:
    """Pydantic's message; an id's pattern by the spec's short spelling, not the long one."""
    if err.get("type") == "string_pattern_mismatch":
        if err.get("ctx", {}).get("pattern") == ID_PATTERN:
            return ID_MISMATCH
    return str(err.get("msg", "invalid"))


def describe_validation_errors(errors: Sequence[Any]) -> tuple[str, str, str]:
    """Turns pydantic's error list into (message, code, details) naming every field."""
    parts: list[str] = []
    for err in errors:
        if err.get("type") == "json_invalid":
            return "Malformed JSON body", "MALFORMED_JSON", str(err.get("ctx", {}).get("error", ""))
        loc = [str(p) for p in err.get("loc", ())]
        path = ".".join(loc) if loc else "body"
        parts.append(f"{path}: {_readable(err)}")
    fields = ", ".join(p.split(":", 1)[0] for p in parts)
    return f"Invalid request: {fields}", "VALIDATION_ERROR", "; ".join(parts)


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
    message = _HTTP_MESSAGES.get(status, str(exc.detail))
    details = str(exc.detail) if exc.detail else ""
    return error_response(status, code, message, details, dict(exc.headers or {}))


async def _integrity_error(_request: Request, exc: Exception) -> JSONResponse:
    """A change the database refused (a unique index or a foreign key a concurrent request
    won first): 409 with the rule's code, never a 500."""
    from officehub.kit.integrity import conflict_for  # it builds on this module

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


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries for the given error statuses."""
    return {s: {"model": ErrorBody, "description": HTTP_CODES.get(s, "Error")} for s in statuses}
