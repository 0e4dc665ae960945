"""The office's own settings (``GET|PATCH /office``): so far the words a client sends to
stop and to resume marketing messages. No row (or a null column) is the default."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.errors import ValidationFailed
from officehub.kit.timeutil import utcnow
from officehub.offices.models import OfficeSettings

DEFAULT_OPT_OUT_KEYWORDS = ("SAIR", "PARAR", "STOP")
DEFAULT_OPT_IN_KEYWORDS = ("VOLTAR",)


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
    return OfficeSettings(
        office_id=office_id, opt_out_keywords=None, opt_in_keywords=None, updated_at=utcnow()
    )


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
) -> OfficeSettings:
    """Changes the settings sent (null: back to the default). The two keyword lists may not
    share a word (400 naming ``body.optInKeywords``)."""
    found = await session.get(OfficeSettings, office_id, with_for_update=True)
    if found is None:
        found = OfficeSettings(
            office_id=office_id, opt_out_keywords=None, opt_in_keywords=None, updated_at=utcnow()
        )
        session.add(found)
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
