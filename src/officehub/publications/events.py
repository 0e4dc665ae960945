"""The publications' event: a new court publication of the office."""

from __future__ import annotations

from officehub.events.catalogue import declare
from officehub.publications.schemas import PublicationOut

PUBLICATION_CREATED = declare("case.publication.created", PublicationOut)
