"""Which conversations a signed-in user may see and reassign (issue 29).

An API key and an ADMIN see every conversation of the office. A SUPERVISOR sees those of
their inboxes; an AGENT too, and with ``onlyAssignedConversations`` only those assigned to
them or unassigned. A conversation outside that is "not found" (404: its existence is not
revealed). Reassigning is for supervisors and admins: an AGENT may take an unassigned
conversation or give back their own, nothing else (403 ``MISSING_PERMISSION``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import ColumnElement, Select, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import repository, service
from officehub.conversations.models import Conversation
from officehub.kit.auth import ADMIN, AGENT, Actor, ActorDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import Forbidden, NotFound
from officehub.kit.id_params import PathId

NOT_YOURS_TO_REASSIGN = "Only a supervisor or an admin reassigns a conversation"


def sees_everything(actor: Actor) -> bool:
    return not actor.is_user or actor.role == ADMIN


def may_see(actor: Actor, conversation: Conversation) -> bool:
    return may_see_in(actor, conversation.inbox_id, conversation.assigned_user_id)


def may_see_in(actor: Actor, inbox_id: str | None, assigned_user_id: str | None) -> bool:
    """``may_see`` of a conversation known by its inbox and assignee (no inbox: gone)."""
    if sees_everything(actor):
        return True
    if inbox_id is None or inbox_id not in actor.inbox_ids:
        return False
    if actor.role == AGENT and actor.only_assigned_conversations:
        return assigned_user_id in (None, actor.id)
    return True


def require_own_inbox(actor: Actor, inbox_id: str) -> None:
    """404 ``Inbox not found`` when a SUPERVISOR or an AGENT puts work in an inbox not
    theirs (a conversation opened there): what they could not see afterwards."""
    if not sees_everything(actor) and inbox_id not in actor.inbox_ids:
        raise NotFound.of("Inbox", inbox_id)


def listed(actor: Actor) -> ColumnElement[bool] | None:
    """``may_see`` as the WHERE clause of a conversation list (page and total scoped alike);
    ``None`` for a key or an ADMIN (nothing to add)."""
    if sees_everything(actor):
        return None
    clause: ColumnElement[bool] = Conversation.inbox_id.in_(actor.inbox_ids)
    if actor.role == AGENT and actor.only_assigned_conversations:
        mine_or_nobodys = or_(
            Conversation.assigned_user_id.is_(None), Conversation.assigned_user_id == actor.id
        )
        clause = and_(clause, mine_or_nobodys)
    return clause


def seen_in_list(actor: Actor) -> repository.Seen | None:
    """``listed`` as keys of the list (its inboxes, and the user for an AGENT who sees only
    theirs and the unassigned), so that the list's total sums the kept counts too."""
    if sees_everything(actor):
        return None
    only = actor.role == AGENT and actor.only_assigned_conversations
    return repository.Seen(tuple(sorted(actor.inbox_ids)), actor.id if only else None)


def conversations_seen(actor: Actor) -> Select[str] | None:
    """The ids of the conversations ``actor`` may see (``may_see`` as a subquery), for the
    WHERE clause of the records that hang from a conversation; ``None`` for a key or an
    ADMIN (nothing to add)."""
    if sees_everything(actor):
        return None
    stmt = select(Conversation.id).where(
        Conversation.office_id == actor.office_id, Conversation.inbox_id.in_(actor.inbox_ids)
    )
    if actor.role == AGENT and actor.only_assigned_conversations:
        stmt = stmt.where(
            or_(Conversation.assigned_user_id.is_(None), Conversation.assigned_user_id == actor.id)
        )
    return stmt


def through_conversation(
    actor: Actor, conversation_id: Any, person_id: Any | None = None
) -> ColumnElement[bool] | None:
    """A record naming ``conversation_id`` is visible when that conversation is. One without
    a conversation is visible to everyone (``person_id`` ``None``), or when its contact has a
    conversation the actor may see. ``None`` for a key or an ADMIN."""
    seen = conversations_seen(actor)
    if seen is None:
        return None
    if person_id is None:
        without: ColumnElement[bool] = conversation_id.is_(None)
    else:
        of_person = seen.with_only_columns(Conversation.person_id)
        without = and_(conversation_id.is_(None), person_id.in_(of_person))
    return or_(without, conversation_id.in_(seen))


async def require_visible(
    session: AsyncSession, actor: Actor, model: Any, ident: str, clause: ColumnElement[bool] | None
) -> None:
    """404 (``NotFound.of(model's name)``) unless the office's ``model`` row ``ident`` meets
    ``clause``: one query for a SUPERVISOR or an AGENT, none when ``clause`` is ``None``."""
    if clause is None:
        return
    stmt = select(model.id).where(model.office_id == actor.office_id, model.id == ident, clause)
    if await session.scalar(stmt) is None:
        raise NotFound.of(model.__name__, ident)


def visible_path(
    model: Any, clause_of: Callable[[Actor], ColumnElement[bool] | None]
) -> Callable[..., Any]:
    """A route dependency: the ``model`` row of the path's ``{id}`` meets ``clause_of(actor)``
    (404 otherwise)."""

    async def dependency(id: PathId, actor: ActorDep, session: SessionDep) -> None:
        await require_visible(session, actor, model, id, clause_of(actor))

    return dependency


async def visible_conversation(
    session: AsyncSession, actor: Actor, conversation_id: str
) -> Conversation | None:
    """404 (as if it did not exist) unless ``actor`` may see the conversation; the
    conversation, read for the check. A key or an ADMIN sees every one: nothing is read
    (``None``; the route's own read answers 404 for another office's)."""
    if sees_everything(actor):
        return None
    conversation = await service.get_conversation(session, actor.office_id, conversation_id)
    if not may_see(actor, conversation):
        raise NotFound.of("Conversation", conversation_id)
    return conversation


def check_assignment(actor: Actor, conversation: Conversation | None, assignee: str | None) -> None:
    """An AGENT may assign an unassigned conversation to themselves or unassign their own."""
    if conversation is None or not actor.is_user or actor.role != AGENT:
        return
    current = conversation.assigned_user_id
    if assignee == current:
        return
    taking = current is None and assignee == actor.id
    giving_back = current == actor.id and assignee is None
    if not (taking or giving_back):
        raise Forbidden(
            NOT_YOURS_TO_REASSIGN,
            code="MISSING_PERMISSION",
            details="An agent may take an unassigned conversation or give back their own",
        )


async def visible_path_conversation(id: PathId, actor: ActorDep, session: SessionDep) -> None:
    await visible_conversation(session, actor, id)


VisibleConversation = Annotated[None, Depends(visible_path_conversation)]
"""A route dependency: the conversation of the path's ``{id}`` is one the caller may see."""
