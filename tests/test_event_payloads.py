"""Typed event payloads: each event's payload is a model, and the catalogue serves its JSON
Schema and an example, so that integrators can generate types for webhook bodies."""

from __future__ import annotations

import datetime
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from jsonschema import Draft202012Validator
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import events as contact_events
from officehub.events.catalogue import EVENT_NAMES, payload_model
from officehub.events.service import emit
from officehub.kit.config import Settings
from officehub.webhooks.events import WebhookTestPayload
from tests.helpers import OfficeFixture
from tests.receiver import running_receiver
from tests.test_event_catalogue import emit_every_event
from tests.test_sdk import generate_client
from tests.webhook_helpers import create_webhook, delivery_worker


async def _catalogue(client: httpx.AsyncClient, office: OfficeFixture) -> dict[str, Any]:
    r = await client.get("/webhooks/events", headers=office.headers)
    assert r.status_code == 200, r.text
    return {e["name"]: e for e in r.json()["data"]}


def _problems(schema: dict[str, Any], payload: dict[str, Any]) -> list[str]:
    """What keeps ``payload`` from being an instance of ``schema``, every key of it
    described there (a field the schema does not name is a problem too)."""
    Draft202012Validator.check_schema(schema)
    found = [e.message for e in Draft202012Validator(schema).iter_errors(payload)]
    unnamed = sorted(set(payload) - set(schema["properties"]))
    return found + [f"{key} is not in the schema" for key in unnamed]


async def test_every_emitted_payload_validates_against_the_served_schema(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    events = await emit_every_event(app, settings, client, session, office_a)
    catalogue = await _catalogue(client, office_a)
    assert {e.name for e in events} == EVENT_NAMES
    invalid = {
        f"{e.name} #{n}": problems
        for n, e in enumerate(events)
        if (problems := _problems(catalogue[e.name]["payloadSchema"], e.data))
    }
    assert invalid == {}
    for event in events:
        # Its model writes the stored payload back as it was, every key and value (in the
        # same order on SQLite; PostgreSQL's jsonb keeps none).
        model = payload_model(event.name).model_validate(event.data)
        again = model.model_dump(mode="json", by_alias=True)
        assert again == event.data, event.name
        if app.state.engine.dialect.name == "sqlite":
            assert json.dumps(again) == json.dumps(event.data), event.name


async def test_the_catalogue_serves_a_schema_and_an_example_for_every_event(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    catalogue = await _catalogue(client, office_a)
    document = app.openapi()
    enum = document["components"]["schemas"]["EventName"]["enum"]
    assert sorted(catalogue) == sorted(enum) == sorted(EVENT_NAMES)
    for name, entry in catalogue.items():
        assert entry["payloadSchema"]["type"] == "object", name
        assert entry["payloadSchema"]["properties"], name
        assert entry["examplePayload"], name
        # The document lists the webhook body of each: ``data`` is the payload's model.
        body = document["webhooks"][name]["post"]["requestBody"]["content"]["application/json"]
        component = body["schema"]["$ref"].rsplit("/", 1)[1]
        schema = document["components"]["schemas"][component]
        assert schema["required"] == [
            "id",
            "event",
            "createdAt",
            "officeId",
            "subjectId",
            "sequence",
            "data",
        ]
        assert schema["properties"]["event"]["const"] == name
        assert body["example"]["data"] == entry["examplePayload"]


async def test_each_catalogue_example_validates_against_its_own_schema(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    catalogue = await _catalogue(client, office_a)
    invalid = {
        name: problems
        for name, entry in catalogue.items()
        if (problems := _problems(entry["payloadSchema"], entry["examplePayload"]))
    }
    assert invalid == {}
    for name, entry in catalogue.items():
        assert set(entry["examplePayload"]) == set(entry["payloadSchema"]["properties"]), name


async def test_emit_refuses_a_payload_of_another_events_model(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    wrong: Any = WebhookTestPayload(webhook_id="cm3k9x2f7000babcd1234efgh", message="x")
    async with app.state.sessionmaker() as s:
        with pytest.raises(TypeError, match=r"contact\.created carries ContactOut"):
            await emit(s, office_a.id, contact_events.CREATED, wrong)


async def test_a_generated_client_reads_a_delivered_webhook_body_into_its_event_model(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url, events=["contact.created"])
        r = await client.post("/people", json={"name": "Maria"}, headers=office_a.headers)
        assert r.status_code == 201, r.text
        await delivery_worker(app, settings).run_until_idle()
    [got] = receiver.received
    sys.path.insert(0, str(await generate_client(app, tmp_path)))
    try:
        models: Any = importlib.import_module("officehub_client.models")
        body = models.ContactCreatedEvent.from_dict(got.json)
        assert isinstance(body.data, models.ContactOut)
        assert body.data.name == "Maria" and body.data.id == r.json()["id"]
        assert body.event == "contact.created" and body.office_id == office_a.id
        assert isinstance(body.created_at, datetime.datetime)  # format: date-time
        assert isinstance(body.data.created_at, datetime.datetime)
    finally:
        sys.path.remove(str(tmp_path / "python"))
        for name in [n for n in sys.modules if n.split(".")[0] == "officehub_client"]:
            del sys.modules[name]
