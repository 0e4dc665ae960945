"""The channels domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``).

``install`` is called by ``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from sqlalchemy import update

from officehub.channels.models import ChannelPeer
from officehub.contacts.hooks import ContactMerging, contact_merging


async def peers_follow_merge(event: ContactMerging) -> None:
    """Cascade: the merged contact's channel peers become the kept contact's."""
    await event.session.execute(
        update(ChannelPeer)
        .where(ChannelPeer.office_id == event.office_id, ChannelPeer.contact_id == event.other_id)
        .values(contact_id=event.kept_id)
        .execution_options(synchronize_session=False)
    )


def install() -> None:
    """Subscribes channels to its hooks; calling it again changes nothing."""
    contact_merging.subscribe(peers_follow_merge)
