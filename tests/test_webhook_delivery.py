"""Delivery rules, each shown with a real HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import hashlib
import hmac
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI

from officehub.kit.config import Settings
from officehub.webhooks import WebhookVerificationError, verify
from officehub.webhooks.delivery import RETRY_SCHEDULE, next_delay
from tests.helpers import OfficeFixture
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import (
    Clock,
    create_webhook,
    deliveries,
    delivery_worker,
    emit_event,
    secret_of,
)


async def test_signature_verifies_with_the_secret_and_fails_with_another(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url, secret="s3cret-value-1")
        event_id = await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    assert verify("s3cret-value-1", got.headers, got.body)["id"] == event_id
    header = got.headers["x-service-signature"]
    t, v1 = (p.split("=", 1)[1] for p in header.split(","))
    expected = hmac.new(b"s3cret-value-1", f"{t}.".encode() + got.body, hashlib.sha256)
    assert v1 == expected.hexdigest()
    with pytest.raises(WebhookVerificationError):
        verify("another-secret", got.headers, got.body)
    assert got.headers["x-service-event"] == "contact.created"
    assert got.headers["x-service-delivery"] == (await deliveries(app, hook["id"]))[0].id
    assert got.headers["content-type"] == "application/json"


async def test_delivery_body_is_id_event_created_at_office_id_subject_sequence_data(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url)
        event_id = await emit_event(app, office_a.id, data={"id": "c123456789", "name": "Ana"})
        await delivery_worker(app, settings).run_until_idle()
    body = receiver.received[0].json
    assert set(body) == {"id", "event", "createdAt", "officeId", "subjectId", "sequence", "data"}
    assert body["subjectId"] == "c123456789" and body["sequence"] == 1
    assert body["id"] == event_id and body["event"] == "contact.created"
    assert body["officeId"] == office_a.id and body["data"] == {"id": "c123456789", "name": "Ana"}
    assert body["createdAt"].endswith("Z")


async def test_custom_headers_arrive_and_cannot_override_ours(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(
            client,
            office_a,
            receiver.url,
            headers={"Authorization": "Bearer abc", "X-Service-Event": "forged"},
        )
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
    headers = receiver.received[0].headers
    assert headers["authorization"] == "Bearer abc"
    assert headers["x-service-event"] == "contact.created"


async def test_only_subscribed_events_arrive(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url, events=["contact.updated"])
        await emit_event(app, office_a.id, "contact.created")
        wanted = await emit_event(app, office_a.id, "contact.updated")
        await emit_event(app, office_a.id, "chat.message.sent")
        await delivery_worker(app, settings).run_until_idle()
    assert receiver.event_ids() == [wanted]


async def test_events_of_another_office_do_not_arrive(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_b.id)
        await delivery_worker(app, settings).run_until_idle()
    assert receiver.received == []


async def test_inactive_webhook_gets_no_deliveries_and_none_are_made_up_later(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url, isActive=False)
        await emit_event(app, office_a.id)
        worker = delivery_worker(app, settings)
        await worker.run_until_idle()
        assert receiver.received == []
        response = await client.patch(
            f"/webhooks/{hook['id']}", json={"isActive": True}, headers=office_a.headers
        )
        assert response.json()["isActive"] is True
        await worker.run_until_idle()
        assert receiver.received == []
        later = await emit_event(app, office_a.id)
        await worker.run_until_idle()
    assert receiver.event_ids() == [later]


async def test_pausing_a_webhook_holds_its_pending_deliveries(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(lambda n: Reply(500) if n == 0 else Reply()) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        await client.patch(
            f"/webhooks/{hook['id']}", json={"isActive": False}, headers=office_a.headers
        )
        clock.advance(minutes=1)
        await worker.run_until_idle()
        assert len(receiver.received) == 1
        await client.patch(
            f"/webhooks/{hook['id']}", json={"isActive": True}, headers=office_a.headers
        )
        await worker.run_until_idle()
    assert len(receiver.received) == 2


async def test_500_then_200_arrives_on_the_second_try_with_the_same_event_id(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(lambda n: Reply(500, "boom") if n == 0 else Reply()) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        [delivery] = await deliveries(app, hook["id"])
        assert delivery.status == "RETRYING" and delivery.status_code == 500
        assert delivery.response_body == "boom"
        clock.advance(seconds=3.9)
        await worker.run_until_idle()
        assert len(receiver.received) == 1
        clock.advance(seconds=2.2)
        await worker.run_until_idle()
    first, second = receiver.received
    assert first.json["id"] == second.json["id"]
    assert first.headers["x-service-delivery"] == second.headers["x-service-delivery"]
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "SUCCESS" and delivery.attempt_count == 2


async def test_a_receiver_that_never_answers_in_time_is_retried_on_schedule_then_failed(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    # The timeout covers resolving, connecting and sending too: at 0.2 s a pause of the
    # test process (a full collection late in the suite) once let it expire before the
    # receiver had read the request, so one attempt went uncounted; at 1 s it happened
    # again with CI's two legs at once (issue 41). Two seconds leave room, and an attempt
    # that did reach the receiver is waited for, not looked for the moment the pass ends.
    settings = settings.model_copy(update={"webhook_timeout_seconds": 2.0})
    async with running_receiver(lambda _n: Reply(delay=30)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        await receiver.wait_for(1)
        for attempt, step in enumerate(RETRY_SCHEDULE, start=1):
            [delivery] = await deliveries(app, hook["id"])
            assert delivery.status == "RETRYING" and delivery.attempt_count == attempt
            assert delivery.error_message == "timed out after 2 s"
            assert delivery.next_retry_at is not None
            wait = delivery.next_retry_at - clock.now
            assert step * 0.8 <= wait <= step * 1.2, (attempt, wait)
            clock.now = delivery.next_retry_at - timedelta(seconds=1)
            await worker.run_until_idle()
            assert len(receiver.received) == attempt  # not yet due: nothing sent
            clock.now = delivery.next_retry_at
            await worker.run_until_idle()
            await receiver.wait_for(attempt + 1)
            assert len(receiver.received) == attempt + 1
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "FAILED" and delivery.attempt_count == 8
    assert delivery.next_retry_at is None


def test_retry_after_is_honoured_between_the_step_and_twice_it() -> None:
    five_min = 300.0
    assert next_delay(2, 400) == timedelta(seconds=400)
    assert next_delay(2, 10) == timedelta(seconds=five_min)
    assert next_delay(2, 3600) == timedelta(seconds=2 * five_min)
    assert next_delay(1, None, lambda: 0.0) == timedelta(seconds=4)
    assert next_delay(1, None, lambda: 1.0) == timedelta(seconds=6)
    assert next_delay(8, None) is None


async def test_retry_after_header_sets_the_next_try(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(lambda _n: Reply(429, headers={"Retry-After": "8"})) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        await delivery_worker(app, settings, clock).run_until_idle()
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.next_retry_at == clock.now + timedelta(seconds=8)
    assert len(receiver.received) == 1


async def test_a_redirect_is_not_followed_and_counts_as_failure(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(
        lambda _n: Reply(301, headers={"Location": "http://127.0.0.1:9/elsewhere"})
    ) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "RETRYING" and delivery.status_code == 301
    assert len(receiver.received) == 1


async def test_every_attempt_is_recorded_with_the_first_10000_characters(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    responses = [Reply(503, "x" * 25_000), Reply(200, "fine")]
    async with running_receiver(lambda n: responses[n]) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        clock.advance(seconds=7)
        await worker.run_until_idle()
        assert len(receiver.received) == 2
    [delivery] = await deliveries(app, hook["id"])
    response = await client.get(
        f"/webhooks/{hook['id']}/deliveries/{delivery.id}", headers=office_a.headers
    )
    body = response.json()
    assert body["status"] == "SUCCESS" and body["attemptCount"] == 2
    first, second = body["attempts"]
    assert first["statusCode"] == 503 and first["responseBody"] == "x" * 10_000
    assert first["errorMessage"] == "HTTP 503" and first["durationMs"] >= 0
    assert second["statusCode"] == 200 and second["responseBody"] == "fine"


async def test_a_response_body_with_nul_characters_is_recorded(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """PostgreSQL text cannot hold NUL: the stored excerpt replaces it, the outcome is kept."""
    async with running_receiver(lambda _n: Reply(200, "ok\x00done")) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings, Clock()).run_until_idle()
        assert len(receiver.received) == 1
    [delivery] = await deliveries(app, hook["id"])
    response = await client.get(
        f"/webhooks/{hook['id']}/deliveries/{delivery.id}", headers=office_a.headers
    )
    body = response.json()
    assert body["status"] == "SUCCESS"
    assert body["attempts"][0]["responseBody"] == "ok\ufffddone"


async def test_webhook_test_reaches_only_that_webhook(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as first, running_receiver() as second:
        target = await create_webhook(client, office_a, first.url, events=["webhook.test"])
        await create_webhook(client, office_a, second.url, events=["webhook.test"])
        response = await client.post(f"/webhooks/{target['id']}/test", headers=office_a.headers)
        assert response.status_code == 200
        await delivery_worker(app, settings).run_until_idle()
    assert first.event_ids() == [response.json()["eventId"]]
    assert first.received[0].headers["x-service-event"] == "webhook.test"
    assert second.received == []


async def test_after_a_secret_rotation_deliveries_carry_both_signatures_for_24_hours(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url, secret="old-secret-1")
        await client.patch(
            f"/webhooks/{hook['id']}", json={"secret": "new-secret-2"}, headers=office_a.headers
        )
        assert await secret_of(client, office_a, hook["id"]) == "new-secret-2"
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        clock.advance(hours=24, seconds=1)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
    early, late = receiver.received
    assert early.headers["x-service-signature"].count("v1=") == 2
    verify("old-secret-1", early.headers, early.body)
    verify("new-secret-2", early.headers, early.body)
    assert late.headers["x-service-signature"].count("v1=") == 1
    verify("new-secret-2", late.headers, late.body)
    with pytest.raises(WebhookVerificationError):
        verify("old-secret-1", late.headers, late.body)


async def test_a_webhook_failing_for_5_days_is_paused_with_its_reason(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(lambda _n: Reply(500)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        clock.advance(days=4, hours=23)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        read = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
        assert read["isActive"] is True and read["disabledReason"] is None
        clock.advance(hours=2)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        assert len(receiver.received) >= 3
    read = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
    assert read["isActive"] is False
    assert "failed for 5 days" in read["disabledReason"]
    response = await client.patch(
        f"/webhooks/{hook['id']}", json={"isActive": True}, headers=office_a.headers
    )
    assert response.json()["isActive"] is True and response.json()["disabledReason"] is None


async def test_a_success_resets_the_failing_clock(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    replies = {0: Reply(500), 1: Reply(200)}
    async with running_receiver(lambda n: replies.get(n, Reply(500))) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        clock.advance(days=3)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        clock.advance(days=3)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        assert len(receiver.received) >= 3
    read = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
    assert read["isActive"] is True


async def test_delivery_records_are_purged_after_90_days(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        assert len(receiver.received) == 1
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.expires_at == delivery.created_at + timedelta(days=90)
    clock.advance(days=89)
    await worker.run_until_idle()
    assert len(await deliveries(app, hook["id"])) == 1
    clock.advance(days=1, seconds=1)
    await worker.run_until_idle()
    assert await deliveries(app, hook["id"]) == []


async def test_manual_retry_of_a_failed_delivery_sends_it_again(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(lambda n: Reply(500) if n < 8 else Reply()) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        for _ in RETRY_SCHEDULE:
            clock.advance(hours=13)
            await worker.run_until_idle()
        [delivery] = await deliveries(app, hook["id"])
        assert delivery.status == "FAILED"
        response = await client.post(
            f"/webhooks/deliveries/{delivery.id}/retry", headers=office_a.headers
        )
        assert response.status_code == 200 and response.json()["status"] == "PENDING"
        clock.now = max(clock.now, delivery.created_at) + timedelta(days=1)
        await worker.run_until_idle()
        assert len(receiver.received) == 9
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "SUCCESS" and delivery.attempt_count == 9
    response = await client.post(
        f"/webhooks/deliveries/{delivery.id}/retry", headers=office_a.headers
    )
    assert response.status_code == 409


def test_verify_refuses_an_old_timestamp_and_a_malformed_header() -> None:
    body = b'{"id":"c1"}'
    from officehub.kit.outbound.signing import signature_header

    headers = {"X-Service-Signature": signature_header(["secret-123"], 1_000_000, body)}
    assert verify("secret-123", headers, body, now=1_000_100)["id"] == "c1"
    with pytest.raises(WebhookVerificationError):
        verify("secret-123", headers, body, now=1_000_301)
    with pytest.raises(WebhookVerificationError):
        verify("secret-123", {"X-Service-Signature": "garbage"}, body)
    with pytest.raises(WebhookVerificationError):
        verify("secret-123", {}, body)
    with pytest.raises(WebhookVerificationError):
        verify("secret-123", headers, body + b" ", now=1_000_000)


SIGNED_AT = 1_764_000_000
SIGNED_BODY = b'{"id":"c1"}'


def _signed(*extra: str) -> dict[str, str]:
    from officehub.kit.outbound.signing import signature_header

    header = signature_header(["secret-123"], SIGNED_AT, SIGNED_BODY)
    return {"X-Service-Signature": ",".join([header, *extra])}


def test_verify_accepts_a_timestamp_exactly_at_the_tolerance_and_takes_it_by_keyword() -> None:
    headers = _signed()
    for now in (SIGNED_AT - 300, SIGNED_AT + 300):
        assert verify("secret-123", headers, SIGNED_BODY, now=now)["id"] == "c1"
    for now in (SIGNED_AT - 301, SIGNED_AT + 301):
        with pytest.raises(WebhookVerificationError, match="tolerance"):
            verify("secret-123", headers, SIGNED_BODY, now=now)
    assert verify("secret-123", headers, SIGNED_BODY, tolerance=60, now=SIGNED_AT + 60)
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify("secret-123", headers, SIGNED_BODY, tolerance=60, now=SIGNED_AT + 61)


def test_verify_refuses_a_timestamp_of_zero_or_years_away() -> None:
    from officehub.kit.outbound.signing import signature_header

    for signed_at in (0, SIGNED_AT // 2 - 5):
        headers = {"X-Service-Signature": signature_header(["k"], signed_at, SIGNED_BODY)}
        with pytest.raises(WebhookVerificationError, match="tolerance"):
            verify("k", headers, SIGNED_BODY, now=SIGNED_AT)


def test_verify_ignores_unknown_parts_and_counts_only_v1_signatures() -> None:
    """Parts other than ``t`` and ``v1`` (a later scheme, ``v0``) are ignored, whatever
    their value; a valid HMAC under another name than ``v1`` is no signature."""
    headers = _signed("a=7", "s=8", "x=9", "v0=abc", "v2=def")
    assert verify("secret-123", headers, SIGNED_BODY, now=SIGNED_AT)["id"] == "c1"
    from officehub.kit.outbound.signing import sign

    valid = sign("secret-123", SIGNED_AT, SIGNED_BODY)
    for name in ("a", "s", "v0", "v2", "x"):
        headers = {"X-Service-Signature": f"t={SIGNED_AT},{name}={valid}"}
        with pytest.raises(WebhookVerificationError, match="malformed"):
            verify("secret-123", headers, SIGNED_BODY, now=SIGNED_AT)


def test_verify_refuses_a_header_missing_its_timestamp_or_its_signature() -> None:
    from officehub.kit.outbound.signing import sign

    valid = sign("secret-123", SIGNED_AT, SIGNED_BODY)
    for header in (f"v1={valid}", f"t=abc,v1={valid}", f"t={SIGNED_AT}", f"t=-5,v1={valid}"):
        with pytest.raises(WebhookVerificationError, match="malformed"):
            verify("secret-123", {"X-Service-Signature": header}, SIGNED_BODY, now=SIGNED_AT)


def test_verify_finds_its_header_in_any_case_among_others() -> None:
    signature = _signed()["X-Service-Signature"]
    for name in ("x-service-signature", "X-SERVICE-SIGNATURE"):
        headers = {"x-trace": "1", "zz": "2", name: signature, "a": "3"}
        assert verify("secret-123", headers, SIGNED_BODY, now=SIGNED_AT)["id"] == "c1"


def test_a_delivery_lease_is_short_whatever_the_batch() -> None:
    """Seconds, not a batch's worst case: the heartbeat renews it while an attempt runs
    (``tests/test_queue.py``), so a killed worker's deliveries are taken over quickly."""
    from officehub.webhooks.delivery import lease_for

    settings = Settings(database_url="sqlite+aiosqlite:///unused.db")
    assert lease_for(settings) == timedelta(seconds=6)
    slow = settings.model_copy(update={"delivery_batch_size": 200, "delivery_concurrency": 5})
    assert lease_for(slow) == timedelta(seconds=6)


async def test_attempts_are_counted_in_metrics(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
    text = (await client.get("/metrics")).text
    assert 'officehub_webhook_attempts_total{outcome="success"}' in text
    assert "officehub_webhook_attempt_seconds_count" in text
