from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from officehub.kit.schemas import ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp

Keyword = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=30)]
KeywordList = Annotated[list[Keyword], Field(min_length=1, max_length=20)]
Days = Annotated[int, Field(ge=1, le=3650)]
ZoneName = Annotated[str, StringConstraints(min_length=1, max_length=64)]


class RetentionDays(ApiModel):
    closed_conversations: int | None = Field(
        description="Closed conversations (messages, notes, files) are erased this many days "
        "after closing, unless the client is under legal hold; null: kept"
    )
    webhook_deliveries: int | None = Field(
        description="Webhook delivery logs are deleted this many days after the event; null: "
        "kept for the service's own period"
    )


class RetentionDaysPatch(BodyModel):
    """Only the fields sent change; ``null`` turns a period off."""

    closed_conversations: Days | None = Field(
        default=None, description="1 to 3650 days after closing; null: off"
    )
    webhook_deliveries: Days | None = Field(default=None, description="1 to 3650 days; null: off")


class OfficeSettingsOut(ApiModel):
    opt_out_keywords: list[str] = Field(
        description="A client's message that is only one of these words (any case, any "
        "accents, spaces around) stops marketing messages to them"
    )
    opt_in_keywords: list[str] = Field(
        description="A client's message that is only one of these words resumes them"
    )
    retention_days: RetentionDays = Field(
        description="How long the office keeps what it no longer needs"
    )
    time_zone: str = Field(
        description="The office's IANA time zone: dates shown to its people and clients "
        "(default America/Sao_Paulo)"
    )
    updated_at: Timestamp | None = Field(description="Null while every setting is the default")


class OfficeSettingsPatch(BodyModel):
    """Only the fields sent change; ``null`` puts a setting back to its default."""

    opt_out_keywords: KeywordList | None = Field(
        default=None, description="Replaces the defaults SAIR, PARAR, STOP; null: the defaults"
    )
    opt_in_keywords: KeywordList | None = Field(
        default=None, description="Replaces the default VOLTAR; null: the default"
    )
    retention_days: RetentionDaysPatch | None = Field(
        default=None, description="The periods sent change; null turns both off"
    )
    time_zone: ZoneName | None = Field(
        default=None,
        description="An IANA time zone (America/Manaus); null: the default America/Sao_Paulo",
    )
