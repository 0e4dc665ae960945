"""Webhooks operated as Svix operates them (issue 44): recover and replay (a receiver back
from an outage asks for what it missed, in order and once each; one event is sent again on
demand), and an endpoint paused after its retry window is told to the office."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from officehub.kit.config import Settings
from officehub.kit.timeutil import isoformat
from tests.helpers import OfficeFixture, error_of
from tests.receiver import Reply, running_receiver
from tests.server import concurrent_client, fire, running_server
from tests.webhook_helpers import Clock, create_webhook, deliveries, delivery_worker, emit_event


class Switch:
    """A receiver that is gone (410: no retries) until it is back."""

    def __init__(self) -> None:
        self.back = False

    def __call__(self, _n: int) -> Reply:
        return Reply() if self.back else Reply(410, "gone")


async def test_recover_sends_the_windows_failed_deliveries_again_in_order_once_each(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    switch = Switch()
    async with running_receiver(switch) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        worker = delivery_worker(app, settings)
        events = []
        for name in ("Ana", "Bia", "Caio", "Davi"):
            events.append(
                await emit_event(app, office_a.id, data={"id": "c1234567890", "name": name})
            )
            await worker.run_until_idle()
        failed = await deliveries(app, hook["id"])
        assert [d.status for d in failed] == ["FAILED"] * 4
        assert [d.event_id for d in failed] == events
        switch.back = True
        url = f"/webhooks/{hook['id']}/recover"
        body = {"since": isoformat(failed[1].created_at), "until": isoformat(failed[3].created_at)}
        r = await client.post(url, json=body, headers=office_a.headers)
        assert r.status_code == 202, r.text
        assert r.json() == {"queued": 2}
        again = await client.post(url, json=body, headers=office_a.headers)
        assert again.json() == {"queued": 0}  # already queued: sent once
        await worker.run_until_idle()
        sent_again = [got.json["id"] for got in receiver.received[4:]]
        assert sent_again == events[1:3]
        r = await client.post(url, json={"since": body["since"]}, headers=office_a.headers)
        assert r.json() == {"queued": 1}  # until absent: now; only Davi is still FAILED
        await worker.run_until_idle()
    assert [got.json["id"] for got in receiver.received[6:]] == [events[3]]
    statuses = {d.event_id: d.status for d in await deliveries(app, hook["id"])}
    assert statuses == {
        events[0]: "FAILED",
        events[1]: "SUCCESS",
        events[2]: "SUCCESS",
        events[3]: "SUCCESS",
    }


async def test_replay_sends_a_delivered_event_again_with_its_webhook_id(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        event_id = await emit_event(app, office_a.id)
        worker = delivery_worker(app, settings)
        await worker.run_until_idle()
        r = await client.post(
            f"/webhooks/{hook['id']}/replay", json={"eventId": event_id}, headers=office_a.headers
        )
        assert r.status_code == 202, r.text
        assert r.json()["status"] == "PENDING" and r.json()["payload"]["id"] == event_id
        await worker.run_until_idle()
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == event_id
    assert first.body == second.body
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "SUCCESS" and delivery.attempt_count == 2


async def test_replay_of_an_event_never_delivered_to_the_webhook_is_404(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        r = await client.post(
            f"/webhooks/{hook['id']}/replay",
            json={"eventId": "c0000000000000001"},
            headers=office_a.headers,
        )
    assert r.status_code == 404
    assert error_of(r)["code"] == "NOT_FOUND"


async def test_recover_and_replay_refuse_bad_bodies_naming_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
    base = f"/webhooks/{hook['id']}"
    cases = [
        ("recover", {}, "body.since"),
        ("recover", {"since": "yesterday"}, "body.since"),
        (
            "recover",
            {"since": "2026-11-02T00:00:00Z", "until": "2026-11-01T00:00:00Z"},
            "body.until",
        ),
        ("replay", {}, "body.eventId"),
        ("replay", {"eventId": "not an id"}, "body.eventId"),
    ]
    for action, body, field in cases:
        r = await client.post(f"{base}/{action}", json=body, headers=office_a.headers)
        assert r.status_code == 400, (action, body, r.text)
        assert field in error_of(r)["details"], (action, body, r.text)


async def test_recover_and_replay_of_another_offices_webhook_are_404(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
    for action, body in (
        ("recover", {"since": "2026-01-01T00:00:00Z"}),
        ("replay", {"eventId": "c0000000000000001"}),
    ):
        r = await client.post(
            f"/webhooks/{hook['id']}/{action}", json=body, headers=office_b.headers
        )
        assert r.status_code == 404, (action, r.text)
        assert "Webhook" in error_of(r)["message"]


async def test_recover_and_replay_need_a_key_with_the_webhooks_scope(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    from tests.helpers import make_office

    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
    writer = await make_office(app, "Write only", ["read", "write"])
    for action, body in (
        ("recover", {"since": "2026-01-01T00:00:00Z"}),
        ("replay", {"eventId": "c0000000000000001"}),
    ):
        url = f"/webhooks/{hook['id']}/{action}"
        assert (await client.post(url, json=body)).status_code == 401
        bad = await client.post(url, json=body, headers={"x-service-api-key": "ohk_nope"})
        assert bad.status_code == 401
        r = await client.post(url, json=body, headers=writer.headers)
        assert r.status_code == 403, r.text


async def test_a_webhook_paused_after_its_retry_window_is_told_to_the_offices_other_webhooks(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with (
        running_receiver(lambda _n: Reply(500)) as broken,
        running_receiver() as watcher,
    ):
        hook = await create_webhook(client, office_a, broken.url, name="CRM sync")
        await create_webhook(
            client, office_a, watcher.url, name="Ops", events=["webhook.endpoint.disabled"]
        )
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        clock.advance(days=4, hours=23)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        assert watcher.received == []  # not paused yet
        clock.advance(hours=2)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        await worker.run_until_idle()
        clock.advance(hours=12)
        await worker.run_until_idle()  # its retries go on failing: told once
    [told] = watcher.received
    assert told.json["event"] == "webhook.endpoint.disabled"
    data = told.json["data"]
    assert data["webhookId"] == hook["id"] and data["name"] == "CRM sync"
    assert "failed for 5 days" in data["reason"]
    assert data["failingSince"].endswith("Z") and data["disabledAt"].endswith("Z")
    assert "url" not in data and broken.url not in told.body.decode()
    read = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
    assert read["isActive"] is False


async def test_a_paced_webhook_begins_at_most_its_rate_per_second_and_drops_nothing(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as paced, running_receiver() as free:
        slow = await create_webhook(client, office_a, paced.url, rateLimitPerSecond=2)
        assert slow["rateLimitPerSecond"] == 2
        await create_webhook(client, office_a, free.url)
        for _ in range(5):
            await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        assert (len(paced.received), len(free.received)) == (2, 5)  # the other is not held
        clock.advance(seconds=1)
        await worker.run_until_idle()
        assert len(paced.received) == 4
        clock.advance(seconds=1)
        await worker.run_until_idle()
    assert len(paced.received) == 5
    assert len(set(paced.event_ids())) == 5
    records = await deliveries(app, slow["id"])
    assert [(d.status, d.attempt_count) for d in records] == [("SUCCESS", 1)] * 5


async def test_the_pace_is_set_checked_and_cleared_through_the_api(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
    assert hook["rateLimitPerSecond"] is None
    url = f"/webhooks/{hook['id']}"
    for bad in (0, 1001, -1, "5", 2.5, True):
        r = await client.patch(url, json={"rateLimitPerSecond": bad}, headers=office_a.headers)
        assert r.status_code == 400, (bad, r.text)
        assert "body.rateLimitPerSecond" in error_of(r)["details"]
    r = await client.patch(url, json={"rateLimitPerSecond": 10}, headers=office_a.headers)
    assert r.json()["rateLimitPerSecond"] == 10
    r = await client.patch(url, json={"name": "other"}, headers=office_a.headers)
    assert r.json()["rateLimitPerSecond"] == 10  # not sent: kept
    r = await client.patch(url, json={"rateLimitPerSecond": None}, headers=office_a.headers)
    assert r.json()["rateLimitPerSecond"] is None
    assert (await client.get(url, headers=office_a.headers)).json()["rateLimitPerSecond"] is None


async def test_a_paused_webhook_set_active_resumes_from_its_oldest_undelivered_event(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Paused after its retry window failed, then set active: the deliveries that failed in
    the streak and the events recorded while it was paused go out, oldest first, once."""
    switch = Switch()
    async with running_receiver(switch) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        first = await emit_event(app, office_a.id, data={"id": "c1234567890", "name": "Ana"})
        await worker.run_until_idle()
        clock.advance(days=5, hours=1)
        second = await emit_event(app, office_a.id, data={"id": "c1234567890", "name": "Bia"})
        await worker.run_until_idle()
        paused = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
        assert paused["isActive"] is False
        while_paused = await emit_event(
            app, office_a.id, data={"id": "c1234567890", "name": "Caio"}
        )
        await worker.run_until_idle()
        assert len(receiver.received) == 2  # nothing sent to a paused webhook
        switch.back = True
        r = await client.patch(
            f"/webhooks/{hook['id']}", json={"isActive": True}, headers=office_a.headers
        )
        assert r.status_code == 200, r.text
        assert r.json()["isActive"] is True and r.json()["disabledReason"] is None
        await worker.run_until_idle()
        await worker.run_until_idle()
    resumed = [got.json["id"] for got in receiver.received[2:]]
    # Each once, the streak's first failure first. (The worker's clock is 5 days ahead of the
    # events' own times here, so "second" is due after "while_paused" in this test only.)
    assert sorted(resumed) == sorted([first, second, while_paused]) and resumed[0] == first
    statuses = {d.event_id: d.status for d in await deliveries(app, hook["id"])}
    assert statuses == {first: "SUCCESS", second: "SUCCESS", while_paused: "SUCCESS"}


