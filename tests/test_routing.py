"""Routing (issue 32): an inbox's assignment policy gives each new conversation to one of
its users who is ONLINE and under their capacity; the rest wait in the inbox's queue in
arrival order until someone frees up or comes online. docs/decisions.md, "Routing"."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from tests import factories as f
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire, running_server
from tests.test_flow_runtime import create_flow, inbound, work
from tests.test_flow_runtime import system as flow_system

ASSIGNED = "chat.conversation.assigned"


@dataclass
class World:
    office: OfficeFixture
    inbox_id: str
    integration_id: str
    people: list[str]


async def _world(
    session: AsyncSession,
    client: httpx.AsyncClient,
    office: OfficeFixture,
    policy: str = "ROUND_ROBIN",
    *,
    people: int = 6,
    by_legal_area: bool = False,
) -> World:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contacts = [
        await f.make_contact(session, office.id, name=f"Cliente {i}", phone=f"+55119{i:08d}")
        for i in range(people)
    ]
    await session.commit()
    r = await client.patch(
        f"/inbox/{inbox.id}",
        json={"assignment": {"policy": policy, "byLegalArea": by_legal_area}},
        headers=office.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["assignment"] == {"policy": policy, "byLegalArea": by_legal_area}
    return World(office, inbox.id, integration.id, [c.id for c in contacts])


async def _user(client: httpx.AsyncClient, world: World, name: str, **extra: Any) -> str:
    body = {
        "name": name,
        "email": f"{name.lower().replace(' ', '.')}@example.com",
        "inboxIds": [world.inbox_id],
        **extra,
    }
    r = await client.post("/user", json=body, headers=world.office.headers)
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


async def _arrive(client: httpx.AsyncClient, world: World, n: int, **extra: Any) -> dict[str, Any]:
    body = {
        "personId": world.people[n],
        "inboxId": world.inbox_id,
        "integrationId": world.integration_id,
        **extra,
    }
    r = await client.post("/conversation", json=body, headers=world.office.headers)
    assert r.status_code == 201, r.text
    answer: dict[str, Any] = r.json()
    return answer


async def _read(client: httpx.AsyncClient, world: World, ident: str) -> dict[str, Any]:
    r = await client.get(f"/conversation/{ident}", headers=world.office.headers)
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    return answer


async def _patch_user(
    client: httpx.AsyncClient, world: World, ident: str, body: dict[str, Any]
) -> httpx.Response:
    return await client.patch(f"/user/{ident}", json=body, headers=world.office.headers)


async def _close(client: httpx.AsyncClient, world: World, ident: str) -> None:
    r = await client.patch(
        f"/conversation/{ident}", json={"status": "CLOSED"}, headers=world.office.headers
    )
    assert r.status_code == 200, r.text


async def test_users_and_inboxes_show_the_routing_defaults(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A user is ONLINE with no capacity limit and no legal area until told otherwise; an
    inbox is MANUAL."""
    r = await client.post("/inbox", json={"name": "Geral"}, headers=office_a.headers)
    assert r.json()["assignment"] == {"policy": "MANUAL", "byLegalArea": False}
    r = await client.post(
        "/user", json={"name": "Ana", "email": "ana@example.com"}, headers=office_a.headers
    )
    body = r.json()
    assert (body["availability"], body["capacity"], body["legalAreaIds"]) == ("ONLINE", None, [])


async def test_manual_leaves_new_conversations_unassigned(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "MANUAL")
    await _user(client, world, "Ana")
    conversation = await _arrive(client, world, 0)
    assert conversation["assignedUserId"] is None
    assert await outbox(app, office_a.id, ASSIGNED) == []


async def test_round_robin_gives_conversations_in_turn(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "ROUND_ROBIN")
    users = sorted([await _user(client, world, name) for name in ("Ana", "Bia", "Caio")])
    got = [(await _arrive(client, world, n))["assignedUserId"] for n in range(6)]
    assert got == users + users


