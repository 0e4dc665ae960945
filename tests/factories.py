"""Arranging records straight through the models, for tests of other domains.

Each returns the flushed record; the caller's session commits.
"""

from __future__ import annotations

import itertools
from datetime import date, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.contacts.normalize import fold
from officehub.conversations.models import Conversation, ConversationTag
from officehub.crm.models import Card, Funnel, FunnelColumn
from officehub.departments.models import Department
from officehub.inboxes.models import Inbox, Integration
from officehub.kit.timeutil import utcnow
from officehub.legal_areas.models import LegalArea
from officehub.publications.models import Publication
from officehub.tags.models import Tag
from officehub.users.models import User

DEFAULT_PHONE = "+5511987654321"
_phones = itertools.count(10_000_000)


async def _add(session: AsyncSession, record: Any) -> Any:
    session.add(record)
    await session.flush()
    return record


async def make_inbox(session: AsyncSession, office_id: str, name: str = "Atendimento") -> Inbox:
    inbox: Inbox = await _add(session, Inbox(office_id=office_id, name=name))
    return inbox


async def make_integration(
    session: AsyncSession,
    office_id: str,
    inbox_id: str,
    type: str = "WHATSAPP",
    device_id: str | None = None,
) -> Integration:
    record: Integration = await _add(
        session,
        Integration(
            office_id=office_id, inbox_id=inbox_id, type=type, name=type, device_id=device_id
        ),
    )
    return record


async def make_user(
    session: AsyncSession, office_id: str, name: str = "Ana Lima", email: str | None = None
) -> User:
    user: User = await _add(
        session,
        User(
            office_id=office_id,
            name=name,
            email=email or f"{name.lower().replace(' ', '.')}.{office_id[-6:]}@example.com",
            role="AGENT",
        ),
    )
    return user


async def make_department(
    session: AsyncSession, office_id: str, name: str = "Jurídico"
) -> Department:
    department: Department = await _add(session, Department(office_id=office_id, name=name))
    return department


async def make_tag(
    session: AsyncSession,
    office_id: str,
    inbox_id: str,
    name: str = "urgente",
    modules: list[str] | None = None,
) -> Tag:
    tag: Tag = await _add(
        session,
        Tag(
            office_id=office_id,
            inbox_id=inbox_id,
            name=name,
            name_key=name.lower(),
            color="#FF0000",
            modules=modules or ["crm", "conversas"],
        ),
    )
    return tag


async def make_legal_area(
    session: AsyncSession, office_id: str, name: str = "Imobiliário"
) -> LegalArea:
    area: LegalArea = await _add(
        session, LegalArea(office_id=office_id, name=name, color="#123456")
    )
    return area


async def make_contact(
    session: AsyncSession,
    office_id: str,
    name: str = "Maria Souza",
    phone: str | None = DEFAULT_PHONE,
    inbox_id: str | None = None,
) -> Contact:
    """The office's first contact gets ``DEFAULT_PHONE`` unless told; later ones a fresh
    São Paulo mobile number (one phone per office is a unique index)."""
    if phone == DEFAULT_PHONE:
        taken = select(Contact.id).where(Contact.office_id == office_id, Contact.phone == phone)
        if (await session.scalar(taken)) is not None:
            phone = f"+55119{next(_phones):08d}"
    contact: Contact = await _add(
        session,
        Contact(
            office_id=office_id,
            inbox_id=inbox_id,
            name=name,
            search_name=fold(name),  # as the service stores it: accents and case folded
            phone=phone,
        ),
    )
    return contact


async def make_conversation(
    session: AsyncSession,
    office_id: str,
    person_id: str,
    integration: Integration,
    tags: list[Tag] | None = None,
    assigned_user_id: str | None = None,
    status: str = "OPEN",
) -> Conversation:
    conversation: Conversation = await _add(
        session,
        Conversation(
            office_id=office_id,
            person_id=person_id,
            inbox_id=integration.inbox_id,
            integration_id=integration.id,
            status=status,
            priority="MEDIUM",
            assigned_user_id=assigned_user_id,
        ),
    )
    for tag in tags or []:
        await _add(
            session,
            ConversationTag(office_id=office_id, conversation_id=conversation.id, tag_id=tag.id),
        )
    return conversation


async def make_funnel(
    session: AsyncSession,
    office_id: str,
    inbox_id: str,
    columns: int | list[str] = 3,
    name: str = "Vendas",
    time_limit_days: int | None = None,
) -> tuple[Funnel, list[FunnelColumn]]:
    """A funnel and its NORMAL columns (``columns`` names them, or says how many)."""
    funnel: Funnel = await _add(session, Funnel(office_id=office_id, inbox_id=inbox_id, name=name))
    names = columns if isinstance(columns, list) else [f"Etapa {i + 1}" for i in range(columns)]
    made = [
        await _add(
            session,
            FunnelColumn(
                office_id=office_id,
                funnel_id=funnel.id,
                name=column_name,
                color="#9E9E9E",
                position=i,
                kind="NORMAL",
                time_limit_days=time_limit_days,
                show_badge_progress=False,
            ),
        )
        for i, column_name in enumerate(names)
    ]
    return funnel, made


async def make_card(
    session: AsyncSession,
    column: FunnelColumn,
    person_id: str,
    conversation_id: str | None = None,
    user_id: str | None = None,
    column_changed_at: datetime | None = None,
) -> Card:
    changed = column_changed_at or utcnow()
    card: Card = await _add(
        session,
        Card(
            office_id=column.office_id,
            funnel_id=column.funnel_id,
            column_id=column.id,
            person_id=person_id,
            conversation_id=conversation_id,
            user_id=user_id,
            custom_fields=[],
            column_changed_at=changed,
            overdue_at=None,
            overdue_emitted_at=None,
        ),
    )
    return card


_djen_ids = itertools.count(1)


async def make_publication(
    session: AsyncSession,
    office_id: str,
    *,
    lawyer_id: str | None = None,
    case_id: str | None = None,
    made_available: date = date(2026, 3, 27),
    **more: Any,
) -> Publication:
    """An intimation as the DJEN sync stores it (published the next business day, its
    default five business days counted)."""
    djen_id = next(_djen_ids)
    values: dict[str, Any] = {
        "office_id": office_id,
        "lawyer_id": lawyer_id,
        "case_id": case_id,
        "djen_id": djen_id,
        "hash": f"factory-hash-{djen_id}",
        "made_available": made_available,
        "published_on": date(2026, 3, 30),
        "court": "TJSP",
        "kind": "Intimação",
        "category": "INTIMATION",
        "organ": "1ª Vara Cível",
        "text": "Intimem-se.",
        "case_number": "10091315220248260224",
        "link": None,
        "deadline_days": 5,
        "deadline_days_source": "KIND",
        "deadline_at": date(2026, 4, 7),
        "deadline_calendar": "CPC_BUSINESS_DAYS",
        **more,
    }
    publication = Publication(**values)
    session.add(publication)
    await session.flush()
    return publication
