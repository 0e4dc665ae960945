"""``GET /media/{key}``: a stored file, for whoever holds a signed, unexpired link."""

from __future__ import annotations

import mimetypes
from typing import Annotated

from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from officehub.errors import Forbidden, NotFound, error_responses
from officehub.storage import StorageDep, is_valid_key

router = APIRouter(tags=["Media"])


@router.get(
    "/media/{key:path}",
    response_class=StreamingResponse,
    responses={
        200: {"description": "The file", "content": {"application/octet-stream": {}}},
        **error_responses(403, 404),
    },
    summary="A stored file, by signed link (no API key)",
)
async def read_media(
    key: str,
    storage: StorageDep,
    expires: Annotated[int | None, Query(description="Unix time the link expires")] = None,
    signature: Annotated[str | None, Query(description="HMAC-SHA256 of key and expiry")] = None,
) -> StreamingResponse:
    if not is_valid_key(key):
        raise NotFound("File not found", details="No stored file by that name")
    if expires is None or not signature or not storage.verify_link(key, expires, signature):
        raise Forbidden("Invalid or expired link", details="Ask the service for a fresh link")
    if not await storage.exists(key):
        raise NotFound("File not found", details="No stored file by that name")
    media_type = mimetypes.guess_type(key)[0] or "application/octet-stream"
    return StreamingResponse(
        storage.read(key), media_type=media_type, headers={"Cache-Control": "private, max-age=300"}
    )
