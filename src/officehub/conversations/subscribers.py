"""The conversations domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``).

The lower domains (inboxes, tags, contacts) never import conversations: they fire typed
hooks in their own transaction and conversations answers here. ``install`` is called by
``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from officehub.contacts.hooks import (
    ContactErasing,
    ContactLocking,
    ContactMerging,
    contact_erasing,
    contact_locking,
    contact_merging,
)
from officehub.contacts.visibility import ContactScoping, contact_scoping
from officehub.conversations import repository, service, sla, visibility
from officehub.conversations.schemas import ConversationPatch
from officehub.inboxes.hooks import (
    InboxDeleting,
    InboxRoutingChanged,
    IntegrationDeleting,
    inbox_deleting,
    inbox_routing_changed,
    integration_deleting,
)
from officehub.kit.errors import Conflict
from officehub.kit.storage.base import conversation_folders
from officehub.legal_areas.hooks import LegalAreaDeleting, legal_area_deleting
from officehub.sla.hooks import SlaPoliciesChanged, sla_policies_changed
from officehub.tags.hooks import TagDeleting, tag_deleting
from officehub.users.hooks import UserRoutingChanged, user_routing_changed


async def refuse_inbox_with_conversations(event: InboxDeleting) -> None:
    """Veto: an inbox where conversations live cannot be deleted (409 ``INBOX_IN_USE``)."""
    held = await repository.count_conversations(
        event.session, event.office_id, inbox_id=event.inbox_id
    )
    if held:
        raise Conflict(
            "Inbox in use",
            details=f"The inbox holds {held} conversation(s); it cannot be deleted",
            code="INBOX_IN_USE",
        )


async def refuse_channel_with_conversations(event: IntegrationDeleting) -> None:
    """Veto: a channel conversations run on cannot be deleted (409 ``INTEGRATION_IN_USE``)."""
    held = await repository.count_conversations(
        event.session, event.office_id, integration_id=event.integration_id
    )
    if held:
        raise Conflict(
            "Integration in use",
            details=f"The integration carries {held} conversation(s); it cannot be deleted",
            code="INTEGRATION_IN_USE",
        )


async def take_tag_off_conversations(event: TagDeleting) -> None:
    """Cascade: each conversation carrying the tag loses it, with its events."""
    await service.take_tag_off_all(event.session, event.office_id, event.tag_id)


async def conversations_follow_merge(event: ContactMerging) -> None:
    """Cascade: the other's open conversation on each channel where the kept contact has one
    open too is closed (the partial unique index allows one open per contact and channel;
    ``chat.conversation.updated``), then all its conversations become the kept contact's."""
    session, office_id = event.session, event.office_id
    open_here = {
        c.integration_id
        for c in await repository.open_conversations(session, office_id, event.kept_id)
    }
    for conversation in await repository.open_conversations(session, office_id, event.other_id):
        if conversation.integration_id in open_here:
            await service.update_conversation(
                session, office_id, conversation.id, ConversationPatch(status="CLOSED")
            )
    await repository.move_person(session, office_id, event.other_id, event.kept_id)


async def name_what_an_erasure_takes(event: ContactErasing) -> None:
    """Erasure: the person's conversations are named (the database cascade deletes them with
    their messages, notes, tags and flow sessions), and the folders of files stored under
    their conversations (``kit.storage.base.conversation_folders``). The stored files of
    their messages (inbound media) are named by messages (``officehub.messages.subscribers``)."""
    session, office_id = event.session, event.office_id
    conversation_ids = await repository.conversation_ids_of_person(
        session, office_id, event.contact_id
    )
    event.mentions.update(conversation_ids)
    for conversation_id in conversation_ids:  # template header media, whole folders
        event.files.update(conversation_folders(office_id, conversation_id))


async def route_for_user(event: UserRoutingChanged) -> None:
    """The user's availability, capacity, areas or inboxes changed: their routed inboxes'
    queues may now reach them."""
    inbox_ids = await repository.routed_inboxes_of(event.session, event.office_id, event.user_id)
    await service.route_queued(event.session, event.office_id, inbox_ids)


async def route_for_inbox(event: InboxRoutingChanged) -> None:
    """The inbox's policy changed: its queue is routed by the new one."""
    await service.route_queued(event.session, event.office_id, [event.inbox_id])


async def forget_deleted_legal_area(event: LegalAreaDeleting) -> None:
    """Cascade: the conversations about the deleted area are about none (no event: as a
    foreign key's ``SET NULL`` would)."""
    await repository.forget_legal_area(event.session, event.office_id, event.legal_area_id)


async def recompute_sla(event: SlaPoliciesChanged) -> None:
    """A policy of the inbox changed: each open conversation follows the policy that now
    applies, with due times from its kept anchors (no event)."""
    for conversation in await repository.open_in_inbox_for_change(
        event.session, event.office_id, event.inbox_id
    ):
        await sla.refresh(event.session, conversation)
    await event.session.flush()


async def scope_contacts(event: ContactScoping) -> None:
    """A SUPERVISOR or an AGENT sees a contact with a conversation they may see, and one
    with no conversation at all (contacts.visibility)."""
    seen = visibility.listed(event.actor)
    if seen is None:
        return
    own = repository.conversation_of_contact(event.office_id)
    event.clauses.append(own.where(seen))
    event.clauses.append(~own)


async def lock_conversations_of_contact(event: ContactLocking) -> None:
    """Before a contact that is about to go is locked, its conversations are (id order):
    conversations first, then their contact, as a client's message takes them."""
    await repository.lock_of_person(event.session, event.office_id, event.contact_id)


def install() -> None:
    """Subscribes conversations to its hooks; calling it again changes nothing."""
    inbox_deleting.subscribe(refuse_inbox_with_conversations)
    integration_deleting.subscribe(refuse_channel_with_conversations)
    tag_deleting.subscribe(take_tag_off_conversations)
    contact_merging.subscribe(conversations_follow_merge)
    contact_locking.subscribe(lock_conversations_of_contact)
    contact_erasing.subscribe(name_what_an_erasure_takes)
    user_routing_changed.subscribe(route_for_user)
    inbox_routing_changed.subscribe(route_for_inbox)
    legal_area_deleting.subscribe(forget_deleted_legal_area)
    sla_policies_changed.subscribe(recompute_sla)
    contact_scoping.subscribe(scope_contacts)
