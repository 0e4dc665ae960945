"""The webchat domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``).

``install`` is called by ``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from sqlalchemy import update

from officehub.contacts.hooks import ContactMerging, contact_merging
from officehub.webchat.models import WebchatVisitor


async def visitors_follow_merge(event: ContactMerging) -> None:
    """Cascade: the merged contact's web-chat visitors become the kept contact's."""
    await event.session.execute(
        update(WebchatVisitor)
        .where(
            WebchatVisitor.office_id == event.office_id, WebchatVisitor.contact_id == event.other_id
        )
        .values(contact_id=event.kept_id)
        .execution_options(synchronize_session=False)
    )


def install() -> None:
    """Subscribes webchat to its hooks; calling it again changes nothing."""
    contact_merging.subscribe(visitors_follow_merge)
