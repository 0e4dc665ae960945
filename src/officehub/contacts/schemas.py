from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import ServerId
from officehub.kit.schemas import EMAIL_PATTERN, ApiModel, BodyModel, LongText, non_blank_schema
from officehub.kit.timeutil import Timestamp

Email = Annotated[str, StringConstraints(max_length=320, pattern=EMAIL_PATTERN)]
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    non_blank_schema(200),
]
TagIds = Annotated[list[Annotated[str, StringConstraints(max_length=32)]], Field(max_length=50)]


class TagRef(ApiModel):
    id: ServerId
    name: str
    color: str


class ContactIn(BodyModel):
    name: Name
    phone: Annotated[str, StringConstraints(max_length=32)] | None = None
    email: Email | None = None
    document: Annotated[str, StringConstraints(max_length=64)] | None = None
    description: Annotated[LongText, StringConstraints(max_length=5000)] | None = None
    inbox_id: Annotated[str, StringConstraints(max_length=32)] | None = None
    is_blocked: bool = False
    tags: TagIds = Field(default_factory=list, description="Tag ids")


class ContactPatch(BodyModel):
    """Only the fields sent change; ``tags`` replaces the contact's tags."""

    NOT_NULL = frozenset({"name", "is_blocked", "tags"})

    name: Name | None = None
    phone: Annotated[str, StringConstraints(max_length=32)] | None = None
    email: Email | None = None
    document: Annotated[str, StringConstraints(max_length=64)] | None = None
    description: Annotated[LongText, StringConstraints(max_length=5000)] | None = None
    inbox_id: Annotated[str, StringConstraints(max_length=32)] | None = None
    is_blocked: bool | None = None
    tags: TagIds | None = Field(default=None, description="Tag ids")


class ContactOut(ApiModel):
    id: ServerId
    name: str
    phone: str | None = Field(
        description="E.164; a Brazilian mobile always with its ninth digit (the same person "
        "with or without it)"
    )
    whatsapp_id: str | None = Field(
        description="The id the WhatsApp platform knows the contact by (digits; a Brazilian "
        "mobile may lack its ninth digit there): where WhatsApp sends go. Set by the channel"
    )
    whatsapp_user_id: str | None = Field(
        default=None,
        description="The client's business-scoped WhatsApp user id (BSUID, e.g. "
        "`BR.1502576394655843`): their WhatsApp identity in the office (unique), known even "
        "when the platform withholds the phone of a user with a username; sends to a contact "
        "without a phone go to it. Set by the channel",
    )
    username: str | None = Field(
        default=None,
        description="The username the client chose on WhatsApp, as the platform last gave it "
        "(it may change; never an identity). Found by the people search",
    )
    email: str | None
    document: str | None
    description: str | None
    inbox_id: ServerId | None
    is_blocked: bool
    image_url: str | None
    marketing_opt_out: bool = Field(
        default=False,
        description="The client withdrew marketing consent (an opt-out keyword, WhatsApp's "
        "marketing preference or a consent record): marketing templates to them are refused "
        "(409 CONTACT_OPTED_OUT). Follows the latest `marketing` consent "
        "record (GET /people/{id}/consents)",
    )
    verified: bool = Field(
        description="False for a contact a web chat visitor made: its claims are unchecked"
    )
    claimed_phone: str | None = Field(
        description="The phone a web chat visitor typed (a claim, not the contact's phone)"
    )
    claimed_email: str | None = Field(
        description="The email a web chat visitor typed (a claim, not the contact's email)"
    )
    legal_hold: bool = Field(
        default=False,
        description="Set by an admin (PUT /people/{id}/legal-hold): the contact's data must be "
        "kept, so it can be neither erased nor deleted (409 LEGAL_HOLD); export still works",
    )
    legal_hold_reason: str | None = Field(default=None, description="Why the data is held")
    tags: list[TagRef]
    created_at: Timestamp
    updated_at: Timestamp


class MergeIn(BodyModel):
    other_id: Annotated[str, StringConstraints(min_length=1, max_length=32)] = Field(
        description="The contact merged into the one in the path, then deleted"
    )


class LegalHoldIn(BodyModel):
    legal_hold: bool = Field(description="True holds the contact's data; false releases it")
    legal_hold_reason: Annotated[str, StringConstraints(min_length=1, max_length=500)] | None = (
        Field(
            default=None,
            description="Why the data is held (a case, a court order); required when holding, "
            "dropped when releasing",
        )
    )


class ContactDeletedPayload(ApiModel):
    """``contact.deleted``: ids only, so no personal datum outlives the contact in the outbox
    or a webhook delivery."""

    id: ServerId
    erased: bool = Field(
        description="Erased at the client's request (POST /people/{id}/erase): a receiver "
        "should forget everything it holds of this contact"
    )
    merged_into_id: ServerId | None = Field(
        description="The contact it was merged into (POST /people/{id}/merge), else null"
    )


class ContactErasedOut(ApiModel):
    id: ServerId = Field(description="The erased contact's id (the only trace left)")
    erased_at: Timestamp


ConsentPurpose = TypeAliasType("ConsentPurpose", Literal["service", "marketing"])
ConsentSource = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64), non_blank_schema(64)
]


class ConsentIn(BodyModel):
    purpose: ConsentPurpose = Field(
        description="`service`: the office's own service messages; `marketing`: marketing templates"
    )
    granted: bool = Field(description="True: consent given; false: withdrawn (opt-out)")
    source: ConsentSource = Field(
        description="Where the consent was given or withdrawn (a form, a call, a contract…)"
    )
    text_version: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=64)] | None
    ) = Field(default=None, description="The version of the text the client agreed to")


class ConsentOut(ApiModel):
    id: ServerId
    person_id: ServerId
    purpose: ConsentPurpose
    granted: bool
    source: str = Field(
        description="As posted; `keyword` (the client sent an opt-out or opt-in word), "
        "`whatsapp` (the client's marketing preference on WhatsApp)"
    )
    text_version: str | None
    recorded_at: Timestamp
