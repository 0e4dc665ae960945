"""Every domain's router, in the order they are matched."""

from __future__ import annotations

from fastapi import APIRouter

from officehub.contacts.router import router as contacts_router


def domain_routers() -> list[APIRouter]:
    return [contacts_router]
