"""A web chat visitor verifies the phone they claimed by a one-time code (issue 27).

The visitor asks in the widget (``POST /webchat/{id}/verification``): six random digits are
sent to the claimed phone through the office's official WhatsApp channel (the one the chat's
``verification`` setting names, else the office's only one), as the office's approved
authentication template when it set one, else as a free-form text
(``contacts.texts.CODE_MESSAGE``). Only an HMAC of the code (under the service's signing key)
is stored; it is valid ten minutes, takes five wrong tries and is used once. The visitor
types it in the widget (``POST /webchat/{id}/verification/confirm``): the contact becomes
verified, merged into the contact that holds the phone when there is one (``merge``), else
with the claim as its own phone (``verify_contact``).

Limits, held by the database: the contact's row lock serialises one visitor's requests, the
sending channel's row lock every request of that channel (so the count per phone cannot be
raced); a new code at most once a minute and three an hour per contact, five an hour per
phone (whichever contacts claim it). A code is never logged, stored in clear, nor answered.
The platform is called outside any transaction (on SQLite the write lock is not held while
it answers); a code the platform did not take is expired at once and still counts.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

import httpx
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.adapter import SendDeferred, SendRejected
from officehub.channels.whatsapp import WhatsAppAdapter
from officehub.contacts import merge
from officehub.contacts import service as contacts
from officehub.contacts.normalize import digits
from officehub.contacts.texts import CODE_MESSAGE
from officehub.inboxes import service as inboxes
from officehub.kit.errors import BadGateway, Conflict, RateLimited, ValidationFailed
from officehub.kit.ids import new_id
from officehub.kit.pagination import PageParams
from officehub.kit.storage import signing_secret
from officehub.kit.timeutil import utcnow
from officehub.templates import service as templates
from officehub.webchat import repository
from officehub.webchat.models import ClaimCode, WebchatVisitor

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

logger = logging.getLogger("officehub.webchat")

OFFICIAL = "WHATSAPP_OFFICIAL"
CODE_MINUTES = 10
CODE_TTL = timedelta(minutes=CODE_MINUTES)
MAX_ATTEMPTS = 5
RESEND_AFTER = timedelta(seconds=60)
WINDOW = timedelta(hours=1)
CODES_PER_CONTACT = 3
CODES_PER_PHONE = 5
COPY_CODE_BUTTONS = ("OTP", "COPY_CODE", "URL")


@dataclass(frozen=True)
class CodeSent:
    phone_ending: str
    expires_at: datetime


@asynccontextmanager
async def writing(state: Any) -> AsyncIterator[AsyncSession]:
    """A write transaction of its own, committed when the block ends (on SQLite it takes
    the write lock first, as a request's does)."""
    async with state.sessionmaker() as session:
        if session.get_bind().dialect.name == "sqlite":
            await session.execute(text("BEGIN IMMEDIATE"))
        yield session
        await session.commit()


def _hash(secret: bytes, code_id: str, code: str) -> str:
    return hmac.new(secret, f"claim-code:{code_id}:{code}".encode(), hashlib.sha256).hexdigest()


def _unavailable(details: str) -> Conflict:
    return Conflict(
        "Verification by code is not available", details=details, code="VERIFICATION_UNAVAILABLE"
    )


def _ending(phone: str) -> str:
    return digits(phone)[-4:]


async def request_code(state: Any, webchat: Integration, visitor: WebchatVisitor) -> CodeSent:
    """Sends a new code to the visitor's claimed phone (see the module)."""
    settings = state.settings
    secret = signing_secret(settings)
    code = f"{secrets.randbelow(10**6):06d}"
    office_id = webchat.office_id
    async with writing(state) as session:
        contact = await contacts.lock_contact(session, office_id, visitor.contact_id)
        if contact.verified:
            raise Conflict(
                "Already verified",
                details="The visitor's contact is verified: there is nothing to confirm",
                code="ALREADY_VERIFIED",
            )
        phone = contact.claimed_phone
        if phone is None:
            raise _unavailable(
                "This chat asked for an email, and the service has no email channel to send a "
                "code through: an operator verifies it (POST /people/{id}/verify)"
            )
        sender = await _sender(session, webchat)
        await inboxes.lock_integration(session, office_id, sender.id)
        now = utcnow()
        await _check_limits(session, office_id, contact.id, phone, now)
        holder = await contacts.phone_holder(session, office_id, phone, other_than=contact.id)
        to = (holder.whatsapp_id if holder is not None else None) or digits(phone)
        body = await _message(session, webchat, sender, to, code)
        await repository.expire_codes(session, office_id, contact.id, now)
        row = ClaimCode(
            id=new_id(),
            office_id=office_id,
            contact_id=contact.id,
            phone=phone,
            attempts=0,
            expires_at=now + CODE_TTL,
            created_at=now,
        )
        row.code_hash = _hash(secret, row.id, code)
        session.add(row)
        await session.flush()
        sent = CodeSent(_ending(phone), row.expires_at)
        row_id, contact_id = row.id, contact.id
    try:
        async with httpx.AsyncClient(
            timeout=settings.whatsapp_timeout_seconds, trust_env=False
        ) as client:
            await WhatsAppAdapter(settings.whatsapp_api_url).send_body(client, sender, body)
    except (SendDeferred, SendRejected) as exc:
        async with writing(state) as session:
            await repository.expire_codes(session, office_id, contact_id, utcnow())
        logger.warning("a one-time code for contact %s was not sent: %s", contact_id, exc.reason)
        raise BadGateway(details=f"WhatsApp did not take the code: {exc.reason}") from exc
    logger.info("one-time code %s sent for contact %s", row_id, contact_id)
    return sent


async def _sender(session: AsyncSession, webchat: Integration) -> Integration:
    """The official channel the chat's codes go through."""
    wanted = ((webchat.webchat or {}).get("verification") or {}).get("integrationId")
    if wanted:
        found = await inboxes.get_integration(session, webchat.office_id, wanted)
        if found.type != OFFICIAL or not found.whatsapp:
            raise _unavailable(f"Channel {wanted} is not a configured WHATSAPP_OFFICIAL channel")
        return found
    rows, total = await inboxes.list_integrations(
        session, webchat.office_id, PageParams(page=1, limit=2), type=OFFICIAL
    )
    if total != 1 or not rows[0].whatsapp:
        raise _unavailable(
            "The office has no configured WHATSAPP_OFFICIAL channel"
            if total == 0
            else "The office has several WhatsApp channels: name the one that sends codes in "
            "the chat's webchat.verification.integrationId"
        )
    return rows[0]


async def _message(
    session: AsyncSession, webchat: Integration, sender: Integration, to: str, code: str
) -> dict[str, Any]:
    """The Cloud API message carrying the code: the authentication template (body ``{{1}}``
    and its copy-code button), else a free-form text."""
    base: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": to,
    }
    chosen = (webchat.webchat or {}).get("verification") or {}
    name = chosen.get("templateName")
    if not name:
        body = CODE_MESSAGE.format(code=code, title=webchat.name, minutes=CODE_MINUTES)
        return {**base, "type": "text", "text": {"body": body, "preview_url": False}}
    template = await templates.approved_template(
        session, webchat.office_id, sender.id, name, chosen.get("language")
    )
    components: list[dict[str, Any]] = [
        {"type": "body", "parameters": [{"type": "text", "text": code}]}
    ]
    if _has_code_button(template.components):
        components.append(
            {
                "type": "button",
                "sub_type": "url",
                "index": "0",
                "parameters": [{"type": "text", "text": code}],
            }
        )
    return {
        **base,
        "type": "template",
        "template": {
            "name": template.name,
            "language": {"code": template.language},
            "components": components,
        },
    }


