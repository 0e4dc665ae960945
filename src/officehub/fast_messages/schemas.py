from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import HTTP_URL_PATTERN, ApiModel, BodyModel, LongText, StrictBodyModel
from officehub.kit.timeutil import Timestamp

FastMessageKind = TypeAliasType("FastMessageKind", Literal["TEXT", "AUDIO", "SEQUENCE"])
BlockKind = TypeAliasType("BlockKind", Literal["TEXT", "IMAGE", "AUDIO", "VIDEO", "DOCUMENT"])
Url = Annotated[str, StringConstraints(max_length=2000, pattern=HTTP_URL_PATTERN)]
Text = Annotated[LongText, StringConstraints(min_length=1, max_length=4096)]


class Block(StrictBodyModel):
    """One message of a sequence: ``TEXT`` carries ``text``, the others ``mediaUrl``."""

    kind: BlockKind
    text: Text | None = None
    media_url: Url | None = None
    typing_seconds: float = Field(0, ge=0, le=60, description="Typing shown before sending")
    wait_seconds: float = Field(0, ge=0, le=3600, description="Pause after sending")


class FastMessageCreate(BodyModel):
    inbox_id: Id
    title: str = Field(min_length=1, max_length=200)
    kind: FastMessageKind
    text: Text | None = None
    audio_url: Url | None = None
    blocks: list[Block] | None = Field(None, min_length=1, max_length=20)


class FastMessageUpdate(BodyModel):
    title: str | None = Field(None, min_length=1, max_length=200)
    kind: FastMessageKind | None = None
    text: Text | None = None
    audio_url: Url | None = None
    blocks: list[Block] | None = Field(None, min_length=1, max_length=20)


class FastMessageOut(ApiModel):
    id: ServerId
    office_id: ServerId
    inbox_id: ServerId
    title: str
    kind: str
    text: str | None
    audio_url: str | None
    blocks: list[Block] | None
    created_at: Timestamp
    updated_at: Timestamp
