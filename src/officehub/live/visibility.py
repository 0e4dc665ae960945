"""What an open stream may be sent: the one rule every event passes before it is queued
for a stream (live) or replayed to it (``Last-Event-ID``).

An API key and an ADMIN's session see every event of their office. A SUPERVISOR's or an
AGENT's session (issue 29) sees the events of the conversations it may see
(``conversations.visibility``: their inboxes; with ``onlyAssignedConversations`` assigned to
them or unassigned), as the conversation stands when the event is sent, and of the records
recorded with that conversation (messages, notes, tickets, cards). An event about no
conversation (``contact.*``, a card or a case without one, ``inbox.*``, ``user.*``...)
cannot be decided without reading its record: it is not sent to them (they reload).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from officehub.conversations.visibility import may_see_in, sees_everything
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
    inbox_id: str | None = None  # the conversation's, read with the event (None: none/gone)
    assigned_user_id: str | None = None


def visible(event: StreamEvent, actor: OfficeContext) -> bool:
    """Whether ``actor`` (the key or the session of the stream) may be sent ``event``.
    Never another office's; never an event addressed to one webhook (``webhook.test``)."""
    if event.office_id != actor.office_id or event.target_webhook_id is not None:
        return False
    who = actor.who
    if sees_everything(who):
        return True
    if event.conversation_id is None:
        return False
    return may_see_in(who, event.inbox_id, event.assigned_user_id)
