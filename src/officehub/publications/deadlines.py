"""Procedural deadlines in business days (CPC arts. 219, 220 and 224), for the office's
court publications (DJEN intimations).

- A publication in an electronic journal is the first business day after the day it was
  made available (``disponibilização``; Lei 11.419/2006 art. 4 §3, CPC art. 224 §2):
  ``publication_date``.
- The period starts on the first business day after the publication (art. 224 §3) and
  counts business days only (art. 219): ``deadline`` is the day the last one falls on (so
  an end on a day without court business is already moved to the next one, art. 224 §1).
- Not business days: Saturdays, Sundays, the national holidays (the ``holidays`` package's
  Brazil calendar), the Monday and Tuesday of Carnival (no court sits; Lei 5.010/1966 art.
  62 for the federal courts, each state court's own act), the recess from 20 December to
  20 January (art. 220: deadlines are suspended), and the court's local holidays (given by
  the office). Ash Wednesday is a business day (courts open at noon).
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import date, timedelta
from functools import cache

import holidays
from holidays.constants import OPTIONAL, PUBLIC

CARNIVAL = "Carnival"
RECESS_START = (12, 20)
RECESS_END = (1, 20)
MAX_DAYS = 365
"""The longest period counted (no procedural period comes near it)."""


@cache
def national_holidays(year: int) -> frozenset[date]:
    """Brazil's national holidays of ``year``, and Carnival's Monday and Tuesday."""
    public = holidays.country_holidays("BR", years=year, categories=(PUBLIC,))
    optional = holidays.country_holidays("BR", years=year, categories=(OPTIONAL,))
    carnival = {day for day, name in optional.items() if name == CARNIVAL}
    return frozenset(public) | frozenset(carnival)


def in_recess(day: date) -> bool:
    """From 20 December to 20 January, both included (CPC art. 220)."""
    return (day.month, day.day) >= RECESS_START or (day.month, day.day) <= RECESS_END


def is_business_day(day: date, local: Collection[date] = ()) -> bool:
    return (
        day.weekday() < 5
        and day not in national_holidays(day.year)
        and day not in local
        and not in_recess(day)
    )


def next_business_day(day: date, local: Collection[date] = ()) -> date:
    """The first business day after ``day``."""
    day += timedelta(days=1)
    while not is_business_day(day, local):
        day += timedelta(days=1)
    return day


def publication_date(made_available: date, local: Collection[date] = ()) -> date:
    """When a journal's communication counts as published: the next business day."""
    return next_business_day(made_available, local)


def deadline(published: date, days: int, local: Collection[date] = ()) -> date:
    """The last day of a period of ``days`` business days starting after ``published``."""
    if not 1 <= days <= MAX_DAYS:
        raise ValueError(f"a period is 1 to {MAX_DAYS} business days")
    day = published
    for _ in range(days):
        day = next_business_day(day, local)
    return day
