"""Open server-sent event streams per holder (a visitor, a key, a client address), in this
process: a stream takes a slot of each of its holders before it starts and gives them back
however it ends. The office's event stream and the web chat visitors' streams share it.

A stream's request is marked (``EVENT_STREAM`` in its ASGI scope): when the server shuts
down, its HTTP protocol (``kit.http_protocol``) closes these connections at once, and the
browser's ``EventSource`` reconnects (with ``Last-Event-ID``) to the server that replaces
it. Left open, a stream held the shutdown for its whole lifetime (``stream_max_seconds``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator

from starlette.requests import Request
from starlette.responses import StreamingResponse

EVENT_STREAM = "officehub.event_stream"
"""The ASGI scope's key marking a server-sent event stream's request."""


class StreamSlots:
    def __init__(self) -> None:
        self.open: Counter[str] = Counter()

    def take(self, keys_and_caps: list[tuple[str, int]]) -> bool:
        if any(self.open[key] >= cap for key, cap in keys_and_caps):
            return False
        for key, _cap in keys_and_caps:
            self.open[key] += 1
        return True

    def give_back(self, keys: list[str]) -> None:
        for key in keys:
            self.open[key] -= 1
            if self.open[key] <= 0:
                del self.open[key]


async def held(slots: StreamSlots, keys: list[str], body: AsyncIterator[str]) -> AsyncIterator[str]:
    """``body``, giving the slots back however it ends (finished, cancelled, disconnected)."""
    try:
        async for part in body:
            yield part
    finally:
        slots.give_back(keys)


def event_stream(
    request: Request, slots: StreamSlots, keys: list[str], body: AsyncIterator[str]
) -> StreamingResponse:
    """``body`` as a server-sent event stream holding ``keys``' slots, its request marked
    so that a shutting-down server closes it instead of waiting for its end."""
    request.scope[EVENT_STREAM] = True
    return StreamingResponse(
        held(slots, keys, body),
        media_type="text/event-stream",
        headers={"cache-control": "no-store", "x-accel-buffering": "no"},
    )
