"""The automation domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``).

``install`` is called by ``officehub.hook_subscriptions.install`` only, after the domains
that name what an erasure takes (conversations, crm, cases).
"""

from __future__ import annotations

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.models import AutomationRun, CardColumnEntry
from officehub.contacts.hooks import ContactErasing, contact_erasing
from officehub.conversations.hooks import ConversationsErasing, conversations_erasing
from officehub.events.service import events_mentioning
from officehub.kit.repository import batches


async def forget_runs_of_erased_contact(event: ContactErasing) -> None:
    """Erasure: the rule runs of the person's conversations, or of events naming any record
    of theirs, are deleted (a run keeps what its actions did, which may quote the client),
    and so are the column entries of their cards."""
    await forget_runs_naming(event.session, event.office_id, sorted(event.mentions))


async def forget_runs_of_erased_conversations(event: ConversationsErasing) -> None:
    """Retention: the rule runs of the erased conversations, or of events naming them."""
    await forget_runs_naming(
        event.session, event.office_id, sorted({*event.conversation_ids, *event.mentions})
    )


async def forget_runs_naming(session: AsyncSession, office_id: str, mentions: list[str]) -> None:
    for chunk in batches(mentions, 500):
        await session.execute(
            delete(AutomationRun).where(
                AutomationRun.office_id == office_id, AutomationRun.conversation_id.in_(chunk)
            )
        )
        await session.execute(
            delete(CardColumnEntry).where(
                CardColumnEntry.office_id == office_id, CardColumnEntry.card_id.in_(chunk)
            )
        )
    for chunk in batches(await events_mentioning(session, office_id, mentions), 500):
        await session.execute(
            delete(AutomationRun).where(
                AutomationRun.office_id == office_id, AutomationRun.event_id.in_(chunk)
            )
        )


def install() -> None:
    """Subscribes automation to its hooks; calling it again changes nothing."""
    contact_erasing.subscribe(forget_runs_of_erased_contact)
    conversations_erasing.subscribe(forget_runs_of_erased_conversations)
