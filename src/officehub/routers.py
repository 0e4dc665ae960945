"""Every domain's router, in the order they are matched."""

from __future__ import annotations

from fastapi import APIRouter

from officehub.webhooks.router import router as webhooks_router


def domain_routers() -> list[APIRouter]:
    return [webhooks_router]
