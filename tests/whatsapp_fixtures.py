"""The official channel's recorded notifications (``tests/fixtures/whatsapp/``), written
from the Cloud API's public documentation, and the world they are replayed against."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes.models import Integration
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from officehub.templates.models import WhatsAppTemplate
from tests import factories as f

FIXTURES = Path(__file__).parent / "fixtures" / "whatsapp"
# The ids the fixtures name.
SENT_WAMID = "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjNBMDFGNDQ2QzBFRkQ3QTg5MQA="
OTHER_WAMID = "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjRCMDJGNTU3RDFGMEU4Qjk5MgA="
TEMPLATE_ID = "594425479261596"
CLIENT_PHONE = "+5511987654321"


def fixture(name: str) -> dict[str, Any]:
    """A recorded notification, e.g. ``status/read.json``."""
    body: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return body


def fixture_names(folder: str) -> list[str]:
    return sorted(f"{folder}/{p.name}" for p in (FIXTURES / folder).glob("*.json"))


async def sent_message(
    session: AsyncSession,
    integration: Integration,
    wamid: str = SENT_WAMID,
    status: str = "SENT",
    phone: str = CLIENT_PHONE,
) -> Message:
    """An outbound message the platform took (``externalId`` = ``wamid``), in a
    conversation with the client the fixtures name."""
    office_id = integration.office_id
    contact = await f.make_contact(session, office_id, phone=phone)
    conversation = await f.make_conversation(session, office_id, contact.id, integration)
    message = Message(
        office_id=office_id,
        conversation_id=conversation.id,
        direction="OUTBOUND",
        type="TEXT",
        text="Bom dia! Recebemos seu contato.",
        status=status,
        created_at=utcnow(),
        external_id=wamid,
        attempts=1,
    )
    session.add(message)
    await session.flush()
    await session.commit()
    return message


async def catalogue_template(
    session: AsyncSession,
    integration: Integration,
    status: str = "PENDING",
    category: str = "UTILITY",
    name: str = "lembrete_audiencia",
    external_id: str | None = TEMPLATE_ID,
) -> WhatsAppTemplate:
    template = WhatsAppTemplate(
        office_id=integration.office_id,
        integration_id=integration.id,
        name=name,
        language="pt_BR",
        status=status,
        category=category,
        components=[{"type": "BODY", "text": "Olá {{1}}, sua audiência é em {{2}}."}],
        external_id=external_id,
    )
    session.add(template)
    await session.flush()
    await session.commit()
    return template
