"""Automation rule routes and validation: the spec's PATCH rules, each in a named test."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.schemas import Conditions
from officehub.events.catalogue import EVENT_NAMES
from tests import factories as f
from tests.automation_helpers import create_rule
from tests.helpers import OfficeFixture, error_of
from tests.server import concurrent_client, fire

ROUTES = [
    ("POST", "/automation-rules"),
    ("GET", "/automation-rules"),
    ("GET", "/automation-rules/cxxxxxxxxxxxx"),
    ("PATCH", "/automation-rules/cxxxxxxxxxxxx"),
    ("DELETE", "/automation-rules/cxxxxxxxxxxxx"),
    ("GET", "/automation-rules/cxxxxxxxxxxxx/runs"),
    ("POST", "/automation-rules/cxxxxxxxxxxxx/test"),
]
TAG_ACTION = "TAG_CONVERSATION"
RACE_ROUNDS = 5
RACE_PATCHES = 8


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"
    r = await client.request(method, path, json={}, headers={"x-service-api-key": "nope"})
    assert r.status_code == 401


async def _tag(session: AsyncSession, office_id: str) -> str:
    inbox = await f.make_inbox(session, office_id)
    tag = await f.make_tag(session, office_id, inbox.id)
    await session.commit()
    return tag.id


def _tag_action(tag_id: str) -> dict[str, Any]:
    return {"action": TAG_ACTION, "actionParams": {"tagId": tag_id}}


async def test_create_read_list_update_delete_rule(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    tag_id = await _tag(session, office_a.id)
    h = office_a.headers
    rule = await create_rule(
        client,
        office_a,
        name="Boas-vindas",
        conditions={"messageText": "olá"},
        actions=[_tag_action(tag_id)],
        elseActions=[{"action": "PAUSE_AUTOMATION", "actionParams": {"durationMinutes": 5}}],
        priority=3,
    )
    assert set(rule) == {
        "id",
        "officeId",
        "integrationId",
        "name",
        "enabled",
        "triggerEvent",
        "conditions",
        "actions",
        "elseActions",
        "priority",
        "runOncePerConversation",
        "skipWhileHumanAssigned",
        "failureCount",
        "lastFailure",
        "createdAt",
        "updatedAt",
        "warnings",
    }
    assert rule["officeId"] == office_a.id and rule["integrationId"] is None
    assert rule["enabled"] is True and rule["priority"] == 3
    assert rule["conditions"] == {"messageText": "olá"}
    assert rule["actions"] == [_tag_action(tag_id)]
    assert (await client.get(f"/automation-rules/{rule['id']}", headers=h)).json() == rule
    listed = (await client.get("/automation-rules", headers=h)).json()
    assert listed["totalResults"] == 1 and listed["data"] == [rule]
    r = await client.patch(f"/automation-rules/{rule['id']}", json={"name": "Novo"}, headers=h)
    assert r.status_code == 200 and r.json()["name"] == "Novo"
    assert r.json()["elseActions"] == rule["elseActions"]
    r = await client.delete(f"/automation-rules/{rule['id']}", headers=h)
    assert r.status_code == 200 and r.json()["id"] == rule["id"]
    assert (await client.get(f"/automation-rules/{rule['id']}", headers=h)).status_code == 404


async def test_list_filters_by_trigger_event_and_enabled(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    a = await create_rule(client, office_a, triggerEvent="crm.lead.moved")
    b = await create_rule(client, office_a, enabled=False)
    h = office_a.headers
    r = await client.get("/automation-rules", params={"triggerEvent": "crm.lead.moved"}, headers=h)
    assert [x["id"] for x in r.json()["data"]] == [a["id"]]
    r = await client.get("/automation-rules", params={"enabled": "false"}, headers=h)
    assert [x["id"] for x in r.json()["data"]] == [b["id"]]
    r = await client.get("/automation-rules", params={"triggerEvent": "nope"}, headers=h)
    assert r.status_code == 400 and "query.triggerEvent" in error_of(r)["details"]


async def test_another_offices_rule_is_not_found(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    rule = await create_rule(client, office_b)
    h = office_a.headers
    for method, path in [
        ("GET", f"/automation-rules/{rule['id']}"),
        ("PATCH", f"/automation-rules/{rule['id']}"),
        ("DELETE", f"/automation-rules/{rule['id']}"),
        ("GET", f"/automation-rules/{rule['id']}/runs"),
        ("POST", f"/automation-rules/{rule['id']}/test"),
    ]:
        r = await client.request(method, path, json={}, headers=h)
        assert r.status_code == 404, (method, path)
        assert error_of(r)["code"] == "NOT_FOUND"
    listed = (await client.get("/automation-rules", headers=h)).json()
    assert listed["totalResults"] == 0


async def test_bad_path_id_is_400(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    r = await client.get("/automation-rules/not-an-id", headers=office_a.headers)
    assert r.status_code == 400 and "path.id" in error_of(r)["details"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": ""}, "body.name"),
        ({"name": "x" * 101}, "body.name"),
        ({"actions": []}, "body.actions"),
        ({"actions": [{"action": "PAUSE_AUTOMATION", "actionParams": {}}] * 6}, "body.actions"),
        ({"triggerEvent": "chat.message.deleted"}, "body.triggerEvent"),
        ({"integrationId": "not-an-id"}, "body.integrationId"),
        ({"conditions": {"colour": "red"}}, "body.conditions.colour"),
        ({"actions": [{"action": "SEND_SMOKE", "actionParams": {}}]}, "body.actions.0.action"),
    ],
)
async def test_create_refuses_bad_input_naming_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture, change: dict[str, Any], field: str
) -> None:
    body = {
        "name": "Regra",
        "triggerEvent": "chat.message.received",
        "actions": [{"action": "PAUSE_AUTOMATION", "actionParams": {}}],
        **change,
    }
    r = await client.post("/automation-rules", json=body, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field in error_of(r)["details"]


async def test_name_is_1_to_100_characters(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    assert (await create_rule(client, office_a, name="x"))["name"] == "x"
    assert (await create_rule(client, office_a, name="x" * 100))["name"] == "x" * 100


async def test_actions_are_1_to_5_and_else_actions_at_most_5(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    rule = await create_rule(
        client,
        office_a,
        conditions={"messageText": "a"},
        actions=[pause] * 5,
        elseActions=[pause] * 5,
    )
    assert len(rule["actions"]) == 5 and len(rule["elseActions"]) == 5
    r = await client.patch(
        f"/automation-rules/{rule['id']}",
        json={"elseActions": [pause] * 6},
        headers=office_a.headers,
    )
    assert r.status_code == 400 and "body.elseActions" in error_of(r)["details"]


async def test_trigger_event_accepts_exactly_the_catalogue(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    catalogue = {
        e["name"]
        for e in (await client.get("/webhooks/events", headers=office_a.headers)).json()["data"]
    }
    assert catalogue == set(EVENT_NAMES)
    for name in sorted(catalogue):
        assert (await create_rule(client, office_a, triggerEvent=name))["triggerEvent"] == name
    for name in ("crm.lead", "CRM.LEAD.CREATED", "chat.message.unknown", ""):
        r = await client.post(
            "/automation-rules",
            json={
                "name": "x",
                "triggerEvent": name,
                "actions": [{"action": "PAUSE_AUTOMATION", "actionParams": {}}],
            },
            headers=office_a.headers,
        )
        assert r.status_code == 400 and "body.triggerEvent" in error_of(r)["details"], name


async def test_integration_id_can_be_set_to_null_and_an_id_must_be_the_offices(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    mine = await f.make_integration(session, office_a.id, inbox.id)
    inbox_b = await f.make_inbox(session, office_b.id)
    theirs = await f.make_integration(session, office_b.id, inbox_b.id)
    await session.commit()
    rule = await create_rule(client, office_a, integrationId=mine.id)
    assert rule["integrationId"] == mine.id
    r = await client.patch(
        f"/automation-rules/{rule['id']}", json={"integrationId": None}, headers=office_a.headers
    )
    assert r.status_code == 200 and r.json()["integrationId"] is None
    r = await client.patch(
        f"/automation-rules/{rule['id']}",
        json={"integrationId": theirs.id},
        headers=office_a.headers,
    )
    assert r.status_code == 400 and "body.integrationId" in error_of(r)["details"]


async def test_else_actions_refused_without_effective_conditions(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    for conditions in (None, {}, {"messageText": ""}, {"restartOnReturn": True}):
        body: dict[str, Any] = {
            "name": "x",
            "triggerEvent": "chat.message.received",
            "actions": [pause],
            "elseActions": [pause],
        }
        if conditions is not None:
            body["conditions"] = conditions
        r = await client.post("/automation-rules", json=body, headers=office_a.headers)
        assert r.status_code == 400, conditions
        assert error_of(r)["code"] == "ELSE_ACTIONS_WITHOUT_CONDITIONS"
    rule = await create_rule(client, office_a)
    r = await client.patch(
        f"/automation-rules/{rule['id']}", json={"elseActions": [pause]}, headers=office_a.headers
    )
    assert r.status_code == 400 and error_of(r)["code"] == "ELSE_ACTIONS_WITHOUT_CONDITIONS"
    r = await client.patch(
        f"/automation-rules/{rule['id']}",
        json={"conditions": {"messageText": "oi"}, "elseActions": [pause]},
        headers=office_a.headers,
    )
    assert r.status_code == 200 and r.json()["elseActions"] == [pause]


# Every filter key of the When part, each an effective condition on its own.
CONDITION_VALUES = {
    "funnelColumnId": "ccolumn000001",
    "fromFunnelColumnId": "ccolumn000001",
    "toFunnelColumnId": "ccolumn000002",
    "assignedToUserId": "cuser0000001",
    "assignedToDepartmentId": "cdept0000001",
    "messageText": "oi",
    "templateName": "retorno_atendimento",
    "withinBusinessHours": False,  # false is a condition too (issue 32)
}


async def test_every_condition_key_alone_is_an_effective_condition_that_allows_else_actions(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    filters = {
        field.alias or name
        for name, field in Conditions.model_fields.items()
        if name != "restart_on_return"
    }
    assert set(CONDITION_VALUES) == filters  # a new key is covered here too
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    for key, value in CONDITION_VALUES.items():
        body = {
            "name": key,
            "triggerEvent": "chat.message.received",
            "conditions": {key: value},
            "actions": [pause],
            "elseActions": [pause],
        }
        r = await client.post("/automation-rules", json=body, headers=office_a.headers)
        assert r.status_code == 201, (key, r.text)
        assert r.json()["elseActions"] == [pause], key
        bare = await create_rule(client, office_a)
        r = await client.patch(
            f"/automation-rules/{bare['id']}",
            json={"conditions": {key: value}, "elseActions": [pause]},
            headers=office_a.headers,
        )
        assert r.status_code == 200, (key, r.text)
        assert r.json()["elseActions"] == [pause], key


async def test_else_branch_cleared_when_the_filter_is_removed_though_the_payload_holds_one(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    rule = await create_rule(
        client, office_a, conditions={"messageText": "oi"}, elseActions=[pause]
    )
    r = await client.patch(
        f"/automation-rules/{rule['id']}",
        json={"conditions": {}, "elseActions": [pause]},
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["conditions"] == {} and r.json()["elseActions"] is None
    stored = (await client.get(f"/automation-rules/{rule['id']}", headers=office_a.headers)).json()
    assert stored["elseActions"] is None


async def test_else_branch_cleared_when_the_filter_is_removed_and_only_the_rule_holds_one(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    rule = await create_rule(
        client, office_a, conditions={"assignedToUserId": "cuser0000001"}, elseActions=[pause]
    )
    r = await client.patch(
        f"/automation-rules/{rule['id']}",
        json={"conditions": {"assignedToUserId": "", "restartOnReturn": True}},
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["elseActions"] is None


async def test_else_actions_null_removes_the_branch(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    rule = await create_rule(
        client, office_a, conditions={"messageText": "oi"}, elseActions=[pause]
    )
    r = await client.patch(
        f"/automation-rules/{rule['id']}", json={"elseActions": None}, headers=office_a.headers
    )
    assert r.status_code == 200 and r.json()["elseActions"] is None
    assert r.json()["conditions"] == {"messageText": "oi"}


async def test_patch_refuses_null_for_required_fields(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    rule = await create_rule(client, office_a)
    for field in ("name", "enabled", "triggerEvent", "actions", "priority"):
        r = await client.patch(
            f"/automation-rules/{rule['id']}", json={field: None}, headers=office_a.headers
        )
        assert r.status_code == 400 and f"body.{field}" in error_of(r)["details"], field


@pytest.mark.parametrize(
    ("action", "params", "key"),
    [
        ("SEND_FAST_MESSAGE", {}, "fastMessageId"),
        ("SEND_FAST_MESSAGE", {"fastMessageId": "cmissing0001"}, "fastMessageId"),
        ("SEND_FAST_MESSAGE", {"templateName": "boas_vindas"}, "templateName"),
        ("SCHEDULE_MESSAGE", {}, "text"),
        ("SCHEDULE_MESSAGE", {"text": "oi", "delayMinutes": -1}, "delayMinutes"),
        ("SCHEDULE_MESSAGE", {"templateName": "lembrete"}, "templateName"),
        ("MOVE_CARD", {}, "targetFunnelColumnId"),
        ("MOVE_CARD", {"targetFunnelColumnId": "cmissing0001"}, "targetFunnelColumnId"),
        ("TAG_CONVERSATION", {"tagId": "cmissing0001"}, "tagId"),
        ("ASSIGN_LEGAL_AREA", {"legalAreaId": "cmissing0001"}, "legalAreaId"),
        ("CREATE_TICKET", {"ticketStatusId": "cmissing0001"}, "title"),
        ("CREATE_TICKET", {"title": "Ligar"}, "ticketStatusId"),
        ("CREATE_TICKET", {"title": "Ligar", "ticketStatusId": "cmissing0001"}, "ticketStatusId"),
        ("FIRE_WEBHOOK", {}, "url"),
        ("FIRE_WEBHOOK", {"url": "ftp://example.com/x"}, "url"),
        ("FIRE_WEBHOOK", {"url": "https://example.com", "secret": "short"}, "secret"),
        ("FIRE_WEBHOOK", {"url": "https://example.com", "method": "TRACE"}, "method"),
        ("PAUSE_AUTOMATION", {"durationMinutes": "soon"}, "durationMinutes"),
        ("PAUSE_AUTOMATION", {"resumeOnTemplateSent": "yes"}, "resumeOnTemplateSent"),
    ],
)
async def test_action_params_are_checked_naming_branch_index_and_key(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    action: str,
    params: dict[str, Any],
    key: str,
) -> None:
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    body = {
        "name": "x",
        "triggerEvent": "chat.message.received",
        "conditions": {"messageText": "oi"},
        "actions": [pause],
        "elseActions": [pause, {"action": action, "actionParams": params}],
    }
    r = await client.post("/automation-rules", json=body, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert f"body.elseActions.1.actionParams.{key}" in error_of(r)["details"]


async def test_referenced_records_of_another_office_are_refused(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    their_tag = await _tag(session, office_b.id)
    r = await client.post(
        "/automation-rules",
        json={
            "name": "x",
            "triggerEvent": "chat.message.received",
            "actions": [_tag_action(their_tag)],
        },
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "body.actions.0.actionParams.tagId" in error_of(r)["details"]


async def test_fire_webhook_url_passes_the_webhook_checks(
    app: Any, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    app.state.settings.webhook_allow_private = False
    action = {"action": "FIRE_WEBHOOK", "actionParams": {"url": "http://127.0.0.1:9/x"}}
    r = await client.post(
        "/automation-rules",
        json={"name": "x", "triggerEvent": "chat.message.received", "actions": [action]},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    body = error_of(r)
    assert body["code"] == "WEBHOOK_URL_NOT_ALLOWED"
    assert "body.actions.0.actionParams.url" in body["details"]


async def test_template_name_must_be_an_approved_template_of_the_catalogue(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    """A rule's `templateName` names an APPROVED template of the office's catalogue (of the
    rule's integration, or of any official integration when the rule applies to all)."""

    def catalogue(*entries: tuple[str, str]) -> dict[str, Any]:
        return {
            "data": [
                {
                    "name": name,
                    "status": status,
                    "category": "UTILITY",
                    "language": "pt_BR",
                    "components": [{"type": "BODY", "text": "Olá {{1}}!"}],
                    "id": f"tpl-{name}",
                }
                for name, status in entries
            ]
        }

    for office, device, body in (
        (
            office_a,
            "5511900000001",
            catalogue(("boas_vindas", "APPROVED"), ("pendente", "PENDING")),
        ),
        (office_b, "5511900000002", catalogue(("so_do_b", "APPROVED"))),
    ):
        inbox = await f.make_inbox(session, office.id)
        official = await f.make_integration(
            session, office.id, inbox.id, "WHATSAPP_OFFICIAL", device_id=device
        )
        await session.commit()
        r = await client.put(
            f"/integration/{official.id}/whatsapp-templates", json=body, headers=office.headers
        )
        assert r.status_code == 200, r.text
    action = {"action": "SCHEDULE_MESSAGE", "actionParams": {"templateName": "boas_vindas"}}
    rule = await create_rule(client, office_a, actions=[action])
    assert rule["actions"][0]["actionParams"]["templateName"] == "boas_vindas"
    for name in ("pendente", "desconhecido", "so_do_b"):
        refused = {"action": "SCHEDULE_MESSAGE", "actionParams": {"templateName": name}}
        r = await client.post(
            "/automation-rules",
            json={"name": "x", "triggerEvent": "chat.message.received", "actions": [refused]},
            headers=office_a.headers,
        )
        assert r.status_code == 400 and "templateName" in error_of(r)["details"], name


async def test_concurrent_patches_never_leave_else_actions_without_an_effective_condition(
    server_url: str, office_a: OfficeFixture
) -> None:
    """One PATCH drops the rule's filter (its else-branch goes with it) while others add an
    else-branch. The PATCH reads the rule locked, so in whatever order they land the rule
    never ends with ``elseActions`` and no effective condition (the others are refused,
    400, or come first and are cleared). Several rounds: each a fresh rule."""
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    async with concurrent_client(server_url) as client:
        for _round in range(RACE_ROUNDS):
            rule = await create_rule(client, office_a, conditions={"messageText": "oi"})
            path = f"/automation-rules/{rule['id']}"

            def patch(i: int, path: str = path) -> Awaitable[httpx.Response]:
                body: dict[str, Any] = {"conditions": {}} if i == 0 else {"elseActions": [pause]}
                return client.patch(path, json=body, headers=office_a.headers)

            answers = await fire(RACE_PATCHES, patch)
            assert {a.status_code for a in answers} <= {200, 400}, [a.text for a in answers]
            assert answers[0].status_code == 200, answers[0].text
            stored = (await client.get(path, headers=office_a.headers)).json()
            assert stored["conditions"] == {} and stored["elseActions"] is None, stored
