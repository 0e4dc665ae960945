from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from officehub.dashboard import service
from officehub.dashboard.schemas import ClientsMapOut
from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.indexed_router import Router

router = Router(tags=["Dashboard"])


async def get_cache(request: Request) -> service.ClientsMapCache:
    cache: service.ClientsMapCache | None = getattr(request.app.state, "clients_map_cache", None)
    if cache is None:
        cache = service.ClientsMapCache()
        request.app.state.clients_map_cache = cache
    return cache


@router.get(
    "/homepage-v2/get-clients-map",
    response_model=ClientsMapOut,
    responses=error_responses(400, 401),
    summary="The office's conversations by state of the contact's area code (cached 5 min)",
)
async def get_clients_map(
    office: OfficeDep,
    session: SessionDep,
    cache: Annotated[service.ClientsMapCache, Depends(get_cache)],
) -> ClientsMapOut:
    return ClientsMapOut(data=await service.clients_map(session, office.office_id, cache))
