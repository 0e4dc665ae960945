"""Signed-in users for tests: a user made through the API, invited, their password chosen,
and a client of their own holding the session cookie and the CSRF token."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from fastapi import FastAPI

from officehub.kit.ids import new_id
from officehub.kit.timeutil import utcnow
from tests.helpers import OfficeFixture

PASSWORD = "Ipê-amarelo no quintal 42"


@dataclass
class SignedInUser:
    id: str
    email: str
    role: str
    client: httpx.AsyncClient
    csrf: str

    @property
    def csrf_header(self) -> dict[str, str]:
        return {"x-csrf-token": self.csrf}

    async def request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """A call with the session; changes carry the CSRF token."""
        headers = dict(kwargs.pop("headers", None) or {})
        if method.upper() not in ("GET", "HEAD", "OPTIONS"):
            headers.setdefault("x-csrf-token", self.csrf)
        return await self.client.request(method, path, headers=headers, **kwargs)


class SteppedClock:
    """The app's TOTP clock (``app.state.totp_clock``): real time at first, moved on a
    step when a test asks."""

    def __init__(self) -> None:
        self.now = utcnow()

    def __call__(self) -> datetime:
        return self.now

    def step(self) -> None:
        self.now += timedelta(seconds=30)


def app_client(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://officehub.test"
    )


async def make_account(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    role: str = "AGENT",
    *,
    inbox_ids: list[str] | None = None,
    password: str = PASSWORD,
) -> tuple[str, str]:
    """A user of ``role`` with a password: (id, email)."""
    email = f"pessoa.{new_id()[-8:]}@escritorio.example"
    body = {"name": "Beatriz Nogueira", "email": email, "role": role, "inboxIds": inbox_ids or []}
    made = await client.post("/user", json=body, headers=office.headers)
    assert made.status_code == 201, made.text
    user_id: str = made.json()["id"]
    invite = await client.post(f"/user/{user_id}/invite", headers=office.headers)
    assert invite.status_code == 201, invite.text
    accepted = await client.post(
        "/auth/invite/accept", json={"token": invite.json()["token"], "password": password}
    )
    assert accepted.status_code == 200, accepted.text
    return user_id, email


@asynccontextmanager
async def signed_in(
    app: FastAPI,
    office: OfficeFixture,
    role: str = "AGENT",
    *,
    inbox_ids: list[str] | None = None,
) -> AsyncIterator[SignedInUser]:
    """A new user of ``role`` signed in on a client of their own."""
    async with app_client(app) as setup:
        user_id, email = await make_account(setup, office, role, inbox_ids=inbox_ids)
    async with app_client(app) as client:
        login = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert login.status_code == 200, login.text
        yield SignedInUser(user_id, email, role, client, login.json()["csrfToken"])
