"""What an open stream may be sent: the one rule every event passes before it is queued
for a stream (live) or replayed to it (``Last-Event-ID``).

An API key sees every event of its office. Sessions and roles (issue 29) narrow it here:
an agent's events of their inboxes, of conversations assigned to them or unassigned...
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from officehub.kit.auth import OfficeContext


@dataclass(frozen=True)
class StreamEvent:
    """A recorded event as the streams read it; ``frame`` is its server-sent event, made
    once for every stream it goes to."""

    id: str
    office_id: str
    name: str
    created_at: datetime
    conversation_id: str | None
    integration_id: str | None
    target_webhook_id: str | None
    frame: str


def visible(event: StreamEvent, actor: OfficeContext) -> bool:
    """Whether ``actor`` (the key, later the session, of the stream) may be sent ``event``.
    Never another office's; never an event addressed to one webhook (``webhook.test``)."""
    return event.office_id == actor.office_id and event.target_webhook_id is None
