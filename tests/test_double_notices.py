"""Double notices (issue 31): an enabled rule that messages the client on
``case.movement.created`` answers the CASE_NOTICES_TELL_TOO warning (on create, update,
read and list): case notices tell the client of movements too. Said, not prevented."""

from __future__ import annotations

from typing import Any

import httpx

from tests.automation_helpers import create_rule
from tests.helpers import OfficeFixture

SCHEDULE = {"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "Novidade", "delayMinutes": 5}}
PAUSE = {"action": "PAUSE_AUTOMATION", "actionParams": {}}


def codes(rule: dict[str, Any]) -> list[str]:
    return [w["code"] for w in rule["warnings"]]


async def test_a_rule_messaging_the_client_on_a_new_movement_is_warned_of_case_notices(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    rule = await create_rule(
        client, office_a, triggerEvent="case.movement.created", actions=[SCHEDULE]
    )
    assert codes(rule) == ["CASE_NOTICES_TELL_TOO"]
    assert "twice" in rule["warnings"][0]["message"]
    r = await client.get(f"/automation-rules/{rule['id']}", headers=h)
    assert codes(r.json()) == ["CASE_NOTICES_TELL_TOO"]
    r = await client.get("/automation-rules", headers=h)
    assert [codes(x) for x in r.json()["data"]] == [["CASE_NOTICES_TELL_TOO"]]
    # the rule is kept and still runs as written: the warning changes nothing
    assert rule["enabled"] is True and rule["actions"] == [SCHEDULE]
    r = await client.patch(f"/automation-rules/{rule['id']}", json={"enabled": False}, headers=h)
    assert r.status_code == 200 and codes(r.json()) == []
    r = await client.patch(f"/automation-rules/{rule['id']}", json={"enabled": True}, headers=h)
    assert codes(r.json()) == ["CASE_NOTICES_TELL_TOO"]
    r = await client.patch(f"/automation-rules/{rule['id']}", json={"actions": [PAUSE]}, headers=h)
    assert codes(r.json()) == []


async def test_a_send_in_the_else_branch_is_warned_too(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    rule = await create_rule(
        client,
        office_a,
        triggerEvent="case.movement.created",
        conditions={"withinBusinessHours": True},
        actions=[PAUSE],
        elseActions=[SCHEDULE],
    )
    assert codes(rule) == ["CASE_NOTICES_TELL_TOO"]


async def test_rules_on_other_events_or_without_a_send_are_not_warned(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    other = await create_rule(client, office_a, actions=[SCHEDULE])
    assert other["triggerEvent"] == "chat.message.received" and codes(other) == []
    quiet = await create_rule(
        client, office_a, triggerEvent="case.movement.created", actions=[PAUSE]
    )
    assert codes(quiet) == []
    stale = await create_rule(
        client, office_a, triggerEvent="case.source.stale", actions=[SCHEDULE]
    )
    assert codes(stale) == []
