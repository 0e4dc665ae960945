from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, Field, StringConstraints, field_validator
from typing_extensions import TypeAliasType

from officehub.events.catalogue import EVENT_NAMES, EventName
from officehub.kit.id_params import Id, ServerId
from officehub.kit.logs import redacted_urls
from officehub.kit.outbound.urls import check_url
from officehub.kit.schemas import HOST_URL_PATTERN, ApiModel, BodyModel, IsoDateTime, LongText
from officehub.kit.timeutil import Timestamp


def _sendable_url(value: str) -> str:
    check_url(value)
    return value


def _catalogue_names(values: list[str]) -> list[str]:
    unknown = [v for v in values if v not in EVENT_NAMES]
    if unknown:
        raise ValueError(f"unknown event(s) {', '.join(unknown)}; see GET /webhooks/events")
    return list(dict.fromkeys(values))


Name = Annotated[str, StringConstraints(min_length=1, max_length=100)]
Description = Annotated[LongText, StringConstraints(max_length=500)]
Secret = Annotated[str, StringConstraints(min_length=8, max_length=256)]
Url = Annotated[
    str,
    StringConstraints(max_length=2048),
    AfterValidator(_sendable_url),
    Field(json_schema_extra={"pattern": HOST_URL_PATTERN}),
]
Events = Annotated[list[EventName], Field(min_length=1), AfterValidator(_catalogue_names)]
RateLimit = Annotated[
    int,
    Field(
        ge=1,
        le=1000,
        description="At most this many deliveries begin per second, across every worker; "
        "those beyond wait their turn (never dropped). null: no pace",
    ),
]
Headers = dict[str, str]
"""Checked by ``officehub.kit.outbound.urls.check_headers`` (400 naming the header)."""
DeliveryStatus = TypeAliasType(
    "DeliveryStatus", Literal["PENDING", "SUCCESS", "FAILED", "RETRYING"]
)


class WebhookCreate(BodyModel):
    name: Name
    url: Url
    events: Events
    description: Description | None = None
    secret: Secret | None = None
    is_active: bool = True
    headers: Headers | None = None
    rate_limit_per_second: RateLimit | None = None


class WebhookUpdate(BodyModel):
    """Partial: only the fields sent change (``model_fields_set``)."""

    NOT_NULL = frozenset({"name", "url", "secret", "events", "is_active"})

    name: Name | None = None
    description: Description | None = None
    url: Url | None = None
    secret: Secret | None = None
    events: Events | None = None
    is_active: bool | None = None
    headers: Headers | None = None
    rate_limit_per_second: RateLimit | None = None


class WebhookStats(ApiModel):
    total_deliveries: int
    success_count: int
    failed_count: int
    success_rate: float = Field(description="successCount / (successCount + failedCount), 0..1")


class WebhookOut(ApiModel):
    """The webhook without its secret (list, update, delete)."""

    id: ServerId
    office_id: ServerId
    name: str
    description: str | None
    url: str
    events: list[str]
    is_active: bool
    headers: dict[str, str] | None
    rate_limit_per_second: int | None
    disabled_reason: str | None
    created_at: Timestamp
    updated_at: Timestamp


class WebhookWithSecret(WebhookOut):
    """The single read: the only place the secret is shown."""

    secret: str


class WebhookListItem(WebhookOut):
    stats: WebhookStats


class WebhookList(ApiModel):
    data: list[WebhookListItem]
    total_results: int
    total_pages: int


class DeliveryAttemptOut(ApiModel):
    number: int
    status_code: int | None
    response_body: str | None
    error_message: str | None
    duration_ms: int
    created_at: Timestamp


class DeliveryOut(ApiModel):
    id: ServerId
    webhook_id: ServerId
    event: str
    status: DeliveryStatus
    status_code: int | None
    payload: dict[str, Any]
    response_body: str | None
    error_message: str | None
    duration_ms: int | None
    attempt_count: int
    next_retry_at: Timestamp | None
    created_at: Timestamp
    expires_at: Timestamp


class DeliveryDetail(DeliveryOut):
    attempts: list[DeliveryAttemptOut]


class DeliveryList(ApiModel):
    data: list[DeliveryOut]
    total: int
    page: int
    limit: int
    total_pages: int


class ActionAttemptOut(ApiModel):
    number: int
    status_code: int | None
    error_message: str | None
    duration_ms: int
    response_body: str | None = Field(description="The first 1,000 characters of the answer")
    created_at: str = Field(json_schema_extra={"format": "date-time"})  # stored as the text


class ActionDeliveryOut(ApiModel):
    """A ``FIRE_WEBHOOK`` call of a rule or a flow step: its last attempt's outcome and
    every attempt.
    The action's ``secret`` and ``headers`` are never shown, nor the URL's userinfo or query
    string (``kit.logs.redacted_urls``: a URL may carry a credential)."""

    id: ServerId
    rule_id: ServerId | None
    flow_id: ServerId | None
    event_id: ServerId | None
    event: str
    url: str
    method: str
    status: DeliveryStatus
    status_code: int | None
    response_body: str | None = Field(description="The first 10,000 characters of the answer")
    error_message: str | None
    duration_ms: int | None
    attempt_count: int
    next_retry_at: Timestamp | None
    attempts: list[ActionAttemptOut]
    created_at: Timestamp
    expires_at: Timestamp

    @field_validator("url")
    @classmethod
    def _without_credentials(cls, value: str) -> str:
        return redacted_urls(value)


class RecoverIn(BodyModel):
    since: IsoDateTime = Field(description="Deliveries made at or after this time")
    until: IsoDateTime | None = Field(
        None, description="Deliveries made before this time; null or absent: now"
    )


class RecoverOut(ApiModel):
    queued: int = Field(description="How many failed deliveries were queued to be sent again")


class ReplayIn(BodyModel):
    event_id: Id = Field(description="The event to send again (the body's id, webhook-id)")
