"""``GET /media/{key}``: a stored file, for whoever holds a signed, unexpired link."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated
from urllib.parse import quote

import puremagic
from fastapi import Query
from fastapi.responses import StreamingResponse

from officehub.kit.errors import Forbidden, NotFound, ValidationFailed, error_responses
from officehub.kit.indexed_router import Router
from officehub.kit.storage import StorageDep, is_valid_key

router = Router(tags=["Media"])

INLINE_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})
"""Raster images are shown inline; everything else (documents, video, SVG) is downloaded."""
DOWNLOAD_TYPE = "application/octet-stream"
MAX_EXPIRES = 253_402_300_799  # 9999-12-31T23:59:59Z: no link outlives it
SIGNATURE_PATTERN = r"^([0-9a-f]{64})?$"
"""64 lowercase hex digits; an empty value is taken as none (403, no link)."""
_SIGNATURE = re.compile(r"^[0-9a-f]{64}$")


def media_headers(key: str, media_type: str) -> dict[str, str]:
    """A served file is never run as a page: no sniffing, no scripts, documents downloaded."""
    headers = {
        "Cache-Control": "private, max-age=300",
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'",
    }
    if media_type not in INLINE_TYPES:
        name = key.rsplit("/", 1)[-1]
        headers["Content-Disposition"] = f"attachment; filename*=UTF-8''{quote(name)}"
    return headers


@router.get(
    "/media/{key:path}",
    response_class=StreamingResponse,
    responses={
        200: {"description": "The file", "content": {"application/octet-stream": {}}},
        **error_responses(400, 403, 404),
    },
    summary="A stored file, by signed link (no API key)",
)
async def read_media(
    key: str,
    storage: StorageDep,
    # Checked below (400 naming the field); the document states the same bounds.
    expires: Annotated[
        int | None,
        Query(
            description="Unix time the link expires",
            json_schema_extra={"minimum": 0, "maximum": MAX_EXPIRES},
        ),
    ] = None,
    signature: Annotated[
        str | None,
        Query(
            description="HMAC-SHA256 of key and expiry, 64 hex digits",
            json_schema_extra={"pattern": SIGNATURE_PATTERN},
        ),
    ] = None,
) -> StreamingResponse:
    if not is_valid_key(key):
        raise NotFound("File not found", details="No stored file by that name")
    if expires is not None and not 0 <= expires <= MAX_EXPIRES:
        raise ValidationFailed.field("query.expires", f"a unix time from 0 to {MAX_EXPIRES}")
    if signature and not _SIGNATURE.match(signature):
        raise ValidationFailed.field("query.signature", "64 hexadecimal digits")
    if expires is None or not signature or not storage.verify_link(key, expires, signature):
        raise Forbidden("Invalid or expired link", details="Ask the service for a fresh link")
    if not await storage.exists(key):
        raise NotFound("File not found", details="No stored file by that name")
    chunks = storage.read(key)
    head = await anext(chunks, b"")
    media_type = served_type(head)
    return StreamingResponse(
        _again(head, chunks), media_type=media_type, headers=media_headers(key, media_type)
    )


def served_type(head: bytes) -> str:
    """The type a file is served as, read from its first bytes, never from what the sender
    declared (nor the stored name's extension): a raster image as itself, anything else
    ``application/octet-stream`` (so a file declared ``application/javascript`` is never
    run as a script of this origin)."""
    try:
        matches = puremagic.magic_string(head) if head else []
    except (puremagic.PureError, ValueError):
        matches = []
    for match in matches:
        if match.mime_type in INLINE_TYPES:
            return str(match.mime_type)
    return DOWNLOAD_TYPE


async def _again(head: bytes, rest: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    if head:
        yield head
    async for chunk in rest:
        yield chunk
