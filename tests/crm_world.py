"""A small CRM world for one office: inbox, channel, contact, conversation, funnel, owner."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.crm.models import Funnel, FunnelColumn
from officehub.inboxes.models import Inbox, Integration
from officehub.tags.models import Tag
from officehub.users.models import User
from tests import factories as f


@dataclass
class World:
    inbox: Inbox
    integration: Integration
    contact: Contact
    conversation: Conversation
    tag: Tag
    user: User
    funnel: Funnel
    columns: list[FunnelColumn]


async def make_world(session: AsyncSession, office_id: str, columns: int = 3) -> World:
    inbox = await f.make_inbox(session, office_id)
    integration = await f.make_integration(session, office_id, inbox.id)
    contact = await f.make_contact(session, office_id)
    tag = await f.make_tag(session, office_id, inbox.id)
    conversation = await f.make_conversation(
        session, office_id, contact.id, integration, tags=[tag]
    )
    user = await f.make_user(session, office_id)
    funnel, made = await f.make_funnel(session, office_id, inbox.id, columns)
    await session.commit()
    return World(inbox, integration, contact, conversation, tag, user, funnel, made)
