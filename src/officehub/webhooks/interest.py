"""The webhooks consumer's registration with the outbox (``events.registry``).

It wants an event when an active webhook of the office is subscribed to it when the event
is recorded; an event addressed to one webhook (``webhook.test``) always, for that webhook.
``install`` is called by ``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from sqlalchemy import Table, bindparam, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events import registry
from officehub.webhooks.delivery import WEBHOOKS
from officehub.webhooks.models import Webhook

if TYPE_CHECKING:
    from officehub.events.models import OutboxEvent

_webhooks = cast(Table, Webhook.__table__)
_ACTIVE = select(_webhooks.c.office_id, _webhooks.c.events).where(
    _webhooks.c.office_id.in_(bindparam("offices", expanding=True)),
    _webhooks.c.is_active.is_(True),
)
"""A Core select (no ORM bookkeeping): ``emit`` runs it for every event on SQLite."""


async def wants(session: AsyncSession, events: Sequence[OutboxEvent]) -> list[bool]:
    """One query: each office's active webhooks' event lists (through the index starting
    with ``office_id``)."""
    offices = sorted({e.office_id for e in events})
    subscribed: dict[str, list[list[str]]] = {}
    for office_id, names in await session.execute(_ACTIVE, {"offices": offices}):
        subscribed.setdefault(office_id, []).append(list(names or []))
    return [any(e.name in names for names in subscribed.get(e.office_id, [])) for e in events]


WANTS_SQL = """EXISTS (
        SELECT 1 FROM webhooks
        WHERE office_id = :office_id AND is_active
          AND events @> jsonb_build_array(CAST(:name AS TEXT)))"""

REGISTRATION = registry.Registration(WEBHOOKS, wants, WANTS_SQL, targeted=True)


def install() -> None:
    registry.register(REGISTRATION)
