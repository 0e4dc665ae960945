"""``Retry-After`` (RFC 9110 §10.2.3): how long the other side asked us to wait."""

from __future__ import annotations

import email.utils
import math
from datetime import UTC, datetime


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` value: a number of seconds or an HTTP date.

    A date without a zone (``-0000``, or none written) is UTC, never the machine's local
    time; a date in the past, or a negative number, is 0. ``None`` when absent or
    unreadable (including ``inf`` and ``nan``)."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
