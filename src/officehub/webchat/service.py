"""The visitor side of a web chat: start, send, history and what the live stream reads.

A visitor is authenticated by a random token (``secrets.token_urlsafe(32)``) handed out
once by ``start``; only its SHA-256 is stored. Starting finds or creates the contact (by
phone or email, as the integration asks) and opens a conversation of the integration's
inbox; what the visitor writes is stored exactly like a channel's inbound message
(``chat.message.received``), so flows and automation react to it.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import service as contacts
from officehub.contacts.normalize import digits, to_e164
from officehub.conversations import service as conversations
from officehub.conversations.schemas import ConversationIn
from officehub.inboxes import service as inboxes
from officehub.kit.errors import NotFound, Unauthorized, ValidationFailed
from officehub.kit.timeutil import utcnow
from officehub.messages import inbound as inbound_messages
from officehub.messages import statuses as message_statuses
from officehub.webchat import repository
from officehub.webchat.models import WebchatVisitor
from officehub.webchat.schemas import StartIn, StartOut, VisitorMessage

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration
    from officehub.messages.models import Message

WEBCHAT = "WEBCHAT"
TOKEN_HEADER = "x-visitor-token"  # noqa: S105 (a header name)
VISIBLE_OUTBOUND = ("SENT", "DELIVERED", "READ")
HISTORY_LIMIT = 200


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _not_found(ident: str) -> NotFound:
    return NotFound(
        "Web chat not found", details=f"No configured WEBCHAT integration with id {ident}"
    )


async def integration_for(session: AsyncSession, ident: str) -> Integration:
    """The configured WEBCHAT integration ``ident`` (any office: the id names it)."""
    found = await inboxes.get_typed_by_id(session, ident, (WEBCHAT,))
    if found is None or not found.webchat:
        raise _not_found(ident)
    return found


def settings_of(integration: Integration) -> dict[str, Any]:
    return dict(integration.webchat or {})


async def start(session: AsyncSession, integration: Integration, body: StartIn) -> StartOut:
    """A visitor, their contact and their conversation.

    What a visitor types is a claim, not a proof: every start makes an unverified contact
    of the visitor's own (``contact.created``) holding the phone or email as a claim
    (``claimedPhone``/``claimedEmail``), never as its phone or email; it is linked to no
    other contact and blocks none, so nobody reads or writes into another person's
    conversation, nor becomes the office's client, by typing their number. An operator
    verifies the claim (``POST /people/{id}/verify``) or merges the visitor.
    """
    ask = settings_of(integration).get("ask", "PHONE")
    office_id = integration.office_id
    if ask == "PHONE":
        if body.phone is None:
            raise ValidationFailed.field("body.phone", "this chat asks for a phone number")
        phone = to_e164(body.phone)
        if phone is None or len(digits(phone)) < 10:
            raise ValidationFailed.field("body.phone", "not a valid phone number")
        claimed = phone
    else:
        if body.email is None:
            raise ValidationFailed.field("body.email", "this chat asks for an email address")
        claimed = body.email
    contact = await contacts.create_claimant(
        session,
        office_id,
        body.name,
        integration.inbox_id,
        claimed_phone=claimed if ask == "PHONE" else None,
        claimed_email=claimed if ask != "PHONE" else None,
    )
    conversation, _created = await conversations.open_conversation(
        session,
        office_id,
        ConversationIn(
            person_id=contact.id, inbox_id=integration.inbox_id, integration_id=integration.id
        ),
    )
    token = secrets.token_urlsafe(32)
    visitor = WebchatVisitor(
        office_id=office_id,
        integration_id=integration.id,
        contact_id=contact.id,
        conversation_id=conversation.id,
        token_hash=hash_token(token),
    )
    session.add(visitor)
    await session.flush()
    return StartOut(token=token, visitor_id=visitor.id, conversation_id=conversation.id)


async def authenticate(
    session: AsyncSession, integration: Integration, token: str | None
) -> WebchatVisitor:
    """The visitor of ``token`` among the integration's office's: 401 without one or for one
    the office does not know, 404 when it is another of the office's chats'."""
    if not token or len(token) > 128:
        raise Unauthorized(details="Send the visitor token from start in X-Visitor-Token")
    visitor = await repository.visitor_by_token(session, integration.office_id, hash_token(token))
    if visitor is None:
        raise Unauthorized(details="The visitor token is unknown")
    if visitor.integration_id != integration.id:
        raise NotFound("Visitor not found", details="The token is not one of this chat")
    return visitor


async def send(
    session: AsyncSession,
    integration: Integration,
    visitor: WebchatVisitor,
    text: str,
    client_id: str | None,
) -> VisitorMessage:
    """Stores what the visitor wrote as an inbound message of the visitor's conversation
    (reopened as a new one when the office closed it); a retried ``client_id`` is stored
    once."""
    office_id = integration.office_id
    # Reopening is serialised by ``open_conversation`` (it locks the contact's row).
    conversation = await conversations.get_conversation(session, office_id, visitor.conversation_id)
    if conversation.status != "OPEN":
        opened, _ = await conversations.open_conversation(
            session,
            office_id,
            ConversationIn(
                person_id=visitor.contact_id,
                inbox_id=integration.inbox_id,
                integration_id=integration.id,
            ),
        )
        visitor.conversation_id = opened.id
        conversation = await conversations.get_conversation(session, office_id, opened.id)
    external = f"webchat:{visitor.id}:{client_id or secrets.token_hex(12)}"
    stored = await inbound_messages.receive_from_channel(
        session, conversation, external_id=external, type="TEXT", text=text
    )
    visitor.last_seen_at = utcnow()
    if stored is not None:
        return VisitorMessage.model_validate(stored)
    again = await repository.message_by_external_id(session, office_id, external)
    return VisitorMessage.model_validate(again)


async def history(session: AsyncSession, visitor: WebchatVisitor) -> list[Message]:
    """The visitor's conversation since the visitor started (a second visitor giving the
    same phone or email does not read what was said before), the latest 200, oldest first;
    outbound messages once the dispatcher released them."""
    return await repository.visible_messages(session, visitor, VISIBLE_OUTBOUND, HISTORY_LIMIT)


async def changes(
    session: AsyncSession, visitor: WebchatVisitor, since: datetime, pending: set[str]
) -> list[Message]:
    """What the stream has not shown yet: messages created from ``since`` on, and those
    among ``pending`` (outbound ones that were still queued)."""
    return await repository.messages_since(session, visitor, since, pending, HISTORY_LIMIT)


async def mark_delivered(session: AsyncSession, office_id: str, shown_ids: list[str]) -> None:
    """Outbound messages the visitor was shown become DELIVERED (forward only)."""
    for message in await repository.messages_by_id(session, office_id, shown_ids):
        if message.direction == "OUTBOUND" and message.status == "SENT" and message.external_id:
            await message_statuses.apply_channel_status(
                session, office_id, message.external_id, "DELIVERED", None
            )


async def visitor_by_id(session: AsyncSession, visitor_id: str) -> WebchatVisitor | None:
    return await repository.visitor_by_id(session, visitor_id)
