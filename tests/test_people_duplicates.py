"""``officehub people duplicates [--merge]``: the splits stored before the identity rule."""

from __future__ import annotations

from datetime import timedelta

import httpx
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.kit.timeutil import utcnow
from tests import factories as f
from tests.helpers import OfficeFixture, outbox
from tests.test_cli import json_of, officehub, one_line_error


async def _split(session: AsyncSession, office_id: str) -> tuple[str, str, str]:
    """A client stored twice, as before the rule: the older without the ninth digit (as the
    channel stored it), the newer with it, holding a conversation. Plus a landline."""
    inbox = await f.make_inbox(session, office_id)
    integration = await f.make_integration(session, office_id, inbox.id)
    older = await f.make_contact(session, office_id, "Maria", phone="+551188887777")
    older.created_at = utcnow() - timedelta(days=30)
    newer = await f.make_contact(session, office_id, "Maria Souza", phone="+5511988887777")
    newer.email = "maria@example.com"
    await f.make_contact(session, office_id, "Escritório", phone="+551133334444")
    conversation = await f.make_conversation(session, office_id, newer.id, integration)
    ids = older.id, newer.id, conversation.id
    await session.commit()
    return ids


async def test_people_duplicates_lists_a_mobile_stored_with_and_without_the_ninth_digit(
    database_url: str, app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    older, newer, _ = await _split(session, office_a.id)
    listed = json_of(await officehub(database_url, "people", "duplicates", "--json"))
    assert listed == {
        "data": [{"officeId": office_a.id, "keptId": older, "otherId": newer, "merged": False}]
    }
    table = await officehub(database_url, "people", "duplicates", "--office", office_a.id)
    assert table.returncode == 0 and older in table.stdout and newer in table.stdout
    assert "8888" not in table.stdout  # ids, never phones
    session.expire_all()
    still = await session.scalar(select(Contact.id).where(Contact.id == newer))
    assert still == newer  # listing changes nothing


async def test_people_duplicates_merge_keeps_the_older_contact(
    database_url: str,
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    older, newer, conversation = await _split(session, office_a.id)
    merged = json_of(await officehub(database_url, "people", "duplicates", "--merge", "--json"))
    assert merged["data"] == [
        {"officeId": office_a.id, "keptId": older, "otherId": newer, "merged": True}
    ]
    kept = await client.get(f"/people/{older}", headers=office_a.headers)
    assert kept.status_code == 200
    body = kept.json()
    assert (body["phone"], body["whatsappId"]) == ("+5511988887777", "551188887777")
    assert body["email"] == "maria@example.com"
    assert (await client.get(f"/people/{newer}", headers=office_a.headers)).status_code == 404
    session.expire_all()
    owner = await session.scalar(
        select(Conversation.person_id).where(Conversation.id == conversation)
    )
    assert owner == older
    [deleted] = await outbox(app, office_a.id, "contact.deleted")
    assert deleted.data["id"] == newer
    again = json_of(await officehub(database_url, "people", "duplicates", "--json"))
    assert again == {"data": []}


async def test_people_duplicates_of_an_unknown_office_fails(
    database_url: str, app: FastAPI
) -> None:
    result = await officehub(database_url, "people", "duplicates", "--office", "c" + "0" * 24)
    assert result.returncode != 0
    assert "not found" in one_line_error(result).lower()
