"""Every domain's router, in the order they are matched."""

from __future__ import annotations

from fastapi import APIRouter

from officehub.contacts.router import router as contacts_router
from officehub.conversations.router import router as conversations_router
from officehub.messages.router import router as messages_router
from officehub.partner_links.router import router as partner_links_router


def domain_routers() -> list[APIRouter]:
    return [contacts_router, partner_links_router, conversations_router, messages_router]
