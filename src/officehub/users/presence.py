"""A signed-in user's console presence sets their availability (issue 29).

Each open ``GET /stream`` of a user is a ``user_presence`` row (any process may hold it:
the database is what they share). The user is *present* while one of their rows is open
and was seen within ``stale`` (a process that died stops refreshing its rows), or closed
less than ``grace`` ago (a reload, a network blip). Presence acts on its changes only:

- absent → present (the first console opens): ``availability`` becomes ONLINE, and the
  routing hook lets the user's inboxes' queues reach them;
- present → absent (the last one closed, and the grace passed): OFFLINE.

What is set by hand (``PATCH /user/{id}``) in between holds until the next change: an
agent who marks themselves AWAY with the console open stays AWAY through reloads, and
is ONLINE again when they next arrive after leaving. Both changes take the office's
routing lock, then the user's row, as ``PATCH /user/{id}`` does.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import and_, delete, exists, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased
from sqlalchemy.sql.elements import ColumnElement

from officehub.kit.repository import lock_office
from officehub.users.hooks import UserRoutingChanged, user_routing_changed
from officehub.users.models import User, UserPresence
from officehub.users.service import get_user


def _alive(now: datetime, grace: timedelta, stale: timedelta) -> ColumnElement[bool]:
    return or_(
        and_(UserPresence.closed_at.is_(None), UserPresence.seen_at > now - stale),
        UserPresence.closed_at > now - grace,
    )


async def _present(
    session: AsyncSession,
    office_id: str,
    user_id: str,
    now: datetime,
    grace: timedelta,
    stale: timedelta,
) -> bool:
    found = await session.scalar(
        select(
            exists().where(
                UserPresence.office_id == office_id,
                UserPresence.user_id == user_id,
                _alive(now, grace, stale),
            )
        )
    )
    return bool(found)


async def _set(session: AsyncSession, user: User, availability: str) -> None:
    if user.availability == availability:
        return
    user.availability = availability
    await session.flush()
    await user_routing_changed.fire(UserRoutingChanged(session, user.office_id, user.id))


async def opened(
    session: AsyncSession,
    office_id: str,
    user_id: str,
    now: datetime,
    grace: timedelta,
    stale: timedelta,
) -> str:
    """Records an open console connection; answers its row's id. The user's arrival (no
    presence before) makes them ONLINE."""
    await lock_office(session, office_id)
    user = await get_user(session, office_id, user_id, for_change=True)
    arrived = not await _present(session, office_id, user_id, now, grace, stale)
    if arrived:
        await session.execute(
            delete(UserPresence).where(
                UserPresence.office_id == office_id, UserPresence.user_id == user_id
            )
        )
    row = UserPresence(office_id=office_id, user_id=user_id, opened_at=now, seen_at=now)
    session.add(row)
    await session.flush()
    if arrived and user.is_active:
        await _set(session, user, "ONLINE")
    return row.id


async def seen(session: AsyncSession, office_id: str, row_id: str, now: datetime) -> None:
    await session.execute(
        update(UserPresence)
        .where(UserPresence.office_id == office_id, UserPresence.id == row_id)
        .values(seen_at=now)
    )


async def closed(session: AsyncSession, office_id: str, row_id: str, now: datetime) -> None:
    await session.execute(
        update(UserPresence)
        .where(UserPresence.office_id == office_id, UserPresence.id == row_id)
        .values(closed_at=now, seen_at=now)
    )


async def departed(
    session: AsyncSession, now: datetime, grace: timedelta, stale: timedelta
) -> list[tuple[str, str]]:
    """The (office, user) pairs with presence rows and none alive: their presence ended."""
    other = aliased(UserPresence)
    alive = select(other.id).where(
        other.user_id == UserPresence.user_id,
        or_(
            and_(other.closed_at.is_(None), other.seen_at > now - stale),
            other.closed_at > now - grace,
        ),
    )
    rows = await session.execute(
        select(UserPresence.office_id, UserPresence.user_id).where(~exists(alive)).distinct()
    )
    return [(office_id, user_id) for office_id, user_id in rows.all()]


async def leave(
    session: AsyncSession,
    office_id: str,
    user_id: str,
    now: datetime,
    grace: timedelta,
    stale: timedelta,
) -> bool:
    """Ends the user's presence if it has ended (checked again under the locks): their rows
    go and they are OFFLINE. Answers whether it ended."""
    await lock_office(session, office_id)
    user = await get_user(session, office_id, user_id, for_change=True)
    if await _present(session, office_id, user_id, now, grace, stale):
        return False
    gone = await session.execute(
        delete(UserPresence).where(
            UserPresence.office_id == office_id, UserPresence.user_id == user_id
        )
    )
    if not gone.rowcount:  # type: ignore[attr-defined]
        return False
    await _set(session, user, "OFFLINE")
    return True
