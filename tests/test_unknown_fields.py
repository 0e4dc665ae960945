"""A body field the operation does not take is refused, never ignored (contract: bodies).

``400 UNKNOWN_FIELD`` naming the field, and nothing changes: a caller who believed
``PATCH /people/{id} {"legalHold": true}`` held the client's data must learn it did not.
Checked over every JSON body of the OpenAPI document, as the tenant matrix is, and through
a running server for the cases that once answered 200.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from tests.factories import make_contact, make_inbox, make_tag
from tests.helpers import OfficeFixture, error_of, outbox

UNKNOWN = "officehubNoSuchField"
ANY_ID = "cxxxxxxxxxxxxxxxx"
MIN_JSON_BODIES = 60  # the API has over 70 JSON bodies: fewer is a broken document


def _json_bodies(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    found = [
        (method.upper(), path, operation["requestBody"]["content"]["application/json"])
        for path, operations in doc["paths"].items()
        for method, operation in operations.items()
        if "application/json" in operation.get("requestBody", {}).get("content", {})
    ]
    assert len(found) > MIN_JSON_BODIES, len(found)
    return found


def _schemas_reached(doc: dict[str, Any], schema: Any, seen: set[str]) -> None:
    if isinstance(schema, dict):
        ref = schema.get("$ref")
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            if name not in seen:
                seen.add(name)
                _schemas_reached(doc, doc["components"]["schemas"][name], seen)
        for value in schema.values():
            _schemas_reached(doc, value, seen)
    elif isinstance(schema, list):
        for value in schema:
            _schemas_reached(doc, value, seen)


async def test_every_json_body_refuses_an_unknown_field_naming_it(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    doc = (await client.get("/openapi.json")).json()
    for method, path, _ in _json_bodies(doc):
        concrete = re.sub(r"\{[^}]+\}", ANY_ID, path)
        r = await client.request(method, concrete, json={UNKNOWN: True}, headers=office_a.headers)
        assert r.status_code == 400, (method, path, r.status_code, r.text)
        body = error_of(r)
        assert body["code"] == "UNKNOWN_FIELD", (method, path, body)
        assert f"body.{UNKNOWN}" in body["message"], (method, path, body)


async def test_the_document_closes_every_json_body_with_additional_properties_false(
    client: httpx.AsyncClient,
) -> None:
    """Every object schema with named properties that a JSON body reaches says
    ``additionalProperties: false``; free-form maps (no properties) stay open."""
    doc = (await client.get("/openapi.json")).json()
    reached: set[str] = set()
    for _, _, content in _json_bodies(doc):
        _schemas_reached(doc, content["schema"], reached)
    objects = [n for n in reached if "properties" in doc["components"]["schemas"][n]]
    assert len(objects) > MIN_JSON_BODIES, len(objects)
    open_ = [n for n in objects if doc["components"]["schemas"][n].get("additionalProperties")]
    assert open_ == [], open_
    for name in objects:
        assert doc["components"]["schemas"][name]["additionalProperties"] is False, name


async def test_a_legal_hold_sent_to_the_contact_patch_is_refused_and_changes_nothing(
    server_url: str, office_a: OfficeFixture, session: AsyncSession, app: FastAPI
) -> None:
    contact = await make_contact(session, office_a.id, name="Maria Souza")
    await session.commit()
    events_before = len(await outbox(app, office_a.id))
    async with httpx.AsyncClient(base_url=server_url, headers=office_a.headers) as c:
        r = await c.patch(f"/people/{contact.id}", json={"legalHold": True, "name": "Outra"})
        assert r.status_code == 400
        body = error_of(r)
        assert body["code"] == "UNKNOWN_FIELD"
        assert "body.legalHold" in body["message"]
        read = (await c.get(f"/people/{contact.id}")).json()
    assert read["name"] == "Maria Souza"
    assert not read.get("legalHold")
    assert len(await outbox(app, office_a.id)) == events_before


async def test_a_misspelt_tag_field_is_refused_naming_it_and_the_tag_keeps_its_name(
    server_url: str, office_a: OfficeFixture, session: AsyncSession
) -> None:
    inbox = await make_inbox(session, office_a.id)
    tag = await make_tag(session, office_a.id, inbox.id, name="Urgente")
    await session.commit()
    async with httpx.AsyncClient(base_url=server_url, headers=office_a.headers) as c:
        r = await c.patch(f"/tag/{tag.id}", json={"nmae": "Outro"})
        assert r.status_code == 400
        body = error_of(r)
        assert body["code"] == "UNKNOWN_FIELD"
        assert body["message"] == "Unknown field: body.nmae"
        assert (await c.get(f"/tag/{tag.id}")).json()["name"] == "Urgente"


async def test_an_unknown_field_is_named_before_a_missing_required_one(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A create missing its name and carrying a misspelling: the misspelling is the code
    and the message, and the details still list the missing field."""
    r = await client.post("/tag", json={"nmae": "Urgente"}, headers=office_a.headers)
    assert r.status_code == 400
    body = error_of(r)
    assert body["code"] == "UNKNOWN_FIELD"
    assert body["message"] == "Unknown field: body.nmae"
    assert "body.name" in body["details"]
    assert (await client.get("/tag", headers=office_a.headers)).json()["data"] == []


async def test_an_unknown_field_inside_a_nested_object_is_named_with_its_path(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    step = {"id": "s1", "content": "Olá", "type": "text", "nextStepId": None, "colour": "red"}
    r = await client.post(
        "/flow",
        json={"name": "Triagem", "content": {"steps": [step], "initialStepId": "s1"}},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    body = error_of(r)
    assert body["code"] == "UNKNOWN_FIELD"
    assert "body.content.steps.0.text.colour" in body["message"]
    listed = (await client.get("/flow", headers=office_a.headers)).json()
    assert listed["data"] == []


async def test_an_action_param_the_action_does_not_take_is_refused_naming_it(
    client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    """``actionParams`` is an object per action: a misspelt key is not kept to fail (or do
    nothing) at run time."""
    inbox = await make_inbox(session, office_a.id)
    tag = await make_tag(session, office_a.id, inbox.id)
    await session.commit()
    rule = {
        "name": "Marcar",
        "triggerEvent": "chat.message.received",
        "actions": [{"action": "TAG_CONVERSATION", "actionParams": {"tagId": tag.id}}],
        "elseActions": None,
    }
    bad = {**rule, "actions": [{"action": "TAG_CONVERSATION", "actionParams": {"tagID": tag.id}}]}
    r = await client.post("/automation-rules", json=bad, headers=office_a.headers)
    assert r.status_code == 400
    body = error_of(r)
    assert body["code"] == "UNKNOWN_FIELD", body
    assert body["message"] == "Unknown field: body.actions.0.actionParams.tagID"
    assert (await client.get("/automation-rules", headers=office_a.headers)).json()["data"] == []
    created = await client.post("/automation-rules", json=rule, headers=office_a.headers)
    assert created.status_code == 201, created.text
    moved = {"actions": [{"action": "MOVE_CARD", "actionParams": {"tagId": tag.id}}]}
    r = await client.patch(
        f"/automation-rules/{created.json()['id']}", json=moved, headers=office_a.headers
    )
    assert error_of(r)["code"] == "UNKNOWN_FIELD"
    read = await client.get(f"/automation-rules/{created.json()['id']}", headers=office_a.headers)
    assert read.json()["actions"] == rule["actions"]
