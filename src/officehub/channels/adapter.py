"""The one interface a channel implements so the dispatcher can send through it.

``WHATSAPP_OFFICIAL`` sends to the Cloud API, ``WEBCHAT`` stores for the visitor's stream,
``WHATSAPP`` and ``INSTAGRAM`` post to their gateway (``bridge.py``) once a ``bridgeUrl``
is set: until then their outbound messages stay ``QUEUED`` (never claimed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import httpx

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration


@dataclass(frozen=True)
class Outbound:
    """What a send needs: the message and where it goes."""

    message_id: str
    type: str
    text: str | None
    template_name: str | None
    media_url: str | None
    payload: dict[str, Any]
    to_phone: str
    header_media_link: str | None = None
    # A bridged channel's id of the contact (the gateway's sender id), when known.
    to_peer: str | None = None
    # The platform's id of the media (or template header media) uploaded for this send:
    # sent as ``{"id": …}`` instead of a link.
    media_id: str | None = None
    # The official channel's business-scoped user id of the contact (BSUID): where a send
    # goes (``recipient``) when the contact has no phone.
    to_user_id: str | None = None


class SendDeferred(Exception):
    """The platform could not take it now (429, 5xx, network): try again later."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class SendRejected(Exception):
    """The platform refused it for good: the message becomes ``FAILED`` with ``reason``
    (``code``: the platform's error code, when it gave one)."""

    def __init__(self, reason: str, code: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.code = code


class ChannelAdapter(Protocol):
    async def send(
        self, client: httpx.AsyncClient, integration: Integration, outbound: Outbound
    ) -> str:
        """Sends and answers the channel's message id; raises ``SendDeferred`` or
        ``SendRejected``."""
        ...
