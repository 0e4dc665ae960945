"""What an outbound call may be set up with: a URL and custom headers that can be sent.

Checked when a webhook is saved (and reusable by automation's ``FIRE_WEBHOOK`` and a flow
step's ``webhookUrl``), so that a setting the HTTP client could never send is refused at
once instead of failing every delivery. The URL is parsed with the sender's own parser
(``httpx.URL``); headers follow RFC 9110.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping

import httpx

from officehub.kit.errors import ValidationFailed
from officehub.kit.outbound.ssrf import is_private_host

MAX_URL_LENGTH = 2048
MAX_HEADERS = 20
MAX_HEADERS_BYTES = 8 * 1024
"""The sum of every custom header's name and value, in bytes (all ASCII)."""

_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_VALUE = re.compile(r"^(?:[\x21-\x7e](?:[\x20\x09\x21-\x7e]*[\x21-\x7e])?)?$")
_LABEL = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")
_NUMERIC_LABEL = re.compile(r"^(?:0[xX][0-9A-Fa-f]*|[0-9]+)$")
FORBIDDEN_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "te",
        "upgrade",
        "trailer",
    }
)
"""Framing and hop-by-hop headers: the HTTP client sets them; a custom one breaks the send."""


class HeaderRefused(ValueError):
    """A custom header that cannot be sent; ``name`` is None for the set as a whole."""

    def __init__(self, name: str | None, reason: str) -> None:
        super().__init__(reason)
        self.name = name
        self.reason = reason


def check_url(value: str) -> httpx.URL:
    """The URL as the sender will parse it; ``ValueError`` naming why it can never be sent."""
    if len(value) > MAX_URL_LENGTH:
        raise ValueError(f"may be at most {MAX_URL_LENGTH} characters")
    try:
        url = httpx.URL(value)
    except Exception as exc:  # httpx.InvalidURL, and idna's errors for a bad IDNA host
        raise ValueError(f"is not a URL that can be sent: {_reason(exc)}") from exc
    if url.scheme not in ("http", "https") or not url.host:
        raise ValueError("must be an http or https URL with a host")
    port = url.port
    if port is not None and not 1 <= port <= 65535:
        raise ValueError("the port must be between 1 and 65535")
    _check_host(url.raw_host.decode("ascii", "replace"))
    return url


def _reason(exc: Exception) -> str:
    if isinstance(exc, httpx.InvalidURL):
        return str(exc)
    return "the host is not a valid internationalised domain name"


def _check_host(host: str) -> None:
    if ":" in host:  # an IPv6 literal (httpx strips the brackets)
        try:
            ipaddress.IPv6Address(host)
        except ValueError as exc:
            raise ValueError("the host is not a valid IPv6 address") from exc
        return
    name = host[:-1] if host.endswith(".") else host
    labels = name.split(".")
    if _NUMERIC_LABEL.match(labels[-1]):
        # A host ending in a number is an IPv4 address to the resolver, which also reads
        # octal (0177.0.0.1), hex (0x7f.1) and short (127.1) forms: only dotted decimal.
        try:
            ipaddress.IPv4Address(name)
        except ValueError as exc:
            raise ValueError("an IPv4 host must be written as four decimal numbers") from exc
        return
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        raise ValueError("the host is not a valid domain name")


def check_headers(headers: Mapping[str, object]) -> None:
    """Raises ``HeaderRefused`` for the first custom header that cannot be sent."""
    if len(headers) > MAX_HEADERS:
        raise HeaderRefused(None, f"at most {MAX_HEADERS} custom headers")
    total = 0
    for name, value in headers.items():
        if not _TOKEN.match(name):
            raise HeaderRefused(
                name, "a header name is a token: letters, digits and !#$%&'*+-.^_`|~"
            )
        lowered = name.lower()
        if lowered in FORBIDDEN_HEADERS or lowered.startswith("proxy-"):
            raise HeaderRefused(name, "framing, hop-by-hop and proxy headers are set by the sender")
        if not isinstance(value, str):
            raise HeaderRefused(name, "a header value is a string")
        if not _VALUE.match(value):
            raise HeaderRefused(
                name,
                "a header value holds visible ASCII characters, with spaces or tabs only "
                "between them",
            )
        total += len(name) + len(value)
    if total > MAX_HEADERS_BYTES:
        raise HeaderRefused(None, f"custom headers may hold at most {MAX_HEADERS_BYTES} bytes")


def refuse_private_url(url: str, *, allow_private: bool, field: str, code: str) -> None:
    """400 (``field``, ``code``) for a saved URL whose host is ``localhost`` or a literal
    loopback, private or reserved address, unless the server allows them; a name is
    checked when sent (``ssrf.delivery_client``). ``url`` has passed ``check_url``."""
    host = httpx.URL(url).host
    if not allow_private and is_private_host(host):
        raise ValidationFailed.field(
            field,
            f"{host} is a loopback, private or reserved address (a server for development "
            "may allow them with OFFICEHUB_WEBHOOK_ALLOW_PRIVATE=true)",
            code=code,
        )
