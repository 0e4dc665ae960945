"""The optional TOTP second factor (RFC 6238: 6 digits, 30 s steps, SHA-1, as every
authenticator app reads an ``otpauth://`` URI).

A code is accepted for the step before, the current and the next one (clock drift), and
once: the step it belongs to is recorded on the user's ``user_totp`` row by a conditional
update, so a later (or simultaneous) use of the same code, or of an earlier one, is refused.
Recovery codes: ten per activation, 80 random bits each, kept as SHA-256 (their entropy
makes a slow hash needless), each spent once by a conditional update. Takes a session and
the office; never commits.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

import pyotp
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.accounts import repository
from officehub.accounts.models import UserRecoveryCode, UserTotp
from officehub.kit.auth import hash_key
from officehub.kit.errors import Conflict, ValidationFailed
from officehub.kit.repository import flush_or_conflict
from officehub.kit.timeutil import utcnow
from officehub.users import service as users

if TYPE_CHECKING:
    from officehub.users.models import User

ISSUER = "officehub"
STEP_SECONDS = 30
DRIFT_STEPS = 1
RECOVERY_CODES = 10
_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"  # 32 symbols: 5 bits each, no 0/o, 1/l
WRONG_CODE = "The code is wrong, expired or already used"


@dataclass(frozen=True)
class Enrolment:
    secret: str
    uri: str


def _step_of(code: str, secret: str, now: datetime) -> int | None:
    """The time step (within the drift) whose code ``code`` is, or ``None``."""
    totp = pyotp.TOTP(secret, interval=STEP_SECONDS)
    current = int(now.timestamp()) // STEP_SECONDS
    for step in range(current - DRIFT_STEPS, current + DRIFT_STEPS + 1):
        if hmac.compare_digest(totp.at(step * STEP_SECONDS), code):
            return step
    return None


def normal_recovery_code(code: str) -> str:
    return "".join(ch for ch in code.lower() if ch not in "- ")


def _new_recovery_code() -> str:
    raw = "".join(secrets.choice(_ALPHABET) for _ in range(16))
    return "-".join(raw[i : i + 4] for i in range(0, 16, 4))


def _conflict(message: str, code: str, details: str) -> Conflict:
    return Conflict(message, details=details, code=code)


async def start(session: AsyncSession, office_id: str, user_id: str) -> Enrolment:
    """A new secret for the user, not active until confirmed (409 ``TOTP_ACTIVE`` when one
    is: disable it first). A second start replaces an unconfirmed secret."""
    user = await users.get_user(session, office_id, user_id, for_change=True)
    record = await repository.totp_of(session, office_id, user.id)
    if record is not None and record.confirmed_at is not None:
        raise _conflict("TOTP already active", "TOTP_ACTIVE", "Disable it first (DELETE /me/totp)")
    secret = pyotp.random_base32()
    if record is None:
        record = UserTotp(office_id=office_id, user_id=user.id, secret=secret, created_at=utcnow())
        session.add(record)
    else:
        record.secret, record.last_step, record.created_at = secret, None, utcnow()
    await flush_or_conflict(
        session,
        _conflict("TOTP enrolment in progress", "TOTP_ACTIVE", "Another enrolment was made"),
    )
    uri = pyotp.TOTP(secret, interval=STEP_SECONDS).provisioning_uri(
        name=user.email, issuer_name=ISSUER
    )
    return Enrolment(secret, uri)


async def confirm(
    session: AsyncSession, office_id: str, user_id: str, code: str, now: datetime
) -> list[str]:
    """Activates the enrolment with a current code; answers the ten recovery codes (shown
    this once). No enrolment, or one already active: 409."""
    record = await repository.totp_of(session, office_id, user_id)
    if record is None or record.confirmed_at is not None:
        raise _conflict(
            "No TOTP enrolment to confirm",
            "TOTP_NOT_PENDING",
            "Start one with POST /me/totp (an active one is disabled first)",
        )
    step = _step_of(code, record.secret, now)
    if step is None or not await repository.take_step(session, record.id, step, utcnow()):
        raise ValidationFailed("Wrong code", details=f"code: {WRONG_CODE}", code="INVALID_CODE")
    await repository.drop_recovery_codes(session, office_id, user_id)
    codes = [_new_recovery_code() for _ in range(RECOVERY_CODES)]
    for code_text in codes:
        session.add(
            UserRecoveryCode(
                office_id=office_id,
                user_id=user_id,
                code_hash=hash_key(normal_recovery_code(code_text)),
            )
        )
    await session.flush()
    return codes


async def active(session: AsyncSession, user: User) -> UserTotp | None:
    record = await repository.totp_of(session, user.office_id, user.id)
    return record if record is not None and record.confirmed_at is not None else None


async def use_factor(
    session: AsyncSession,
    record: UserTotp,
    code: str | None,
    recovery_code: str | None,
    now: datetime,
) -> bool:
    """Spends a current code (its step taken once) or an unused recovery code: ``True`` for
    the one request that did."""
    if code is not None:
        step = _step_of(code, record.secret, now)
        return step is not None and await repository.take_step(session, record.id, step, None)
    if recovery_code is not None:
        return await repository.spend_recovery_code(
            session,
            record.office_id,
            record.user_id,
            hash_key(normal_recovery_code(recovery_code)),
            utcnow(),
        )
    return False


async def disable(
    session: AsyncSession,
    office_id: str,
    user_id: str,
    code: str | None,
    recovery_code: str | None,
    now: datetime,
) -> bool:
    """Ends the user's TOTP given a current code or a recovery code (``False``: wrong).
    No active TOTP: 409 ``TOTP_NOT_ACTIVE``."""
    user = await users.get_user(session, office_id, user_id)
    record = await active(session, user)
    if record is None:
        raise _conflict("TOTP not active", "TOTP_NOT_ACTIVE", "The user has no active TOTP")
    if not await use_factor(session, record, code, recovery_code, now):
        return False
    await repository.drop_totp(session, office_id, user_id)
    return True


async def reset(session: AsyncSession, office_id: str, user_id: str) -> bool:
    """An administrator's reset: the user's TOTP (active or not) and recovery codes go.
    ``True`` if there was one; another office's user: 404."""
    user = await users.get_user(session, office_id, user_id, for_change=True)
    return await repository.drop_totp(session, office_id, user.id)
