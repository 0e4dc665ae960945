"""Helpers the tests share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from officehub.events.models import OutboxEvent
from officehub.offices import service as offices


@dataclass(frozen=True)
class OfficeFixture:
    id: str
    key: str
    key_id: str

    @property
    def headers(self) -> dict[str, str]:
        return {"x-service-api-key": self.key}


async def make_office(
    app: FastAPI, name: str, permissions: list[str] | None = None
) -> OfficeFixture:
    async with app.state.sessionmaker() as s:
        office = await offices.create_office(s, name)
        created = await offices.create_api_key(s, office.id, "test", permissions)
        await s.commit()
        return OfficeFixture(office.id, created.key, created.record.id)


async def outbox(app: FastAPI, office_id: str, name: str | None = None) -> list[OutboxEvent]:
    """The events recorded for an office (optionally of one name), oldest first."""
    async with app.state.sessionmaker() as s:
        stmt = select(OutboxEvent).where(OutboxEvent.office_id == office_id)
        if name is not None:
            stmt = stmt.where(OutboxEvent.name == name)
        return list(await s.scalars(stmt.order_by(OutboxEvent.created_at, OutboxEvent.id)))


def error_of(response: httpx.Response) -> dict[str, Any]:
    """The error body, checked for the contract's shape."""
    body: dict[str, Any] = response.json()
    assert set(body) == {"message", "statusCode", "code", "details"}, body
    assert body["statusCode"] == response.status_code
    return body
