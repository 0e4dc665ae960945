from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.repository import scoped
from officehub.templates.models import WhatsAppTemplate


async def list_templates(
    session: AsyncSession, office_id: str, integration_id: str, status: str | None = None
) -> list[WhatsAppTemplate]:
    stmt = scoped(WhatsAppTemplate, office_id).where(
        WhatsAppTemplate.integration_id == integration_id
    )
    if status is not None:
        stmt = stmt.where(WhatsAppTemplate.status == status)
    stmt = stmt.order_by(WhatsAppTemplate.name, WhatsAppTemplate.language)
    return list(await session.scalars(stmt))


async def find_template(
    session: AsyncSession, office_id: str, integration_id: str, name: str, language: str | None
) -> list[WhatsAppTemplate]:
    stmt = scoped(WhatsAppTemplate, office_id).where(
        WhatsAppTemplate.integration_id == integration_id, WhatsAppTemplate.name == name
    )
    if language is not None:
        stmt = stmt.where(WhatsAppTemplate.language == language)
    return list(await session.scalars(stmt.order_by(WhatsAppTemplate.language)))


async def delete_templates(
    session: AsyncSession, office_id: str, integration_id: str, ids: Sequence[str]
) -> None:
    if ids:
        await session.execute(
            delete(WhatsAppTemplate).where(
                WhatsAppTemplate.office_id == office_id,
                WhatsAppTemplate.integration_id == integration_id,
                WhatsAppTemplate.id.in_(ids),
            )
        )


async def add(session: AsyncSession, record: WhatsAppTemplate) -> None:
    session.add(record)
    await session.flush()


async def approved_exists(
    session: AsyncSession, office_id: str, integration_id: str | None, name: str
) -> bool:
    """An APPROVED template of that name: of the integration, or of any when it is None."""
    stmt = scoped(WhatsAppTemplate, office_id).where(
        WhatsAppTemplate.name == name, WhatsAppTemplate.status == "APPROVED"
    )
    if integration_id is not None:
        stmt = stmt.where(WhatsAppTemplate.integration_id == integration_id)
    return (await session.scalars(stmt.limit(1))).first() is not None


async def find_by_platform_id(
    session: AsyncSession, office_id: str, integration_id: str, external_id: str
) -> WhatsAppTemplate | None:
    stmt = scoped(WhatsAppTemplate, office_id).where(
        WhatsAppTemplate.integration_id == integration_id,
        WhatsAppTemplate.external_id == external_id,
    )
    return (await session.scalars(stmt.limit(1))).first()
