"""The catalogue of actions walked (issue 43): every action documented in the API document,
checked when saved (a bad reference refused, naming it), and run from each side that names
it: rules by their names, flow steps by theirs, one implementation behind both."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, get_args

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.actions.catalogue import CATALOGUE
from officehub.automation.schemas import ActionName
from officehub.automation.vocabulary import RULE_ACTIONS
from officehub.flows import vocabulary as flow_vocabulary
from officehub.flows.schemas import StepMetadata, SystemAction
from officehub.kit.config import Settings
from tests import factories as f
from tests.automation_helpers import automation_worker, create_rule, runs
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of
from tests.receiver import running_receiver
from tests.webhook_helpers import Clock

MISSING = "cmissing0000000000000001"


@dataclass
class Setting:
    world: World
    refs: dict[str, str]


async def _setting(
    session: AsyncSession, client: httpx.AsyncClient, office: OfficeFixture, url: str
) -> Setting:
    world = await make_world(session, office.id)
    area = await f.make_legal_area(session, office.id)
    await session.commit()
    h = office.headers
    fast = await client.post(
        "/fast-message",
        json={"inboxId": world.inbox.id, "title": "Oi", "kind": "TEXT", "text": "Olá!"},
        headers=h,
    )
    status = await client.post("/ticket-statuses", json={"name": "Aberto"}, headers=h)
    assert fast.status_code == 201 and status.status_code == 201
    return Setting(
        world,
        {
            "fast": fast.json()["id"],
            "status": status.json()["id"],
            "area": area.id,
            "tag": world.tag.id,
            "column": world.columns[1].id,
            "funnel": world.funnel.id,
            "user": world.user.id,
            "url": url,
        },
    )


Params = Callable[[dict[str, str]], dict[str, Any]]

# A rule action: good params, and params naming a record that is not the office's (or a
# value refused) with the key the 400 names.
RULES: dict[str, tuple[Params, Params, str]] = {
    "SEND_FAST_MESSAGE": (
        lambda r: {"fastMessageId": r["fast"]},
        lambda r: {"fastMessageId": MISSING},
        "fastMessageId",
    ),
    "SCHEDULE_MESSAGE": (
        lambda r: {"text": "Retornamos em breve", "delayMinutes": 0},
        lambda r: {"templateName": "nao_aprovado"},
        "templateName",
    ),
    "MOVE_CARD": (
        lambda r: {"targetFunnelColumnId": r["column"]},
        lambda r: {"targetFunnelColumnId": MISSING},
        "targetFunnelColumnId",
    ),
    "TAG_CONVERSATION": (lambda r: {"tagId": r["tag"]}, lambda r: {"tagId": MISSING}, "tagId"),
    "ASSIGN_LEGAL_AREA": (
        lambda r: {"legalAreaId": r["area"]},
        lambda r: {"legalAreaId": MISSING},
        "legalAreaId",
    ),
    "CREATE_TICKET": (
        lambda r: {"title": "Ligar", "ticketStatusId": r["status"]},
        lambda r: {"title": "Ligar", "ticketStatusId": MISSING},
        "ticketStatusId",
    ),
    "FIRE_WEBHOOK": (
        lambda r: {"url": r["url"]},
        lambda r: {"url": "ftp://example.com/x"},
        "url",
    ),
    "PAUSE_AUTOMATION": (
        lambda r: {"durationMinutes": 30},
        lambda r: {"durationMinutes": 0},
        "durationMinutes",
    ),
}

# A flow step: good metadata, and metadata naming a record that is not the office's.
FLOWS: dict[str, tuple[Params, Params | None, str]] = {
    "ASSIGN_USER": (lambda r: {"userId": r["user"]}, lambda r: {"userId": MISSING}, "userId"),
    "ASSIGN_AGENT": (lambda r: {"agentId": r["user"]}, lambda r: {"agentId": MISSING}, "agentId"),
    "ADD_LABELS": (lambda r: {"tagIds": [r["tag"]]}, lambda r: {"tagIds": [MISSING]}, "tagIds"),
    "CHANGE_CRM_COLUMN": (
        lambda r: {"funnelId": r["funnel"], "funnelColumnId": r["column"]},
        lambda r: {"funnelId": r["funnel"], "funnelColumnId": MISSING},
        "funnelColumnId",
    ),
    "CREATE_TICKET": (
        lambda r: {"ticketTitle": "Ligar", "ticketStatusId": r["status"]},
        lambda r: {"ticketTitle": "Ligar", "ticketStatusId": MISSING},
        "ticketStatusId",
    ),
    "FIRE_WEBHOOK": (
        lambda r: {"webhookUrl": r["url"]},
        lambda r: {"webhookUrl": "ftp://example.com/x"},
        "webhookUrl",
    ),
    # not a catalogue action: it answers the contact (no reference to refuse)
    "SEARCH_MOVEMENTS": (lambda r: {}, None, ""),
}


def test_the_walk_covers_the_catalogue_and_both_vocabularies() -> None:
    assert set(RULES) == set(RULE_ACTIONS) == set(get_args(ActionName.__value__))
    assert set(FLOWS) == set(get_args(SystemAction.__value__))
    refs = {k: "x" for k in ("fast", "status", "area", "tag", "column", "funnel", "user")}
    refs["url"] = "https://example.com"
    from_flows = {
        spec.name
        for action, (good, _bad, _key) in FLOWS.items()
        for spec, _params in flow_vocabulary.to_run(
            action, StepMetadata.model_validate(good(refs)), payload={}
        )
    }
    from_rules = {entry.spec.name for entry in RULE_ACTIONS.values()}
    assert from_rules | from_flows == set(CATALOGUE)
    # the shared ones: one implementation behind each side's name
    assert RULE_ACTIONS["TAG_CONVERSATION"].spec.name in from_flows
    assert RULE_ACTIONS["MOVE_CARD"].spec.name in from_flows
    assert {"CREATE_TICKET", "FIRE_WEBHOOK"} <= from_flows


async def test_every_rule_action_is_documented_with_its_parameters_and_an_example(
    client: httpx.AsyncClient,
) -> None:
    document = (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    action = schemas["Action"]
    assert action["discriminator"]["propertyName"] == "action"
    mapping = action["discriminator"]["mapping"]
    assert set(mapping) == set(RULE_ACTIONS)
    for name, entry in RULE_ACTIONS.items():
        documented = schemas[mapping[name].split("/")[-1]]
        assert documented["properties"]["action"]["const"] == name
        params_ref = documented["properties"]["actionParams"]["$ref"]
        params = schemas[params_ref.split("/")[-1]]
        model = entry.spec.params
        wanted = {field.alias or key for key, field in model.model_fields.items()}
        assert set(params["properties"]) == wanted, name
        assert params["additionalProperties"] is False
        [example] = documented["examples"]
        assert example["action"] == name
        model.model_validate(example["actionParams"])  # the example is valid


@pytest.mark.parametrize("name", sorted(RULES))
async def test_each_rule_action_refuses_a_bad_reference_and_runs_from_a_rule(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    name: str,
) -> None:
    good, bad, key = RULES[name]
    async with running_receiver() as receiver:
        s = await _setting(session, client, office_a, receiver.url)
        r = await client.post(
            "/automation-rules",
            json={
                "name": "x",
                "triggerEvent": "chat.message.received",
                "actions": [{"action": name, "actionParams": bad(s.refs)}],
            },
            headers=office_a.headers,
        )
        assert r.status_code == 400, r.text
        assert f"body.actions.0.actionParams.{key}" in error_of(r)["details"]
        rule = await create_rule(
            client, office_a, actions=[{"action": name, "actionParams": good(s.refs)}]
        )
        r = await client.post(
            f"/conversation/{s.world.conversation.id}/messages/inbound",
            json={"text": "Oi"},
            headers=office_a.headers,
        )
        assert r.status_code == 201
        await automation_worker(app, settings, Clock()).run_until_idle()
        [run] = await runs(client, office_a, rule["id"])
        [outcome] = run["actions"]
        assert outcome["status"] in ("done", "scheduled"), outcome
        assert (
            await client.get(f"/automation-rules/{rule['id']}", headers=office_a.headers)
        ).json()["failureCount"] == 0


def _system(ident: str, action: str, meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": ident,
        "content": "",
        "type": "system",
        "systemAction": action,
        "metadata": meta,
        "nextStepId": None,
    }


async def _flow(
    client: httpx.AsyncClient, office: OfficeFixture, inbox_id: str, step: dict[str, Any]
) -> httpx.Response:
    return await client.post(
        "/flow/",
        json={
            "name": "Passo",
            "inboxId": inbox_id,
            "content": {"steps": [step], "initialStepId": step["id"]},
        },
        headers=office.headers,
    )


Check = Callable[[httpx.AsyncClient, OfficeFixture, Setting], Awaitable[None]]


@pytest.mark.parametrize("action", sorted(FLOWS))
async def test_each_flow_step_action_refuses_a_bad_reference_and_runs_from_a_flow(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    action: str,
) -> None:
    good, bad, key = FLOWS[action]
    async with running_receiver() as receiver:
        s = await _setting(session, client, office_a, receiver.url)
        if bad is not None:
            r = await _flow(client, office_a, s.world.inbox.id, _system("s1", action, bad(s.refs)))
            assert r.status_code == 400, r.text
            assert f"metadata.{key}" in error_of(r)["details"]
        r = await _flow(client, office_a, s.world.inbox.id, _system("s1", action, good(s.refs)))
        assert r.status_code == 201, r.text
        r = await client.post(
            f"/conversation/{s.world.conversation.id}/messages/inbound",
            json={"text": "Oi"},
            headers=office_a.headers,
        )
        assert r.status_code == 201
        await automation_worker(app, settings, Clock()).run_until_idle()
        r = await client.get(
            f"/conversation/{s.world.conversation.id}/flow-session", headers=office_a.headers
        )
        assert r.status_code == 200, r.text
        logged = [step for step in r.json()["steps"] if step["stepId"] == "s1"]
        assert logged and logged[-1]["outcome"] == "DONE", logged
        assert "FAILED" not in {step["outcome"] for step in logged}
