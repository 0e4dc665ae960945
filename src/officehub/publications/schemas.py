from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.schemas import ApiModel, BodyModel, non_blank_schema
from officehub.kit.timeutil import Timestamp

Uf = TypeAliasType(
    "Uf",
    Literal[
        "AC", "AL", "AM", "AP", "BA", "CE", "DF", "ES", "GO", "MA", "MG", "MS", "MT", "PA",
        "PB", "PE", "PI", "PR", "RJ", "RN", "RO", "RR", "RS", "SC", "SE", "SP", "TO",
    ],
)  # fmt: skip
Name = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    non_blank_schema(200),
]


class Oab(BodyModel):
    number: Annotated[str, StringConstraints(pattern=r"^[0-9]{1,7}$")] = Field(
        description="The OAB registration number, digits only"
    )
    uf: Uf = Field(description="The state of the registration")


USER_ID_DESCRIPTION = (
    "The office's user who is this lawyer: the tickets of the lawyer's publications are "
    "assigned to them"
)


class LawyerCreate(BodyModel):
    name: Name
    oab: Oab
    user_id: Id | None = Field(None, description=USER_ID_DESCRIPTION)


class LawyerUpdate(BodyModel):
    name: Name | None = Field(None, description="The lawyer's name (null keeps it)")
    user_id: Id | None = Field(None, description=USER_ID_DESCRIPTION + "; null unlinks")


class LawyerOut(ApiModel):
    id: ServerId
    name: str
    oab: Oab
    user_id: ServerId | None = Field(description=USER_ID_DESCRIPTION)
    created_at: Timestamp


class CourtHolidayCreate(BodyModel):
    date: dt.date = Field(description="The day (aaaa-mm-dd) the office's courts do not sit")
    name: Name


class CourtHolidayOut(ApiModel):
    id: ServerId
    date: dt.date
    name: str
    created_at: Timestamp


PublicationCategory = TypeAliasType(
    "PublicationCategory", Literal["INTIMATION", "CITATION", "OTHER"]
)
DeadlineDaysSource = TypeAliasType("DeadlineDaysSource", Literal["KIND", "LAWYER"])


class PublicationOut(ApiModel):
    id: ServerId
    lawyer_id: ServerId | None = Field(description="The lawyer whose sync found it first")
    case_id: ServerId | None = Field(description="The office's case of its number, when any")
    ticket_id: ServerId | None = Field(description="The ticket it opened for the lawyer")
    djen_id: int = Field(description="DJEN's id of the communication")
    hash: str | None = Field(description="DJEN's hash of the communication (its certificate)")
    made_available_on: dt.date = Field(description="DJEN's data_disponibilizacao")
    published_on: dt.date = Field(
        description="When it counts as published: the next business day (Lei 11.419 art. 4)"
    )
    court: str = Field(description="The court's acronym (siglaTribunal)")
    kind: str = Field(description="DJEN's tipoComunicacao, as given")
    category: PublicationCategory = Field(
        description="INTIMATION, CITATION or OTHER, from the kind"
    )
    organ: str = Field(description="The court body (nomeOrgao)")
    text: str
    case_number: str | None = Field(description="NNNNNNN-DD.AAAA.J.TR.OOOO, when given")
    link: str | None = Field(description="DJEN's link to the document, when given")
    certificate_url: str | None = Field(description="DJEN's certificate of the communication")
    read: bool
    read_at: Timestamp | None
    deadline_days: int | None = Field(description="The period's length in business days")
    deadline_days_source: DeadlineDaysSource | None = Field(
        description="KIND: the default of an intimation (CPC art. 218 §3); LAWYER: chosen"
    )
    deadline_on: dt.date | None = Field(description="The period's last day, when it has one")
    deadline_at: Timestamp | None = Field(
        description="The end of that day in the office's time zone (an electronic filing is "
        "timely until midnight, Lei 11.419 art. 3)"
    )
    deadline_calendar: str | None = Field(
        description="The calendar counted: CPC business days (arts. 219, 220, 224), national "
        "holidays, Carnival and the office's court holidays"
    )
    created_at: Timestamp
    updated_at: Timestamp


class PublicationUpdate(BodyModel):
    deadline_days: int | None = Field(
        None,
        ge=1,
        le=365,
        description="The period in business days (recomputes deadlineAt); null removes it",
    )
    read: bool | None = Field(None, description="Marks the publication read or unread")
