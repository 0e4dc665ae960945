"""Two signatures of every delivery, made with the same secrets:

- ``X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`` (Stripe's
  scheme, the seed's header);
- the Standard Webhooks headers ``webhook-id``, ``webhook-timestamp`` and
  ``webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<raw body>">``, which
  receivers verify with the ``standardwebhooks`` (or ``svix``) libraries in any language.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

SIGNATURE_HEADER = "X-Service-Signature"
STANDARD_ID_HEADER = "webhook-id"
STANDARD_TIMESTAMP_HEADER = "webhook-timestamp"
STANDARD_SIGNATURE_HEADER = "webhook-signature"
STANDARD_SECRET_PREFIX = "whsec_"  # noqa: S105 - a prefix, not a secret


class WebhookVerificationError(ValueError):
    """The delivery is not signed with the secret, or its timestamp is too old."""


def sign(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secrets: Iterable[str], timestamp: int, body: bytes) -> str:
    """One ``v1=`` per secret: the current one, then the previous one while it is honoured."""
    return ",".join([f"t={timestamp}", *(f"v1={sign(s, timestamp, body)}" for s in secrets)])


def standard_key(secret: str) -> bytes:
    """The HMAC key of the Standard Webhooks signature for a stored secret.

    A secret written ``whsec_<base64>`` is the standard's: the key is the bytes its base64
    decodes to, read as the standard's libraries read it (characters outside the alphabet
    skipped, padding optional), so a receiver passes the secret as the office stored it.
    Any other secret (the seed allows any 8 to 256 characters) is its UTF-8 bytes: a receiver
    passes those bytes to the library (``Webhook(secret.encode())`` in Python, the ``raw``
    format in Node)."""
    if secret.startswith(STANDARD_SECRET_PREFIX):
        try:
            key = base64.b64decode(secret[len(STANDARD_SECRET_PREFIX) :] + "==")
        except (binascii.Error, ValueError):
            key = b""
        if key:
            return key
    return secret.encode()


def standard_signature(secrets: Iterable[str], message_id: str, timestamp: int, body: bytes) -> str:
    """``webhook-signature``: one ``v1,<base64>`` per secret, separated by spaces."""
    signed = f"{message_id}.{timestamp}.".encode() + body
    return " ".join(
        "v1,"
        + base64.b64encode(hmac.new(standard_key(s), signed, hashlib.sha256).digest()).decode()
        for s in secrets
    )


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
