"""The tickets domain's subscribers to the lower domains' in-transaction hooks
(``officehub.kit.transaction_hooks``). ``install`` is called by
``officehub.hook_subscriptions.install`` only, before automation's."""

from __future__ import annotations

import re

from officehub.contacts import service as contacts
from officehub.contacts.hooks import ContactErasing, contact_erasing
from officehub.tickets import repository

ERASED_MARK = "[dado apagado]"
"""What stands where a ticket quoted an erased client."""

_SHORTEST = 4
"""A name shorter than this is not looked for: it would match inside ordinary words."""


async def scrub_erased_client_from_tickets(event: ContactErasing) -> None:
    """Erasure: a ticket stays the office's, but where its title or description quotes the
    client (their name, phone, WhatsApp number or email, any case) the words are replaced
    by ``ERASED_MARK``; the ticket's id joins the erasure's ``mentions``, so its events and
    deliveries, which carried the old text, are forgotten too."""
    session, office_id = event.session, event.office_id
    contact = await contacts.get_contact(session, office_id, event.contact_id)
    needles = {
        n.strip()
        for n in (contact.name, contact.phone, contact.whatsapp_id, contact.email)
        if n and len(n.strip()) >= _SHORTEST
    }
    if contact.phone and contact.phone.startswith("+"):
        needles.add(contact.phone[1:])
    if not needles:
        return
    pattern = re.compile(
        "|".join(re.escape(n) for n in sorted(needles, key=len, reverse=True)), re.I
    )
    for ticket in await repository.tickets_quoting(session, office_id, sorted(needles)):
        ticket.title = pattern.sub(ERASED_MARK, ticket.title)[:200]
        if ticket.description is not None:
            ticket.description = pattern.sub(ERASED_MARK, ticket.description)
        event.mentions.add(ticket.id)
    await session.flush()


def install() -> None:
    """Subscribes tickets to its hooks; calling it again changes nothing."""
    contact_erasing.subscribe(scrub_erased_client_from_tickets)
