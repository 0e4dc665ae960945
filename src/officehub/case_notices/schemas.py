from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.cases.schemas import MovementCategory
from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel, BodyModel, LongText
from officehub.kit.timeutil import Timestamp

NoticeStatus = TypeAliasType(
    "NoticeStatus", Literal["PENDING", "APPROVED", "SENT", "DISCARDED", "FAILED"]
)
NoticePolicy = TypeAliasType("NoticePolicy", Literal["ASK", "SEND", "NEVER"])
SentAs = TypeAliasType("SentAs", Literal["TEXT", "TEMPLATE"])
NoticeText = Annotated[LongText, StringConstraints(min_length=1, max_length=1024)]
"""At most 1024 characters: the text also fills a template's placeholder, whose limit
that is."""
ClockTime = Annotated[str, StringConstraints(pattern=r"^([01][0-9]|2[0-3]):[0-5][0-9]$")]
TellableCategory = Literal["hearing", "decision", "deadline", "filing", "archive"]


class CaseNoticeOut(ApiModel):
    id: ServerId
    case_id: ServerId
    movement_id: ServerId
    person_id: ServerId
    conversation_id: ServerId | None = Field(
        description="Where it is sent: the case's conversation, else the contact's latest"
    )
    case_number: str
    movement_description: str = Field(
        description="The movement's name on DataJud (with its tabled complements)"
    )
    category: MovementCategory
    explanation: str = Field(description="The movement explained (what the text began as)")
    text: str = Field(description="What the client is sent (the lawyer may edit it)")
    status: NoticeStatus
    send_after: Timestamp | None = Field(
        description="APPROVED: when it goes out (quiet hours put it off to the morning)"
    )
    sent_as: SentAs | None = Field(
        description="TEXT inside the client's 24-hour window, else the office's TEMPLATE"
    )
    message_id: ServerId | None
    message_status: str | None = Field(
        description="The sent message's delivery status (QUEUED, SENT, DELIVERED, READ, FAILED)"
    )
    error: str | None = Field(description="FAILED: why the notice could not be sent")
    occurred_at: Timestamp = Field(description="When the movement happened")
    approved_at: Timestamp | None
    sent_at: Timestamp | None
    created_at: Timestamp
    updated_at: Timestamp


class CaseNoticeUpdate(BodyModel):
    """``text``: what is sent inside the client's window; ``explanation``: what fills the
    template's explanation placeholder outside it. Absent keys change nothing."""

    SCHEMA_RULES: ClassVar[dict[str, Any]] = {"minProperties": 1}

    text: NoticeText | None = None
    explanation: Annotated[str, StringConstraints(min_length=1, max_length=1024)] | None = None


class CategoryPolicies(BodyModel):
    """Per movement category: ASK the lawyer first, SEND at once, or NEVER (internal moves
    are never told)."""

    hearing: NoticePolicy = "ASK"
    decision: NoticePolicy = "ASK"
    deadline: NoticePolicy = "ASK"
    filing: NoticePolicy = "ASK"
    archive: NoticePolicy = "ASK"


class QuietHours(BodyModel):
    """No notice goes out from ``from`` to ``until`` (office time; the span may cross
    midnight) nor, with ``sundays``, on a Sunday: it waits for the next allowed morning."""

    enabled: bool = True
    from_: ClockTime = Field("20:00", alias="from")
    until: ClockTime = "08:00"
    sundays: bool = True


class CaseNoticeSettingsIn(BodyModel):
    categories: CategoryPolicies = Field(default_factory=CategoryPolicies)
    template_name: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = Field(
        None,
        description="The approved UTILITY template sent outside the client's 24-hour window; "
        "its body placeholders are filled in order with the client's first name, the case "
        "number, the explanation and the movement's date (dd/mm/aaaa). Null: outside the "
        "window a notice cannot be sent",
    )
    template_language: Annotated[str, StringConstraints(min_length=2, max_length=16)] | None = None
    quiet_hours: QuietHours = Field(default_factory=QuietHours)
    time_zone: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = Field(
        None,
        description="IANA time zone of the quiet hours and the notices' dates; omitted or "
        "null: the office's (`GET|PATCH /office` `timeZone`) when saved",
    )


class CaseNoticeSettingsOut(ApiModel):
    categories: CategoryPolicies
    template_name: str | None
    template_language: str | None
    quiet_hours: QuietHours
    time_zone: str
    updated_at: Timestamp | None = Field(description="Null: the defaults, never changed")
