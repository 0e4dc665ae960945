from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, Field, StringConstraints, field_validator, model_validator
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.outbound.urls import check_url
from officehub.kit.schemas import HOST_URL_PATTERN, ApiModel, BodyModel, StrictBodyModel
from officehub.kit.timeutil import Timestamp

IntegrationType = TypeAliasType(
    "IntegrationType", Literal["WHATSAPP_OFFICIAL", "WHATSAPP", "INSTAGRAM", "WEBCHAT"]
)
WebchatAsk = TypeAliasType("WebchatAsk", Literal["PHONE", "EMAIL"])
AssignmentPolicy = TypeAliasType("AssignmentPolicy", Literal["MANUAL", "ROUND_ROBIN", "LEAST_BUSY"])
Name = Field(min_length=1, max_length=200)


class AssignmentIn(BodyModel):
    """How a new conversation of the inbox finds its person: ``MANUAL`` (it waits for
    someone to take it), ``ROUND_ROBIN`` (the inbox's users in turn) or ``LEAST_BUSY`` (the
    one with the fewest open conversations), among the inbox's active users who are ONLINE
    and under their capacity; ``byLegalArea``: only users of the conversation's legal area."""

    policy: AssignmentPolicy
    by_legal_area: bool = False


class AssignmentOut(ApiModel):
    policy: AssignmentPolicy
    by_legal_area: bool


class InboxCreate(BodyModel):
    name: str = Name
    assignment: AssignmentIn | None = None


class InboxUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    assignment: AssignmentIn | None = None

    NOT_NULL = frozenset({"assignment"})


class InboxOut(ApiModel):
    id: ServerId
    office_id: ServerId
    name: str
    assignment: AssignmentOut
    created_at: Timestamp
    updated_at: Timestamp


Setting = Annotated[str, StringConstraints(min_length=1, max_length=512)]
PlatformId = Annotated[str, StringConstraints(pattern=r"^[0-9]{1,32}$")]


class WhatsAppSettingsIn(BodyModel):
    """The official channel's settings; ``accessToken`` and ``appSecret`` are write-only."""

    phone_number_id: PlatformId
    business_account_id: PlatformId
    access_token: Setting
    app_secret: Setting
    verify_token: Setting


class WhatsAppSettingsOut(ApiModel):
    """What an answer shows of the settings: the ids, and whether each secret is set."""

    phone_number_id: str
    business_account_id: str
    access_token_set: bool
    app_secret_set: bool
    verify_token_set: bool


def public_settings(stored: dict[str, Any] | None) -> WhatsAppSettingsOut | None:
    if not stored:
        return None
    return WhatsAppSettingsOut(
        phone_number_id=stored.get("phoneNumberId", ""),
        business_account_id=stored.get("businessAccountId", ""),
        access_token_set=bool(stored.get("accessToken")),
        app_secret_set=bool(stored.get("appSecret")),
        verify_token_set=bool(stored.get("verifyToken")),
    )


_LOOPBACK = ("localhost", "127.0.0.1", "[::1]")
_ORIGIN = re.compile(r"^(https?)://([A-Za-z0-9.-]{1,253}|\[::1\])(?::([0-9]{1,5}))?$")


def _origin(value: str) -> str:
    """``https://host[:port]`` (``http://`` only for localhost, for development), lower-cased,
    without a default port: exactly what a browser sends in ``Origin``."""
    found = _ORIGIN.match(value)
    if found is None:
        raise ValueError("an origin is https://host[:port], without path, query or slash")
    scheme, host, port = found.group(1), found.group(2).lower(), found.group(3)
    if scheme == "http" and host not in _LOOPBACK:
        raise ValueError("an origin must be https (http only for localhost)")
    if port is not None and not 1 <= int(port) <= 65535:
        raise ValueError("the port must be between 1 and 65535")
    default = "443" if scheme == "https" else "80"
    return f"{scheme}://{host}" + (f":{int(port)}" if port and port != default else "")


Origin = Annotated[str, StringConstraints(max_length=300), AfterValidator(_origin)]


class WebchatVerificationIn(BodyModel):
    """How a visitor's claimed phone is verified: a one-time code sent through this
    WhatsApp channel, as this template."""

    integration_id: Id | None = Field(
        None,
        description="The WHATSAPP_OFFICIAL channel that sends the code (default: the office's "
        "only one)",
    )
    template_name: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = Field(
        None,
        description="An APPROVED authentication template of that channel, its code as the "
        "body's {{1}} (and its copy-code button's); none: a free-form text, which the "
        "platform delivers only to a number that wrote in the last 24 hours",
    )
    language: Annotated[str, StringConstraints(min_length=2, max_length=16)] | None = Field(
        None, description="The template's language, when it is approved in several"
    )


class WebchatSettingsIn(BodyModel):
    """A web chat's settings: the sites that may embed it, what a visitor is asked first,
    the greeting shown in the widget, and how a claimed phone is verified."""

    allowed_origins: list[Origin] = Field(min_length=1, max_length=50)
    ask: WebchatAsk = Field("PHONE", description="Name and phone (PHONE) or name and email (EMAIL)")
    greeting: str = Field("Olá! Como podemos ajudar?", min_length=1, max_length=500)
    verification: WebchatVerificationIn | None = None


class WebchatVerificationOut(ApiModel):
    integration_id: ServerId | None = None
    template_name: str | None = None
    language: str | None = None


class WebchatSettingsOut(ApiModel):
    allowed_origins: list[str]
    ask: str
    greeting: str
    verification: WebchatVerificationOut | None = None


