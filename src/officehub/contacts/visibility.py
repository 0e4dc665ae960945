"""Which contacts a signed-in user may see (issue 29).

A key or an ADMIN sees every contact of the office. A SUPERVISOR or an AGENT sees a contact
that has a conversation they may see (``conversations.visibility``: their inboxes, and
for an AGENT with ``onlyAssignedConversations`` theirs or unassigned ones), and a contact
that has no conversation at all yet (nobody's client yet: found to start one). Outside
that a contact is "not found" (404), in lists as in reads and changes.

Conversations are a layer above contacts: they state the clause through the
``contact.scoping`` hook (``conversations.subscribers``), contacts never import them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import ColumnElement, false, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.kit.auth import ADMIN, Actor, ActorDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import NotFound
from officehub.kit.id_params import PathId
from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class ContactScoping:
    """Asks the upper domains which contacts ``actor`` may see: each appends a WHERE clause
    over ``Contact`` to ``clauses`` (any of them lets a contact through)."""

    session: AsyncSession
    office_id: str
    actor: Actor
    clauses: list[ColumnElement[bool]]


contact_scoping: Hook[ContactScoping] = Hook("contact.scoping", required=True)


async def contacts_seen(session: AsyncSession, actor: Actor) -> ColumnElement[bool] | None:
    """The WHERE clause of the contacts ``actor`` may see; ``None``: every one."""
    if not actor.is_user or actor.role == ADMIN:
        return None
    payload = ContactScoping(session, actor.office_id, actor, [])
    await contact_scoping.fire(payload)
    return or_(*payload.clauses) if payload.clauses else false()


async def through_contact(
    session: AsyncSession, actor: Actor, person_id: Any
) -> ColumnElement[bool] | None:
    """The WHERE clause of records hanging from a contact (``person_id`` their column): seen
    when their contact is, so a list is scoped as its records are; ``None``: every one."""
    clause = await contacts_seen(session, actor)
    if clause is None:
        return None
    seen: ColumnElement[bool] = person_id.in_(
        select(Contact.id).where(Contact.office_id == actor.office_id, clause)
    )
    return seen


async def require_visible_contact(session: AsyncSession, actor: Actor, ident: str) -> None:
    """404 unless ``actor`` may see the office's contact ``ident`` (one query for a
    SUPERVISOR or an AGENT, none for a key or an ADMIN): a path, a query filter or a body
    naming a contact the caller cannot read is answered as if it did not exist."""
    clause = await contacts_seen(session, actor)
    if clause is None:
        return
    stmt = select(Contact.id).where(
        Contact.office_id == actor.office_id, Contact.id == ident, clause
    )
    if await session.scalar(stmt) is None:
        raise NotFound.of("Contact", ident)


async def _visible(id: PathId, actor: ActorDep, session: SessionDep) -> None:
    await require_visible_contact(session, actor, id)


VisibleContact = Annotated[None, Depends(_visible)]
"""A route dependency: the contact of the path's ``{id}`` is one the caller may see."""
