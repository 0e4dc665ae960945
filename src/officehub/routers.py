"""Every domain's router, in the order they are matched."""

from __future__ import annotations

from fastapi import APIRouter


def domain_routers() -> list[APIRouter]:
    return []
