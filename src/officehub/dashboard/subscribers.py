"""The dashboard's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``); ``install`` is called by
``officehub.hook_subscriptions.install`` only."""

from __future__ import annotations

from officehub.contacts.hooks import ContactErasing, contact_erasing
from officehub.dashboard import service


async def forget_cached_clients_map(event: ContactErasing) -> None:
    """Erasure: the office's cached clients map (which counted the client) is dropped."""
    service.forget_cached(event.office_id)


def install() -> None:
    """Subscribes the dashboard to its hooks; calling it again changes nothing."""
    contact_erasing.subscribe(forget_cached_clients_map)
