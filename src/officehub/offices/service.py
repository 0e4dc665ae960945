"""Offices and their API keys. A key is shown once, when made, and stored as a SHA-256 hash."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.auth import SCOPES, OfficeContext
from officehub.kit.auth import hash_key as hash_key  # keys are made here, looked up in auth
from officehub.kit.errors import NotFound, ValidationFailed
from officehub.kit.timeutil import utcnow
from officehub.offices.models import ApiKey, Office

PERMISSIONS = SCOPES
KEY_PREFIX = "ohk_"


@dataclass(frozen=True)
class CreatedKey:
    record: ApiKey
    key: str


async def create_office(session: AsyncSession, name: str) -> Office:
    name = name.strip()
    if not name or len(name) > 200:
        raise ValidationFailed.field("name", "must be 1 to 200 characters")
    office = Office(name=name)
    session.add(office)
    await session.flush()
    return office


async def get_office(session: AsyncSession, office_id: str) -> Office:
    office = await session.get(Office, office_id)
    if office is None:
        raise NotFound.of("Office", office_id)
    return office


async def first_office(session: AsyncSession) -> Office | None:
    return (await session.scalars(select(Office).order_by(Office.id).limit(1))).first()


async def create_api_key(
    session: AsyncSession,
    office_id: str,
    name: str = "default",
    permissions: list[str] | None = None,
) -> CreatedKey:
    """Makes a key; ``permissions`` None grants every permission, ``[]`` none."""
    await get_office(session, office_id)
    perms = list(PERMISSIONS) if permissions is None else list(dict.fromkeys(permissions))
    unknown = [p for p in perms if p not in PERMISSIONS]
    if unknown:
        raise ValidationFailed.field(
            "permission", f"unknown {unknown}; known: {', '.join(PERMISSIONS)}"
        )
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    record = ApiKey(
        office_id=office_id,
        name=name,
        key_hash=hash_key(key),
        prefix=key[:10],
        permissions=perms,
        created_at=utcnow(),
        revoked_at=None,
    )
    session.add(record)
    await session.flush()
    return CreatedKey(record, key)


async def list_api_keys(session: AsyncSession, office_id: str | None) -> list[ApiKey]:
    """An office's keys, oldest first; every office's keys (the operator's view) for None."""
    stmt = select(ApiKey).order_by(ApiKey.created_at, ApiKey.id)
    if office_id is not None:
        await get_office(session, office_id)
        stmt = stmt.where(ApiKey.office_id == office_id)
    return list(await session.scalars(stmt))


async def revoke_api_key(session: AsyncSession, key_id: str) -> ApiKey:
    record = await session.get(ApiKey, key_id)
    if record is None:
        raise NotFound.of("API key", key_id)
    if record.revoked_at is None:
        record.revoked_at = utcnow()
        await session.flush()
    return record


async def resolve_key(session: AsyncSession, key: str) -> ApiKey | None:
    return await resolve_key_hash(session, hash_key(key))


async def resolve_key_hash(session: AsyncSession, key_hash: str) -> ApiKey | None:
    """The unrevoked key of this SHA-256 hash: one select on the unique index."""
    stmt = select(ApiKey).where(ApiKey.key_hash == key_hash, ApiKey.revoked_at.is_(None))
    return (await session.scalars(stmt)).first()


async def office_of_key_hash(session: AsyncSession, key_hash: str) -> OfficeContext | None:
    """What ``auth.lookup_key`` needs of a key (``auth.use_key_resolver``, in the wiring)."""
    record = await resolve_key_hash(session, key_hash)
    if record is None:
        return None
    return OfficeContext(record.office_id, record.id, frozenset(record.permissions))


@dataclass(frozen=True)
class OfficeSummary:
    office: Office
    active_keys: int


def _valid_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > 200:
        raise ValidationFailed.field("name", "must be 1 to 200 characters")
    return name


async def list_offices(session: AsyncSession) -> list[OfficeSummary]:
    """Every office, oldest first, with its number of unrevoked keys."""
    active = (
        select(ApiKey.office_id, func.count().label("n"))
        .where(ApiKey.revoked_at.is_(None))
        .group_by(ApiKey.office_id)
        .subquery()
    )
    stmt = (
        select(Office, func.coalesce(active.c.n, 0))
        .outerjoin(active, active.c.office_id == Office.id)
        .order_by(Office.created_at, Office.id)
    )
    return [OfficeSummary(office, int(n)) for office, n in (await session.execute(stmt)).all()]


async def rename_office(session: AsyncSession, office_id: str, name: str) -> Office:
    name = _valid_name(name)
    office = await get_office(session, office_id)
    office.name = name
    await session.flush()
    return office


async def delete_office(session: AsyncSession, office_id: str) -> Office:
    """Deletes the office; the database's ``ON DELETE CASCADE`` removes all it holds."""
    office = await get_office(session, office_id)
    await session.execute(delete(Office).where(Office.id == office_id))
    await session.flush()
    return office
