"""A session cookie resolved for the request middleware (``kit.middleware.api_key``), which
asks through ``kit.auth.use_session_resolver`` (installed by ``hook_subscriptions``).

Read every request, never cached: a session ended (sign-out, ``DELETE /me/sessions/{id}``,
a password reset) or a user deactivated is refused from the next request on, in every
process. ``last_seen_at`` is written at most once a minute (the idle timeout's grain).
"""

from __future__ import annotations

from typing import Any

from officehub.accounts import repository
from officehub.accounts.service import TOUCH_EVERY
from officehub.kit.auth import ROLE_SCOPES, Actor, KeyOutcome, OfficeContext, hash_key
from officehub.kit.timeutil import utcnow

SESSION_ENDED = "The session has ended or is unknown: sign in again"


async def resolve(app_state: Any, token: str) -> KeyOutcome:
    settings = app_state.settings
    now = utcnow()
    async with app_state.read_sessionmaker() as read:
        found = await repository.session_by_hash(read, hash_key(token))
        if found is None:
            return KeyOutcome(None, SESSION_ENDED)
        record, user = found
        idle = settings.session_idle_seconds
        if (
            not user.is_active
            or user.password_hash is None
            or record.expires_at <= now
            or (now - record.last_seen_at).total_seconds() >= idle
        ):
            return KeyOutcome(None, SESSION_ENDED)
        inbox_ids = await repository.inbox_ids(read, user.office_id, user.id)
    if now - record.last_seen_at >= TOUCH_EVERY:
        async with app_state.sessionmaker() as write:
            await repository.touch_session(write, record.id, now)
            await write.commit()
    actor = Actor(
        "user",
        user.id,
        user.role,
        user.office_id,
        session_id=record.id,
        inbox_ids=inbox_ids,
        only_assigned_conversations=user.only_assigned_conversations,
    )
    # The role's scopes, never more (issue 39); a role unknown to this version: none.
    scopes = ROLE_SCOPES.get(user.role, frozenset())
    office = OfficeContext(user.office_id, f"user:{user.id}", scopes, actor)
    return KeyOutcome(office, csrf_hash=record.csrf_hash)
