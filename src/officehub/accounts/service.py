"""Accounts: invitations and resets (one-use links that set a password), signing in and out,
and the sessions a user holds. Takes a session and the office; never commits."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.accounts import repository, totp
from officehub.accounts.models import UserSession, UserToken
from officehub.accounts.passwords import (
    check_password,
    hash_password,
    needs_rehash,
    verify_password,
)
from officehub.accounts.throttle import LoginThrottle
from officehub.kit.auth import Actor, hash_key
from officehub.kit.errors import (
    Conflict,
    Forbidden,
    NotFound,
    RateLimited,
    Unauthorized,
    ValidationFailed,
)
from officehub.kit.pagination import PageParams
from officehub.kit.repository import flush_or_conflict
from officehub.kit.timeutil import utcnow
from officehub.users import service as users
from officehub.users.hooks import UserDeactivated

if TYPE_CHECKING:
    from officehub.users.models import User

INVITE = "invite"
RESET = "reset"
CHALLENGE = "totp"
"""A sign-in's second step: the token ``POST /auth/login`` answers a user with TOTP."""
CHALLENGE_LIFETIME = timedelta(minutes=5)
LINK_LIFETIME = timedelta(hours=72)
TOUCH_EVERY = timedelta(seconds=60)
"""A session's ``last_seen_at`` is written at most this often (the idle timeout's grain)."""
WRONG_CREDENTIALS = "Wrong email or password"
LINK_UNUSABLE = "The link is unknown, used or expired: ask an administrator for a new one"


@dataclass(frozen=True)
class Link:
    token: str
    url: str
    expires_at: datetime


def _link_url(public_url: str, purpose: str, token: str) -> str:
    """The console's page that sets the password; the token in the fragment (never sent to
    a server, so never in an access log or a Referer)."""
    return f"{public_url}/console/#{purpose}={token}"


async def create_link(
    session: AsyncSession,
    office_id: str,
    user_id: str,
    purpose: str,
    public_url: str,
    grant: users.Grant | None = None,
) -> Link:
    """A one-use link (72 h) that sets the user's password; earlier unused ones of the same
    purpose stop working. An invitation is for a user without a password (409
    ``ACCOUNT_EXISTS`` otherwise: reset it); neither is made for an inactive user.
    ``grant``: the caller holds every scope of the user's role (a link hands the role on:
    403 otherwise, ``None`` for the operator's command line)."""
    user = await users.get_user(session, office_id, user_id, for_change=True)
    if grant is not None:
        grant(user.role)
    if not user.is_active:
        raise Conflict("User inactive", details=f"User {user.id} is inactive", code="USER_INACTIVE")
    if purpose == INVITE and user.password_hash is not None:
        raise Conflict(
            "User already has an account",
            details=f"User {user.id} has a password: reset it instead (POST /auth/password-reset)",
            code="ACCOUNT_EXISTS",
        )
    await repository.drop_open_tokens(session, office_id, user.id, purpose)
    token = secrets.token_urlsafe(32)
    now = utcnow()
    record = UserToken(
        office_id=office_id,
        user_id=user.id,
        purpose=purpose,
        token_hash=hash_key(token),
        created_at=now,
        expires_at=now + LINK_LIFETIME,
    )
    await repository.add(session, record)
    return Link(token, _link_url(public_url, purpose, token), record.expires_at)


async def accept_link(session: AsyncSession, token: str, password: str) -> User:
    """Sets the password of the link's user and spends the link (once: of two requests at
    once, one wins and the other answers 400 ``INVALID_TOKEN``). A reset ends the user's
    sessions."""
    record = await repository.token_by_hash(session, hash_key(token))
    now = utcnow()
    if (
        record is None
        or record.purpose not in (INVITE, RESET)
        or record.used_at is not None
        or record.expires_at <= now
    ):
        raise _unusable()
    user = await users.get_user(session, record.office_id, record.user_id)
    check_password(password, user.name, user.email)
    hashed = await hash_password(password)
    if not await repository.spend_token(session, record.id, now):
        raise _unusable()
    user = await users.get_user(session, record.office_id, record.user_id, for_change=True)
    if not user.is_active:
        raise _unusable()
    user.password_hash = hashed
    await flush_or_conflict(
        session,
        Conflict(
            "Email already used",
            details="Another office's account signs in with this email",
            code="EMAIL_TAKEN",
        ),
    )
    await repository.end_sessions_of(session, user.office_id, user.id)
    return user


def _unusable() -> ValidationFailed:
    return ValidationFailed(
        "Invalid or expired token", details=f"token: {LINK_UNUSABLE}", code="INVALID_TOKEN"
    )


@dataclass(frozen=True)
class NewSession:
    user: User
    token: str
    csrf_token: str
    record: UserSession


@dataclass(frozen=True)
class Challenge:
    """The password was right and the user has TOTP: no session yet, this token instead."""

    token: str
    expires_at: datetime


def locked(wait: int, what: str = "wrong passwords") -> RateLimited:
    return RateLimited(
        details=f"Too many {what}; retry in {wait} s", headers={"Retry-After": str(wait)}
    )


