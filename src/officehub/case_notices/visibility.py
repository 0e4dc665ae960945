"""Which case notices a signed-in user may see (issue 29): those of the cases they may see
(``cases.visibility``). A key or an ADMIN sees every notice, at no extra query."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends
from sqlalchemy import ColumnElement

from officehub.case_notices.models import CaseNotice
from officehub.cases import repository as cases
from officehub.cases.visibility import cases_seen
from officehub.conversations.visibility import visible_path
from officehub.kit.auth import Actor


def notices_seen(actor: Actor) -> ColumnElement[bool] | None:
    """The WHERE clause of the notices ``actor`` may see; ``None``: every one."""
    clause = cases_seen(actor)
    if clause is None:
        return None
    seen = cases.ids_where(actor.office_id, clause)
    return CaseNotice.case_id.in_(seen)


VisibleCaseNotice = Annotated[None, Depends(visible_path(CaseNotice, notices_seen))]
"""A route dependency: the notice of the path's ``{id}`` is one the caller may see."""
