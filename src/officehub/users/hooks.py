"""The users domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class UserDeactivated:
    """Fired when a user is made inactive (``isActive: false``): what lets them in (their
    sessions, their open links) goes in the same transaction."""

    session: AsyncSession
    office_id: str
    user_id: str


user_deactivated: Hook[UserDeactivated] = Hook("user.deactivated", required=True)


@dataclass(frozen=True)
class UserRoutingChanged:
    """Fired when what routing reads of a user changed (availability, capacity, legal
    areas, inboxes, active): the conversations waiting in their inboxes may now reach them.
    The office's routing lock is held (``kit.repository.lock_office``)."""

    session: AsyncSession
    office_id: str
    user_id: str


user_routing_changed: Hook[UserRoutingChanged] = Hook("user.routing_changed", required=True)
