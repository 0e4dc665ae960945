"""``GET|PATCH /office``: the office's own settings (admins)."""

from __future__ import annotations

from officehub.kit.auth import ADMIN, ADMIN_SCOPE, OfficeDep, role_override, scope_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.indexed_router import Router
from officehub.offices import settings
from officehub.offices.models import OfficeSettings
from officehub.offices.schemas import OfficeSettingsOut, OfficeSettingsPatch, RetentionDays

router = Router(tags=["Office"])


def _out(found: OfficeSettings, saved: bool) -> OfficeSettingsOut:
    return OfficeSettingsOut(
        opt_out_keywords=list(found.opt_out_keywords or settings.DEFAULT_OPT_OUT_KEYWORDS),
        opt_in_keywords=list(found.opt_in_keywords or settings.DEFAULT_OPT_IN_KEYWORDS),
        retention_days=RetentionDays(
            closed_conversations=found.closed_conversations_days,
            webhook_deliveries=found.webhook_deliveries_days,
        ),
        time_zone=settings.zone_name(found),
        updated_at=found.updated_at if saved else None,
    )


@router.get(
    "/office",
    response_model=OfficeSettingsOut,
    responses=error_responses(400, 401),
    summary="Read the office's settings (admin)",
    openapi_extra=role_override(ADMIN),
)
async def read_office(office: OfficeDep, session: SessionDep) -> OfficeSettingsOut:
    found = await settings.read_settings(session, office.office_id)
    return _out(found, saved=found in session)


@router.patch(
    "/office",
    response_model=OfficeSettingsOut,
    responses=error_responses(400, 401, 413),
    summary="Change the office's settings (admin)",
    description=(
        "`optOutKeywords` and `optInKeywords`: the words a client sends alone (any case, any "
        "accents) to stop or resume marketing messages; the two lists may not share a word. "
        "`null` puts a list back to its default. `retentionDays`: closed conversations erased "
        "(as an erasure does; a client under legal hold is kept) and webhook delivery logs "
        "deleted after that many days, by the worker; null: off. `timeZone`: an IANA zone, "
        "the office's dates."
    ),
    openapi_extra={**scope_override(ADMIN_SCOPE), **role_override(ADMIN)},
)
async def update_office(
    body: OfficeSettingsPatch, office: OfficeDep, session: SessionDep
) -> OfficeSettingsOut:
    sent = body.model_fields_set - {"retention_days"}
    changes = {name: getattr(body, name) for name in sent}
    if "retention_days" in body.model_fields_set:
        periods = body.retention_days
        if periods is None:
            changes.update(closed_conversations_days=None, webhook_deliveries_days=None)
        else:
            for name in periods.model_fields_set:
                changes[f"{name}_days"] = getattr(periods, name)
    found = await settings.update_settings(session, office.office_id, **changes)
    return _out(found, saved=True)
