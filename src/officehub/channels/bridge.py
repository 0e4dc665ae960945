"""Bridged channels (``WHATSAPP`` through an unofficial gateway, ``INSTAGRAM``): the
gateway posts what contacts write to ``POST /channels/bridge/{integrationId}/inbound`` and
we post the office's messages to the integration's ``bridgeUrl``.

Both directions carry ``X-Service-Signature: t=<unix>,v1=<hex HMAC-SHA256 of
"<t>.<raw body>">`` under the integration's secret: the scheme of our webhooks
(``officehub.kit.outbound.signing``), checked in constant time with a 5-minute tolerance. The
protocol is described in ``docs/bridge.md``.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import httpx

from officehub.channels.adapter import Outbound, SendDeferred, SendRejected
from officehub.kit.outbound import SIGNATURE_HEADER, refused_by_guard, retry_after, signature_header

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

BRIDGED = ("WHATSAPP", "INSTAGRAM")
TOLERANCE_SECONDS = 300
EXTERNAL_PREFIX = "bridge"
GATEWAY_ID_MAX = 64


def external_id(integration_id: str, gateway_id: str) -> str:
    """How a gateway's message id is stored: unique per integration (the messages' unique
    index on the office and external id makes a retried notification a no-op)."""
    return f"{EXTERNAL_PREFIX}:{integration_id}:{gateway_id}"


def gateway_id(stored: str | None) -> str | None:
    if not stored or not stored.startswith(f"{EXTERNAL_PREFIX}:"):
        return stored
    return stored.split(":", 2)[2]


def settings_of(integration: Integration) -> dict[str, Any]:
    settings = integration.bridge
    if not settings or not settings.get("bridgeUrl") or not settings.get("secret"):
        raise SendRejected("the integration has no bridge settings")
    return settings


def signed_headers(secret: str, body: bytes, now: float | None = None) -> dict[str, str]:
    timestamp = int(time.time() if now is None else now)
    return {
        SIGNATURE_HEADER: signature_header([secret], timestamp, body),
        "Content-Type": "application/json",
    }


def outbound_body(integration: Integration, outbound: Outbound) -> dict[str, Any]:
    return {
        "type": "message",
        "integrationId": integration.id,
        "channel": integration.type,
        "messageId": outbound.message_id,
        "to": outbound.to_peer or outbound.to_phone.lstrip("+"),
        "messageType": outbound.type,
        "text": outbound.text,
        "mediaUrl": outbound.media_url,
    }


class BridgeAdapter:
    """Posts the message to the gateway through the SSRF-guarded client; the gateway answers
    ``{"id": "<its message id>"}``. 429, 5xx and network errors are retried by the
    dispatcher; any other answer fails the message with the gateway's status."""

    guarded = True

    async def send(
        self, client: httpx.AsyncClient, integration: Integration, outbound: Outbound
    ) -> str:
        settings = settings_of(integration)
        if not (outbound.to_peer or outbound.to_phone):
            raise SendRejected("the contact has no id on this channel")
        body = json.dumps(outbound_body(integration, outbound)).encode()
        try:
            response = await client.post(
                settings["bridgeUrl"],
                content=body,
                headers=signed_headers(settings["secret"], body),
            )
        except httpx.HTTPError as exc:
            if refused_by_guard(exc):
                raise SendRejected("the bridgeUrl points at a private or reserved address") from exc
            raise SendDeferred(f"gateway unreachable: {type(exc).__name__}") from exc
        if response.status_code == 429 or response.status_code >= 500:
            raise SendDeferred(
                f"gateway answered {response.status_code}",
                retry_after(response.headers.get("retry-after")),
            )
        if not response.is_success:
            raise SendRejected(f"gateway answered {response.status_code}: {response.text[:500]}")
        try:
            found = response.json()["id"]
        except (ValueError, KeyError, TypeError) as exc:
            raise SendDeferred("the gateway's answer carried no message id") from exc
        if not isinstance(found, str | int) or not 1 <= len(str(found)) <= GATEWAY_ID_MAX:
            raise SendRejected("the gateway's message id is not 1 to 64 characters")
        return external_id(integration.id, str(found))


class WebchatAdapter:
    """A web chat's "send" is storing: the message is SENT once the dispatcher releases it
    (in conversation order) and the visitor's stream shows it, then marks it DELIVERED."""

    guarded = False

    async def send(
        self, client: httpx.AsyncClient, integration: Integration, outbound: Outbound
    ) -> str:
        return f"webchat:{outbound.message_id}"
