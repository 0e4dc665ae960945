"""How contact names and phones are kept comparable."""

from __future__ import annotations

import unicodedata

import phonenumbers

DEFAULT_REGION = "BR"


def fold(text: str) -> str:
    """Lower-cased, accents stripped: ``"José Ávila"`` → ``"jose avila"``."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def to_e164(raw: str) -> str | None:
    """The number in E.164 (Brazil when no country code is given), or None if not valid."""
    try:
        number = phonenumbers.parse(raw, DEFAULT_REGION)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    result: str = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return result


def digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def brazilian_ddd(phone: str | None) -> str | None:
    """The two-digit area code of a Brazilian E.164 number (``+55`` and 10 or 11 digits)."""
    if not phone or not phone.startswith("+55") or len(phone) not in (13, 14):
        return None
    ddd = phone[3:5]
    return ddd if ddd.isdigit() and ddd[0] != "0" else None
