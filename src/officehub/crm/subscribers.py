"""The crm domain's subscribers to the lower domains' hooks (``officehub.kit.transaction_hooks``).

The lower domains (inboxes, contacts, conversations) never import crm: they fire typed hooks
in their own transaction and crm answers here. ``install`` is called by
``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from officehub.contacts.hooks import (
    ContactDeleting,
    ContactErasing,
    ContactMerging,
    contact_deleting,
    contact_erasing,
    contact_merging,
)
from officehub.conversations.hooks import ConversationTagsChanged, conversation_tags_changed
from officehub.crm import service
from officehub.inboxes.hooks import InboxDeleting, inbox_deleting
from officehub.kit.errors import Conflict


async def refuse_inbox_with_cards(event: InboxDeleting) -> None:
    """Veto: an inbox whose funnels hold cards cannot be deleted (409 ``INBOX_IN_USE``)."""
    if await service.inbox_has_cards(event.session, event.office_id, event.inbox_id):
        raise Conflict(
            "Inbox in use",
            details="A funnel of the inbox holds CRM cards; move or delete them first",
            code="INBOX_IN_USE",
        )


async def delete_cards_of_contact(event: ContactDeleting) -> None:
    """Cascade: a contact's cards go with it, each with its ``crm.lead.deleted``."""
    await service.delete_cards_of_contact(event.session, event.office_id, event.contact_id)


async def name_cards_of_erased_contact(event: ContactErasing) -> None:
    """Erasure: the person's cards are named (``contact_deleting`` then deletes them), so the
    events and deliveries that carry them are forgotten too."""
    event.mentions.update(
        await service.card_ids_of_person(event.session, event.office_id, event.contact_id)
    )


async def move_cards_of_merged_contact(event: ContactMerging) -> None:
    """Cascade: a merged contact's cards move to the contact it was merged into."""
    await service.cards_follow_merge(event.session, event.office_id, event.kept_id, event.other_id)


async def card_tags_follow_conversation(event: ConversationTagsChanged) -> None:
    """Cascade: a conversation's tag change is its cards' (``crm.lead.updated``)."""
    await service.conversation_tags_changed(event.session, event.office_id, event.conversation_id)


def install() -> None:
    """Subscribes crm to its hooks; calling it again changes nothing."""
    inbox_deleting.subscribe(refuse_inbox_with_cards)
    contact_deleting.subscribe(delete_cards_of_contact)
    contact_merging.subscribe(move_cards_of_merged_contact)
    contact_erasing.subscribe(name_cards_of_erased_contact)
    conversation_tags_changed.subscribe(card_tags_follow_conversation)