def _has_code_button(components: list[Any]) -> bool:
    for component in components:
        if isinstance(component, dict) and str(component.get("type", "")).upper() == "BUTTONS":
            buttons = component.get("buttons") or []
            first = buttons[0] if buttons and isinstance(buttons[0], dict) else {}
            return str(first.get("type", "")).upper() in COPY_CODE_BUTTONS
    return False


async def _check_limits(
    session: AsyncSession, office_id: str, contact_id: str, phone: str, now: datetime
) -> None:
    since = now - WINDOW
    mine = await repository.code_times(session, office_id, since, contact_id=contact_id)
    if mine and now - max(mine) < RESEND_AFTER:
        _too_many(max(mine) + RESEND_AFTER - now, "a new code at most once a minute")
    if len(mine) >= CODES_PER_CONTACT:
        _too_many(min(mine) + WINDOW - now, f"at most {CODES_PER_CONTACT} codes an hour")
    to_phone = await repository.code_times(session, office_id, since, phone=phone)
    if len(to_phone) >= CODES_PER_PHONE:
        _too_many(
            min(to_phone) + WINDOW - now, f"at most {CODES_PER_PHONE} codes an hour to one phone"
        )


def _too_many(wait: timedelta, rule: str) -> None:
    seconds = max(1, int(wait.total_seconds()) + 1)
    raise RateLimited(
        details=f"Too many codes: {rule}; try again in {seconds} s",
        headers={"retry-after": str(seconds)},
    )


