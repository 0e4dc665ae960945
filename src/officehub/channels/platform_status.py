"""What a status notification says beyond the status word: the failure and the pricing,
in the shapes the message keeps (``errorDetail``, ``pricing``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from officehub.channels.schemas import Status
from officehub.timeutil import isoformat


def _clip(value: object, size: int) -> str | None:
    if value is None:
        return None
    text = str(value).replace("\x00", "")[:size]
    return text or None


def status_error(status: Status) -> dict[str, Any]:
    """The first error of a ``failed`` status as ``{code, title, details}``; a failure
    without errors keeps nulls (the summary in ``error`` says so)."""
    if not status.errors:
        return {"code": None, "title": None, "details": None}
    first = status.errors[0]
    details = first.error_data.details if first.error_data is not None else None
    return {
        "code": _clip(first.code, 32),
        "title": _clip(first.title or first.message, 300),
        "details": _clip(details or first.message, 2000),
    }


def _at(value: str | int | None) -> str | None:
    """A Unix timestamp the platform sends (as a string or a number) as ISO 8601."""
    try:
        seconds = int(str(value))
        return isoformat(datetime.fromtimestamp(seconds, UTC))
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def status_pricing(status: Status) -> dict[str, Any] | None:
    """``pricing`` and ``conversation`` of a status, or None when it has neither."""
    if status.pricing is None and status.conversation is None:
        return None
    pricing = status.pricing
    conversation = status.conversation
    return {
        "category": _clip(pricing.category, 64) if pricing else None,
        "billable": pricing.billable if pricing else None,
        "pricingModel": _clip(pricing.pricing_model, 32) if pricing else None,
        "conversation": None
        if conversation is None
        else {
            "id": _clip(conversation.id, 128),
            "originType": _clip(conversation.origin.type if conversation.origin else None, 64),
            "expiresAt": _at(conversation.expiration_timestamp),
        },
    }
