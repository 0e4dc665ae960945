"""An inbox's business hours (issue 32): whether it is open at an instant, and when the
closed period an instant falls in began. Pure functions over the stored settings.

- ``week``: ranges ``{day, open, close}``, ``day`` 0 = Monday … 6 = Sunday, ``HH:MM`` in
  the inbox's time zone, ``open < close``; ``close`` may be ``24:00`` (end of the day). A
  range never crosses midnight: a night shift is two ranges (``22:00-24:00`` and
  ``00:00-06:00`` of the next day), which join into one open period.
- Closed all day: Brazil's national public holidays (the ``holidays`` package's ``PUBLIC``
  category; Carnival is optional there and stays open unless listed), unless the date is
  in ``openDates``; and every date of ``closedDates``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

LOOKBACK_DAYS = 400
"""How far back ``closed_period_start`` looks for the last closing time."""
NEVER_OPEN = datetime(1970, 1, 1, tzinfo=UTC)
"""The start of the closed period of an inbox with no open range in the lookback."""


@cache
def national_holidays(year: int) -> frozenset[date]:
    # Imported here: ``holidays`` takes about 0.1 s to import (its Hindu calendar), which a
    # process that never asks (a CLI command making a user) should not pay.
    import holidays
    from holidays.constants import PUBLIC

    return frozenset(holidays.country_holidays("BR", years=year, categories=(PUBLIC,)))


def minutes(hhmm: str) -> int:
    """``"09:30"`` → 570; ``"24:00"`` → 1440."""
    hours, mins = hhmm.split(":")
    return int(hours) * 60 + int(mins)


@dataclass(frozen=True)
class Hours:
    timezone: str
    week: Sequence[tuple[int, int, int]]  # (day, open minute, close minute)
    closed_dates: frozenset[date] = frozenset()
    open_dates: frozenset[date] = frozenset()

    @classmethod
    def of(cls, stored: dict[str, Any]) -> Hours:
        """From the stored settings (the API's shape)."""
        week: list[dict[str, Any]] = stored.get("week") or []
        return cls(
            timezone=str(stored["timezone"]),
            week=tuple((r["day"], minutes(r["open"]), minutes(r["close"])) for r in week),
            closed_dates=frozenset(_dates(stored.get("closedDates"))),
            open_dates=frozenset(_dates(stored.get("openDates"))),
        )

    def day_closed(self, day: date) -> bool:
        if day in self.closed_dates:
            return True
        return day in national_holidays(day.year) and day not in self.open_dates

    def ranges(self, day: date) -> list[tuple[int, int]]:
        """The open ranges of a local date (none on a closed day), in order."""
        if self.day_closed(day):
            return []
        weekday = day.weekday()
        return sorted((o, c) for d, o, c in self.week if d == weekday)


def _dates(value: object) -> list[date]:
    if not isinstance(value, list):
        return []
    return [v if isinstance(v, date) else date.fromisoformat(str(v)) for v in value]


def _local(hours: Hours, day: date, minute: int) -> datetime:
    """The UTC instant of a local date and minute (``1440``: the next day's midnight)."""
    tz = ZoneInfo(hours.timezone)
    # Wall-clock arithmetic: built from the local fields, so a DST change is respected.
    wall = datetime.combine(day, time(0)) + timedelta(minutes=minute)
    return wall.replace(tzinfo=tz).astimezone(UTC)


def is_open(hours: Hours, at: datetime) -> bool:
    """Whether the inbox is open at ``at`` (an aware instant)."""
    local = at.astimezone(ZoneInfo(hours.timezone))
    minute = local.hour * 60 + local.minute
    return any(o <= minute < c for o, c in hours.ranges(local.date()))


def closed_period_start(hours: Hours, at: datetime) -> datetime | None:
    """When the closed period ``at`` falls in began (the last closing time before it, as
    an aware UTC instant); None when the inbox is open at ``at``. With no closing time in
    the last ``LOOKBACK_DAYS`` days: ``NEVER_OPEN``. A range ending at ``24:00`` followed
    by one starting at ``00:00`` is one open period."""
    if is_open(hours, at):
        return None
    local = at.astimezone(ZoneInfo(hours.timezone))
    day = local.date()
    for _ in range(LOOKBACK_DAYS):
        for _open, c in reversed(hours.ranges(day)):
            end = _local(hours, day, c)
            if end > at:
                continue
            if c == 24 * 60 and any(o2 == 0 for o2, _c in hours.ranges(day + timedelta(days=1))):
                continue  # joined to the next day's range: no closing here
            return end
        day -= timedelta(days=1)
    return NEVER_OPEN


SEARCH_DAYS = 800
"""How far ahead the due-time walks look for open time (then: no due time)."""


def add_business_minutes(hours: Hours | None, start: datetime, minutes: int) -> datetime | None:
    """The instant ``minutes`` of open time after ``start`` (SLA first and next response):
    closed time does not count. No hours: always open. None when the inbox is open too
    little in the next ``SEARCH_DAYS`` days."""
    if hours is None:
        return start + timedelta(minutes=minutes)
    remaining = timedelta(minutes=minutes)
    day = start.astimezone(ZoneInfo(hours.timezone)).date()
    for _ in range(SEARCH_DAYS):
        for o, c in hours.ranges(day):
            end = _local(hours, day, c)
            if end <= start:
                continue
            begin = max(start, _local(hours, day, o))
            if remaining <= end - begin:
                return begin + remaining
            remaining -= end - begin
        day += timedelta(days=1)
    return None


def add_business_days(hours: Hours | None, start: datetime, days: int) -> datetime | None:
    """The end of the ``days``-th open day after ``start``'s local date (SLA resolution; the
    day it starts does not count, as in a legal deadline): its last closing time. No hours:
    ``days`` times 24 h. None when there are not that many open days in ``SEARCH_DAYS``."""
    if hours is None:
        return start + timedelta(days=days)
    day = start.astimezone(ZoneInfo(hours.timezone)).date()
    counted = 0
    for _ in range(SEARCH_DAYS):
        day += timedelta(days=1)
        ranges = hours.ranges(day)
        if ranges:
            counted += 1
            if counted == days:
                return _local(hours, day, ranges[-1][1])
    return None
