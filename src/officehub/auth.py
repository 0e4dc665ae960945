"""Resolves ``x-service-api-key`` to the office and its permissions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import APIKeyHeader

from officehub.db import SessionDep
from officehub.errors import Forbidden, Unauthorized
from officehub.offices.service import resolve_key

API_KEY_HEADER = "x-service-api-key"
api_key_scheme = APIKeyHeader(
    name=API_KEY_HEADER, auto_error=False, description="The office's API key"
)


@dataclass(frozen=True)
class OfficeContext:
    office_id: str
    key_id: str
    permissions: frozenset[str]

    def require(self, permission: str) -> None:
        if permission not in self.permissions:
            raise Forbidden(details=f"This operation needs the permission {permission}")


async def current_office(
    request: Request,
    session: SessionDep,
    key: Annotated[str | None, Depends(api_key_scheme)],
) -> OfficeContext:
    if not key:
        raise Unauthorized(details=f"Send the office API key in the {API_KEY_HEADER} header")
    record = await resolve_key(session, key)
    if record is None:
        raise Unauthorized(details="The API key is unknown or revoked")
    request.state.office_id = record.office_id
    return OfficeContext(record.office_id, record.id, frozenset(record.permissions))


OfficeDep = Annotated[OfficeContext, Depends(current_office)]


class Permission:
    """``Depends(Permission("edit:customer"))``: the office context, checked for a permission."""

    def __init__(self, permission: str) -> None:
        self.permission = permission

    async def __call__(self, office: OfficeDep) -> OfficeContext:
        office.require(self.permission)
        return office
