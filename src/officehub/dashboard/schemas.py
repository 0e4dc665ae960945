from __future__ import annotations

from datetime import date

from pydantic import Field

from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import Timestamp


class DddCount(ApiModel):
    ddd: str
    total: int


class StateCount(ApiModel):
    uf: str
    name: str
    total: int
    ddds: list[DddCount]


class ClientsMap(ApiModel):
    cache_at: Timestamp
    total: int
    states: list[StateCount]


class ClientsMapOut(ApiModel):
    data: ClientsMap


class ReportFigures(ApiModel):
    opened: int = Field(description="Conversations created in the range (or the group's day)")
    closed: int = Field(description="Conversations whose last close falls in the range")
    first_response_median_seconds: int | None = Field(
        description="Nearest-rank median of the first responses made in the range: seconds "
        "from the client's first message to the first response; null with none"
    )
    first_response_p90_seconds: int | None
    resolution_median_seconds: int | None = Field(
        description="Nearest-rank median of the closed conversations' resolution times: "
        "seconds from the client's first message (or the reopen) to the close"
    )
    resolution_p90_seconds: int | None
    sla_total: int = Field(
        description="Closed conversations (counted in `closed`) a policy applied to"
    )
    sla_met: int = Field(description="Of those, the ones with no breach stamp held at the close")
    sla_compliance: float | None = Field(description="slaMet / slaTotal; null when slaTotal is 0")


class ReportRow(ReportFigures):
    key: str | None = Field(
        description="The local day (YYYY-MM-DD), or the inbox's, user's, legal area's id, or "
        "the channel's type; null: no user assigned, no legal area"
    )
    label: str | None = Field(description="The inbox's, user's or legal area's name")


class ConversationReport(ApiModel):
    date_from: date = Field(alias="from")
    date_to: date = Field(alias="to")
    group_by: str
    time_zone: str
    inbox_id: ServerId | None
    rows: list[ReportRow]
    totals: ReportFigures


class UsageFigures(ApiModel):
    billable: int = Field(description="Sends the platform bills (pricing type `regular`)")
    free: int = Field(description="Sends it does not (`free_customer_service`, `free_entry_point`)")


class UsageRow(UsageFigures):
    month: str = Field(description="YYYY-MM, a calendar month in UTC")
    category: str = Field(
        description="The platform's pricing category (`marketing`, `marketing_lite`, "
        "`utility`, `authentication`, `authentication_international`, `service`…); "
        "`unknown` when it gave none"
    )


class WhatsAppUsageReport(ApiModel):
    month_from: str = Field(alias="from", description="First month, YYYY-MM")
    month_to: str = Field(alias="to", description="Last month, YYYY-MM, included")
    integration_id: ServerId | None
    rows: list[UsageRow] = Field(description="By month, then category")
    totals: UsageFigures