async def sign_in(
    session: AsyncSession,
    throttle: LoginThrottle,
    email: str,
    password: str,
    address: str,
    user_agent: str | None,
    lifetime_seconds: int,
) -> NewSession | Challenge:
    """A new session for the user of ``email`` (any case) and ``password``; for a user with
    an active TOTP, a challenge (one-use, 5 min, kept hashed) for ``POST /auth/login/totp``.

    Wrong passwords are counted per email and per address; once either is over its limit
    every sign-in there answers 429 until the window ends. An unknown email, a wrong
    password and an inactive user answer alike (401, the same time spent hashing)."""
    wait = await throttle.locked_for(email, address)
    if wait is not None:
        raise locked(wait)
    user = await repository.sign_in_user(session, email)
    matches = await verify_password(None if user is None else user.password_hash, password)
    if user is None or not matches or not user.is_active or user.password_hash is None:
        await throttle.failed(email, address)
        raise Unauthorized(WRONG_CREDENTIALS, code="INVALID_CREDENTIALS")
    if needs_rehash(user.password_hash):
        user.password_hash = await hash_password(password)
    if await totp.active(session, user) is not None:
        token, now = secrets.token_urlsafe(32), utcnow()
        challenge = UserToken(
            office_id=user.office_id,
            user_id=user.id,
            purpose=CHALLENGE,
            token_hash=hash_key(token),
            created_at=now,
            expires_at=now + CHALLENGE_LIFETIME,
        )
        await repository.add(session, challenge)
        return Challenge(token, challenge.expires_at)
    return await _new_session(session, user, user_agent, lifetime_seconds)


async def _new_session(
    session: AsyncSession, user: User, user_agent: str | None, lifetime_seconds: int
) -> NewSession:
    token, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
    now = utcnow()
    record = UserSession(
        office_id=user.office_id,
        user_id=user.id,
        token_hash=hash_key(token),
        csrf_hash=hash_key(csrf),
        user_agent=(user_agent or None) and user_agent[:300],
        created_at=now,
        last_seen_at=now,
        expires_at=now + timedelta(seconds=lifetime_seconds),
    )
    await repository.add(session, record)
    return NewSession(user, token, csrf, record)


async def sign_in_totp(
    session: AsyncSession,
    throttle: LoginThrottle,
    challenge: str,
    code: str | None,
    recovery_code: str | None,
    address: str,
    user_agent: str | None,
    lifetime_seconds: int,
    now: datetime,
) -> NewSession:
    """The second step: the challenge and a current code (or a recovery code) make the
    session. A wrong, used or replayed code answers 401 ``INVALID_CODE`` and counts as a
    wrong password of the user's email and of the address (the same 429 lock); the
    challenge stays usable until it expires or succeeds (400 ``INVALID_TOKEN`` then)."""
    record = await repository.token_by_hash(session, hash_key(challenge))
    if (
        record is None
        or record.purpose != CHALLENGE
        or record.used_at is not None
        or record.expires_at <= utcnow()
    ):
        raise _no_challenge()
    user = await users.get_user(session, record.office_id, record.user_id)
    wait = await throttle.locked_for(user.email, address)
    if wait is not None:
        raise locked(wait, "wrong passwords or codes")
    factor = await totp.active(session, user)
    if factor is None or not user.is_active or user.password_hash is None:
        raise _no_challenge()
    if not await totp.use_factor(session, factor, code, recovery_code, now):
        await throttle.failed(user.email, address)
        raise Unauthorized("Wrong code", details=totp.WRONG_CODE, code="INVALID_CODE")
    if not await repository.spend_token(session, record.id, utcnow()):
        raise _no_challenge()
    return await _new_session(session, user, user_agent, lifetime_seconds)


def _no_challenge() -> ValidationFailed:
    return ValidationFailed(
        "Invalid or expired challenge",
        details="challenge: unknown, used or expired: sign in again",
        code="INVALID_TOKEN",
    )


def require_user(actor: Actor) -> str:
    """The signed-in user's session id; a key has no session (403)."""
    if not actor.is_user or actor.session_id is None:
        raise Forbidden(
            "Only a signed-in user has sessions",
            code="MISSING_PERMISSION",
            details="This operation needs a signed-in session, not an API key",
        )
    return actor.session_id


async def list_sessions(
    session: AsyncSession, actor: Actor, params: PageParams
) -> tuple[list[UserSession], int]:
    require_user(actor)
    return await repository.sessions_of(session, actor.office_id, actor.id, params)


async def end_session(session: AsyncSession, actor: Actor, ident: str) -> None:
    """Ends one of the user's own sessions (another user's is not found: 404)."""
    require_user(actor)
    if not await repository.end_session(session, actor.office_id, actor.id, ident):
        raise NotFound.of("Session", ident)


async def sign_out(session: AsyncSession, actor: Actor) -> str:
    current = require_user(actor)
    await repository.end_session(session, actor.office_id, actor.id, current)
    return current


async def reset_by_email(
    session: AsyncSession, email: str, office_id: str | None, public_url: str
) -> tuple[User, Link]:
    """For ``officehub user reset-password``: a reset link for the user of ``email`` (in
    ``office_id`` when given; an email found in several offices needs it)."""
    found = await users.users_with_email(session, email, office_id)
    if not found:
        raise NotFound("User not found", details=f"No user with the email {email}")
    if len(found) > 1:
        offices = ", ".join(sorted(user.office_id for user in found))
        raise Conflict(
            "Email in several offices",
            details=f"Users of the offices {offices} have this email: pass --office",
            code="AMBIGUOUS_EMAIL",
        )
    user = found[0]
    return user, await create_link(session, user.office_id, user.id, RESET, public_url)


async def on_user_deactivated(event: UserDeactivated) -> None:
    """A deactivated user's sessions and open links go with the change."""
    await repository.end_sessions_of(event.session, event.office_id, event.user_id)
    for purpose in (INVITE, RESET, CHALLENGE):
        await repository.drop_open_tokens(event.session, event.office_id, event.user_id, purpose)
