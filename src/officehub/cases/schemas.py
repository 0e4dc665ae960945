from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import ApiModel, BodyModel
from officehub.kit.timeutil import Timestamp

CaseNumberText = Annotated[str, StringConstraints(min_length=1, max_length=32)]

CaseCheckStatus = TypeAliasType("CaseCheckStatus", Literal["OK", "NOT_FOUND", "ERROR"])
MovementCategory = TypeAliasType(
    "MovementCategory",
    Literal["hearing", "decision", "deadline", "filing", "archive", "internal"],
)


class CaseCreate(BodyModel):
    number: CaseNumberText = Field(
        description="The unified case number: 20 digits or NNNNNNN-DD.AAAA.J.TR.OOOO"
    )
    person_id: Id
    conversation_id: Id | None = None
    legal_area_id: Id | None = None
    watch: bool = Field(True, description="Check the case on DataJud periodically")


class CaseUpdate(BodyModel):
    """``conversationId`` and ``legalAreaId`` null clear them; absent keys change nothing."""

    conversation_id: Id | None = None
    legal_area_id: Id | None = None
    watch: bool | None = None


class CaseOut(ApiModel):
    id: ServerId
    person_id: ServerId
    conversation_id: ServerId | None
    legal_area_id: ServerId | None
    number: str = Field(description="NNNNNNN-DD.AAAA.J.TR.OOOO")
    court: str = Field(description="The DataJud alias of the court (tjsp, trf1, trt2, …)")
    court_name: str
    watch: bool
    next_check_at: Timestamp | None
    last_checked_at: Timestamp | None
    last_movement_at: Timestamp | None
    check_status: CaseCheckStatus | None = Field(
        description="The last check: found on DataJud, not (yet) there, or failed"
    )
    source_stale_since: Timestamp | None = Field(
        description="When DataJud's silence on this case (every check failing for a day) made "
        "case.source.stale; null while it answers"
    )
    created_at: Timestamp
    updated_at: Timestamp


class CaseMovementOut(ApiModel):
    id: ServerId
    case_id: ServerId | None
    person_id: ServerId
    case_number: str
    code: int | None = Field(description="DataJud's movement code (TPU)")
    description: str
    explanation: str | None = Field(
        default=None,
        description="What happened, in plain Portuguese for the client (null: code not known)",
    )
    category: MovementCategory | None = Field(
        default=None, description="The movement's kind (null: code not known)"
    )
    occurred_at: Timestamp
    created_at: Timestamp
