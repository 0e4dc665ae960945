"""Outbound HTTP: what every call the service makes to an address an office chose shares.

Webhook deliveries, automation's ``FIRE_WEBHOOK`` action, flow steps, the channels'
gateways (WhatsApp Cloud API, the bridge) and the outside sources (``kit.outside``) all
use these, so a fix here applies to all of them:

- ``ssrf``: the guarded client (``delivery_client``) that connects only to public
  addresses, checking every address a name resolves to; ``is_private_host`` for the check
  when a URL is saved;
- ``urls``: the URL and custom-header rules (``check_url``, ``check_headers``) and
  ``refuse_private_url``, the 400 for a saved URL that points inside;
- ``signing``: ``X-Service-Signature`` and the Standard Webhooks signatures, and ``verify``;
- ``retry``: reading ``Retry-After`` (seconds or an HTTP date, UTC when it names no zone).
"""

from __future__ import annotations

from officehub.kit.outbound.retry import retry_after
from officehub.kit.outbound.signing import (
    SIGNATURE_HEADER,
    WebhookVerificationError,
    sign,
    signature_header,
    standard_signature,
    verify,
)
from officehub.kit.outbound.ssrf import (
    AddressNotAllowed,
    delivery_client,
    is_blocked,
    is_private_host,
    literal_address,
    refused_by_guard,
)
from officehub.kit.outbound.urls import HeaderRefused, check_headers, check_url, refuse_private_url

__all__ = [
    "SIGNATURE_HEADER",
    "AddressNotAllowed",
    "HeaderRefused",
    "WebhookVerificationError",
    "check_headers",
    "check_url",
    "delivery_client",
    "is_blocked",
    "is_private_host",
    "literal_address",
    "refuse_private_url",
    "refused_by_guard",
    "retry_after",
    "sign",
    "signature_header",
    "standard_signature",
    "verify",
]
