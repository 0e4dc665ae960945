"""What a status notification says beyond the status word: the failure and the pricing,
in the shapes the message keeps (``errorDetail``, ``pricing``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from officehub.channels.schemas import Status
from officehub.kit.timeutil import isoformat


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
        "details": _word(details, 2000) or _clip(first.message, 2000),
    }


def _at(value: object) -> str | None:
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
    origin = conversation.origin if conversation is not None else None
    return {
        "category": _word(pricing.category, 64) if pricing else None,
        "type": _word(pricing.type, 64) if pricing else None,
        "billable": pricing.billable if pricing and isinstance(pricing.billable, bool) else None,
        "pricingModel": _word(pricing.pricing_model, 32) if pricing else None,
        "conversation": None
        if conversation is None
        else {
            "id": _word(conversation.id, 128),
            "originType": _word(origin.get("type"), 64) if isinstance(origin, dict) else None,
            "expiresAt": _at(conversation.expiration_timestamp),
        },
    }


def _word(value: object, size: int) -> str | None:
    """A scalar as text (an object or a list the platform never documented: None)."""
    return None if isinstance(value, dict | list) else _clip(value, size)
