"""How contact names and phones are kept comparable."""

from __future__ import annotations

import re
import unicodedata

import phonenumbers

DEFAULT_REGION = "BR"


def fold(text: str) -> str:
    """Lower-cased, accents stripped: ``"José Ávila"`` → ``"jose avila"``."""
    if text.isascii():  # no ASCII character decomposes nor combines: the same, at once
        return text.casefold()
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


# A Brazilian mobile written before the ninth digit: the area code (DDD, 11-99, no zero)
# and 8 digits starting 6-9. Landlines (8 digits starting 2-5) never had a ninth digit.
_BR_MOBILE_WITHOUT_NINTH = re.compile(r"([1-9]{2})([6-9][0-9]{7})")
# The same mobile today: the area code, 9, then those 8 digits.
_BR_MOBILE_WITH_NINTH = re.compile(r"\+55([1-9]{2})9([6-9][0-9]{7})")


def to_e164(raw: str) -> str | None:
    """The number in E.164 (Brazil when no country code is given), or None if not valid.

    The identity rule: a Brazilian mobile is one number with or without the ninth digit,
    and its canonical form has it (``+55 11 8888-7777`` → ``+5511988887777``).
    """
    try:
        number = phonenumbers.parse(raw, DEFAULT_REGION)
    except phonenumbers.NumberParseException:
        return None
    if number.country_code == 55:
        national = str(number.national_number)
        old = _BR_MOBILE_WITHOUT_NINTH.fullmatch(national)
        if old is not None and not number.italian_leading_zero:
            number.national_number = int(f"{old[1]}9{old[2]}")
    if not phonenumbers.is_valid_number(number):
        return None
    result: str = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return result


def without_ninth_digit(e164: str) -> str | None:
    """The other form of a canonical Brazilian mobile (``+5511988887777`` →
    ``+551188887777``), or None for any other number (landlines, other countries)."""
    found = _BR_MOBILE_WITH_NINTH.fullmatch(e164)
    return f"+55{found[1]}{found[2]}" if found else None


def phone_forms(e164: str) -> list[str]:
    """Every form the number is known by: itself, and without the ninth digit for a
    Brazilian mobile."""
    other = without_ninth_digit(e164)
    return [e164] if other is None else [e164, other]


def search_phone_digits(text: str) -> list[str]:
    """The digit strings a phone search looks for: what was typed, and, when it reads as a
    whole Brazilian mobile in either form, the other form too (so either finds it)."""
    typed = digits(text)
    if not typed:
        return []
    found = [typed]
    for candidate in ("+" + typed, typed):
        canonical = to_e164(candidate) if len(typed) >= 10 else None
        if canonical is not None:
            found += [d for d in (f.lstrip("+") for f in phone_forms(canonical)) if d not in found]
            break
    return found


def digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def brazilian_ddd(phone: str | None) -> str | None:
    """The two-digit area code of a Brazilian E.164 number (``+55`` and 10 or 11 digits)."""
    if not phone or not phone.startswith("+55") or len(phone) not in (13, 14):
        return None
    ddd = phone[3:5]
    return ddd if ddd.isdigit() and ddd[0] != "0" else None
