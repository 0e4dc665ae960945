"""The inboxes domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class InboxDeleting:
    """The inbox is locked; a subscriber may veto by raising (the conversations domain
    refuses while conversations live in it, crm while its funnels hold cards)."""

    session: AsyncSession
    office_id: str
    inbox_id: str


inbox_deleting: Hook[InboxDeleting] = Hook("inbox.deleting", required=True)


@dataclass(frozen=True)
class IntegrationDeleting:
    """The channel (integration) is locked; a subscriber may veto by raising (the
    conversations domain refuses while conversations run on it)."""

    session: AsyncSession
    office_id: str
    integration_id: str


integration_deleting: Hook[IntegrationDeleting] = Hook("integration.deleting", required=True)


@dataclass(frozen=True)
class InboxRoutingChanged:
    """Fired when the inbox's assignment settings changed: the conversations waiting in it
    may now be assigned. The office's routing lock is held (``kit.repository.lock_office``)."""

    session: AsyncSession
    office_id: str
    inbox_id: str


inbox_routing_changed: Hook[InboxRoutingChanged] = Hook("inbox.routing_changed", required=True)


@dataclass(frozen=True)
class AwayMessageChecking:
    """An inbox's away message names a fast message or a template (records of upper
    domains): a subscriber refuses with a 400 naming the field when it is not one the
    office can send. The inbox is locked."""

    session: AsyncSession
    office_id: str
    inbox_id: str
    fast_message_id: str | None
    template_name: str | None
    language: str | None


away_message_checking: Hook[AwayMessageChecking] = Hook(
    "inbox.away_message_checking", required=True
)
