"""The one interface a channel implements so the dispatcher can send through it.

A channel type with no adapter (``WHATSAPP``, ``INSTAGRAM``, ``WEBCHAT`` for now) keeps its
outbound messages ``QUEUED``: the dispatcher never claims them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import httpx

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


class SendDeferred(Exception):
    """The platform could not take it now (429, 5xx, network): try again later."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class SendRejected(Exception):
    """The platform refused it for good: the message becomes ``FAILED`` with ``reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class ChannelAdapter(Protocol):
    async def send(
        self, client: httpx.AsyncClient, integration: Integration, outbound: Outbound
    ) -> str:
        """Sends and answers the channel's message id; raises ``SendDeferred`` or
        ``SendRejected``."""
        ...
