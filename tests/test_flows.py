"""Conversation flows: the schema, the graph check on save, CRUD."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from tests import factories as f
from tests.helpers import OfficeFixture, error_of

ROUTES = [
    ("POST", "/flow/"),
    ("GET", "/flow"),
    ("GET", "/flow/cxxxxxxxxxxxx"),
    ("PATCH", "/flow/cxxxxxxxxxxxx"),
    ("DELETE", "/flow/cxxxxxxxxxxxx"),
]


def text(ident: str, next_step_id: str | None = None, content: str = "Olá") -> dict[str, Any]:
    return {"id": ident, "content": content, "type": "text", "nextStepId": next_step_id}


def list_step(ident: str, *targets: str | None) -> dict[str, Any]:
    return {
        "id": ident,
        "content": "Escolha uma opção",
        "type": "list",
        "nextStepId": None,
        "options": [
            {"text": f"Opção {i + 1}", "title": f"T{i + 1}", "value": f"v{i + 1}", "nextStepId": t}
            for i, t in enumerate(targets)
        ],
    }


def system(
    ident: str, action: str, metadata: dict[str, Any] | None, next_step_id: str | None = None
) -> dict[str, Any]:
    return {
        "id": ident,
        "content": "",
        "type": "system",
        "systemAction": action,
        "nextStepId": next_step_id,
        "metadata": metadata,
    }


def flow_body(inbox_id: str, steps: list[dict[str, Any]], initial: str = "s1") -> dict[str, Any]:
    return {
        "name": "Boas-vindas",
        "description": "Primeiro contato",
        "inboxId": inbox_id,
        "color": "#00AA00",
        "content": {"steps": steps, "initialStepId": initial},
    }


async def _inbox(session: AsyncSession, office_id: str) -> str:
    inbox = await f.make_inbox(session, office_id)
    await session.commit()
    return inbox.id


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"
    r = await client.request(method, path, json={}, headers={"x-service-api-key": "nope"})
    assert r.status_code == 401


async def test_create_read_list_update_delete_flow(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    other_inbox = await _inbox(session, office_a.id)
    h = office_a.headers
    steps = [
        {**text("s1", "s2"), "position": {"x": 10, "y": 20.5}},
        list_step("s2", "s3", None),
        system(
            "s3",
            "FIRE_WEBHOOK",
            {
                "webhookUrl": "https://example.com/hook",
                "webhookMethod": "PUT",
                "ticketPriority": "HIGH",
            },
        ),
        {"id": "s4", "content": "https://example.com/a.pdf", "type": "media", "nextStepId": None},
    ]
    body = flow_body(inbox_id, steps)
    del body["color"]
    r = await client.post("/flow/", json=body, headers=h)
    assert r.status_code == 201, r.text
    flow = r.json()
    assert flow["name"] == "Boas-vindas" and flow["inboxId"] == inbox_id
    assert flow["color"] is None and flow["isSocialFlow"] is False
    assert flow["officeId"] == office_a.id
    stored = flow["content"]["steps"]
    assert stored[0]["position"] == {"x": 10, "y": 20.5} and stored[0]["metadata"] is None
    assert stored[1]["options"][0] == {
        "text": "Opção 1",
        "title": "T1",
        "value": "v1",
        "nextStepId": "s3",
    }
    assert stored[2]["metadata"] == {
        "webhookUrl": "https://example.com/hook",
        "webhookMethod": "PUT",
        "ticketPriority": "HIGH",
    }
    assert stored[2]["systemAction"] == "FIRE_WEBHOOK"
    assert flow["content"]["initialStepId"] == "s1"
    assert flow["warnings"] == [
        {
            "stepId": "s4",
            "reason": "UNREACHABLE",
            "details": "no path from initialStepId reaches this step",
        }
    ]
    assert (await client.get(f"/flow/{flow['id']}", headers=h)).json() == flow

    await client.post("/flow", json=flow_body(other_inbox, [text("s1")]), headers=h)
    r = await client.get("/flow", params={"inboxId": inbox_id}, headers=h)
    assert r.status_code == 200
    assert [x["id"] for x in r.json()["data"]] == [flow["id"]] and r.json()["totalResults"] == 1
    assert (await client.get("/flow", headers=h)).json()["totalResults"] == 2

    r = await client.patch(
        f"/flow/{flow['id']}",
        json={
            "name": "Novo",
            "color": "#123456",
            "isSocialFlow": True,
            "content": {"steps": [text("a", "b"), text("b"), text("s1", "a")]},
        },
        headers=h,
    )
    assert r.status_code == 200, r.text
    updated = r.json()
    assert updated["name"] == "Novo" and updated["isSocialFlow"] is True
    assert updated["color"] == "#123456" and updated["description"] == "Primeiro contato"
    assert updated["content"]["initialStepId"] == "s1"  # kept when left out
    assert updated["warnings"] == []
    r = await client.patch(f"/flow/{flow['id']}", json={"description": "x"}, headers=h)
    assert r.json()["content"] == updated["content"] and r.json()["name"] == "Novo"

    r = await client.delete(f"/flow/{flow['id']}", headers=h)
    assert r.status_code == 200 and r.json()["id"] == flow["id"]
    assert (await client.get(f"/flow/{flow['id']}", headers=h)).status_code == 404


async def test_another_offices_flow_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    r = await client.post(
        "/flow/", json=flow_body(inbox_id, [text("s1")]), headers=office_a.headers
    )
    ident = r.json()["id"]
    hb = office_b.headers
    for method in ("GET", "PATCH", "DELETE"):
        r = await client.request(method, f"/flow/{ident}", json={"name": "x"}, headers=hb)
        assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"
    # another office's inbox: neither a flow of it nor a filter by it
    r = await client.post("/flow/", json=flow_body(inbox_id, [text("s1")]), headers=hb)
    assert r.status_code == 404
    assert (await client.get("/flow", params={"inboxId": inbox_id}, headers=hb)).status_code == 404
    assert (await client.get("/flow", headers=hb)).json()["totalResults"] == 0


async def _bad(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    body: dict[str, Any],
    field: str,
    code: str = "VALIDATION_ERROR",
) -> None:
    r = await client.post("/flow/", json=body, headers=office.headers)
    assert r.status_code == 400, r.text
    err = error_of(r)
    assert err["code"] == code, err
    assert field in err["details"], err


SCHEMA_CASES: list[tuple[str, Any, str]] = [
    # (what is changed, how, the field the 400 names)
    ("name", "", "body.name"),
    ("name", None, "body.name"),
    ("inboxId", "not-an-id", "body.inboxId"),
    ("isSocialFlow", "maybe", "body.isSocialFlow"),
    ("content", {"steps": []}, "body.content.initialStepId"),
    ("content", {"steps": [], "initialStepId": "s1"}, "body.content.steps"),
]


@pytest.mark.parametrize(("key", "value", "field"), SCHEMA_CASES)
async def test_flow_fields_follow_the_schema(
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
    await _bad(client, office_a, body, field)


STEP_CASES: list[tuple[dict[str, Any], str]] = [
    # (the step, the field the 400 names)
    ({"id": "s1", "type": "text"}, "body.content.steps.0.text.content"),
    ({"content": "x", "type": "text"}, "body.content.steps.0.text.id"),
    ({"id": "s1", "content": "x"}, "body.content.steps.0"),
    ({"id": "s1", "content": "x", "type": "audio"}, "body.content.steps.0"),
    ({**text("s1"), "position": {"x": 1}}, "body.content.steps.0.text.position.y"),
    ({**text("s1"), "position": {"x": 1, "y": 2, "z": 3}}, "body.content.steps.0.text.position.z"),
    ({**text("s1"), "metadata": {"color": "red"}}, "body.content.steps.0.text.metadata.color"),
    (
        {**text("s1"), "metadata": {"departmentIds": ["d1", "d2", "d3", "d4", "d5", "d6"]}},
        "body.content.steps.0.text.metadata.departmentIds",
    ),
    (
        {
            **text("s1"),
            "metadata": {"webhookHeaders": [{"key": f"X-{i}", "value": "v"} for i in range(21)]},
        },
        "body.content.steps.0.text.metadata.webhookHeaders",
    ),
    (
        {**text("s1"), "metadata": {"webhookHeaders": [{"key": "X-A"}]}},
        "body.content.steps.0.text.metadata.webhookHeaders.0.value",
    ),
    (
        {**text("s1"), "metadata": {"ticketPriority": "URGENT"}},
        "body.content.steps.0.text.metadata.ticketPriority",
    ),
    (
        {**text("s1"), "metadata": {"webhookMethod": "HEAD"}},
        "body.content.steps.0.text.metadata.webhookMethod",
    ),
    (
        {**text("s1"), "metadata": {"isAvailable": "maybe"}},
        "body.content.steps.0.text.metadata.isAvailable",
    ),
    (
        {**text("s1"), "metadata": {"tagIds": "t1"}},
        "body.content.steps.0.text.metadata.tagIds",
    ),
    ({**text("s1"), "type": "list"}, "body.content.steps.0.list.options"),
    (
        {**list_step("s1", None), "options": [{"text": "a", "title": "b", "value": "c"}]},
        "body.content.steps.0.list.options.0.nextStepId",
    ),
    (
        {**list_step("s1", None), "options": [{"title": "b", "value": "c", "nextStepId": None}]},
        "body.content.steps.0.list.options.0.text",
    ),
    (system("s1", "SEND_EMAIL", {}), "body.content.steps.0.system.systemAction"),
    ({**text("s1"), "type": "system"}, "body.content.steps.0.system.systemAction"),
    ({**text("s1"), "type": "media"}, "body.content.steps.0.media.content"),
    ({**text("s1"), "content": "one\x01two"}, "body.content.steps.0.text.content"),
]


@pytest.mark.parametrize(("step", "field"), STEP_CASES)
async def test_steps_follow_the_schema(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    step: dict[str, Any],
    field: str,
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    # A key the step's objects do not take ("no other keys") is named as unknown.
    code = "UNKNOWN_FIELD" if field.endswith((".position.z", ".metadata.color")) else None
    await _bad(client, office_a, flow_body(inbox_id, [step]), field, code or "VALIDATION_ERROR")


async def test_multi_line_step_content_and_option_text_are_accepted(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    step = list_step("s1", None)
    step["content"] = "Olá!\nEscolha:\r\n"
    step["options"][0]["text"] = "Primeira\tlinha\nsegunda"
    r = await client.post("/flow/", json=flow_body(inbox_id, [step]), headers=office_a.headers)
    assert r.status_code == 201, r.text
    assert r.json()["content"]["steps"][0]["options"][0]["text"] == "Primeira\tlinha\nsegunda"


async def test_update_checks_its_fields_and_path_id(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    h = office_a.headers
    ident = (await client.post("/flow/", json=flow_body(inbox_id, [text("s1")]), headers=h)).json()[
        "id"
    ]
    r = await client.patch("/flow/bad-id", json={"name": "x"}, headers=h)
    assert r.status_code == 400 and "path.id" in error_of(r)["details"]
    r = await client.patch(f"/flow/{ident}", json={"name": ""}, headers=h)
    assert r.status_code == 400 and "body.name" in error_of(r)["details"]
    r = await client.patch(f"/flow/{ident}", json={"content": {"steps": [{"id": "s1"}]}}, headers=h)
    assert r.status_code == 400 and "body.content.steps.0" in error_of(r)["details"]
    r = await client.get("/flow", params={"inboxId": "x"}, headers=h)
    assert r.status_code == 400 and "query.inboxId" in error_of(r)["details"]
    r = await client.get("/flow/x y", headers=h)
    assert r.status_code == 400 and "path.id" in error_of(r)["details"]


# --- the graph check: one test per INVALID_FLOW_GRAPH reason -------------------------------


async def _refused(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    inbox_id: str,
    steps: list[dict[str, Any]],
    step_id: str,
    reason: str,
    initial: str = "s1",
) -> str:
    r = await client.post(
        "/flow/", json=flow_body(inbox_id, steps, initial), headers=office.headers
    )
    assert r.status_code == 400, r.text
    err = error_of(r)
    assert err["code"] == "INVALID_FLOW_GRAPH", err
    assert f"step {step_id!r}: {reason}" in err["details"], err
    assert step_id in err["message"]
    details: str = err["details"]
    return details


async def test_step_ids_must_be_unique(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    await _refused(client, office_a, inbox_id, [text("s1"), text("s1")], "s1", "DUPLICATE_STEP_ID")


async def test_initial_step_must_exist(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    await _refused(
        client, office_a, inbox_id, [text("s1")], "start", "INITIAL_STEP_NOT_FOUND", "start"
    )


async def test_every_next_step_id_must_resolve(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    await _refused(client, office_a, inbox_id, [text("s1", "nowhere")], "s1", "NEXT_STEP_NOT_FOUND")
    details = await _refused(
        client, office_a, inbox_id, [list_step("s1", None, "gone")], "s1", "NEXT_STEP_NOT_FOUND"
    )
    assert "options[1].nextStepId 'gone'" in details


@pytest.mark.parametrize(
    ("action", "key"),
    [
        ("ASSIGN_AGENT", "metadata.agentId or metadata.departmentId"),
        ("ADD_LABELS", "metadata.tagIds"),
        ("CHANGE_CRM_COLUMN", "metadata.funnelId"),
        ("CREATE_TICKET", "metadata.ticketTitle"),
        ("FIRE_WEBHOOK", "metadata.webhookUrl"),
    ],
)
async def test_system_step_needs_the_metadata_of_its_action(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    action: str,
    key: str,
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    details = await _refused(
        client, office_a, inbox_id, [system("s1", action, None)], "s1", "MISSING_METADATA"
    )
    assert key in details
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [system("s1", action, {"tagIds": []} if action == "ADD_LABELS" else {})],
        "s1",
        "MISSING_METADATA",
    )


async def test_change_crm_column_needs_a_column_too(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [system("s1", "CHANGE_CRM_COLUMN", {"funnelId": "cfunnel0001"})],
        "s1",
        "MISSING_METADATA",
    )
    assert "metadata.funnelColumnId" in details


async def test_assign_user_names_a_user_of_the_office(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    foreign = await f.make_user(session, office_b.id)
    mine = await f.make_user(session, office_a.id)
    await session.commit()
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [system("s1", "ASSIGN_USER", {"userId": foreign.id})],
        "s1",
        "UNKNOWN_REFERENCE",
    )
    assert f"metadata.userId {foreign.id!r}" in details
    r = await client.post(
        "/flow/",
        json=flow_body(inbox_id, [system("s1", "ASSIGN_USER", {"userId": mine.id})]),
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text


async def test_change_crm_column_names_a_funnel_and_its_own_column(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    funnel, columns = await f.make_funnel(session, office_a.id, inbox_id)
    _other, other_columns = await f.make_funnel(session, office_a.id, inbox_id, name="Outro")
    await session.commit()
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [
            system(
                "s1",
                "CHANGE_CRM_COLUMN",
                {"funnelId": funnel.id, "funnelColumnId": other_columns[0].id},
            )
        ],
        "s1",
        "UNKNOWN_REFERENCE",
    )
    assert "is no column of the funnel" in details
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [
            system(
                "s1",
                "CHANGE_CRM_COLUMN",
                {"funnelId": "cnofunnel000", "funnelColumnId": columns[0].id},
            )
        ],
        "s1",
        "UNKNOWN_REFERENCE",
    )
    assert "is no funnel of the office" in details
    r = await client.post(
        "/flow/",
        json=flow_body(
            inbox_id,
            [
                system(
                    "s1",
                    "CHANGE_CRM_COLUMN",
                    {"funnelId": funnel.id, "funnelColumnId": columns[1].id},
                )
            ],
        ),
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text


async def test_add_labels_and_assign_agent_name_records_of_the_office(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [system("s1", "ADD_LABELS", {"tagIds": ["cnotag00000"]})],
        "s1",
        "UNKNOWN_REFERENCE",
    )
    assert "metadata.tagIds 'cnotag00000'" in details
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [system("s1", "ASSIGN_AGENT", {"departmentIds": ["cnodept0000"]})],
        "s1",
        "UNKNOWN_REFERENCE",
    )
    assert "cnodept0000" in details


async def test_fire_webhook_url_must_pass_the_webhook_checks(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [system("s1", "FIRE_WEBHOOK", {"webhookUrl": "ftp://example.com/x"})],
        "s1",
        "WEBHOOK_NOT_SENDABLE",
    )
    assert "metadata.webhookUrl" in details
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [
            system(
                "s1",
                "FIRE_WEBHOOK",
                {
                    "webhookUrl": "https://example.com",
                    "webhookHeaders": [{"key": "Host", "value": "x"}],
                },
            )
        ],
        "s1",
        "WEBHOOK_NOT_SENDABLE",
    )
    assert "metadata.webhookHeaders Host" in details


async def test_a_cycle_through_steps_that_never_wait_is_refused(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [text("s1", "s2"), system("s2", "SEARCH_MOVEMENTS", None, "s3"), text("s3", "s2")],
        "s2",
        "CYCLE_WITHOUT_WAIT",
    )
    assert "s2 -> s3 -> s2" in details
    await _refused(client, office_a, inbox_id, [text("s1", "s1")], "s1", "CYCLE_WITHOUT_WAIT")


async def test_a_cycle_through_a_list_step_is_allowed(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    steps = [text("s1", "menu"), list_step("menu", "s2", None), text("s2", "menu")]
    r = await client.post("/flow/", json=flow_body(inbox_id, steps), headers=office_a.headers)
    assert r.status_code == 201, r.text
    assert r.json()["warnings"] == []


async def test_update_that_touches_content_is_checked(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    h = office_a.headers
    flow = (await client.post("/flow/", json=flow_body(inbox_id, [text("s1")]), headers=h)).json()
    r = await client.patch(
        f"/flow/{flow['id']}", json={"content": {"steps": [text("s2")]}}, headers=h
    )
    assert r.status_code == 400
    assert error_of(r)["code"] == "INVALID_FLOW_GRAPH"
    assert "step 's1': INITIAL_STEP_NOT_FOUND" in error_of(r)["details"]
    r = await client.patch(
        f"/flow/{flow['id']}",
        json={"content": {"steps": [text("s2", "s2")], "initialStepId": "s2"}},
        headers=h,
    )
    assert r.status_code == 400 and "CYCLE_WITHOUT_WAIT" in error_of(r)["details"]
    assert (await client.get(f"/flow/{flow['id']}", headers=h)).json()["content"] == flow["content"]


async def test_every_problem_is_named(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox_id = await _inbox(session, office_a.id)
    details = await _refused(
        client,
        office_a,
        inbox_id,
        [text("s1", "x"), system("s2", "ADD_LABELS", None)],
        "s1",
        "NEXT_STEP_NOT_FOUND",
    )
    assert "step 's2': MISSING_METADATA" in details


async def test_a_cycle_without_wait_is_refused_beside_the_flows_other_problems(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """One save names every problem: a loop that never waits is found though other steps
    lack their metadata or point nowhere (only duplicate ids stop the loop search, whose
    steps would be ambiguous)."""
    inbox_id = await _inbox(session, office_a.id)
    steps = [
        text("s1", "s2"),
        text("s2", "s1"),
        system("s3", "ADD_LABELS", None),
        text("s4", "nowhere"),
    ]
    details = await _refused(client, office_a, inbox_id, steps, "s3", "MISSING_METADATA")
    assert "step 's4': NEXT_STEP_NOT_FOUND" in details
    assert "step 's1': CYCLE_WITHOUT_WAIT" in details and "s1 -> s2 -> s1" in details


async def test_every_step_a_lists_options_reach_is_reachable_whatever_their_order(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The walk from the initial step goes on past a step reached twice: the menu's third
    option leads to its second one, and the first is still reached (no warning)."""
    inbox_id = await _inbox(session, office_a.id)
    steps = [list_step("menu", "a", "b", "c"), text("a"), text("b"), text("c", "b")]
    r = await client.post(
        "/flow/", json=flow_body(inbox_id, steps, "menu"), headers=office_a.headers
    )
    assert r.status_code == 201, r.text
    assert r.json()["warnings"] == []


async def test_a_cycle_is_named_from_the_first_step_in_order_that_does_not_wait(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The same flow gives the same message on every save: the loop is walked from the
    first step (in the flow's order) that does not wait, never from a list step, whose own
    ``nextStepId`` the walk does not start from."""
    inbox_id = await _inbox(session, office_a.id)
    menu = {**list_step("menu", "b"), "nextStepId": "a"}
    steps = [menu, text("b", "a"), text("a", "b")]
    details = await _refused(
        client, office_a, inbox_id, steps, "b", "CYCLE_WITHOUT_WAIT", initial="menu"
    )
    assert "b -> a -> b" in details
