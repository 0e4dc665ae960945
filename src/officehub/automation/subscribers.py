"""The automation domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``).

``install`` is called by ``officehub.hook_subscriptions.install`` only, after the domains
that name what an erasure takes (conversations, crm, cases).
"""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.actions.catalogue import PauseRequested, pause_requested
from officehub.automation import repository
from officehub.automation.models import AutomationPause, AutomationRun, CardColumnEntry
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


async def keep_pause(event: PauseRequested) -> None:
    """``PAUSE_AUTOMATION`` (the actions' catalogue): the pause is automation's."""
    until = None if not event.minutes else event.now + timedelta(minutes=event.minutes)
    await repository.set_pause(
        event.session,
        AutomationPause(
            office_id=event.office_id,
            conversation_id=event.conversation_id,
            until=until,
            resume_on_template_sent=event.resume_on_template_sent,
            created_at=event.now,
        ),
    )


def install() -> None:
    """Subscribes automation to its hooks; calling it again changes nothing."""
    contact_erasing.subscribe(forget_runs_of_erased_contact)
    conversations_erasing.subscribe(forget_runs_of_erased_conversations)
    pause_requested.subscribe(keep_pause)
