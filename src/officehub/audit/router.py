from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request

from officehub.audit import service
from officehub.audit.recorder import AuditRecorder
from officehub.audit.schemas import AuditEntryOut
from officehub.kit.auth import AUDIT, OfficeDep, scope_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.kit.schemas import IsoDateTime

router = Router(tags=["Audit"])


@router.get(
    "/audit-log",
    response_model=Page[AuditEntryOut],
    responses=error_responses(400, 401, 403),
    summary="The office's audit trail, newest first (admins: the audit scope)",
    openapi_extra=scope_override(AUDIT),
)
async def list_audit_log(
    request: Request,
    office: OfficeDep,
    session: SessionDep,
    params: PageDep,
    actor_id: Annotated[str | None, Query(alias="actorId", min_length=1, max_length=64)] = None,
    person_id: Annotated[Id | None, Query(alias="personId")] = None,
    action: Annotated[str | None, Query(min_length=1, max_length=64)] = None,
    since: Annotated[IsoDateTime | None, Query(alias="from")] = None,
    until: Annotated[IsoDateTime | None, Query(alias="to")] = None,
) -> Page[AuditEntryOut]:
    recorder: AuditRecorder = request.app.state.audit
    await recorder.flush()  # what this process buffered is in the answer
    where = service.AuditFilter(actor_id, person_id, action, since, until)
    items, total = await service.list_entries(session, office.office_id, params, where)
    return Page[AuditEntryOut].of(items, total, params)
