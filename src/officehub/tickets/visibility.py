"""Which tickets a signed-in user may see (issue 29).

A ticket about a conversation is visible when the conversation is
(``conversations.visibility``); one about no conversation is the office's internal work,
visible to every user. A key or an ADMIN sees every ticket, at no extra query.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from sqlalchemy import ColumnElement

from officehub.conversations.visibility import through_conversation, visible_path
from officehub.kit.auth import Actor
from officehub.tickets.models import Ticket


def tickets_seen(actor: Actor) -> ColumnElement[bool] | None:
    """The WHERE clause of the tickets ``actor`` may see; ``None``: every one."""
    return through_conversation(actor, Ticket.conversation_id)


VisibleTicket = Annotated[None, Depends(visible_path(Ticket, tickets_seen))]
"""A route dependency: the ticket of the path's ``{id}`` is one the caller may see."""
