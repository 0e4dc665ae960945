"""One file field of a multipart upload, streamed as it arrives (never held whole).

The request body is fed chunk by chunk to python-multipart's push parser; the file's
bytes are handed on as they are parsed, so a caller that stops reading (a size cap, a
refused type) stops the upload there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from fastapi import Request
from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from officehub.kit.errors import UnsupportedMediaType, ValidationFailed

IMAGE_SIGNATURES: tuple[tuple[str, str], ...] = (
    ("jpg", "image/jpeg"),
    ("png", "image/png"),
    ("webp", "image/webp"),
)
SNIFF_BYTES = 16


def sniff_image(head: bytes) -> tuple[str, str] | None:
    """(extension, media type) of a JPEG, PNG or WebP image, read from its first bytes."""
    if head.startswith(b"\xff\xd8\xff"):
        return IMAGE_SIGNATURES[0]
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return IMAGE_SIGNATURES[1]
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return IMAGE_SIGNATURES[2]
    return None


def file_field_openapi(description: str, field: str = "file") -> dict[str, Any]:
    """The `openapi_extra` of a route whose body is one required multipart file field.

    The route reads its body with :func:`receive_file` (not a FastAPI parameter), so the
    document would otherwise show no request body at all.
    """
    schema = {
        "type": "object",
        "required": [field],
        "properties": {field: {"type": "string", "format": "binary", "description": description}},
    }
    return {
        "requestBody": {
            "required": True,
            "content": {"multipart/form-data": {"schema": schema}},
        }
    }


@dataclass
class UploadedFile:
    field: str
    filename: str
    content_type: str | None
    chunks: AsyncIterator[bytes]

    async def peek(self, size: int = SNIFF_BYTES) -> bytes:
        """The first ``size`` bytes (fewer for a shorter file); ``chunks`` still yields them."""
        head = b""
        rest = self.chunks
        async for chunk in rest:
            head += chunk
            if len(head) >= size:
                break
        self.chunks = _prepend(head, rest)
        return head[:size]


async def _prepend(head: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if head:
        yield head
    async for chunk in rest:
        yield chunk


async def _events(request: Request, boundary: bytes) -> AsyncIterator[tuple[str, Any]]:
    """``("part", headers)``, ``("data", bytes)`` and ``("end", None)`` as the body arrives."""
    pending: list[tuple[str, Any]] = []
    headers: dict[str, str] = {}
    field: list[bytes] = []
    value: list[bytes] = []

    def on_header_field(data: bytes, start: int, end: int) -> None:
        field.append(data[start:end])

    def on_header_value(data: bytes, start: int, end: int) -> None:
        value.append(data[start:end])

    def on_header_end() -> None:
        headers[b"".join(field).decode("latin-1").lower()] = b"".join(value).decode("latin-1")
        field.clear()
        value.clear()

    def on_headers_finished() -> None:
        pending.append(("part", dict(headers)))
        headers.clear()

    def on_part_data(data: bytes, start: int, end: int) -> None:
        pending.append(("data", data[start:end]))

    def on_part_end() -> None:
        pending.append(("end", None))

    parser = MultipartParser(
        boundary,
        {
            "on_header_field": on_header_field,
            "on_header_value": on_header_value,
            "on_header_end": on_header_end,
            "on_headers_finished": on_headers_finished,
            "on_part_data": on_part_data,
            "on_part_end": on_part_end,
        },
    )
    try:
        async for chunk in request.stream():
            parser.write(chunk)
            for event in pending:
                yield event
            pending.clear()
        parser.finalize()
    except MultipartParseError as exc:
        raise ValidationFailed("Malformed multipart body", details=str(exc)) from exc
    for event in pending:
        yield event


async def _data_of(events: AsyncIterator[tuple[str, Any]]) -> AsyncIterator[bytes]:
    async for kind, payload in events:
        if kind == "end":
            return
        if kind == "data" and payload:
            yield payload


async def receive_file(request: Request, field: str = "file") -> UploadedFile:
    """The multipart field ``field`` holding a file; its bytes stream through ``chunks``."""
    media_type, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if media_type != b"multipart/form-data" or not boundary:
        raise UnsupportedMediaType(
            details=f"Send multipart/form-data with the file in the field '{field}'"
        )
    events = _events(request, boundary)
    async for kind, payload in events:
        if kind != "part":
            continue
        _, disposition = parse_options_header(payload.get("content-disposition", ""))
        name = disposition.get(b"name", b"").decode("utf-8", "replace")
        filename = disposition.get(b"filename")
        if name == field and filename is not None:
            return UploadedFile(
                field=field,
                filename=filename.decode("utf-8", "replace"),
                content_type=payload.get("content-type"),
                chunks=_data_of(events),
            )
    raise ValidationFailed.field(f"body.{field}", "a file is required in this multipart field")