async def test_a_webhook_turned_off_by_the_office_gets_no_backlog_when_turned_on(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Only an automatic pause resumes: an office that turned its webhook off chose not to
    receive what happened meanwhile (recover asks for it)."""
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        url, h = f"/webhooks/{hook['id']}", office_a.headers
        assert (await client.patch(url, json={"isActive": False}, headers=h)).status_code == 200
        await emit_event(app, office_a.id)
        assert (await client.patch(url, json={"isActive": True}, headers=h)).status_code == 200
        after = await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
    assert [got.json["id"] for got in receiver.received] == [after]


async def test_two_recoveries_at_once_queue_each_failed_delivery_once(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Two operators recover the same window at the same moment through a running server:
    the single UPDATE of each makes them share the failed deliveries, never both queue one,
    and each event reaches the receiver once more."""
    switch = Switch()
    async with running_receiver(switch) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        worker = delivery_worker(app, settings)
        events = [
            await emit_event(app, office_a.id, data={"id": "c1234567890", "name": f"N{i}"})
            for i in range(6)
        ]
        await worker.run_until_idle()
        failed = await deliveries(app, hook["id"])
        assert [d.status for d in failed] == ["FAILED"] * 6
        switch.back = True
        body = {"since": isoformat(failed[0].created_at)}
        url = f"/webhooks/{hook['id']}/recover"
        async with running_server(app) as base_url, concurrent_client(base_url) as racing:
            answers = await fire(
                2, lambda _i: racing.post(url, json=body, headers=office_a.headers)
            )
        assert [a.status_code for a in answers] == [202, 202], [a.text for a in answers]
        assert sum(a.json()["queued"] for a in answers) == 6
        await worker.run_until_idle()
    assert sorted(got.json["id"] for got in receiver.received[6:]) == sorted(events)
