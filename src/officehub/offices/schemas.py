from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints

from officehub.kit.schemas import ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp

Keyword = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=30)]
KeywordList = Annotated[list[Keyword], Field(min_length=1, max_length=20)]


class OfficeSettingsOut(ApiModel):
    opt_out_keywords: list[str] = Field(
        description="A client's message that is only one of these words (any case, any "
        "accents, spaces around) stops marketing messages to them"
    )
    opt_in_keywords: list[str] = Field(
        description="A client's message that is only one of these words resumes them"
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
