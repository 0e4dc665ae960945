from __future__ import annotations

from fastapi import Request
from fastapi.responses import StreamingResponse

from officehub.client_export import service
from officehub.kit.auth import ADMIN, ADMIN_SCOPE, OfficeDep, role_override, scope_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.storage import StorageDep

router = Router(tags=["Contacts"])


@router.get(
    "/people/{id}/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "A zip: README.txt (Portuguese), contact.json, tags.json, "
            "partner-links.json, conversations/<id>/ (conversation.json, messages.json, "
            "notes.json), cards.json, cases.json, case-movements.json and media/",
            "content": {"application/zip": {}},
        },
        **error_responses(400, 401, 404),
    },
    summary="Export everything the office holds about a contact (zip, admin)",
    description=(
        "The client's right of access (LGPD art. 18, II): the contact, its tags and partner "
        "links, its conversations with every message (and its status history) and note, "
        "CRM cards, cases and their movements, and the files its messages reference that "
        "the office stores, with a README.txt in Portuguese saying what each file is. "
        "Streamed as it is made. A contact under legal hold is exported too. See "
        "docs/lgpd.md."
    ),
    openapi_extra={**scope_override(ADMIN_SCOPE), **role_override(ADMIN)},
)
async def export_contact(
    id: PathId, request: Request, office: OfficeDep, session: SessionDep, storage: StorageDep
) -> StreamingResponse:
    target = await service.check_contact(session, office.office_id, id)
    state = request.app.state
    headers = {
        "Content-Disposition": f'attachment; filename="dados-{id}.zip"',
        "Cache-Control": "no-store",
    }
    return StreamingResponse(
        service.export_chunks(state.sessionmaker, state.settings, storage, target),
        media_type="application/zip",
        headers=headers,
    )
