"""The error contract: every error the service can return has the same body."""

from __future__ import annotations

import json
import logging

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from pydantic import Field

from officehub.events.catalogue import EVENT_NAMES
from officehub.events.service import emit
from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.logs import JsonFormatter
from officehub.kit.schemas import ApiModel
from tests.helpers import OfficeFixture, error_of, outbox


class Probe(ApiModel):
    name: str = Field(min_length=1, max_length=10)
    count: int


def probe_router() -> APIRouter:
    """Routes that exist only in these tests, to drive the generic handlers."""
    router = APIRouter()

    @router.post("/_probe")
    async def probe(body: Probe, office: OfficeDep) -> dict[str, str]:
        return {"name": body.name}

    @router.get("/_boom")
    async def boom() -> None:
        raise RuntimeError("secret internals /etc/passwd")

    @router.post("/_emit_then_fail")
    async def emit_then_fail(office: OfficeDep, session: SessionDep) -> None:
        await emit(session, office.office_id, "contact.created", {"id": "x"})
        raise RuntimeError("after emitting")

    @router.post("/_emit")
    async def emit_ok(office: OfficeDep, session: SessionDep) -> dict[str, str]:
        event = await emit(session, office.office_id, "contact.created", {"id": "x"})
        return {"id": event.id}

    return router


def with_probes(app: FastAPI) -> FastAPI:
    app.include_router(probe_router())
    return app


async def test_validation_error_names_each_field(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    with_probes(app)
    r = await client.post("/_probe", json={"name": "", "count": "many"}, headers=office_a.headers)
    assert r.status_code == 400
    body = error_of(r)
    assert body["code"] == "VALIDATION_ERROR"
    assert "body.name" in body["details"] and "body.count" in body["details"]


async def test_malformed_json_is_400(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    with_probes(app)
    r = await client.post(
        "/_probe",
        content=b'{"name": "a",',
        headers={**office_a.headers, "content-type": "application/json"},
    )
    assert r.status_code == 400
    assert error_of(r)["code"] == "MALFORMED_JSON"


async def test_unknown_route_is_404(client: httpx.AsyncClient) -> None:
    r = await client.get("/no/such/route")
    assert r.status_code == 404
    assert error_of(r)["code"] == "NOT_FOUND"


async def test_wrong_method_is_405(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    r = await client.delete("/webhooks/events", headers=office_a.headers)
    assert r.status_code == 405
    assert error_of(r)["code"] == "METHOD_NOT_ALLOWED"


async def test_json_body_over_1_mib_is_413(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    with_probes(app)
    big = b'{"name": "a", "count": 1, "pad": "' + b"x" * (1024 * 1024) + b'"}'
    r = await client.post(
        "/_probe", content=big, headers={**office_a.headers, "content-type": "application/json"}
    )
    assert r.status_code == 413
    assert error_of(r)["code"] == "PAYLOAD_TOO_LARGE"


async def test_streamed_json_body_over_1_mib_is_413(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A chunked body declares no length; it is counted as it arrives."""
    with_probes(app)

    async def chunks() -> object:
        yield b'{"name": "a", "count": 1, "pad": "'
        for _ in range(20):
            yield b"x" * 65536
        yield b'"}'

    r = await client.post(
        "/_probe",
        content=chunks(),  # type: ignore[arg-type]
        headers={**office_a.headers, "content-type": "application/json"},
    )
    assert r.status_code == 413
    assert error_of(r)["code"] == "PAYLOAD_TOO_LARGE"


async def test_unexpected_exception_is_500_without_trace(
    app: FastAPI, client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    with_probes(app)
    r = await client.get("/_boom")
    assert r.status_code == 500
    body = error_of(r)
    assert body["code"] == "INTERNAL_ERROR"
    assert "passwd" not in r.text and "Traceback" not in r.text
    assert r.headers["x-request-id"] in body["details"]


async def test_500_is_logged_with_trace_and_request_id(
    app: FastAPI, client: httpx.AsyncClient, caplog: pytest.LogCaptureFixture
) -> None:
    with_probes(app)
    with caplog.at_level(logging.ERROR, logger="officehub.request"):
        r = await client.get("/_boom")
    request_id = r.headers["x-request-id"]
    lines = [JsonFormatter().format(rec) for rec in caplog.records if rec.levelno >= logging.ERROR]
    assert any(request_id in line and "RuntimeError" in line for line in lines)


async def test_every_response_carries_request_id(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    with_probes(app)
    responses = [
        await client.get("/healthz"),
        await client.get("/webhooks/events"),
        await client.get("/webhooks/events", headers=office_a.headers),
        await client.get("/nowhere"),
        await client.get("/_boom"),
    ]
    ids = [r.headers.get("x-request-id") for r in responses]
    assert all(ids) and len(set(ids)) == len(ids)


async def test_incoming_request_id_is_kept(client: httpx.AsyncClient) -> None:
    r = await client.get("/healthz", headers={"x-request-id": "trace-abc-123"})
    assert r.headers["x-request-id"] == "trace-abc-123"


async def test_event_rolls_back_with_a_failed_request(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    with_probes(app)
    r = await client.post("/_emit_then_fail", headers=office_a.headers)
    assert r.status_code == 500
    assert await outbox(app, office_a.id) == []


async def test_event_is_recorded_with_a_successful_request(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    with_probes(app)
    r = await client.post("/_emit", headers=office_a.headers)
    assert r.status_code == 200
    events = await outbox(app, office_a.id)
    assert [e.id for e in events] == [r.json()["id"]]
    assert events[0].name == "contact.created" and events[0].depth == 0


async def test_trailing_slash_is_accepted_without_redirect(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/webhooks/events/", headers=office_a.headers)
    assert r.status_code == 200
    assert len(r.json()["data"]) == len(EVENT_NAMES)


async def test_no_log_line_contains_an_api_key(
    app: FastAPI,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    with_probes(app)
    with caplog.at_level(logging.DEBUG):
        await client.get("/webhooks/events", headers=office_a.headers)
        await client.get("/webhooks/events", headers={"x-service-api-key": office_a.key + "x"})
        await client.post("/_probe", json={"name": office_a.key}, headers=office_a.headers)
        await client.get("/_boom", headers=office_a.headers)
    lines = [JsonFormatter().format(rec) for rec in caplog.records]
    assert any(json.loads(line).get("route") == "/webhooks/events" for line in lines)
    assert not [line for line in lines if office_a.key in line]
    access = [rec for rec in caplog.records if rec.name == "officehub.request"]
    assert {getattr(rec, "office_id", None) for rec in access} >= {office_a.id}
