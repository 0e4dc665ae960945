"""Request and response bodies of the CRM (camelCase on the wire)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import (
    HEX_COLOR_PATTERN,
    WEB_URL_PATTERN,
    ApiModel,
    BodyModel,
    LongText,
    non_blank_schema,
)
from officehub.kit.timeutil import Timestamp, written_timestamps

ColumnKind = TypeAliasType("ColumnKind", Literal["NORMAL", "WON", "LOST"])
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    non_blank_schema(200),
]
Color = Annotated[str, StringConstraints(pattern=HEX_COLOR_PATTERN)]
Text = Annotated[str, StringConstraints(max_length=2000)]
WebUrl = Annotated[str, StringConstraints(max_length=2000, pattern=WEB_URL_PATTERN)]
"""An http(s) URL: a ``javascript:`` or ``data:`` link is refused (the console links it)."""
LongTextField = Annotated[LongText, StringConstraints(max_length=2000)]
TimeLimitDays = Annotated[int, Field(ge=1, le=3650)]
ColumnIndex = Annotated[int, Field(ge=0, le=1000)]


class CardConfigItem(BodyModel):
    id: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    visible: bool


CardConfig = Annotated[list[CardConfigItem], Field(max_length=50)]


class CustomField(BodyModel):
    id: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    name: Annotated[str, StringConstraints(max_length=200)]
    type: Annotated[str, StringConstraints(max_length=50)]
    value: LongTextField = ""
    options: LongTextField = ""


CustomFields = Annotated[list[CustomField], Field(max_length=100)]


class LeadOrigin(BodyModel):
    source: Text | None = None
    campaign_name: Text | None = None
    ad_content: LongTextField | None = None
    thumbnail_url: WebUrl | None = None
    ad_url: WebUrl | None = None
    conversion_message: LongTextField | None = None
    message_at: Timestamp | None = None


# Funnels and columns


class ColumnIn(BodyModel):
    name: Name
    color: Color = "#9E9E9E"
    kind: ColumnKind = "NORMAL"
    time_limit_days: TimeLimitDays | None = None
    show_badge_progress: bool = False


class FunnelCreate(BodyModel):
    name: Name
    inbox_id: Id
    card_config: CardConfig | None = None
    columns: Annotated[list[ColumnIn], Field(max_length=50, default_factory=list)]


class FunnelUpdate(BodyModel):
    NOT_NULL = frozenset({"name"})

    name: Name | None = None
    card_config: CardConfig | None = None


class ColumnCreate(ColumnIn):
    funnel_id: Id
    index: ColumnIndex | None = None


class ColumnUpdate(BodyModel):
    NOT_NULL = frozenset({"name", "color", "kind", "show_badge_progress", "index"})

    name: Name | None = None
    color: Color | None = None
    index: ColumnIndex | None = None
    kind: ColumnKind | None = None
    time_limit_days: TimeLimitDays | None = None
    show_badge_progress: bool | None = None


class ColumnOut(ApiModel):
    id: ServerId
    funnel_id: ServerId
    name: str
    color: str
    index: int
    kind: ColumnKind
    time_limit_days: int | None
    show_badge_progress: bool
    created_at: Timestamp
    updated_at: Timestamp


class FunnelOut(ApiModel):
    id: ServerId
    name: str
    card_config: list[CardConfigItem] | None
    inbox_id: ServerId
    created_at: Timestamp
    updated_at: Timestamp
    columns: list[ColumnOut]


# The board


class ItemPerson(ApiModel):
    id: ServerId
    created_at: Timestamp
    updated_at: Timestamp
    name: str
    email: str | None
    phone: str | None


class FunnelItem(ApiModel):
    id: ServerId
    channel: str | None
    funnel_id: ServerId
    column_id: ServerId
    person: ItemPerson
    custom_fields: list[CustomField]
    created_at: Timestamp
    updated_at: Timestamp
    user_id: ServerId | None


class BoardColumn(ColumnOut):
    items: list[FunnelItem]
    total: int
    page: int
    has_more: bool


class FunnelBoard(ApiModel):
    id: ServerId
    name: str
    card_config: list[CardConfigItem] | None
    inbox_id: ServerId
    created_at: Timestamp
    updated_at: Timestamp
    columns: list[BoardColumn]


# Cards


class CardCreate(BodyModel):
    column_id: Id
    person_id: Id
    conversation_id: Id | None = None
    user_id: Id | None = None
    legal_area_id: Id | None = None
    custom_fields: Annotated[list[CustomField], Field(max_length=100, default_factory=list)]
    lead_origin: LeadOrigin | None = None


class CardUpdate(BodyModel):
    """Partial: only the fields sent change; ``null`` clears a nullable one."""

    NOT_NULL = frozenset({"column_id"})

    column_id: Id | None = None
    user_id: Id | None = None
    legal_area_id: Id | None = None
    custom_fields: CustomFields | None = None
    lead_origin: LeadOrigin | None = None


class CardDelete(BodyModel):
    ids: Annotated[list[Annotated[str, StringConstraints(max_length=64)]], Field(max_length=500)]


class CardUser(ApiModel):
    id: ServerId
    name: str
    image_url: str | None
    role: str
    email: str
    document: str | None


class CardPerson(ApiModel):
    id: ServerId
    name: str
    email: str | None
    phone: str | None
    image_url: str | None
    created_at: Timestamp
    updated_at: Timestamp


class CardTag(ApiModel):
    id: ServerId
    name: str
    color: str


class CardLegalArea(ApiModel):
    id: ServerId
    name: str
    color: str


class LeadOriginOut(ApiModel):
    source: str | None
    campaign_name: str | None
    ad_content: str | None
    thumbnail_url: str | None
    ad_url: str | None
    conversion_message: str | None
    message_at: Timestamp | None


class CardDetail(ApiModel):
    """Exactly the spec's CRM card table; ``person`` is the linked contact."""

    id: ServerId
    column_changed_at: Timestamp
    show_badge_progress: bool
    time_limit_days: int | None
    channel: str | None
    column_id: ServerId
    funnel_id: ServerId
    conversation_id: ServerId | None
    lead_origin: LeadOriginOut | None
    user: CardUser | None
    person: CardPerson
    custom_fields: list[CustomField]
    tags: list[CardTag]
    legal_area: CardLegalArea | None
    created_at: Timestamp
    updated_at: Timestamp


FunnelBoardWritten = written_timestamps(FunnelBoard)
"""``FunnelBoard`` with its timestamps already written (``kit.timeutil.written_timestamps``):
what ``GET /funnel/{id}`` writes its answer with; the document shows ``FunnelBoard``."""
