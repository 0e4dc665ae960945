"""The contact.* events: each carries the contact as the API returns it."""

from __future__ import annotations

from officehub.contacts.schemas import ContactOut
from officehub.events.catalogue import declare

CREATED = declare("contact.created", ContactOut)
UPDATED = declare("contact.updated", ContactOut)
DELETED = declare("contact.deleted", ContactOut)
