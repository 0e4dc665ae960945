"""What a bridged channel's verified inbound message does: under a lock on the
integration's row, the sender's contact is found (known peer, else by phone on WhatsApp)
or created, the peer recorded for replies, and the message stored once per gateway id in
the contact's open conversation (``chat.message.received``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels import repository
from officehub.channels.bridge import external_id
from officehub.channels.bridge_schemas import BridgeMessage
from officehub.contacts import service as contacts
from officehub.contacts.normalize import digits
from officehub.conversations import service as conversations
from officehub.conversations.schemas import ConversationIn
from officehub.inboxes import service as inboxes
from officehub.messages import inbound as inbound_messages

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration


async def receive(session: AsyncSession, integration: Integration, message: BridgeMessage) -> int:
    office_id = integration.office_id
    await inboxes.lock_integration(session, office_id, integration.id)
    stored_id = external_id(integration.id, message.id)
    if await inbound_messages.external_id_known(session, office_id, stored_id):
        return 0
    contact_id = await _contact(session, integration, message)
    opened, _ = await conversations.open_conversation(
        session,
        office_id,
        ConversationIn(
            person_id=contact_id, inbox_id=integration.inbox_id, integration_id=integration.id
        ),
    )
    conversation = await conversations.get_conversation(session, office_id, opened.id)
    text = message.text.replace("\x00", "\ufffd") if message.text else None
    out = await inbound_messages.receive_from_channel(
        session,
        conversation,
        external_id=stored_id,
        type="MEDIA" if message.media_url else "TEXT",
        text=text,
        media_url=message.media_url,
    )
    return 0 if out is None else 1


async def _contact(session: AsyncSession, integration: Integration, message: BridgeMessage) -> str:
    """The contact behind the sender: known peer, else (WhatsApp) the contact with that
    phone, else a new contact; the peer is recorded for replies."""
    office_id = integration.office_id
    known = await repository.peer_contact(session, office_id, integration.id, message.sender)
    if known is not None:
        return known
    if integration.type == "WHATSAPP" and 8 <= len(digits(message.sender)) <= 15:
        contact = await contacts.find_or_create_by_phone(
            session, office_id, message.sender, message.name, integration.inbox_id
        )
    else:
        contact = await contacts.create_channel_contact(
            session, office_id, message.name, integration.inbox_id, fallback_name=message.sender
        )
    await repository.add_peer(session, office_id, integration.id, contact.id, message.sender)
    return contact.id
