"""Outbound webhooks. ``verify`` is the helper for receivers of our deliveries."""

from __future__ import annotations

from officehub.kit.outbound.signing import WebhookVerificationError, verify

__all__ = ["WebhookVerificationError", "verify"]
