"""Quiet hours: when a notice may go out, in the office's time zone."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

SUNDAY = 6


@dataclass(frozen=True)
class Quiet:
    enabled: bool
    start: time
    end: time
    sundays: bool
    zone: ZoneInfo

    def is_quiet(self, local: datetime) -> bool:
        if not self.enabled:
            return False
        if self.sundays and local.weekday() == SUNDAY:
            return True
        now = local.time().replace(tzinfo=None)
        if self.start == self.end:
            return False
        if self.start < self.end:
            return self.start <= now < self.end
        return now >= self.start or now < self.end


def parse_clock(value: str) -> time:
    hours, minutes = value.split(":")
    return time(int(hours), int(minutes))


def next_allowed(now: datetime, quiet: Quiet) -> datetime:
    """``now`` when a notice may go out then, else the first moment after it that is not
    quiet (the end of the night, or Monday's morning after a Sunday), in UTC."""
    local = now.astimezone(quiet.zone)
    for _ in range(16):
        if not quiet.is_quiet(local):
            return local.astimezone(UTC)
        if quiet.sundays and local.weekday() == SUNDAY:
            local = _at(local.date() + timedelta(days=1), time(0, 0), quiet.zone)
            continue
        day = local.date()
        if local.time().replace(tzinfo=None) >= quiet.end:
            day += timedelta(days=1)
        local = _at(day, quiet.end, quiet.zone)
    return local.astimezone(UTC)


def _at(day: date, clock: time, zone: ZoneInfo) -> datetime:
    return datetime.combine(day, clock, tzinfo=zone)