def _bridge_url(value: str) -> str:
    check_url(value)
    return value


class BridgeSettingsIn(BodyModel):
    """A bridged channel's gateway: where outbound messages are posted, and the secret both
    directions are signed with (write-only)."""

    bridge_url: Annotated[
        str,
        StringConstraints(max_length=2048),
        AfterValidator(_bridge_url),
        Field(json_schema_extra={"pattern": HOST_URL_PATTERN}),
    ]
    secret: Annotated[str, StringConstraints(min_length=16, max_length=256)]


class BridgeSettingsOut(ApiModel):
    bridge_url: str
    secret_set: bool


def public_bridge(stored: dict[str, Any] | None) -> BridgeSettingsOut | None:
    if not stored:
        return None
    return BridgeSettingsOut(
        bridge_url=stored.get("bridgeUrl", ""), secret_set=bool(stored.get("secret"))
    )


class IntegrationCreate(BodyModel):
    inbox_id: Id
    type: IntegrationType
    name: str = Name
    device_id: str | None = Field(
        None, min_length=1, max_length=200, description="Required for WHATSAPP_OFFICIAL"
    )
    whatsapp: WhatsAppSettingsIn | None = Field(None, description="WHATSAPP_OFFICIAL only")
    webchat: WebchatSettingsIn | None = Field(None, description="WEBCHAT only")
    bridge: BridgeSettingsIn | None = Field(None, description="WHATSAPP and INSTAGRAM only")


class IntegrationUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    device_id: str | None = Field(None, min_length=1, max_length=200)
    whatsapp: WhatsAppSettingsIn | None = Field(
        None, description="WHATSAPP_OFFICIAL only; replaces the stored settings"
    )
    webchat: WebchatSettingsIn | None = Field(
        None, description="WEBCHAT only; replaces the stored settings"
    )
    bridge: BridgeSettingsIn | None = Field(
        None, description="WHATSAPP and INSTAGRAM only; replaces the stored settings"
    )


class IntegrationOut(ApiModel):
    id: ServerId
    office_id: ServerId
    inbox_id: ServerId
    type: str
    name: str
    device_id: str | None
    whatsapp: WhatsAppSettingsOut | None = None
    webchat: WebchatSettingsOut | None = None
    bridge: BridgeSettingsOut | None = None
    created_at: Timestamp
    updated_at: Timestamp

    @field_validator("whatsapp", mode="before")
    @classmethod
    def _hide_secrets(cls, value: Any) -> Any:
        if isinstance(value, dict) and "accessToken" in value:
            return public_settings(value)
        return value

    @field_validator("bridge", mode="before")
    @classmethod
    def _hide_bridge_secret(cls, value: Any) -> Any:
        if isinstance(value, dict) and "secret" in value:
            return public_bridge(value)
        return value


# Business hours (issue 32): officehub.inboxes.business_hours reads them.

OpenTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]
CloseTime = Annotated[str, StringConstraints(pattern=r"^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$")]


class OpenRange(StrictBodyModel):
    """One open range of a weekday, in the inbox's time zone; ``close`` may be ``24:00``."""

    day: int = Field(ge=0, le=6, description="0 = Monday … 6 = Sunday")
    open: OpenTime
    close: CloseTime


class AwayMessage(StrictBodyModel):
    """Exactly one of ``text``, ``fastMessageId`` (a TEXT fast message of the office) or
    ``templateName`` (an APPROVED WhatsApp template with no placeholder and no media header;
    ``language`` picks one when it is approved in several)."""

    text: str | None = Field(None, min_length=1, max_length=4096)
    fast_message_id: Id | None = None
    template_name: str | None = Field(None, min_length=1, max_length=512)
    language: str | None = Field(
        None, min_length=2, max_length=15, description="With templateName only"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> AwayMessage:
        given = [v for v in (self.text, self.fast_message_id, self.template_name) if v is not None]
        if len(given) != 1:
            raise ValueError("exactly one of text, fastMessageId or templateName")
        if self.language is not None and self.template_name is None:
            raise ValueError("language goes with templateName only")
        return self


class AwayMessageOut(ApiModel):
    """The away message as set: one of ``text``, ``fastMessageId``, ``templateName`` (with
    its ``language``); the others null."""

    text: str | None = None
    fast_message_id: ServerId | None = None
    template_name: str | None = None
    language: str | None = None


def _zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError("not an IANA time zone") from exc
    return value


class BusinessHoursIn(StrictBodyModel):
    """The whole setting (PUT replaces it). Closed: outside the week's ranges, on
    ``closedDates`` and on Brazil's national public holidays unless in ``openDates``."""

    timezone: Annotated[str, StringConstraints(min_length=1, max_length=64)] = Field(
        description="An IANA time zone name, e.g. America/Sao_Paulo"
    )
    week: list[OpenRange] = Field(max_length=70)
    closed_dates: list[date] = Field(default_factory=list, max_length=366)
    open_dates: list[date] = Field(
        default_factory=list,
        max_length=366,
        description="National holidays the inbox opens on (its weekday's ranges apply)",
    )
    away_message: AwayMessage | None = Field(
        None, description="Sent once per conversation per closed period; null: none"
    )

    _check_zone = field_validator("timezone")(_zone)


class BusinessHoursOut(ApiModel):
    timezone: str
    week: list[OpenRange]
    closed_dates: list[date]
    open_dates: list[date]
    away_message: AwayMessageOut | None
    updated_at: Timestamp
