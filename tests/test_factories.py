"""The shared factories make records the scoped lookups find, and only for their office."""

from __future__ import annotations

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service as conversations
from officehub.kit.errors import NotFound
from officehub.legal_areas import service as legal_areas
from officehub.legal_areas.models import DEFAULT_LEGAL_AREAS
from tests import factories as f
from tests.helpers import OfficeFixture


async def test_lookups_are_scoped_to_the_office(
    session: AsyncSession, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    contact = await f.make_contact(session, office_a.id)
    tag = await f.make_tag(session, office_a.id, inbox.id)
    conversation = await f.make_conversation(
        session, office_a.id, contact.id, integration, tags=[tag]
    )
    await session.commit()

    found = await conversations.get_conversation(session, office_a.id, conversation.id)
    assert found.id == conversation.id
    assert [t.id for t in await conversations.tags_of(session, office_a.id, conversation.id)] == [
        tag.id
    ]
    with pytest.raises(NotFound):
        await conversations.get_conversation(session, office_b.id, conversation.id)
    assert await conversations.tags_of(session, office_b.id, conversation.id) == []


async def test_default_legal_areas_are_seen_by_every_office(
    session: AsyncSession, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    default_id = DEFAULT_LEGAL_AREAS[0][0]
    for office in (office_a, office_b):
        area = await legal_areas.get_legal_area(session, office.id, default_id)
        assert area.office_id is None
    own = await f.make_legal_area(session, office_a.id)
    await session.commit()
    assert (await legal_areas.get_legal_area(session, office_a.id, own.id)).id == own.id
    with pytest.raises(NotFound):
        await legal_areas.get_legal_area(session, office_b.id, own.id)
