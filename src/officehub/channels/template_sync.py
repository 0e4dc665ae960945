"""Pulls an official integration's template catalogue from the platform.

Follows ``paging.next``, retries a 429 or 5xx a few times (honouring ``Retry-After``), then
replaces the stored catalogue entry by entry (status changes recorded). Used by
``POST /integration/{id}/whatsapp-templates/sync``, ``officehub templates sync`` and the
hourly periodic job.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import httpx
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels import repository
from officehub.channels.adapter import SendDeferred, SendRejected
from officehub.channels.whatsapp import WhatsAppAdapter
from officehub.kit.config import Settings
from officehub.kit.errors import BadGateway
from officehub.kit.worker import PeriodicJob, WorkerContext
from officehub.templates import service as templates
from officehub.templates.schemas import TemplateIn, TemplateOut

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

logger = logging.getLogger("officehub.channels")

MAX_TRIES = 4
_MAX_WAIT = 10.0
_MAX_PAGES = 200
# Platform statuses outside the catalogue's four: still in review, or not sendable.
_STATUS = {"IN_APPEAL": "PENDING", "PENDING_DELETION": "PAUSED", "DISABLED": "PAUSED"}

Sleep = Callable[[float], Awaitable[None]]


def _entry(raw: dict[str, Any]) -> TemplateIn | None:
    status = str(raw.get("status", "")).upper()
    status = (
        status
        if status in ("APPROVED", "PENDING", "REJECTED", "PAUSED")
        else _STATUS.get(status, "PAUSED")
    )
    try:
        return TemplateIn.model_validate(
            {
                "name": raw.get("name"),
                "status": status,
                "category": str(raw.get("category") or "UNKNOWN"),
                "language": raw.get("language"),
                "components": raw.get("components") or [],
                "id": str(raw["id"]) if raw.get("id") is not None else None,
            }
        )
    except ValidationError:
        return None


async def fetch_catalogue(
    settings: Settings, integration: Integration, sleep: Sleep = asyncio.sleep
) -> list[TemplateIn]:
    adapter = WhatsAppAdapter(settings.whatsapp_api_url)
    found: dict[tuple[str, str], TemplateIn] = {}
    skipped = 0
    async with httpx.AsyncClient(
        timeout=settings.whatsapp_timeout_seconds, trust_env=False
    ) as client:
        url: str | None = None
        for _page in range(_MAX_PAGES):
            for attempt in range(1, MAX_TRIES + 1):
                try:
                    data, following = await adapter.template_page(client, integration, url)
                    break
                except SendDeferred as exc:
                    if attempt == MAX_TRIES:
                        raise BadGateway(details=f"template list: {exc.reason}") from exc
                    wait = exc.retry_after if exc.retry_after is not None else 0.5 * 2**attempt
                    await sleep(min(wait, _MAX_WAIT))
                except SendRejected as exc:
                    raise BadGateway(details=f"template list: {exc.reason}") from exc
            for raw in data:
                entry = _entry(raw)
                if entry is None:
                    skipped += 1
                else:
                    found[(entry.name, entry.language)] = entry
            url = following
            if url is None:
                break
    if skipped:
        logger.warning("integration %s: %d malformed template(s) skipped", integration.id, skipped)
    return list(found.values())


async def sync_integration(
    session: AsyncSession,
    settings: Settings,
    office_id: str,
    integration_id: str,
    sleep: Sleep = asyncio.sleep,
) -> list[TemplateOut]:
    integration = await templates.official_integration(session, office_id, integration_id)
    if not integration.whatsapp:
        raise BadGateway(
            "The integration is not configured",
            details="Set its whatsapp settings before syncing templates",
            code="INTEGRATION_NOT_CONFIGURED",
        )
    entries = await fetch_catalogue(settings, integration, sleep)
    changed = await templates.upsert_catalogue(session, office_id, integration_id, entries)
    logger.info(
        "integration %s: %d template(s) synced, %d status change(s)",
        integration_id,
        len(entries),
        changed,
    )
    return await templates.list_all(session, office_id, integration_id)


async def sync_all(ctx: WorkerContext, only: str | None = None) -> int:
    """Syncs every configured official integration (or one); answers how many succeeded.
    One integration's failure is logged and the others go on."""
    async with ctx.sessionmaker() as session:
        targets = await repository.configured_official(session, only)
    done = 0
    for office_id, integration_id in targets:
        try:
            async with ctx.sessionmaker() as session, session.begin():
                await sync_integration(session, ctx.settings, office_id, integration_id)
            done += 1
        except Exception:
            logger.exception("template sync of integration %s failed", integration_id)
    return done


async def _hourly(ctx: WorkerContext) -> int:
    return await sync_all(ctx)


TEMPLATE_SYNC_JOB = PeriodicJob("whatsapp.templates.sync", timedelta(hours=1), _hourly)
