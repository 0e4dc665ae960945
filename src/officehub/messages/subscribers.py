"""The messages domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``).

``install`` is called by ``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from officehub.inboxes.hooks import away_message_checking
from officehub.messages.service import check_away_message


def install() -> None:
    """Subscribes messages to its hooks; calling it again changes nothing."""
    away_message_checking.subscribe(check_away_message)
