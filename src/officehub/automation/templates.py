"""Whether a template name may be used by a rule: the one place to ask (the catalogue)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.templates import service as templates


async def is_approved_template(
    session: AsyncSession, office_id: str, integration_id: str | None, name: str
) -> bool:
    return await templates.has_approved_template(session, office_id, integration_id, name)


async def body_placeholders(
    session: AsyncSession, office_id: str, integration_id: str, name: str
) -> int:
    """How many ``{{n}}`` the approved template's body holds."""
    template = await templates.approved_template(session, office_id, integration_id, name, None)
    return templates.placeholders(template.components, "BODY")
