from __future__ import annotations

from typing import Annotated

from fastapi import Header, Request
from fastapi.responses import StreamingResponse

from officehub.kit.auth import OfficeDep
from officehub.kit.errors import RateLimited, error_responses
from officehub.kit.indexed_router import Router
from officehub.kit.stream_slots import StreamSlots, event_stream
from officehub.live import stream
from officehub.live.hub import StreamHub
from officehub.live.presence import PresenceTracker

router = Router(tags=["Live"])


@router.get(
    "/stream",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "Server-sent events: each `id:` is the event's id, `event:` its "
            "name, `data:` the webhook body (`{id, event, createdAt, officeId, data}`). "
            "`event: ready` gives the starting point, `event: reset` says a resume could "
            "not be served (reload, then follow the live events); a comment line is sent "
            "when idle.",
            "content": {"text/event-stream": {}},
        },
        **error_responses(400, 401, 429),
    },
    summary="The office's events as they are recorded (server-sent events)",
)
async def open_stream(
    request: Request,
    office: OfficeDep,
    last_event_id: Annotated[
        str | None,
        Header(
            alias="Last-Event-ID",
            max_length=64,
            description="The last event received: the events after it are sent first",
        ),
    ] = None,
) -> StreamingResponse:
    state = request.app.state
    settings = state.settings
    host = request.client.host if request.client else "unknown"
    keys = [f"key:{office.key_id}", f"ip:{host}"]
    slots: StreamSlots = state.office_streams
    if not slots.take(
        [(keys[0], settings.streams_per_key), (keys[1], settings.streams_per_address)]
    ):
        raise RateLimited(
            details="Too many live streams open for this key or address; close one first"
        )
    hub: StreamHub = state.stream_hub
    body = stream.events(
        hub,
        office,
        last_event_id,
        heartbeat=settings.stream_heartbeat_seconds,
        lifetime=settings.stream_max_seconds,
    )
    actor = office.actor
    if actor is not None and actor.is_user:
        # A signed-in user's console is there: their availability follows (users.presence).
        tracker: PresenceTracker = state.presence
        try:
            connection = await tracker.open(actor)
        except BaseException:
            slots.give_back(keys)
            raise
        body = tracker.tracked(connection, body)
    return event_stream(request, slots, keys, body)
