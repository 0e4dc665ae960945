from __future__ import annotations

from typing import Annotated

from fastapi import Path

from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.partner_links import service
from officehub.partner_links.schemas import LinkIn, LinkOut

router = Router(tags=["Partner links"])  # the tag gives every route the scope edit:customer
BASE = "/integration/partner/contacts/{contactId}/link"


@router.post(
    BASE,
    status_code=201,
    response_model=LinkOut,
    responses=error_responses(400, 401, 403, 404, 409, 413),
    summary="Link a contact to its partner record",
)
async def create_link(
    contactId: PathId,
    body: LinkIn,
    office: OfficeDep,
    session: SessionDep,
) -> LinkOut:
    return await service.create_link(session, office.office_id, contactId, body)


@router.get(
    BASE,
    response_model=LinkOut,
    responses=error_responses(400, 401, 403, 404),
    summary="The contact's partner link",
)
async def read_link(
    contactId: PathId,
    office: OfficeDep,
    session: SessionDep,
) -> LinkOut:
    return await service.read_link(session, office.office_id, contactId)


@router.delete(
    BASE + "/{linkId}",
    response_model=LinkOut,
    responses=error_responses(400, 401, 403, 404),
    summary="Unlink a contact from its partner record",
)
async def unlink(
    contactId: PathId,
    linkId: Annotated[str, Path(max_length=64, description="The link id")],
    office: OfficeDep,
    session: SessionDep,
) -> LinkOut:
    return await service.unlink(session, office.office_id, contactId, linkId)
