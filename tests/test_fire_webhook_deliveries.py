"""FIRE_WEBHOOK through the delivery machinery: a delivery log the integrator reads
(``GET /automation-rules/{id}/deliveries``), the HTTP call made with no database
transaction open, and a crash between claim and record leaving the delivery claimable."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.consumer import AUTOMATION
from officehub.events.consumers import consumer_job
from officehub.events.service import emit
from officehub.kit.config import Settings
from officehub.kit.worker import WorkerContext
from officehub.webhooks import actions, verify
from officehub.webhooks.actions import deliver_actions_due
from officehub.webhooks.models import ActionDelivery
from tests.automation_helpers import automation_worker, create_rule, runs
from tests.conftest import PG_URL
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import Clock


async def _world(session: AsyncSession, office: OfficeFixture) -> World:
    world = await make_world(session, office.id)
    await session.commit()
    return world


async def _inbound(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, text: str = "Oi"
) -> None:
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound",
        json={"text": text},
        headers=office.headers,
    )
    assert r.status_code == 201, r.text


async def _fire_rule(
    client: httpx.AsyncClient, office: OfficeFixture, url: str, **params: Any
) -> dict[str, Any]:
    return await create_rule(
        client,
        office,
        actions=[{"action": "FIRE_WEBHOOK", "actionParams": {"url": url, **params}}],
    )


async def _log(
    client: httpx.AsyncClient, office: OfficeFixture, rule_id: str, **params: Any
) -> list[dict[str, Any]]:
    r = await client.get(
        f"/automation-rules/{rule_id}/deliveries", params=params, headers=office.headers
    )
    assert r.status_code == 200, r.text
    data: list[dict[str, Any]] = r.json()["data"]
    return data


async def test_the_delivery_log_shows_a_failed_then_a_successful_attempt(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await _world(session, office_a)
    clock = Clock()
    replies = [Reply(status=503, body="busy, try later"), Reply(body="thanks")]
    async with running_receiver(lambda n: replies[min(n, 1)]) as receiver:
        rule = await _fire_rule(client, office_a, receiver.url, secret="rule-secret-1")
        await _inbound(client, office_a, world.conversation.id)
        await automation_worker(app, settings, clock).run_until_idle()
        [failed] = await _log(client, office_a, rule["id"])
        assert failed["status"] == "RETRYING" and failed["statusCode"] == 503
        assert failed["attemptCount"] == 1 and failed["responseBody"] == "busy, try later"
        assert failed["errorMessage"] == "HTTP 503" and failed["nextRetryAt"] is not None
        clock.advance(seconds=7)
        await automation_worker(app, settings, clock).run_until_idle()
    [done] = await _log(client, office_a, rule["id"])
    assert done["id"] == failed["id"] and done["ruleId"] == rule["id"]
    assert done["status"] == "SUCCESS" and done["statusCode"] == 200
    assert done["attemptCount"] == 2 and done["nextRetryAt"] is None
    assert done["responseBody"] == "thanks" and done["durationMs"] >= 0
    assert [(a["number"], a["statusCode"]) for a in done["attempts"]] == [(1, 503), (2, 200)]
    assert done["attempts"][0]["responseBody"] == "busy, try later"
    assert "secret" not in done and "rule-secret-1" not in str(done)
    assert [d["id"] for d in await _log(client, office_a, rule["id"], status="SUCCESS")] == [
        done["id"]
    ]
    assert await _log(client, office_a, rule["id"], status="FAILED") == []
    # Signed with the action's secret, the same delivery id on both attempts
    body = verify("rule-secret-1", receiver.received[1].headers, receiver.received[1].body)
    assert body["rule"]["id"] == rule["id"]
    assert {r.headers["x-service-delivery"] for r in receiver.received} == {done["id"]}
    # The run log names the delivery
    [run] = await runs(client, office_a, rule["id"])
    assert run["actions"][0]["detail"] == f"delivery {done['id']}"


async def _database_now(app: FastAPI) -> Any:
    async with app.state.sessionmaker() as s:
        return await s.scalar(text("SELECT clock_timestamp()"))


async def _transactions_open_since(app: FastAPI, since: Any) -> int:
    """Other connections to this test's database whose transaction began before ``since``
    and is still open. A transaction begun later is another job's pass (the worker goes on
    while the call is in flight): it did not span the call."""
    async with app.state.sessionmaker() as s:
        count = await s.scalar(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND xact_start < :since"
            ),
            {"since": since},
        )
        return int(count or 0)


async def test_no_database_transaction_is_open_while_the_receiver_holds_the_request(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """While the receiver holds the call, another writer commits (SQLite: no write lock
    held), and on PostgreSQL no connection sits in a transaction. The receiver answers
    only once the write is done: a lock held over the call would never be let go (the
    write's generous timeout fails the test), where a stopwatch on the write would fail
    on a loaded machine (issue 41)."""
    world = await _world(session, office_a)
    release = asyncio.Event()
    async with running_receiver(lambda _n: Reply(until=release)) as receiver:
        rule = await _fire_rule(client, office_a, receiver.url)
        await _inbound(client, office_a, world.conversation.id)
        worker = asyncio.create_task(automation_worker(app, settings, Clock()).run_until_idle())
        try:
            await receiver.wait_for(1)
            # The receiver holds the request: a transaction open since before now spans it.
            call_held_since = await _database_now(app) if PG_URL else None
            async with asyncio.timeout(30), app.state.sessionmaker() as s:
                await emit(s, office_a.id, "contact.created", {"id": "c0000000000written"})
                await s.commit()
            in_flight = not worker.done()
            open_transactions = (
                await _transactions_open_since(app, call_held_since) if PG_URL else 0
            )
            released = time.time()
        finally:
            release.set()
        await worker
    assert in_flight
    assert open_transactions == 0
    [delivery] = await _log(client, office_a, rule["id"])
    held_ms = (released - receiver.received[0].at) * 1000
    assert delivery["status"] == "SUCCESS" and delivery["durationMs"] >= int(held_ms) - 1


async def test_a_crash_between_the_call_and_its_record_leaves_the_delivery_claimable(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await _world(session, office_a)
    clock = Clock()
    async with running_receiver(lambda n: Reply(delay=5.0) if n == 0 else Reply()) as receiver:
        rule = await _fire_rule(client, office_a, receiver.url)
        await _inbound(client, office_a, world.conversation.id)
        # The automation consumer records the delivery; nothing sends it yet.
        ctx = WorkerContext(
            settings,
            app.state.engine,
            app.state.sessionmaker,
            clock=clock,
            worker_id="dies",
            database_clock=False,
        )
        await consumer_job(AUTOMATION)(ctx)
        dying = asyncio.create_task(deliver_actions_due(ctx))
        await receiver.wait_for(1)
        dying.cancel()  # killed mid-call: no outcome is recorded
        with pytest.raises(asyncio.CancelledError):
            await dying
        [held] = await _log(client, office_a, rule["id"])
        # The attempt was logged before the call: the kill leaves it in the log.
        assert held["status"] == "PENDING" and held["attemptCount"] == 1
        assert [a["statusCode"] for a in held["attempts"]] == [None]
        assert await deliver_actions_due(ctx) == 0  # still leased
        clock.advance(seconds=settings.delivery_lease_seconds + 60)
        assert await deliver_actions_due(ctx) == 1  # the lease ended: claimable again
    [done] = await _log(client, office_a, rule["id"])
    assert done["status"] == "SUCCESS" and done["attemptCount"] == 2  # both calls counted
    assert [a["statusCode"] for a in done["attempts"]] == [None, 200]
    assert len(receiver.received) == 2
    assert receiver.received[0].json["id"] == receiver.received[1].json["id"]


async def test_a_flow_fire_webhook_step_is_an_action_delivery(
    app: FastAPI, settings: Settings, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The flows' FIRE_WEBHOOK step shares the path: recorded, then sent by the worker."""
    world = await _world(session, office_a)
    async with running_receiver() as receiver:
        async with app.state.sessionmaker() as s:
            await actions.enqueue(
                s,
                office_a.id,
                url=receiver.url,
                method="POST",
                headers={"X-Service-Event": "not ours to set", "X-Office": "a"},
                secret=None,
                event="flow.webhook",
                event_id=None,
                payload={"origem": "fluxo", "conversationId": world.conversation.id},
                now=Clock()(),
                retention_days=90,
            )
            await s.commit()
        await automation_worker(app, settings, Clock()).run_until_idle()
    [got] = receiver.received
    assert got.json["origem"] == "fluxo" and got.headers["x-office"] == "a"
    assert got.headers["x-service-event"] == "flow.webhook"
    async with app.state.sessionmaker() as s:
        [record] = list(await s.scalars(select(ActionDelivery)))
    assert record.status == "SUCCESS" and record.attempt_count == 1


# The route: 401, 404 (another office's rule), 400


async def _flow(client: httpx.AsyncClient, office: OfficeFixture, session: AsyncSession) -> str:
    world = await _world(session, office)
    body = {
        "name": "Atendimento",
        "inboxId": world.inbox.id,
        "isSocialFlow": False,
        "content": {
            "steps": [{"id": "s1", "type": "text", "content": "Olá", "nextStepId": None}],
            "initialStepId": "s1",
        },
    }
    r = await client.post("/flow", json=body, headers=office.headers)
    assert r.status_code == 201, r.text
    ident: str = r.json()["id"]
    return ident


async def _paths(
    client: httpx.AsyncClient, office: OfficeFixture, session: AsyncSession
) -> list[str]:
    rule = await _fire_rule(client, office, "https://hooks.example.com/x")
    flow = await _flow(client, office, session)
    return [f"/automation-rules/{rule['id']}/deliveries", f"/flow/{flow}/deliveries"]


async def test_deliveries_routes_refuse_no_or_a_bad_key(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    for path in await _paths(client, office_a, session):
        assert (await client.get(path)).status_code == 401
        bad = await client.get(path, headers={"Authorization": "Bearer ohk_not_a_key"})
        assert bad.status_code == 401


async def test_deliveries_of_another_offices_rule_or_flow_are_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    for path in await _paths(client, office_a, session):
        r = await client.get(path, headers=office_b.headers)
        assert r.status_code == 404, r.text
        assert (await client.get(path, headers=office_a.headers)).json()["data"] == []


@pytest.mark.parametrize(
    ("path", "params", "field"),
    [
        ("/automation-rules/not-an-id/deliveries", {}, "path.id"),
        ("/automation-rules/{id}/deliveries", {"status": "DONE"}, "query.status"),
        ("/automation-rules/{id}/deliveries", {"limit": "0"}, "query.limit"),
        ("/flow/not-an-id/deliveries", {}, "path.id"),
        ("/flow/{id}/deliveries", {"status": "DONE"}, "query.status"),
    ],
)
async def test_deliveries_route_names_the_bad_field(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    path: str,
    params: dict[str, str],
    field: str,
) -> None:
    rule = await _fire_rule(client, office_a, "https://hooks.example.com/x")
    r = await client.get(path.format(id=rule["id"]), params=params, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field in str(error_of(r)), error_of(r)
