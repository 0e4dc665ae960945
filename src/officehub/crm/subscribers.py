"""The crm domain's subscribers to the lower domains' hooks (``officehub.hooks``).

The lower domains (inboxes, contacts, conversations) never import crm: they fire typed hooks
in their own transaction and crm answers here. ``install`` is called by
``officehub.wiring.install`` only.
"""

from __future__ import annotations

from officehub.contacts.hooks import ContactDeleting, contact_deleting
from officehub.conversations.hooks import ConversationTagsChanged, conversation_tags_changed
from officehub.crm import service
from officehub.errors import Conflict
from officehub.inboxes.hooks import InboxDeleting, inbox_deleting


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


async def card_tags_follow_conversation(event: ConversationTagsChanged) -> None:
    """Cascade: a conversation's tag change is its cards' (``crm.lead.updated``)."""
    await service.conversation_tags_changed(event.session, event.office_id, event.conversation_id)


def install() -> None:
    """Subscribes crm to its hooks; calling it again changes nothing."""
    inbox_deleting.subscribe(refuse_inbox_with_cards)
    contact_deleting.subscribe(delete_cards_of_contact)
    conversation_tags_changed.subscribe(card_tags_follow_conversation)