async def confirm_code(state: Any, visitor: WebchatVisitor, code: str) -> None:
    """The visitor typed ``code``: the right one verifies the contact (once); a wrong one
    counts a try (kept: committed before the 400)."""
    secret = signing_secret(state.settings)
    office_id = visitor.office_id
    async with writing(state) as session:
        current = await repository.visitor_by_id(session, visitor.id)
        contact_id = current.contact_id if current is not None else visitor.contact_id
        row = await repository.latest_code(session, office_id, contact_id)
        if row is None:
            if (await contacts.get_contact(session, office_id, contact_id)).verified:
                raise _spent("CODE_USED", "The contact is verified already")
            raise _spent("NO_CODE_REQUESTED", "No code was sent: ask for one first")
        now = utcnow()
        _refuse_spent(row, now)
        if hmac.compare_digest(row.code_hash, _hash(secret, row.id, code)):
            if not await repository.use_code(session, row.id, now, MAX_ATTEMPTS):
                await _refuse_changed(session, office_id, row.id, now)
            await _verify(session, office_id, contact_id)
            return
        if not await repository.count_wrong_try(session, row.id, now, MAX_ATTEMPTS):
            await _refuse_changed(session, office_id, row.id, now)
        left = MAX_ATTEMPTS - row.attempts - 1
    raise ValidationFailed.field(
        "body.code",
        "not the code sent"
        + (f"; {left} attempt(s) left" if left > 0 else "; no attempt left, ask for a new code"),
        code="WRONG_CODE",
    )


def _spent(code: str, details: str) -> Conflict:
    return Conflict("The code cannot be used", details=details, code=code)


def _refuse_spent(row: ClaimCode, now: datetime) -> None:
    if row.used_at is not None:
        raise _spent("CODE_USED", "This code was used already")
    if row.attempts >= MAX_ATTEMPTS:
        raise _spent(
            "CODE_ATTEMPTS_EXHAUSTED",
            f"{MAX_ATTEMPTS} wrong tries: this code no longer works, ask for a new one",
        )
    if row.expires_at <= now:
        raise _spent("CODE_EXPIRED", "This code expired (or a newer one was sent): ask again")


async def _refuse_changed(
    session: AsyncSession, office_id: str, code_id: str, now: datetime
) -> None:
    """A concurrent confirmation changed (or, merging, deleted) the code first."""
    fresh = await repository.code_by_id(session, office_id, code_id)
    if fresh is not None:
        _refuse_spent(fresh, now)
    raise _spent("CODE_USED", "This code was used already")


async def _verify(session: AsyncSession, office_id: str, contact_id: str) -> None:
    """The claim is proven: merged into the contact holding the phone (the client), else
    the claimed phone becomes the contact's own."""
    contact = await contacts.get_contact(session, office_id, contact_id)
    if contact.verified or contact.claimed_phone is None:
        return
    holder = await contacts.phone_holder(
        session, office_id, contact.claimed_phone, other_than=contact.id
    )
    if holder is not None:
        await merge.merge_contacts(session, office_id, holder.id, contact.id)
    else:
        await contacts.verify_contact(session, office_id, contact.id)


async def state_of(session: AsyncSession, visitor: WebchatVisitor) -> tuple[bool, str | None]:
    """Whether the visitor's contact is verified, and the end of the claimed phone."""
    contact = await contacts.get_contact(session, visitor.office_id, visitor.contact_id)
    claimed = contact.claimed_phone or (contact.phone if contact.verified else None)
    return contact.verified, (_ending(claimed) if claimed else None)
