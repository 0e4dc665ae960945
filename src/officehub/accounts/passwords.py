"""Passwords: the rules a new one must meet, and their Argon2id hashes (argon2-cffi).

Hashing and checking cost tens of milliseconds of CPU and 64 MiB of memory each (RFC 9106's
second recommended profile, argon2-cffi's default): they run in a worker thread, never on
the event loop.
"""

from __future__ import annotations

import unicodedata
from functools import cache
from importlib.resources import files

import anyio.to_thread
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from officehub.kit.errors import ValidationFailed

MIN_LENGTH = 10
MAX_LENGTH = 200  # bounded: every character costs hashing time
_HASHER = PasswordHasher()


def _folded(text: str) -> str:
    """Lower-cased, accents and spaces removed: ``"José Silva"`` → ``"josesilva"``."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c) and not c.isspace())


@cache
def common_passwords() -> frozenset[str]:
    text = files("officehub.accounts").joinpath("common_passwords.txt").read_text("utf-8")
    lines = (line.strip() for line in text.splitlines())
    return frozenset(_folded(line) for line in lines if line and not line.startswith("#"))


def password_problem(password: str, name: str, email: str) -> str | None:
    """Why ``password`` may not be used by the user of ``name`` and ``email``, or ``None``."""
    if len(password) < MIN_LENGTH:
        return f"must be at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"must be at most {MAX_LENGTH} characters"
    folded = _folded(password)
    if folded in common_passwords() or len(set(folded)) <= 2:
        return "is too common; choose a less predictable one"
    local = _folded(email.split("@", 1)[0])
    parts = [local, _folded(email), *(_folded(part) for part in name.split())]
    if any(len(part) >= 3 and part in folded for part in parts):
        return "must not contain the user's name or email"
    return None


def check_password(password: str, name: str, email: str) -> None:
    """400 naming ``password`` when the password breaks a rule."""
    problem = password_problem(password, name, email)
    if problem is not None:
        raise ValidationFailed.field("password", problem, code="WEAK_PASSWORD")


async def hash_password(password: str) -> str:
    return await anyio.to_thread.run_sync(_HASHER.hash, password)


@cache
def _stand_in_hash() -> str:
    """Checked against when no user has the email, so that the answer takes as long."""
    return _HASHER.hash("no user has this email address")


async def verify_password(stored: str | None, password: str) -> bool:
    """Whether ``password`` matches ``stored`` (an absent hash costs the same time, fails)."""

    def verify() -> bool:
        try:
            return _HASHER.verify(stored or _stand_in_hash(), password) and stored is not None
        except (VerificationError, InvalidHashError):
            return False

    return await anyio.to_thread.run_sync(verify)


def needs_rehash(stored: str) -> bool:
    return _HASHER.check_needs_rehash(stored)
