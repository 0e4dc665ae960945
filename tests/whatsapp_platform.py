"""A local stand-in for the WhatsApp Cloud API, served by uvicorn on 127.0.0.1.

It answers as the platform does: ``POST /{phoneNumberId}/messages`` (a ``wamid`` per send),
``GET /{mediaId}`` (a download URL) and the download itself (bearer token required),
``GET /{businessAccountId}/message_templates`` paged by ``paging.next``, read marks
(``POST /{phoneNumberId}/messages`` with ``status: read``, kept in ``reads``) and media
uploads (``POST /{phoneNumberId}/media``, multipart, kept in ``uploads``). ``script`` holds
replies to give instead of the normal answer, first in first out, per route kind.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from tests.server import serving

TOKEN = "EAAG-test-access-token"
BSUID = re.compile(r"[A-Z]{2}\.(ENT\.)?[A-Za-z0-9]{1,128}")
# The Graph API version the stand-in answers: the one the service ships as its default.
VERSION = "v26.0"


@dataclass
class Scripted:
    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)


def error(status: int, code: int, message: str) -> Scripted:
    return Scripted(status, {"error": {"message": message, "type": "OAuthException", "code": code}})


@dataclass
class Platform:
    port: int = 0
    sent: list[dict[str, Any]] = field(default_factory=list)
    send_headers: list[dict[str, str]] = field(default_factory=list)
    send_paths: list[str] = field(default_factory=list)
    script: dict[str, list[Scripted]] = field(default_factory=dict)
    media: dict[str, tuple[bytes, str]] = field(default_factory=dict)
    media_url_override: str | None = None
    templates: list[dict[str, Any]] = field(default_factory=list)
    template_calls: int = 0
    page_size: int = 2
    counter: int = 0
    reads: list[dict[str, Any]] = field(default_factory=list)
    uploads: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/{VERSION}"

    def _scripted(self, kind: str) -> Response | None:
        queue = self.script.get(kind) or []
        if not queue:
            return None
        reply = queue.pop(0)
        return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)

    @staticmethod
    def _authorised(request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {TOKEN}"

    async def send(self, request: Request) -> Response:
        if not self._authorised(request):
            return JSONResponse(error(401, 190, "Invalid OAuth access token").body, 401)
        body = json.loads(await request.body())
        if body.get("status") == "read":
            self.reads.append(body)
            scripted = self._scripted("read")
            return scripted if scripted is not None else JSONResponse({"success": True})
        self.sent.append(body)
        self.send_headers.append(dict(request.headers))
        self.send_paths.append(request.url.path)
        scripted = self._scripted("send")
        if scripted is not None:
            return scripted
        to, recipient = body.get("to"), body.get("recipient")
        if not to and not (isinstance(recipient, str) and BSUID.fullmatch(recipient)):
            return JSONResponse(error(400, 100, "Invalid parameter: to or recipient").body, 400)
        self.counter += 1
        # A send to a phone answers its wa_id; one to a business-scoped user id its user_id.
        contact = {"input": to, "wa_id": to} if to else {"input": recipient, "user_id": recipient}
        return JSONResponse(
            {
                "messaging_product": "whatsapp",
                "contacts": [contact],
                "messages": [{"id": f"wamid.test{self.counter:04d}"}],
            }
        )

    async def upload(self, request: Request) -> Response:
        """The media API: multipart ``file``, ``type`` and ``messaging_product``."""
        if not self._authorised(request):
            return JSONResponse(error(401, 190, "Invalid OAuth access token").body, 401)
        async with request.form() as form:
            file = form.get("file")
            if not isinstance(file, UploadFile) or form.get("messaging_product") != "whatsapp":
                return JSONResponse(error(400, 100, "Invalid parameter").body, 400)
            content = await file.read()
            kind, name, content_type = form.get("type"), file.filename, file.content_type
        scripted = self._scripted("upload")
        if scripted is not None:
            return scripted
        media_id = f"media-up-{len(self.uploads) + 1:04d}"
        self.uploads.append(
            {
                "id": media_id,
                "type": kind,
                "filename": name,
                "content_type": content_type,
                "content": content,
                "path": request.url.path,
            }
        )
        return JSONResponse({"id": media_id})

    async def media_info(self, request: Request) -> Response:
        if not self._authorised(request):
            return JSONResponse(error(401, 190, "Invalid OAuth access token").body, 401)
        media_id = request.path_params["node"]
        if media_id not in self.media:
            return JSONResponse(error(400, 100, "Unsupported get request").body, 400)
        _, mime = self.media[media_id]
        url = self.media_url_override or f"http://127.0.0.1:{self.port}/download/{media_id}"
        return JSONResponse({"url": url, "mime_type": mime, "id": media_id})

    async def download(self, request: Request) -> Response:
        if not self._authorised(request):
            return Response(status_code=401)
        content, mime = self.media[request.path_params["media_id"]]
        return Response(content, media_type=mime)

    async def message_templates(self, request: Request) -> Response:
        if not self._authorised(request):
            return JSONResponse(error(401, 190, "Invalid OAuth access token").body, 401)
        self.template_calls += 1
        scripted = self._scripted("templates")
        if scripted is not None:
            return scripted
        after = int(request.query_params.get("after", "0"))
        page = self.templates[after : after + self.page_size]
        body: dict[str, Any] = {"data": page, "paging": {"cursors": {"after": str(after)}}}
        if after + self.page_size < len(self.templates):
            waba = request.path_params["waba"]
            body["paging"]["next"] = (
                f"{self.url}/{waba}/message_templates?after={after + self.page_size}"
            )
        return JSONResponse(body)

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route(f"/{VERSION}/{{phone}}/messages", self.send, methods=["POST"]),
                Route(f"/{VERSION}/{{phone}}/media", self.upload, methods=["POST"]),
                Route(f"/{VERSION}/{{waba}}/message_templates", self.message_templates),
                Route(f"/{VERSION}/{{node}}", self.media_info),
                Route("/download/{media_id}", self.download),
            ]
        )


@asynccontextmanager
async def running_platform() -> AsyncIterator[Platform]:
    platform = Platform()
    async with serving(platform.app()) as port:
        platform.port = port
        yield platform
