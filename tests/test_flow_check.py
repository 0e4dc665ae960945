"""``POST /flow/check`` (issue 42, beyond the spec): a create's body checked as a save would
check it, answered 200 with the problems by step and the warnings, writing nothing."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.audit.models import AuditEntry
from officehub.events.models import OutboxEvent
from officehub.flows.models import Flow
from tests import factories as f
from tests.helpers import OfficeFixture, error_of
from tests.test_flows import flow_body, list_step, system, text

pytestmark = pytest.mark.anyio
PATH = "/flow/check"


async def _inbox(session: AsyncSession, office_id: str) -> str:
    inbox = await f.make_inbox(session, office_id)
    await session.commit()
    return inbox.id


async def _check(
    client: httpx.AsyncClient, office: OfficeFixture, body: dict[str, Any]
) -> dict[str, Any]:
    r = await client.post(PATH, json=body, headers=office.headers)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    assert set(answer) == {"valid", "problems", "warnings"}, answer
    return answer


def _reasons(found: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(p["stepId"], p["reason"]) for p in found]


async def test_the_check_needs_a_key(client: httpx.AsyncClient) -> None:
    body = flow_body("c" + "0" * 24, [text("s1")])
    r = await client.post(PATH, json=body)
    assert r.status_code == 401 and error_of(r)["code"] == "UNAUTHORIZED"
    r = await client.post(PATH, json=body, headers={"x-service-api-key": "nope"})
    assert r.status_code == 401 and error_of(r)["code"] == "UNAUTHORIZED"


async def test_a_sound_flow_is_valid_and_an_unreachable_step_is_a_warning(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    answer = await _check(client, office_a, flow_body(inbox_id, [text("s1", "s2"), text("s2")]))
    assert answer == {"valid": True, "problems": [], "warnings": []}
    answer = await _check(client, office_a, flow_body(inbox_id, [text("s1"), text("s2")]))
    assert answer["valid"] is True and answer["problems"] == []
    assert answer["warnings"] == [
        {
            "stepId": "s2",
            "reason": "UNREACHABLE",
            "details": "no path from initialStepId reaches this step",
        }
    ]
    # the trailing slash is accepted, as everywhere
    r = await client.post(
        f"{PATH}/", json=flow_body(inbox_id, [text("s1")]), headers=office_a.headers
    )
    assert r.status_code == 200 and r.json()["valid"] is True


async def test_the_check_answers_the_problems_a_save_refuses_by_step(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    steps = [
        list_step("s1", "s2", "nowhere"),
        text("s2", "s3"),
        system("s3", "ADD_LABELS", None),
        text("lonely"),
    ]
    body = flow_body(inbox_id, steps)
    answer = await _check(client, office_a, body)
    assert answer["valid"] is False
    assert _reasons(answer["problems"]) == [
        ("s1", "NEXT_STEP_NOT_FOUND"),
        ("s3", "MISSING_METADATA"),
    ]
    assert answer["problems"][0]["details"] == "options[1].nextStepId 'nowhere' names no step"
    assert _reasons(answer["warnings"]) == [("lonely", "UNREACHABLE")]
    # the save refuses the same body for the same problems
    r = await client.post("/flow/", json=body, headers=office_a.headers)
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_FLOW_GRAPH"
    for problem in answer["problems"]:
        described = f"step {problem['stepId']!r}: {problem['reason']}: {problem['details']}"
        assert described in error_of(r)["details"]
    # a cycle that never waits, and a missing first step
    answer = await _check(
        client, office_a, flow_body(inbox_id, [text("s1", "s2"), text("s2", "s1")])
    )
    assert _reasons(answer["problems"]) == [("s1", "CYCLE_WITHOUT_WAIT")]
    answer = await _check(client, office_a, flow_body(inbox_id, [text("s1")], initial="s9"))
    assert _reasons(answer["problems"]) == [("s9", "INITIAL_STEP_NOT_FOUND")]


async def test_references_to_another_offices_records_are_problems_as_on_create(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox_a = await _inbox(session, office_a.id)
    inbox_b = await _inbox(session, office_b.id)
    tag_b = await f.make_tag(session, office_b.id, inbox_b)
    await session.commit()
    # another office's inbox: 404, as create answers
    for path in (PATH, "/flow/"):
        r = await client.post(path, json=flow_body(inbox_b, [text("s1")]), headers=office_a.headers)
        assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND", path
    # another office's tag in a step: a problem of that step, as create refuses it
    body = flow_body(inbox_a, [system("s1", "ADD_LABELS", {"tagIds": [tag_b.id]})])
    answer = await _check(client, office_a, body)
    assert _reasons(answer["problems"]) == [("s1", "UNKNOWN_REFERENCE")]
    assert tag_b.id in answer["problems"][0]["details"]
    r = await client.post("/flow/", json=body, headers=office_a.headers)
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_FLOW_GRAPH"
    # the same body is sound for the tag's own office
    own = flow_body(inbox_b, [system("s1", "ADD_LABELS", {"tagIds": [tag_b.id]})])
    assert (await _check(client, office_b, own))["valid"] is True


BAD: list[tuple[str, Any, str]] = [
    # (what is changed, how, the field the 400 names)
    ("name", "", "body.name"),
    ("inboxId", "not-an-id", "body.inboxId"),
    ("content", {"steps": [], "initialStepId": "s1"}, "body.content.steps"),
    (
        "content",
        {"steps": [{"id": "s1", "type": "media", "content": "x"}], "initialStepId": "s1"},
        "body.content.steps.0.media.content",
    ),
]


@pytest.mark.parametrize(("key", "value", "field"), BAD)
async def test_bad_input_is_refused_naming_the_field(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    key: str,
    value: Any,
    field: str,
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    body = flow_body(inbox_id, [text("s1")])
    body[key] = value
    r = await client.post(PATH, json=body, headers=office_a.headers)
    assert r.status_code == 400, r.text
    err = error_of(r)
    assert err["code"] == "VALIDATION_ERROR" and field in err["details"], err


async def test_a_field_a_create_does_not_take_is_refused(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    for body in (
        {**flow_body(inbox_id, [text("s1")]), "dryRun": True},
        flow_body(inbox_id, [{**text("s1"), "colour": "red"}]),
    ):
        r = await client.post(PATH, json=body, headers=office_a.headers)
        assert r.status_code == 400, r.text
        err = error_of(r)
        assert err["code"] == "UNKNOWN_FIELD", err
        assert "dryRun" in err["details"] or "colour" in err["details"], err


async def _counts(app: FastAPI, office_id: str) -> tuple[int, int, int]:
    await app.state.audit.flush()
    async with app.state.sessionmaker() as s:
        out = []
        for model in (Flow, OutboxEvent, AuditEntry):
            stmt = select(func.count()).select_from(model).where(model.office_id == office_id)
            out.append(int(await s.scalar(stmt) or 0))
        return out[0], out[1], out[2]


async def test_the_check_writes_nothing_and_emits_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    sound = flow_body(inbox_id, [text("s1", "s2"), text("s2")])
    assert (await client.post("/flow/", json=sound, headers=office_a.headers)).status_code == 201
    before = await _counts(app, office_a.id)
    assert before[0] == 1 and before[2] >= 1  # the create is counted: the counts can move
    for body in (sound, flow_body(inbox_id, [system("s1", "ADD_LABELS", None)])):
        await _check(client, office_a, body)
    assert await _counts(app, office_a.id) == before
