"""The CNJ unified case number (Resolução 65/2008): ``NNNNNNN-DD.AAAA.J.TR.OOOO``.

``DD`` are ISO 7064 mod 97-10 check digits over the other eighteen; ``J`` (the justice
segment) and ``TR`` (the court within it) name the court, which ``courts.json`` maps to its
DataJud alias (null where DataJud publishes nothing: the STF and the CNJ).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

_FORMATTED = re.compile(r"^([0-9]{7})-([0-9]{2})\.([0-9]{4})\.([0-9])\.([0-9]{2})\.([0-9]{4})$")
_DIGITS = re.compile(r"^[0-9]{20}$")


class CaseNumberError(ValueError):
    """Why a number is not a valid unified case number (a sentence a person can act on)."""


class CourtNotSupported(ValueError):
    """A valid number of a court DataJud does not publish."""


@dataclass(frozen=True)
class Court:
    segment: str
    code: str
    alias: str
    name: str


@dataclass(frozen=True)
class CaseNumber:
    digits: str
    """The twenty digits, as DataJud's ``numeroProcesso`` holds them."""

    @property
    def formatted(self) -> str:
        d = self.digits
        return f"{d[0:7]}-{d[7:9]}.{d[9:13]}.{d[13]}.{d[14:16]}.{d[16:20]}"

    @property
    def segment(self) -> str:
        return self.digits[13]

    @property
    def court_code(self) -> str:
        return self.digits[14:16]


def check_digits(sequence: str, year: str, segment: str, court: str, origin: str) -> str:
    """The two check digits of a number (ISO 7064 mod 97-10)."""
    value = int(f"{sequence}{year}{segment}{court}{origin}00")
    return f"{98 - value % 97:02d}"


def parse(raw: str) -> CaseNumber:
    """A number in either format (20 digits, or NNNNNNN-DD.AAAA.J.TR.OOOO) with valid
    check digits; raises ``CaseNumberError`` saying what is wrong."""
    text = raw.strip()
    match = _FORMATTED.match(text)
    if match is not None:
        digits = "".join(match.groups())
    elif _DIGITS.match(text):
        digits = text
    else:
        raise CaseNumberError("not a unified case number: 20 digits, or NNNNNNN-DD.AAAA.J.TR.OOOO")
    sequence, dd, year, segment, court, origin = (
        digits[0:7],
        digits[7:9],
        digits[9:13],
        digits[13],
        digits[14:16],
        digits[16:20],
    )
    if segment == "0":
        raise CaseNumberError("segment J is 0: no justice segment has that code")
    expected = check_digits(sequence, year, segment, court, origin)
    if dd != expected:
        raise CaseNumberError(f"check digits {dd} do not match the number (mistyped?)")
    return CaseNumber(digits)


@cache
def _table() -> dict[str, Any]:
    text = resources.files("officehub.cases").joinpath("courts.json").read_text("utf-8")
    table: dict[str, Any] = json.loads(text)["segments"]
    return table


def court_of(number: CaseNumber) -> Court:
    """The court the number names; ``CaseNumberError`` for a court code its segment does
    not have, ``CourtNotSupported`` for a court DataJud does not publish."""
    segment = _table().get(number.segment)
    if segment is None:
        raise CaseNumberError(f"segment {number.segment} is not a justice segment")
    entry = segment["courts"].get(number.court_code)
    if entry is None:
        raise CaseNumberError(
            f"court code {number.court_code} does not exist in segment {number.segment} "
            f"({segment['name']})"
        )
    if entry["alias"] is None:
        raise CourtNotSupported(f"{entry['name']} publishes no movements on DataJud")
    return Court(number.segment, number.court_code, entry["alias"], entry["name"])


def aliases() -> set[str]:
    """Every DataJud alias of the table."""
    return {
        court["alias"]
        for segment in _table().values()
        for court in segment["courts"].values()
        if court["alias"] is not None
    }
