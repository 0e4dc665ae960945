from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints, field_validator

from officehub.params import Id
from officehub.schemas import ApiModel, BodyModel
from officehub.timeutil import Timestamp

IntegrationType = Literal["WHATSAPP_OFFICIAL", "WHATSAPP", "INSTAGRAM", "WEBCHAT"]
Name = Field(min_length=1, max_length=200)


class InboxCreate(BodyModel):
    name: str = Name


class InboxUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)


class InboxOut(ApiModel):
    id: str
    office_id: str
    name: str
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


class IntegrationCreate(BodyModel):
    inbox_id: Id
    type: IntegrationType
    name: str = Name
    device_id: str | None = Field(
        None, min_length=1, max_length=200, description="Required for WHATSAPP_OFFICIAL"
    )
    whatsapp: WhatsAppSettingsIn | None = Field(None, description="WHATSAPP_OFFICIAL only")


class IntegrationUpdate(BodyModel):
    name: str | None = Field(None, min_length=1, max_length=200)
    device_id: str | None = Field(None, min_length=1, max_length=200)
    whatsapp: WhatsAppSettingsIn | None = Field(
        None, description="WHATSAPP_OFFICIAL only; replaces the stored settings"
    )


class IntegrationOut(ApiModel):
    id: str
    office_id: str
    inbox_id: str
    type: str
    name: str
    device_id: str | None
    whatsapp: WhatsAppSettingsOut | None = None
    created_at: Timestamp
    updated_at: Timestamp

    @field_validator("whatsapp", mode="before")
    @classmethod
    def _hide_secrets(cls, value: Any) -> Any:
        if isinstance(value, dict) and "accessToken" in value:
            return public_settings(value)
        return value
