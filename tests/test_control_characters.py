"""Control characters are refused in names and other single-line strings of every body;
long text (descriptions, notes, message text) may hold tab and line breaks, nothing else."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.schemas import BodyModel
from officehub.mounted_routers import domain_routers
from tests.factories import make_contact, make_inbox
from tests.helpers import OfficeFixture, error_of

WEBHOOK = {"name": "hook", "url": "https://example.com/h", "events": ["contact.created"]}

# (what kind of field, route, body, the field named in the 400)
REFUSED: list[tuple[str, str, dict[str, Any], str]] = [
    ("name with a bell", "/inbox", {"name": "Caixa\x07"}, "body.name"),
    ("name with a line feed inside", "/department", {"name": "Jurí\ndico"}, "body.name"),
    ("name with a tab", "/ticket-statuses", {"name": "Aberto\tHoje"}, "body.name"),
    ("name with a C1 control", "/people", {"name": "Maria\x85Souza"}, "body.name"),
    (
        "name with a line separator",
        "/legal-areas",
        {"name": "A\u2028B", "color": "#000000"},
        "body.name",
    ),
    (
        "single-line string other than a name",
        "/people",
        {"name": "M", "document": "1\x1b2"},
        "body.document",
    ),
    # A colour is #rrggbb now (tests/test_links_and_colours.py): a control character in one
    # is refused by that pattern; a legal area's name keeps the single-line rule here.
    ("legal area name", "/legal-areas", {"name": "Fam\ríla", "color": "#000000"}, "body.name"),
    (
        "title",
        "/fast-message",
        {"inboxId": "cxxxxxxxxxxxx", "kind": "TEXT", "text": "a", "title": "a\x1f"},
        "body.title",
    ),
    ("string in a list", "/people", {"name": "M", "tags": ["cabcdefghij\x01"]}, "body.tags"),
    (
        "long text with an escape",
        "/people",
        {"name": "M", "description": "a\x1b[31mb"},
        "body.description",
    ),
    ("long text with DEL", "/webhooks", {**WEBHOOK, "description": "a\x7fb"}, "body.description"),
]


@pytest.mark.parametrize(
    ("kind", "route", "payload", "field_name"), REFUSED, ids=[r[0] for r in REFUSED]
)
async def test_control_characters_in_single_line_strings_are_400_naming_the_field(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    kind: str,
    route: str,
    payload: dict[str, Any],
    field_name: str,
) -> None:
    r = await client.post(route, json=payload, headers=office_a.headers)
    assert r.status_code == 400, (kind, r.text)
    body = error_of(r)
    assert body["code"] == "VALIDATION_ERROR"
    assert body["details"].startswith(f"{field_name}:"), body["details"]
    assert "control character" in body["details"]


async def test_a_nested_models_name_with_a_control_character_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact = await make_contact(session, office_a.id)
    await session.commit()
    partner = {"id": "cpartner0001", "name": "Maria\x0bSouza"}
    r = await client.post(
        f"/integration/partner/contacts/{contact.id}/link",
        json={"partner": partner},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "body.partner.name" in error_of(r)["details"]


async def test_a_rename_with_a_control_character_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await make_inbox(session, office_a.id, "Caixa")
    await session.commit()
    r = await client.patch(f"/inbox/{inbox.id}", json={"name": "x\x08"}, headers=office_a.headers)
    assert r.status_code == 400
    assert "body.name" in error_of(r)["details"]
    kept = await client.get(f"/inbox/{inbox.id}", headers=office_a.headers)
    assert kept.json()["name"] == "Caixa"


async def test_long_text_keeps_tabs_and_line_breaks(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    text = "Primeira linha\n\tsegunda linha\r\nterceira"
    r = await client.post(
        "/people", json={"name": "Maria", "description": text}, headers=office_a.headers
    )
    assert r.status_code == 201, r.text
    assert r.json()["description"] == text
    r = await client.post(
        "/webhooks", json={**WEBHOOK, "description": text}, headers=office_a.headers
    )
    assert r.status_code == 201, r.text
    assert r.json()["description"] == text


async def test_every_request_body_is_a_body_model() -> None:
    """The rule lives in ``BodyModel``: a body on another base would escape it."""
    bodies: list[type[BaseModel]] = []
    for router in domain_routers():
        for route in router.routes:
            field = getattr(route, "body_field", None)
            annotation = getattr(getattr(field, "field_info", None), "annotation", None)
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                bodies.append(annotation)
    assert len(bodies) > 30
    assert [b.__name__ for b in bodies if not issubclass(b, BodyModel)] == []
