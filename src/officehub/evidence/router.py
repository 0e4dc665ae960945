from __future__ import annotations

from fastapi import Request
from fastapi.responses import StreamingResponse

from officehub.conversations.visibility import VisibleConversation
from officehub.evidence import service
from officehub.evidence.schemas import EvidenceKeyOut
from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.storage import StorageDep

router = Router(tags=["Evidence"])


@router.get(
    "/conversation/{id}/evidence",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "A zip: transcript.pdf, manifest.json (hash-chained entries), "
            "attachments/, manifest.sig (Ed25519) and evidence-key.pem",
            "content": {"application/zip": {}},
        },
        **error_responses(400, 401, 404, 409),
    },
    summary="A conversation as signed evidence (zip)",
)
async def conversation_evidence(
    id: PathId,
    request: Request,
    office: OfficeDep,
    session: SessionDep,
    storage: StorageDep,
    _visible: VisibleConversation,
) -> StreamingResponse:
    state = request.app.state
    bundle = await service.build_bundle(
        session, state.sessionmaker, state.settings, storage, office.office_id, id
    )
    headers = {
        "Content-Disposition": f'attachment; filename="evidencia-{id}.zip"',
        "Cache-Control": "no-store",
    }
    return StreamingResponse(
        service.chunks_of(bundle), media_type="application/zip", headers=headers
    )


@router.get(
    "/office/evidence-key",
    response_model=EvidenceKeyOut,
    responses=error_responses(401),
    summary="The office's evidence public key (made on first use)",
)
async def evidence_key(request: Request, office: OfficeDep) -> EvidenceKeyOut:
    state = request.app.state
    key = await service.published_key(state.sessionmaker, office.office_id)
    return EvidenceKeyOut(public_key_pem=key.public_key_pem, fingerprint=key.fingerprint)