async def test_least_busy_picks_the_user_with_fewest_open(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "MANUAL")
    ana, bia = await _user(client, world, "Ana"), await _user(client, world, "Bia")
    for n, who in ((0, ana), (1, ana), (2, bia)):
        conversation = await _arrive(client, world, n)
        r = await client.patch(
            f"/conversation/{conversation['id']}",
            json={"assignedUserId": who},
            headers=office_a.headers,
        )
        assert r.status_code == 200
    r = await client.patch(
        f"/inbox/{world.inbox_id}",
        json={"assignment": {"policy": "LEAST_BUSY"}},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    assert (await _arrive(client, world, 3))["assignedUserId"] == bia  # 1 open against 2
    fifth = (await _arrive(client, world, 4))["assignedUserId"]
    sixth = (await _arrive(client, world, 5))["assignedUserId"]
    assert {fifth, sixth} == {ana, bia}, "tied at 2, then the other one at 3"


async def test_by_legal_area_restricts_to_users_of_the_area(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    labour = await f.make_legal_area(session, office_a.id, "Trabalho")
    family = await f.make_legal_area(session, office_a.id, "Família")
    world = await _world(session, client, office_a, "ROUND_ROBIN", by_legal_area=True)
    ana = await _user(client, world, "Ana", legalAreaIds=[labour.id])
    bia = await _user(client, world, "Bia", legalAreaIds=[family.id])
    for n in range(3):
        assert (await _arrive(client, world, n, legalAreaId=labour.id))["assignedUserId"] == ana
    assert (await _arrive(client, world, 3, legalAreaId=family.id))["assignedUserId"] == bia


async def test_by_legal_area_a_conversation_without_area_goes_to_anyone(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    labour = await f.make_legal_area(session, office_a.id, "Trabalho")
    world = await _world(session, client, office_a, "ROUND_ROBIN", by_legal_area=True)
    ana = await _user(client, world, "Ana", legalAreaIds=[labour.id])
    assert (await _arrive(client, world, 0))["assignedUserId"] == ana


async def test_by_legal_area_waits_when_nobody_handles_the_area_until_the_area_changes(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    labour = await f.make_legal_area(session, office_a.id, "Trabalho")
    family = await f.make_legal_area(session, office_a.id, "Família")
    world = await _world(session, client, office_a, "ROUND_ROBIN", by_legal_area=True)
    ana = await _user(client, world, "Ana", legalAreaIds=[labour.id])
    waiting = await _arrive(client, world, 0, legalAreaId=family.id)
    assert waiting["assignedUserId"] is None
    r = await client.patch(
        f"/conversation/{waiting['id']}",
        json={"legalAreaId": labour.id},
        headers=office_a.headers,
    )
    assert r.status_code == 200 and r.json()["assignedUserId"] == ana
    assert r.json()["legalAreaId"] == labour.id


async def test_offline_and_away_users_are_skipped(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "ROUND_ROBIN")
    await _user(client, world, "Ana", availability="OFFLINE")
    await _user(client, world, "Bia", availability="AWAY")
    caio = await _user(client, world, "Caio")
    got = {(await _arrive(client, world, n))["assignedUserId"] for n in range(3)}
    assert got == {caio}


async def test_inactive_users_are_skipped(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "ROUND_ROBIN")
    ana = await _user(client, world, "Ana")
    assert (await _patch_user(client, world, ana, {"isActive": False})).status_code == 200
    assert (await _arrive(client, world, 0))["assignedUserId"] is None


async def test_capacity_is_respected_and_the_rest_wait_unassigned(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "LEAST_BUSY")
    ana = await _user(client, world, "Ana", capacity=1)
    bia = await _user(client, world, "Bia", capacity=2)
    got = [(await _arrive(client, world, n))["assignedUserId"] for n in range(5)]
    assert Counter(got) == Counter({ana: 1, bia: 2, None: 2})


async def test_capacity_zero_receives_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "ROUND_ROBIN")
    await _user(client, world, "Ana", capacity=0)
    assert (await _arrive(client, world, 0))["assignedUserId"] is None


async def test_the_queue_is_assigned_in_arrival_order_when_someone_closes_one(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "ROUND_ROBIN")
    ana = await _user(client, world, "Ana", capacity=1)
    first, second, third = [await _arrive(client, world, n) for n in range(3)]
    assert first["assignedUserId"] == ana
    assert second["assignedUserId"] is None and third["assignedUserId"] is None
    await _close(client, world, first["id"])
    assert (await _read(client, world, second["id"]))["assignedUserId"] == ana
    assert (await _read(client, world, third["id"]))["assignedUserId"] is None
    await _close(client, world, second["id"])
    assert (await _read(client, world, third["id"]))["assignedUserId"] == ana
    assigned = await outbox(app, office_a.id, ASSIGNED)
    assert [e.data["id"] for e in assigned] == [first["id"], second["id"], third["id"]]


async def test_the_queue_is_assigned_when_someone_is_unassigned(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "ROUND_ROBIN")
    ana = await _user(client, world, "Ana", capacity=1)
    first, second = [await _arrive(client, world, n) for n in range(2)]
    r = await client.patch(
        f"/conversation/{first['id']}", json={"assignedUserId": None}, headers=office_a.headers
    )
    assert r.status_code == 200
    assert r.json()["assignedUserId"] is None, "unassigned by hand: it stays out of the queue"
    assert (await _read(client, world, second["id"]))["assignedUserId"] == ana


async def test_the_queue_is_assigned_when_someone_comes_online(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "ROUND_ROBIN")
    ana = await _user(client, world, "Ana", availability="OFFLINE")
    waiting = [await _arrive(client, world, n) for n in range(2)]
    assert [w["assignedUserId"] for w in waiting] == [None, None]
    assert await outbox(app, office_a.id, ASSIGNED) == []
    r = await _patch_user(client, world, ana, {"availability": "ONLINE"})
    assert r.status_code == 200 and r.json()["availability"] == "ONLINE"
    for w in waiting:
        assert (await _read(client, world, w["id"]))["assignedUserId"] == ana
    assert len(await outbox(app, office_a.id, ASSIGNED)) == 2


async def test_the_queue_is_assigned_when_capacity_rises(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "ROUND_ROBIN")
    ana = await _user(client, world, "Ana", capacity=1)
    first, second, third = [await _arrive(client, world, n) for n in range(3)]
    assert first["assignedUserId"] == ana
    r = await _patch_user(client, world, ana, {"capacity": 2})
    assert r.status_code == 200 and r.json()["capacity"] == 2
    assert (await _read(client, world, second["id"]))["assignedUserId"] == ana
    assert (await _read(client, world, third["id"]))["assignedUserId"] is None
    r = await _patch_user(client, world, ana, {"capacity": None})
    assert r.status_code == 200 and r.json()["capacity"] is None
    assert (await _read(client, world, third["id"]))["assignedUserId"] == ana


async def test_switching_the_inbox_to_a_policy_routes_only_new_arrivals(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "MANUAL")
    ana = await _user(client, world, "Ana")
    before = await _arrive(client, world, 0)
    r = await client.patch(
        f"/inbox/{world.inbox_id}",
        json={"assignment": {"policy": "ROUND_ROBIN"}},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    assert (await _read(client, world, before["id"]))["assignedUserId"] is None
    assert (await _arrive(client, world, 1))["assignedUserId"] == ana


async def test_each_assignment_emits_assigned_once(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "LEAST_BUSY")
    ana = await _user(client, world, "Ana")
    conversation = await _arrive(client, world, 0)
    events = await outbox(app, office_a.id, ASSIGNED)
    assert len(events) == 1
    assert events[0].data == {
        **conversation,
        "previousAssignedUserId": None,
        "previousDepartmentId": None,
    }
    assert conversation["assignedUserId"] == ana


async def test_deleting_a_legal_area_clears_it_from_conversations(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    area = await f.make_legal_area(session, office_a.id, "Trabalho")
    world = await _world(session, client, office_a, "MANUAL")
    conversation = await _arrive(client, world, 0, legalAreaId=area.id)
    assert conversation["legalAreaId"] == area.id
    r = await client.delete(f"/legal-areas/{area.id}", headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert (await _read(client, world, conversation["id"]))["legalAreaId"] is None


async def test_bad_routing_input_is_400_naming_the_field_and_changes_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "MANUAL")
    ana = await _user(client, world, "Ana")
    h = office_a.headers
    inbox_cases: list[tuple[dict[str, Any], str]] = [
        ({"assignment": {"policy": "RANDOM"}}, "body.assignment.policy"),
        ({"assignment": {}}, "body.assignment.policy"),
        ({"assignment": {"policy": "ROUND_ROBIN", "byLegalArea": "yes"}}, "body.assignment"),
        ({"assignment": None}, "body.assignment"),
        ({"assignment": "ROUND_ROBIN"}, "body.assignment"),
    ]
    for body, field in inbox_cases:
        r = await client.patch(f"/inbox/{world.inbox_id}", json=body, headers=h)
        assert r.status_code == 400, (body, r.text)
        assert field in error_of(r)["details"], (body, r.text)
    r = await client.get(f"/inbox/{world.inbox_id}", headers=h)
    assert r.json()["assignment"] == {"policy": "MANUAL", "byLegalArea": False}
    user_cases: list[tuple[dict[str, Any], str]] = [
        ({"availability": "BUSY"}, "body.availability"),
        ({"availability": None}, "body.availability"),
        ({"capacity": -1}, "body.capacity"),
        ({"capacity": "3"}, "body.capacity"),
        ({"capacity": 1.5}, "body.capacity"),
        ({"legalAreaIds": "x"}, "body.legalAreaIds"),
        ({"legalAreaIds": None}, "body.legalAreaIds"),
    ]
    for body, field in user_cases:
        r = await _patch_user(client, world, ana, body)
        assert r.status_code == 400, (body, r.text)
        assert field in error_of(r)["details"], (body, r.text)
    r = await client.get(f"/user/{ana}", headers=h)
    shown = r.json()
    assert (shown["availability"], shown["capacity"], shown["legalAreaIds"]) == (
        "ONLINE",
        None,
        [],
    )


async def test_another_offices_legal_area_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    theirs = await f.make_legal_area(session, office_b.id, "Deles")
    world = await _world(session, client, office_a, "MANUAL")
    ana = await _user(client, world, "Ana")
    r = await _patch_user(client, world, ana, {"legalAreaIds": [theirs.id]})
    assert r.status_code == 404 and theirs.id in error_of(r)["details"]
    r = await client.post(
        "/user",
        json={"name": "Bia", "email": "bia@example.com", "legalAreaIds": [theirs.id]},
        headers=office_a.headers,
    )
    assert r.status_code == 404
    r = await client.post(
        "/conversation",
        json={
            "personId": world.people[0],
            "inboxId": world.inbox_id,
            "integrationId": world.integration_id,
            "legalAreaId": theirs.id,
        },
        headers=office_a.headers,
    )
    assert r.status_code == 404
    conversation = await _arrive(client, world, 1)
    r = await client.patch(
        f"/conversation/{conversation['id']}",
        json={"legalAreaId": theirs.id},
        headers=office_a.headers,
    )
    assert r.status_code == 404
    assert (await client.get(f"/user/{ana}", headers=office_a.headers)).json()["legalAreaIds"] == []


async def test_another_offices_inbox_and_user_are_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await _world(session, client, office_a, "MANUAL")
    ana = await _user(client, world, "Ana")
    r = await client.patch(
        f"/inbox/{world.inbox_id}",
        json={"assignment": {"policy": "ROUND_ROBIN"}},
        headers=office_b.headers,
    )
    assert r.status_code == 404
    r = await client.patch(
        f"/user/{ana}", json={"availability": "OFFLINE"}, headers=office_b.headers
    )
    assert r.status_code == 404


async def test_routing_settings_without_a_key_are_401(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, client, office_a, "MANUAL")
    ana = await _user(client, world, "Ana")
    for headers in ({}, {"x-service-api-key": "ohk_wrong"}):
        r = await client.patch(
            f"/inbox/{world.inbox_id}",
            json={"assignment": {"policy": "ROUND_ROBIN"}},
            headers=headers,
        )
        assert r.status_code == 401
        r = await client.patch(f"/user/{ana}", json={"availability": "OFFLINE"}, headers=headers)
        assert r.status_code == 401


ARRIVALS = 24


async def test_concurrent_arrivals_never_exceed_capacity_nor_double_assign(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Arrivals at once on a real server: each user ends with at most their capacity, each
    conversation is assigned once (one event each); then closes at once drain the queue in
    the same bounds."""
    world = await _world(session, client, office_a, "LEAST_BUSY", people=ARRIVALS)
    users = [await _user(client, world, name, capacity=3) for name in ("Ana", "Bia", "Caio")]
    h = office_a.headers

    def arrive(c: httpx.AsyncClient, n: int) -> Any:
        body = {
            "personId": world.people[n],
            "inboxId": world.inbox_id,
            "integrationId": world.integration_id,
        }
        return c.post("/conversation", json=body, headers=h)

    async with running_server(app) as base_url, concurrent_client(base_url) as c:
        answers = await fire(ARRIVALS, partial(arrive, c))
        assert [a.status_code for a in answers] == [201] * ARRIVALS, [a.text for a in answers]
        opened = [a.json() for a in answers]
        held = Counter(o["assignedUserId"] for o in opened if o["assignedUserId"])
        assert held == Counter({u: 3 for u in users})
        events = await outbox(app, office_a.id, ASSIGNED)
        assert sorted(e.data["id"] for e in events) == sorted(
            o["id"] for o in opened if o["assignedUserId"]
        )
        first_round = [o["id"] for o in opened if o["assignedUserId"]]

        def close(c: httpx.AsyncClient, n: int) -> Any:
            return c.patch(f"/conversation/{first_round[n]}", json={"status": "CLOSED"}, headers=h)

        closed = await fire(len(first_round), partial(close, c))
        assert [a.status_code for a in closed] == [200] * len(first_round)
        listed = await c.get(
            "/conversation",
            params={"inboxId": world.inbox_id, "status": "OPEN", "limit": 100},
            headers=h,
        )
    open_now = listed.json()["data"]
    assert len(open_now) == ARRIVALS - len(first_round)
    held = Counter(o["assignedUserId"] for o in open_now if o["assignedUserId"])
    assert held == Counter({u: 3 for u in users}), held
    events = await outbox(app, office_a.id, ASSIGNED)
    per_conversation = Counter(e.data["id"] for e in events)
    assert len(events) == 18 and set(per_conversation.values()) == {1}, per_conversation


async def test_a_flow_hand_off_naming_no_user_goes_through_the_policy(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """``ASSIGN_USER`` without ``userId``: the inbox's routing picks the person."""
    w = await make_world(session, office_a.id)
    h = office_a.headers
    r = await client.patch(
        f"/inbox/{w.inbox.id}", json={"assignment": {"policy": "LEAST_BUSY"}}, headers=h
    )
    assert r.status_code == 200
    r = await client.patch(f"/user/{w.user.id}", json={"inboxIds": [w.inbox.id]}, headers=h)
    assert r.status_code == 200
    await create_flow(client, office_a, w.inbox.id, [flow_system("s1", "ASSIGN_USER", {}, None)])
    await inbound(client, office_a, w.conversation.id, "Oi")
    await work(app, settings)
    r = await client.get(f"/conversation/{w.conversation.id}", headers=h)
    assert r.json()["assignedUserId"] == w.user.id
    events = await outbox(app, office_a.id, ASSIGNED)
    assert [e.data["assignedUserId"] for e in events] == [w.user.id]


async def test_a_flow_hand_off_naming_no_user_waits_in_a_manual_inbox(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    w = await make_world(session, office_a.id)
    h = office_a.headers
    r = await client.patch(f"/user/{w.user.id}", json={"inboxIds": [w.inbox.id]}, headers=h)
    assert r.status_code == 200
    await create_flow(client, office_a, w.inbox.id, [flow_system("s1", "ASSIGN_USER", {}, None)])
    await inbound(client, office_a, w.conversation.id, "Oi")
    await work(app, settings)
    r = await client.get(f"/conversation/{w.conversation.id}", headers=h)
    assert r.json()["assignedUserId"] is None
    assert await outbox(app, office_a.id, ASSIGNED) == []
