"""Every domain's router, in the order they are matched."""

from __future__ import annotations

from fastapi import APIRouter

from officehub.crm.router import router as crm_router


def domain_routers() -> list[APIRouter]:
    return [crm_router]
