"""Deliveries a receiver verifies with the Standard Webhooks library (issue 44, item 1).

Every delivery carries ``webhook-id`` (the event's id, the same on every retry),
``webhook-timestamp`` and ``webhook-signature`` beside ``X-Service-Signature``. Verified here
with ``standardwebhooks`` from PyPI, as a receiver in any language would, through a real
HTTP receiver on 127.0.0.1.
"""

from __future__ import annotations

import base64
import secrets

import httpx
import pytest
from fastapi import FastAPI
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from officehub.kit.config import Settings
from officehub.kit.outbound.signing import standard_key
from officehub.webhooks import verify
from tests.helpers import OfficeFixture
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import Clock, create_webhook, deliveries, delivery_worker, emit_event


def _whsec() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode()


async def test_a_whsec_secret_verifies_with_the_standard_library_as_stored(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    secret = _whsec()
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url, secret=secret)
        event_id = await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    assert Webhook(secret).verify(got.body, got.headers)["id"] == event_id
    assert got.headers["webhook-id"] == event_id
    assert got.headers["webhook-signature"].startswith("v1,")
    # The seed's header is still there, with the same timestamp.
    assert verify(secret, got.headers, got.body)["id"] == event_id
    assert f"t={got.headers['webhook-timestamp']}," in got.headers["x-service-signature"]
    with pytest.raises(WebhookVerificationError):
        Webhook(_whsec()).verify(got.body, got.headers)


async def test_another_secret_verifies_as_its_utf8_bytes(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """The seed allows any 8 to 256 characters: such a secret's key is its bytes, which the
    receiver passes to the library as bytes (docs/webhook-receivers.md)."""
    secret = "s3cret-value-1"
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url, secret=secret)
        event_id = await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    assert Webhook(secret.encode()).verify(got.body, got.headers)["id"] == event_id
    with pytest.raises(WebhookVerificationError):
        Webhook(b"another-secret").verify(got.body, got.headers)


async def test_a_tampered_body_or_id_fails_the_standard_verification(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    secret = _whsec()
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url, secret=secret)
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(got.body.replace(b"Maria", b"Mario"), got.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(got.body, {**got.headers, "webhook-id": "c0000000000000000"})


async def test_during_a_rotation_both_secrets_verify_with_the_standard_library(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    old, new = _whsec(), _whsec()
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url, secret=old)
        r = await client.patch(
            f"/webhooks/{hook['id']}", json={"secret": new}, headers=office_a.headers
        )
        assert r.status_code == 200, r.text
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
        clock.advance(hours=24, seconds=1)
        await emit_event(app, office_a.id)
        await worker.run_until_idle()
    early, late = receiver.received
    assert len(early.headers["webhook-signature"].split(" ")) == 2
    Webhook(old).verify(early.body, early.headers)
    Webhook(new).verify(early.body, early.headers)
    assert len(late.headers["webhook-signature"].split(" ")) == 1
    Webhook(new).verify(late.body, late.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(old).verify(late.body, late.headers)


async def test_a_retry_keeps_its_webhook_id_so_the_receiver_can_drop_it(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    secret = _whsec()
    async with running_receiver(lambda n: Reply(500) if n == 0 else Reply()) as receiver:
        await create_webhook(client, office_a, receiver.url, secret=secret)
        event_id = await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        clock.advance(seconds=6.1)
        await worker.run_until_idle()
    first, second = receiver.received
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == event_id
    for got in (first, second):
        Webhook(secret).verify(got.body, got.headers)


async def test_custom_headers_cannot_override_the_standard_headers(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    secret = _whsec()
    forged = {"webhook-id": "forged", "Webhook-Signature": "v1,Zm9yZ2Vk", "X-Team": "crm"}
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url, secret=secret, headers=forged)
        event_id = await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    assert got.headers["x-team"] == "crm"
    assert got.headers["webhook-id"] == event_id
    Webhook(secret).verify(got.body, got.headers)


def test_the_standard_key_of_a_secret() -> None:
    raw = secrets.token_bytes(32)
    assert standard_key("whsec_" + base64.b64encode(raw).decode()) == raw
    unpadded = base64.b64encode(raw[:31]).decode().rstrip("=")
    assert standard_key("whsec_" + unpadded) == raw[:31]
    assert standard_key("s3cret-value-1") == b"s3cret-value-1"
    # A prefix with nothing decodable after it is an ordinary secret.
    assert standard_key("whsec_!!!!!!") == b"whsec_!!!!!!"


async def test_a_generated_secret_is_the_standards_and_verifies_as_shown(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A webhook created without a secret gets ``whsec_`` + standard base64 of 32 random
    bytes: the library takes it as ``GET /webhooks/{id}`` shows it."""
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        shown = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
        secret = shown["secret"]
        assert secret.startswith("whsec_")
        assert len(base64.b64decode(secret[len("whsec_") :], validate=True)) == 32
        event_id = await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    assert Webhook(secret).verify(got.body, got.headers)["id"] == event_id


@pytest.mark.parametrize(
    "reply",
    [Reply(503, "bye", {"webhook-delivery": "abort"}), Reply(410, "gone")],
    ids=["abort-header", "410-gone"],
)
async def test_a_receiver_that_asks_to_abort_is_not_retried_and_the_log_says_so(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    reply: Reply,
) -> None:
    async with running_receiver(lambda _n: reply) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        clock.advance(hours=30)
        await worker.run_until_idle()
        assert len(receiver.received) == 1
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "FAILED" and delivery.next_retry_at is None
    assert delivery.attempt_count == 1 and delivery.status_code == reply.status
    assert delivery.error_message is not None
    assert "asked for no retry" in delivery.error_message


async def test_an_ordinary_failure_is_still_retried_and_a_success_with_the_header_succeeds(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    replies = [Reply(503, "busy"), Reply(200, "ok", {"webhook-delivery": "abort"})]
    async with running_receiver(lambda n: replies[min(n, 1)]) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        [delivery] = await deliveries(app, hook["id"])
        assert delivery.status == "RETRYING"
        clock.advance(seconds=6.1)
        await worker.run_until_idle()
        assert len(receiver.received) == 2
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "SUCCESS"


def test_a_whsec_secret_that_is_not_base64_is_keyed_by_its_utf8_bytes() -> None:
    """``whsec_`` with a body base64 cannot decode (a length of 4n+1) or that decodes to
    nothing (no character of the alphabet): the key is the secret's UTF-8 bytes, as for any
    other secret; a proper one is the bytes it decodes to."""
    assert standard_key("whsec_abcde") == b"whsec_abcde"
    assert standard_key("whsec_!!!!!!") == b"whsec_!!!!!!"
    assert standard_key("whsec_Zm9vYmFy") == b"foobar"
    assert standard_key("whsec_Zm9vYg") == b"foob"  # padding optional
