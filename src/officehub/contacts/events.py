"""The contact.* events: created and updated carry the contact as the API returns it;
deleted carries ids only (``ContactDeletedPayload``)."""

from __future__ import annotations

from officehub.contacts.schemas import ContactDeletedPayload, ContactOut
from officehub.events.catalogue import declare

CREATED = declare("contact.created", ContactOut)
UPDATED = declare("contact.updated", ContactOut)
DELETED = declare("contact.deleted", ContactDeletedPayload)
