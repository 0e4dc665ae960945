from __future__ import annotations

from typing import Annotated, Literal

from pydantic import StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel, BodyModel, StrictBodyModel
from officehub.kit.timeutil import Timestamp

LinkSource = TypeAliasType("LinkSource", Literal["MANUAL", "BUTTON", "CRM", "backfill"])


class Partner(StrictBodyModel):
    """The contact's record in the partner system, kept as given; ``id`` is the partner
    system's own (any 1 to 128 characters), not one of ours."""

    id: Annotated[str, StringConstraints(min_length=1, max_length=128)]
    name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    document: Annotated[str, StringConstraints(max_length=64)] | None = None
    phone: Annotated[str, StringConstraints(max_length=32)] | None = None


class LinkIn(BodyModel):
    partner: Partner
    source: LinkSource = "MANUAL"


class LinkOut(ApiModel):
    """The partner link record; all but ``linked`` are null for a contact never linked."""

    linked: bool
    link_id: ServerId | None
    partner: Partner | None
    linked_at: Timestamp | None
    source: LinkSource | None
