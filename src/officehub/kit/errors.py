"""Domain exceptions and the one renderer of ``{message, statusCode, code, details}``.

The handlers that turn exceptions into these answers are ``error_handlers``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from officehub.kit.ids import ID_MISMATCH, ID_PATTERN

if TYPE_CHECKING:
    from fastapi.responses import JSONResponse

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


UNKNOWN_FIELD = "UNKNOWN_FIELD"
UNKNOWN_FIELD_TEXT = "this operation does not take this field"


class ValidationFailed(ServiceError):
    status_code = 400
    code = "VALIDATION_ERROR"
    message = "Validation failed"

    @classmethod
    def field(cls, path: str, reason: str, *, code: str | None = None) -> ValidationFailed:
        return cls(f"Invalid value for {path}", details=f"{path}: {reason}", code=code)

    @classmethod
    def unknown_field(cls, path: str) -> ValidationFailed:
        """A key a free-form object's own checks do not take: as pydantic's refusal reads."""
        return cls(
            f"Unknown field: {path}", details=f"{path}: {UNKNOWN_FIELD_TEXT}", code=UNKNOWN_FIELD
        )


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
    from fastapi.responses import JSONResponse  # not at import: the CLI's start needs none

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
    unknown: list[str] = []
    for err in errors:
        if err.get("type") == "json_invalid":
            return "Malformed JSON body", "MALFORMED_JSON", str(err.get("ctx", {}).get("error", ""))
        loc = [str(p) for p in err.get("loc", ())]
        path = ".".join(loc) if loc else "body"
        if err.get("type") == "extra_forbidden":
            unknown.append(path)
            parts.append(f"{path}: {UNKNOWN_FIELD_TEXT}")
        else:
            parts.append(f"{path}: {_readable(err)}")
    if unknown:
        # A field the operation does not take is named first, whatever else is wrong: a
        # caller who misspelt a field learns that, not only that a required one is missing.
        return f"Unknown field: {', '.join(unknown)}", UNKNOWN_FIELD, "; ".join(parts)
    fields = ", ".join(p.split(":", 1)[0] for p in parts)
    return f"Invalid request: {fields}", "VALIDATION_ERROR", "; ".join(parts)


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries for the given error statuses."""
    return {s: {"model": ErrorBody, "description": HTTP_CODES.get(s, "Error")} for s in statuses}
