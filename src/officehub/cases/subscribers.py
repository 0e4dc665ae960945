"""The cases domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``).

``install`` is called by ``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from sqlalchemy import select, update

from officehub.cases.models import Case, CaseMovement
from officehub.contacts.hooks import (
    ContactErasing,
    ContactMerging,
    contact_erasing,
    contact_merging,
)


async def cases_follow_merge(event: ContactMerging) -> None:
    """Cascade: the cases (and case movements) of the merged contact become the kept contact's."""
    await event.session.execute(
        update(Case)
        .where(Case.office_id == event.office_id, Case.person_id == event.other_id)
        .values(person_id=event.kept_id)
        .execution_options(synchronize_session=False)
    )
    await event.session.execute(
        update(CaseMovement)
        .where(CaseMovement.office_id == event.office_id, CaseMovement.person_id == event.other_id)
        .values(person_id=event.kept_id)
        .execution_options(synchronize_session=False)
    )


async def name_cases_of_erased_contact(event: ContactErasing) -> None:
    """Erasure: the person's cases are named (the database cascade deletes them with their
    movements), so the events and deliveries that carry them are forgotten too."""
    event.mentions.update(
        await event.session.scalars(
            select(Case.id).where(
                Case.office_id == event.office_id, Case.person_id == event.contact_id
            )
        )
    )


def install() -> None:
    """Subscribes cases to its hooks; calling it again changes nothing."""
    contact_merging.subscribe(cases_follow_merge)
    contact_erasing.subscribe(name_cases_of_erased_contact)
