"""Deadlines in business days (CPC arts. 219, 220, 224) on worked examples: a Friday
publication, a period across Carnival, one across the recess, a local court holiday."""

from __future__ import annotations

from datetime import date

import pytest

from officehub.publications.deadlines import (
    deadline,
    in_recess,
    is_business_day,
    national_holidays,
    publication_date,
)


def test_a_publication_on_a_friday_starts_counting_on_monday() -> None:
    # published Fri 6 Mar 2026: day 1 is Mon 9, day 5 Fri 13, day 15 Fri 27
    assert deadline(date(2026, 3, 6), 5) == date(2026, 3, 13)
    assert deadline(date(2026, 3, 6), 15) == date(2026, 3, 27)


def test_made_available_on_a_friday_is_published_on_monday() -> None:
    # DJEN: available Fri 6 Mar, published Mon 9, counting from Tue 10: 5 days end Mon 16
    published = publication_date(date(2026, 3, 6))
    assert published == date(2026, 3, 9)
    assert deadline(published, 5) == date(2026, 3, 16)


def test_a_period_across_carnival_skips_its_monday_and_tuesday() -> None:
    # published Thu 12 Feb 2026: Fri 13 (1), Carnival 16-17 skipped, Ash Wednesday 18 (2),
    # Thu 19 (3), Fri 20 (4), Mon 23 (5)
    assert date(2026, 2, 16) in national_holidays(2026)
    assert date(2026, 2, 17) in national_holidays(2026)
    assert is_business_day(date(2026, 2, 18))
    assert deadline(date(2026, 2, 12), 5) == date(2026, 2, 23)


def test_a_period_across_the_recess_is_suspended_from_20_december_to_20_january() -> None:
    # published Thu 17 Dec 2026: Fri 18 (1); 20 Dec to 20 Jan suspended; Thu 21 Jan 2027 (2)
    # ... Fri 5 Feb (13); Carnival 2027 is 8-9 Feb; Wed 10 (14), Thu 11 (15)
    assert in_recess(date(2026, 12, 20)) and in_recess(date(2027, 1, 20))
    assert not in_recess(date(2026, 12, 19)) and not in_recess(date(2027, 1, 21))
    assert deadline(date(2026, 12, 17), 1) == date(2026, 12, 18)
    assert deadline(date(2026, 12, 17), 2) == date(2027, 1, 21)
    assert deadline(date(2026, 12, 17), 15) == date(2027, 2, 11)


def test_a_publication_during_the_recess_counts_from_21_january() -> None:
    assert deadline(date(2026, 12, 22), 1) == date(2027, 1, 21)
    assert publication_date(date(2027, 1, 8)) == date(2027, 1, 21)


def test_national_holidays_and_local_court_holidays_are_not_business_days() -> None:
    # Tiradentes (Tue 21 Apr 2026) is national; 20 Apr is a local court holiday here
    assert not is_business_day(date(2026, 4, 21))
    assert deadline(date(2026, 4, 17), 2) == date(2026, 4, 22)
    local = {date(2026, 4, 20)}
    assert deadline(date(2026, 4, 17), 2, local) == date(2026, 4, 23)
    assert deadline(date(2026, 4, 17), 1, local) == date(2026, 4, 22)


def test_a_period_must_be_1_to_365_business_days() -> None:
    for days in (0, -1, 366):
        with pytest.raises(ValueError, match="business days"):
            deadline(date(2026, 3, 6), days)
