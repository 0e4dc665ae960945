"""Which court cases (and so their movements) a signed-in user may see (issue 29).

A case about a conversation is visible when the conversation is
(``conversations.visibility``); one about no conversation when its contact has a
conversation the user may see. A key or an ADMIN sees every case, at no extra query.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from sqlalchemy import ColumnElement

from officehub.cases.models import Case
from officehub.conversations.visibility import through_conversation, visible_path
from officehub.kit.auth import Actor


def cases_seen(actor: Actor) -> ColumnElement[bool] | None:
    """The WHERE clause of the cases ``actor`` may see; ``None``: every one."""
    return through_conversation(actor, Case.conversation_id, Case.person_id)


VisibleCase = Annotated[None, Depends(visible_path(Case, cases_seen))]
"""A route dependency: the case of the path's ``{id}`` is one the caller may see."""
