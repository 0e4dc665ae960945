from __future__ import annotations

from typing import Annotated, Literal

from fastapi import Depends, Query, Request, Response

from officehub.dashboard import reports, service, whatsapp_usage
from officehub.dashboard.schemas import ClientsMapOut, ConversationReport, WhatsAppUsageReport
from officehub.kit.auth import ActorDep, OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id
from officehub.kit.indexed_router import Router
from officehub.kit.schemas import IsoDate

router = Router(tags=["Dashboard"])


async def get_cache(request: Request) -> service.ClientsMapCache:
    cache: service.ClientsMapCache | None = getattr(request.app.state, "clients_map_cache", None)
    if cache is None:
        cache = service.ClientsMapCache()
        request.app.state.clients_map_cache = cache
    return cache


@router.get(
    "/homepage-v2/get-clients-map",
    response_model=ClientsMapOut,
    responses=error_responses(400, 401),
    summary="The office's conversations by state of the contact's area code (cached 5 min)",
)
async def get_clients_map(
    office: OfficeDep,
    session: SessionDep,
    cache: Annotated[service.ClientsMapCache, Depends(get_cache)],
) -> ClientsMapOut:
    return ClientsMapOut(data=await service.clients_map(session, office.office_id, cache))


ReportGroup = Literal["day", "inbox", "user", "legalArea", "channel"]
CSV_TYPE = "text/csv; charset=utf-8"


@router.get(
    "/reports/conversations",
    response_model=ConversationReport,
    responses={
        200: {
            "description": "The report as JSON, or as CSV (`format=csv` or `Accept: text/csv`)",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        **error_responses(400, 401, 404),
    },
    summary="Conversations opened and closed, response and resolution times, SLA compliance",
    description="Days are the office's (`GET /office` `timeZone`), `from` and `to` included "
    "(default: the last 30 days up to today), "
    f"at most {reports.MAX_DAYS} days (`to` before `from` or further: 400 `query.to`). Each "
    "measure counts on the day of its event: `opened` at creation, `closed`, resolution "
    "times and SLA compliance at the last close, first-response times at the first "
    "response. Percentiles are nearest-rank. A SUPERVISOR's report covers their inboxes.",
)
async def conversation_report(
    request: Request,
    actor: ActorDep,
    session: SessionDep,
    date_from: Annotated[
        IsoDate | None,
        Query(alias="from", description="First local day (YYYY-MM-DD); default: `to` - 29 days"),
    ] = None,
    date_to: Annotated[
        IsoDate | None,
        Query(alias="to", description="Last local day, included; default: the office's today"),
    ] = None,
    group_by: Annotated[ReportGroup, Query(alias="groupBy")] = "day",
    inbox_id: Annotated[Id | None, Query(alias="inboxId")] = None,
    format: Annotated[Literal["json", "csv"] | None, Query()] = None,
) -> ConversationReport | Response:
    report = await service.conversation_report(
        session, actor, date_from, date_to, group_by, inbox_id
    )
    wants_csv = format == "csv" or (
        format is None and "text/csv" in request.headers.get("accept", "").lower()
    )
    if not wants_csv:
        return report
    span = f"{report.date_from.isoformat()}-{report.date_to.isoformat()}"
    name = f"relatorio-conversas-{span}-{group_by}.csv"
    return Response(
        service.report_csv(report),
        media_type=CSV_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.get(
    "/reports/whatsapp-usage",
    response_model=WhatsAppUsageReport,
    responses={
        200: {
            "description": "The report as JSON, or as CSV (`format=csv` or `Accept: text/csv`)",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        },
        **error_responses(400, 401, 404),
    },
    summary="What the office pays WhatsApp: billable and free sends by pricing category and month",
    description="From the pricing the platform's statuses put on each send (per-message "
    "pricing): billable when its type is `regular`. Months are calendar months in UTC, "
    "`from` and `to` (YYYY-MM) included (default: the last 12 up to the current one), at "
    f"most {whatsapp_usage.MAX_MONTHS} (`to` before `from` or further: 400 `query.to`). "
    "A SUPERVISOR's report covers their inboxes.",
)
async def whatsapp_usage_report(
    request: Request,
    actor: ActorDep,
    session: SessionDep,
    month_from: Annotated[
        str | None,
        Query(alias="from", pattern=whatsapp_usage.MONTH_PATTERN, description="First month"),
    ] = None,
    month_to: Annotated[
        str | None,
        Query(alias="to", pattern=whatsapp_usage.MONTH_PATTERN, description="Last month"),
    ] = None,
    integration_id: Annotated[Id | None, Query(alias="integrationId")] = None,
    format: Annotated[Literal["json", "csv"] | None, Query()] = None,
) -> WhatsAppUsageReport | Response:
    report = await whatsapp_usage.usage(session, actor, month_from, month_to, integration_id)
    wants_csv = format == "csv" or (
        format is None and "text/csv" in request.headers.get("accept", "").lower()
    )
    if not wants_csv:
        return report
    name = f"uso-whatsapp-{report.month_from}-{report.month_to}.csv"
    return Response(
        whatsapp_usage.usage_csv(report),
        media_type=CSV_TYPE,
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )
