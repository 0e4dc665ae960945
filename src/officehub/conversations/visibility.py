"""Which conversations a signed-in user may see and reassign (issue 29).

An API key and an ADMIN see every conversation of the office. A SUPERVISOR sees those of
their inboxes; an AGENT too, and with ``onlyAssignedConversations`` only those assigned to
them or unassigned. A conversation outside that is "not found" (404: its existence is not
revealed). Reassigning is for supervisors and admins: an AGENT may take an unassigned
conversation or give back their own, nothing else (403 ``MISSING_PERMISSION``).
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service
from officehub.conversations.models import Conversation
from officehub.kit.auth import ADMIN, AGENT, Actor, ActorDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import Forbidden, NotFound
from officehub.kit.id_params import PathId

NOT_YOURS_TO_REASSIGN = "Only a supervisor or an admin reassigns a conversation"


def sees_everything(actor: Actor) -> bool:
    return not actor.is_user or actor.role == ADMIN


def may_see(actor: Actor, conversation: Conversation) -> bool:
    if sees_everything(actor):
        return True
    if conversation.inbox_id not in actor.inbox_ids:
        return False
    if actor.role == AGENT and actor.only_assigned_conversations:
        return conversation.assigned_user_id in (None, actor.id)
    return True


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
