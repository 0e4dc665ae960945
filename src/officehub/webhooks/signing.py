"""``X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`` (Stripe's scheme)."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

SIGNATURE_HEADER = "X-Service-Signature"


class WebhookVerificationError(ValueError):
    """The delivery is not signed with the secret, or its timestamp is too old."""


def sign(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secrets: Iterable[str], timestamp: int, body: bytes) -> str:
    """One ``v1=`` per secret: the current one, then the previous one while it is honoured."""
    return ",".join([f"t={timestamp}", *(f"v1={sign(s, timestamp, body)}" for s in secrets)])


def _header(headers: Mapping[str, str], name: str) -> str | None:
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None


def verify(
    secret: str,
    headers: Mapping[str, str],
    body: bytes | str,
    tolerance: int = 300,
    *,
    now: float | None = None,
) -> dict[str, Any]:
    """Checks a delivery's signature and returns its decoded body.

    ``body`` is the raw request body, exactly as received. Raises
    ``WebhookVerificationError`` when the header is missing or malformed, no ``v1=``
    matches ``secret``, or the timestamp is more than ``tolerance`` seconds away.
    """
    raw = body.encode() if isinstance(body, str) else body
    header = _header(headers, SIGNATURE_HEADER)
    if not header:
        raise WebhookVerificationError(f"missing {SIGNATURE_HEADER} header")
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1":
            candidates.append(value)
    if timestamp is None or not candidates:
        raise WebhookVerificationError("malformed signature header")
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance:
        raise WebhookVerificationError("timestamp outside the tolerance")
    expected = sign(secret, timestamp, raw)
    if not any(hmac.compare_digest(expected, c) for c in candidates):
        raise WebhookVerificationError("no signature matches the secret")
    decoded: dict[str, Any] = json.loads(raw)
    return decoded
