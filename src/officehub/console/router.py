"""The office console: static files served at ``/console`` by the API's own process.

The page holds no data and needs no key: a person signs in with email and password (a
session cookie of this origin) or an integrator pastes an API key, and every call it makes
goes through the public API as that user or key, so the console can do nothing they
may not. Only the files shipped in ``static/`` are served, by name, each
with a strict Content-Security-Policy: scripts, styles and images of this origin only,
no inline script.
"""

from __future__ import annotations

import html
from functools import cache
from importlib import resources
from typing import Annotated

from fastapi import Path, Request
from fastapi.responses import Response

from officehub.kit.auth import SESSION_COOKIE, lookup_session
from officehub.kit.errors import NotFound
from officehub.kit.indexed_router import Router
from officehub.offices.settings import DEFAULT_TIME_ZONE, office_zone_name

router = Router(include_in_schema=False)

CONSOLE_PATH = "/console"
ROOT_MARK = b"__ROOT__"
TIME_ZONE_MARK = b"__TIME_ZONE__"
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self'",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}
MEDIA_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}


@cache
def assets() -> dict[str, tuple[bytes, str]]:
    """Every shipped file by name, with its media type; read once."""
    folder = resources.files("officehub.console").joinpath("static")
    found: dict[str, tuple[bytes, str]] = {}
    for entry in folder.iterdir():
        suffix = entry.name[entry.name.rfind(".") :]
        if entry.is_file() and suffix in MEDIA_TYPES:
            found[entry.name] = (entry.read_bytes(), MEDIA_TYPES[suffix])
    return found


def _asset(name: str) -> tuple[bytes, str]:
    found = assets().get(name)
    if found is None:
        raise NotFound("Not found", details=f"the console has no file {name!r}")
    return found


@router.get(CONSOLE_PATH)
async def console_page(request: Request) -> Response:
    """The page; its links start with the app's root path (a proxy's prefix, if any), and
    it carries the office's time zone (dates are shown in it)."""
    body, media_type = _asset("index.html")
    root = html.escape(str(request.scope.get("root_path", "")).rstrip("/"))
    zone = html.escape(await _zone_of(request))
    body = body.replace(ROOT_MARK, root.encode()).replace(TIME_ZONE_MARK, zone.encode())
    return Response(body, media_type=media_type, headers=SECURITY_HEADERS)


async def _zone_of(request: Request) -> str:
    """The time zone of the signed-in user's office (the session cookie the page is loaded
    with), else the server's setting: a page loaded before signing in, or used with an API
    key, shows the server's until it is loaded again signed in."""
    token = request.cookies.get(SESSION_COOKIE)
    state = request.app.state
    if token and getattr(state, "sessionmaker", None) is not None:
        outcome = await lookup_session(state, token)
        if outcome.office is not None:
            async with state.sessionmaker() as session:
                return await office_zone_name(session, outcome.office.office_id)
    settings = getattr(state, "settings", None)
    return getattr(settings, "time_zone", "") or DEFAULT_TIME_ZONE


@router.get(CONSOLE_PATH + "/{name}")
async def console_asset(name: Annotated[str, Path(max_length=64)], request: Request) -> Response:
    if name == "index.html":
        return await console_page(request)
    body, media_type = _asset(name)
    return Response(body, media_type=media_type, headers=SECURITY_HEADERS)
