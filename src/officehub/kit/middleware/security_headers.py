"""Security headers on every response, whatever answered it (a route, an error, a 401 of
the key check, the docs, the widget): each header is added only where the response has not
set its own (the console's and the docs' stricter policies stay).

- ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer`` everywhere;
- ``X-Frame-Options: DENY`` everywhere (``/docs`` and ``/redoc`` add ``frame-ancestors``);
- ``Cache-Control: no-store`` on API answers (JSON, problem JSON, event streams): they hold
  personal data no shared or browser cache should keep;
- ``Strict-Transport-Security`` when the request came over https (directly, or as a
  trusted proxy's ``X-Forwarded-Proto`` says: ``OFFICEHUB_TRUSTED_PROXIES``).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

ALWAYS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)
NO_STORE = (b"cache-control", b"no-store")
HSTS = (b"strict-transport-security", b"max-age=31536000; includeSubDomains")
_API_TYPES = (b"application/json", b"application/problem+json", b"text/event-stream")


def _api_answer(content_type: bytes) -> bool:
    return content_type.split(b";", 1)[0].strip().lower() in _API_TYPES


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        https = scope.get("scheme") == "https"

        async def send_hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                present = set()
                content_type = None  # the first Content-Type's value
                for name, value in headers:
                    lower = name.lower()
                    present.add(lower)
                    if content_type is None and lower == b"content-type":
                        content_type = value
                for header in ALWAYS:
                    if header[0] not in present:
                        headers.append(header)
                if content_type is not None and _api_answer(content_type):
                    if NO_STORE[0] not in present:
                        headers.append(NO_STORE)
                if https and HSTS[0] not in present:
                    headers.append(HSTS)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_hardened)
