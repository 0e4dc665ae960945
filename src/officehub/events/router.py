from __future__ import annotations

from officehub.events.catalogue import EVENT_TYPES
from officehub.events.schemas import EventTypeList, EventTypeOut
from officehub.kit.auth import READ, OfficeDep, scope_override
from officehub.kit.errors import error_responses
from officehub.kit.indexed_router import Router

router = Router(tags=["Webhooks"])


@router.get(
    "/webhooks/events",
    response_model=EventTypeList,
    responses=error_responses(401),
    summary="The event catalogue",
    openapi_extra=scope_override(READ),  # names only, no secret: any reading key may list it
)
async def list_event_types(_office: OfficeDep) -> EventTypeList:
    data = [
        EventTypeOut(
            name=e.name, group=e.group, description=e.description, example_payload=e.example
        )
        for e in EVENT_TYPES
    ]
    return EventTypeList(data=data, total_results=len(data), total_pages=1)
