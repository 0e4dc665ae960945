from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.id_params import ServerId
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


class LawyerCreate(BodyModel):
    name: Name
    oab: Oab


class LawyerOut(ApiModel):
    id: ServerId
    name: str
    oab: Oab
    created_at: Timestamp


class CourtHolidayCreate(BodyModel):
    date: dt.date = Field(description="The day (aaaa-mm-dd) the office's courts do not sit")
    name: Name


class CourtHolidayOut(ApiModel):
    id: ServerId
    date: dt.date
    name: str
    created_at: Timestamp
