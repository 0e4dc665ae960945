"""The official channel's account notifications: changes whose ``field`` is not
``messages``.

Template status, quality and category updates change the stored catalogue entry (and emit
``template.updated``); a client's marketing preference sets the contact's
``marketingOptOut``; the account's own notices (phone number quality, account update,
alerts, capability changes) and fields we do not know are kept in
``whatsapp_account_notices``. None is ever refused: what cannot be read is logged (the
field's name only, never a value) and the answer stays 200.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels import repository
from officehub.channels.account_schemas import AccountNoticeOut
from officehub.contacts import consent
from officehub.contacts.whatsapp_identity import user_id_or_none
from officehub.kit.pagination import PageParams, paginate
from officehub.templates import service as templates
from officehub.templates.service import PlatformUpdate

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

logger = logging.getLogger("officehub.channels")

TEMPLATE_FIELDS = (
    "message_template_status_update",
    "message_template_quality_update",
    "template_category_update",
)
MARKETING_FIELD = "user_marketing_preferences"
# Kept as notices; any other field too (logged as unknown).
NOTICE_FIELDS = (
    "phone_number_quality_update",
    "phone_number_name_update",
    "account_update",
    "account_alerts",
    "account_review_update",
    "business_capability_update",
    "business_status_update",
    "security",
)
_MAX_NOTICE_CHARS = 20_000


def _text(raw: dict[str, Any], key: str, size: int) -> str | None:
    value = raw.get(key)
    if value is None or isinstance(value, dict | list):
        return None
    text = str(value).replace("\x00", "").strip()[:size]
    return text or None


async def apply_change(
    session: AsyncSession, integration: Integration, field: str, raw: dict[str, Any]
) -> None:
    field = field[:64]
    if field in TEMPLATE_FIELDS:
        await _template(session, integration, field, raw)
    elif field == MARKETING_FIELD:
        await _marketing(session, integration, raw)
    else:
        if field not in NOTICE_FIELDS:
            logger.warning(
                "integration %s: unknown notification field %r kept", integration.id, field
            )
        await _notice(session, integration, field, raw)


async def _notice(
    session: AsyncSession, integration: Integration, field: str, raw: dict[str, Any]
) -> None:
    if len(json.dumps(raw, default=str)) > _MAX_NOTICE_CHARS:
        raw = {"truncated": True}
    await repository.add_notice(
        session, integration.office_id, integration.id, field, _text(raw, "event", 64), raw
    )


def _template_update(field: str, raw: dict[str, Any]) -> PlatformUpdate:
    ident = _text(raw, "message_template_id", 128)
    name = _text(raw, "message_template_name", 512)
    language = _text(raw, "message_template_language", 16)
    if field == "message_template_status_update":
        reason = _text(raw, "reason", 200)
        reason = None if reason is None or reason.upper() == "NONE" else reason
        info = raw.get("rejection_info")
        explained = _text(info, "reason", 200) if isinstance(info, dict) else None
        if explained:
            reason = f"{reason}: {explained}" if reason else explained
        category = _text(raw, "message_template_category", 64)
        return PlatformUpdate(
            ident,
            name,
            language,
            platform_status=(_text(raw, "event", 32) or "").upper() or None,
            rejected_reason=reason[:200] if reason else None,
            category=category and category.upper(),
        )
    if field == "message_template_quality_update":
        score = _text(raw, "new_quality_score", 16)
        return PlatformUpdate(ident, name, language, quality_score=score and score.upper())
    category = _text(raw, "new_category", 64)
    return PlatformUpdate(ident, name, language, category=category and category.upper())


async def _template(
    session: AsyncSession, integration: Integration, field: str, raw: dict[str, Any]
) -> None:
    update = _template_update(field, raw)
    if update.template_id is None and update.name is None:
        logger.warning("integration %s: %s without a template id", integration.id, field)
        await _notice(session, integration, field, raw)
        return
    applied = await templates.apply_platform_update(
        session, integration.office_id, integration.id, update
    )
    if applied is None:
        # Not in the stored catalogue yet (the next sync brings it), or nothing new.
        logger.info("integration %s: %s changed no catalogue entry", integration.id, field)


async def _marketing(session: AsyncSession, integration: Integration, raw: dict[str, Any]) -> None:
    preferences = raw.get("user_preferences")
    if not isinstance(preferences, list):
        logger.warning(
            "integration %s: %s without user_preferences", integration.id, MARKETING_FIELD
        )
        return
    for preference in preferences:
        if not isinstance(preference, dict):
            continue
        wa_id = _text(preference, "wa_id", 32)
        user_id = user_id_or_none(preference.get("user_id"))  # a username user: no wa_id
        choice = (_text(preference, "value", 16) or "").lower()
        category = (_text(preference, "category", 64) or "marketing_messages").lower()
        named = wa_id is not None or user_id is not None
        if not named or choice not in ("stop", "resume") or category != "marketing_messages":
            logger.info("integration %s: a marketing preference ignored", integration.id)
            continue
        found = await consent.set_marketing_opt_out(
            session, integration.office_id, wa_id, choice == "stop", user_id=user_id
        )
        if found is None:
            logger.info("integration %s: marketing preference of no contact", integration.id)


async def list_notices(
    session: AsyncSession, office_id: str, integration_id: str, params: PageParams
) -> tuple[list[AccountNoticeOut], int]:
    """The official integration's account notices, newest first (404 for an integration of
    another office or of another type)."""
    await templates.official_integration(session, office_id, integration_id)
    rows, total = await paginate(
        session, repository.notices_query(office_id, integration_id), params
    )
    return [AccountNoticeOut.model_validate(r) for r in rows], total
