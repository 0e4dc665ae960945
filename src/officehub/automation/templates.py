"""Whether a template name may be used by a rule: the one place to ask.

Until the official channel keeps a template catalogue no template is approved (the
messages service answers 409 TEMPLATE_NOT_APPROVED to every template send), so a rule
naming one is refused. When the catalogue lands, this asks it instead.
"""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession


async def is_approved_template(
    session: AsyncSession, office_id: str, integration_id: str | None, name: str
) -> bool:
    del session, office_id, integration_id, name
    return False
