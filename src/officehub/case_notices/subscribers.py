"""The case notices' subscribers to the lower domains' in-transaction hooks.

``install`` is called by ``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from officehub.case_notices import service
from officehub.cases.hooks import MovementsAnnounced, movements_announced
from officehub.contacts.hooks import ContactMerging, contact_merging


async def notices_for_movements(event: MovementsAnnounced) -> None:
    """A notice per new movement worth telling (``service.create_for_movements``)."""
    await service.create_for_movements(event)


async def notices_follow_merge(event: ContactMerging) -> None:
    """Cascade: the merged contact's notices become the kept contact's."""
    await service.follow_merge(event.session, event.office_id, event.kept_id, event.other_id)


def install() -> None:
    """Subscribes case notices to its hooks; calling it again changes nothing."""
    movements_announced.subscribe(notices_for_movements)
    contact_merging.subscribe(notices_follow_merge)
