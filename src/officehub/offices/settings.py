"""The office's own settings (``GET|PATCH /office``): the words a client sends to stop and
to resume marketing messages, the retention periods, the time zone. No row (or a null
column) is the default."""

from __future__ import annotations

import unicodedata
import zoneinfo
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from zoneinfo import ZoneInfo

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.errors import ValidationFailed
from officehub.kit.timeutil import utcnow
from officehub.offices.models import OfficeSettings

DEFAULT_OPT_OUT_KEYWORDS = ("SAIR", "PARAR", "STOP")
DEFAULT_OPT_IN_KEYWORDS = ("VOLTAR",)
DEFAULT_TIME_ZONE = "America/Sao_Paulo"
RETENTION_MIN_DAYS, RETENTION_MAX_DAYS = 1, 3650


@cache
def _known_zones() -> frozenset[str]:
    return frozenset(zoneinfo.available_timezones())


def valid_time_zone(name: str, field: str = "body.timeZone") -> str:
    """``name`` if it is an IANA zone the system knows (``America/Manaus``), else 400 naming
    ``field``."""
    if name not in _known_zones():
        raise ValidationFailed.field(field, f"{name[:64]!r} is not an IANA time zone")
    return name


def keyword_form(text: str) -> str:
    """How a keyword is compared: trimmed, accents stripped, case folded, inner spaces
    collapsed (``" Párar "`` → ``"parar"``)."""
    decomposed = unicodedata.normalize("NFKD", text)
    bare = "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()
    return " ".join(bare.split())


@dataclass(frozen=True)
class Keywords:
    opt_out: tuple[str, ...]
    opt_in: tuple[str, ...]

    def meaning(self, text: str | None) -> bool | None:
        """False when the whole text is an opt-out keyword, True when an opt-in one, else
        None."""
        if not text or len(text) > 200:
            return None
        form = keyword_form(text)
        if form in {keyword_form(k) for k in self.opt_out}:
            return False
        if form in {keyword_form(k) for k in self.opt_in}:
            return True
        return None


async def read_settings(session: AsyncSession, office_id: str) -> OfficeSettings:
    """The office's settings row, unsaved when it has none (every value the default)."""
    found = await session.get(OfficeSettings, office_id)
    if found is not None:
        return found
    return _blank(office_id)


def _blank(office_id: str) -> OfficeSettings:
    return OfficeSettings(
        office_id=office_id,
        opt_out_keywords=None,
        opt_in_keywords=None,
        closed_conversations_days=None,
        webhook_deliveries_days=None,
        time_zone=None,
        updated_at=utcnow(),
    )


def zone_name(found: OfficeSettings) -> str:
    return found.time_zone or DEFAULT_TIME_ZONE


async def office_zone_name(session: AsyncSession, office_id: str) -> str:
    return zone_name(await read_settings(session, office_id))


async def office_zone(session: AsyncSession, office_id: str) -> ZoneInfo:
    """The office's time zone (its setting, else ``DEFAULT_TIME_ZONE``): how dates are
    shown to its people and its clients."""
    return ZoneInfo(zone_name(await read_settings(session, office_id)))


@dataclass(frozen=True)
class Retention:
    office_id: str
    closed_conversations_days: int | None
    webhook_deliveries_days: int | None


async def offices_with_retention(session: AsyncSession) -> list[Retention]:
    """Every office with a retention period set (the retention job's list; across offices
    on purpose: the worker runs it for each)."""
    rows = await session.scalars(
        select(OfficeSettings)
        .where(
            or_(
                OfficeSettings.closed_conversations_days.is_not(None),
                OfficeSettings.webhook_deliveries_days.is_not(None),
            )
        )
        .order_by(OfficeSettings.office_id)
    )
    return [
        Retention(r.office_id, r.closed_conversations_days, r.webhook_deliveries_days) for r in rows
    ]


async def retention_of(session: AsyncSession, office_id: str) -> Retention:
    found = await read_settings(session, office_id)
    return Retention(office_id, found.closed_conversations_days, found.webhook_deliveries_days)


async def keywords(session: AsyncSession, office_id: str) -> Keywords:
    found = await read_settings(session, office_id)
    return Keywords(
        tuple(found.opt_out_keywords or DEFAULT_OPT_OUT_KEYWORDS),
        tuple(found.opt_in_keywords or DEFAULT_OPT_IN_KEYWORDS),
    )


_UNSET = object()


async def update_settings(
    session: AsyncSession,
    office_id: str,
    *,
    opt_out_keywords: Sequence[str] | object | None = _UNSET,
    opt_in_keywords: Sequence[str] | object | None = _UNSET,
    closed_conversations_days: int | object | None = _UNSET,
    webhook_deliveries_days: int | object | None = _UNSET,
    time_zone: str | object | None = _UNSET,
) -> OfficeSettings:
    """Changes the settings sent (null: back to the default). The two keyword lists may not
    share a word (400 naming ``body.optInKeywords``)."""
    found = await session.get(OfficeSettings, office_id, with_for_update=True)
    if found is None:
        found = _blank(office_id)
        session.add(found)
    if closed_conversations_days is not _UNSET:
        found.closed_conversations_days = _days(
            closed_conversations_days, "body.retentionDays.closedConversations"
        )
    if webhook_deliveries_days is not _UNSET:
        found.webhook_deliveries_days = _days(
            webhook_deliveries_days, "body.retentionDays.webhookDeliveries"
        )
    if time_zone is not _UNSET:
        found.time_zone = None if time_zone is None else valid_time_zone(str(time_zone))
    if opt_out_keywords is not _UNSET:
        found.opt_out_keywords = _cleaned(opt_out_keywords, "body.optOutKeywords")
    if opt_in_keywords is not _UNSET:
        found.opt_in_keywords = _cleaned(opt_in_keywords, "body.optInKeywords")
    stops = {keyword_form(k) for k in found.opt_out_keywords or DEFAULT_OPT_OUT_KEYWORDS}
    resumes = {keyword_form(k) for k in found.opt_in_keywords or DEFAULT_OPT_IN_KEYWORDS}
    if stops & resumes:
        raise ValidationFailed.field(
            "body.optInKeywords",
            f"{', '.join(sorted(stops & resumes))} is also an opt-out keyword",
        )
    found.updated_at = utcnow()
    await session.flush()
    return found


def _days(value: object, field: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or not RETENTION_MIN_DAYS <= value <= RETENTION_MAX_DAYS:
        raise ValidationFailed.field(
            field, f"a number of days from {RETENTION_MIN_DAYS} to {RETENTION_MAX_DAYS}"
        )
    return value


def _cleaned(value: object, field: str) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise ValidationFailed.field(field, "a list of words")
    words = [" ".join(str(w).split()) for w in value]
    if any(not keyword_form(w) for w in words):
        raise ValidationFailed.field(field, "a keyword may not be blank")
    forms = [keyword_form(w) for w in words]
    if len(set(forms)) != len(forms):
        raise ValidationFailed.field(field, "the same keyword twice")
    return words
