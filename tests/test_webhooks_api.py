"""The webhook routes: success, bad input naming the field, another office's id, no key."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from officehub.kit.config import Settings
from tests.helpers import OfficeFixture, error_of
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import create_webhook, deliveries, delivery_worker, emit_event

URL = "https://hooks.example.com/officehub"
MISSING = "c000000000000000000000000"


async def _hook(client: httpx.AsyncClient, office: OfficeFixture, **fields: Any) -> dict[str, Any]:
    return await create_webhook(client, office, URL, **fields)


# POST /webhooks


async def test_create_webhook(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    response = await client.post(
        "/webhooks",
        json={
            "name": "CRM sync",
            "url": URL,
            "events": ["contact.created", "crm.lead.moved"],
            "description": "to the ERP",
            "headers": {"Authorization": "Bearer x"},
        },
        headers=office_a.headers,
    )
    assert response.status_code == 201
    body = response.json()
    assert "secret" not in body
    assert body["officeId"] == office_a.id and body["isActive"] is True
    assert body["events"] == ["contact.created", "crm.lead.moved"]
    assert body["headers"] == {"Authorization": "Bearer x"}
    assert body["description"] == "to the ERP" and body["disabledReason"] is None
    assert body["createdAt"].endswith("Z")


async def test_create_generates_a_secret_when_absent(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _hook(client, office_a)
    read = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
    assert 8 <= len(read["secret"]) <= 256


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": ""}, "body.name"),
        ({"name": "n" * 101}, "body.name"),
        ({"description": "d" * 501}, "body.description"),
        ({"secret": "short"}, "body.secret"),
        ({"secret": "s" * 257}, "body.secret"),
        ({"events": []}, "body.events"),
        ({"events": ["contact.exploded"]}, "body.events"),
        ({"url": "ftp://example.com/x"}, "body.url"),
        ({"url": "not a url"}, "body.url"),
        ({"headers": {"X-Num": 1}}, "body.headers"),
        ({"headers": ["a"]}, "body.headers"),
        ({"headers": {"Bad Header": "v"}}, "body.headers"),
        ({"isActive": "maybe"}, "body.isActive"),
    ],
)
async def test_create_webhook_bad_input_names_the_field(
    app: FastAPI,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    change: dict[str, Any],
    field: str,
) -> None:
    body = {"name": "CRM sync", "url": URL, "events": ["contact.created"], **change}
    response = await client.post("/webhooks", json=body, headers=office_a.headers)
    assert response.status_code == 400
    assert field in error_of(response)["details"]
    listed = await client.get("/webhooks", headers=office_a.headers)
    assert listed.json()["totalResults"] == 0


async def test_webhook_limits_are_inclusive(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await _hook(client, office_a, name="n", description="d" * 500, secret="s" * 8)
    await _hook(client, office_a, name="n" * 100, description=None, secret="s" * 256)


async def test_create_webhook_without_key(client: httpx.AsyncClient) -> None:
    response = await client.post("/webhooks", json={"name": "x", "url": URL, "events": []})
    assert response.status_code == 401


async def test_create_refuses_a_literal_private_address_unless_allowed(
    settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI
) -> None:
    app.state.settings = settings.model_copy(update={"webhook_allow_private": False})
    body = {"name": "x", "url": "http://169.254.169.254/latest", "events": ["contact.created"]}
    response = await client.post("/webhooks", json=body, headers=office_a.headers)
    assert response.status_code == 400
    assert error_of(response)["code"] == "WEBHOOK_URL_NOT_ALLOWED"
    app.state.settings = settings
    response = await client.post("/webhooks", json=body, headers=office_a.headers)
    assert response.status_code == 201


async def test_a_refused_loopback_url_names_the_setting_that_allows_it(
    settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI
) -> None:
    app.state.settings = settings.model_copy(update={"webhook_allow_private": False})
    body = {"name": "x", "url": "http://127.0.0.1:9000/hook", "events": ["contact.created"]}
    response = await client.post("/webhooks", json=body, headers=office_a.headers)
    assert response.status_code == 400
    assert "OFFICEHUB_WEBHOOK_ALLOW_PRIVATE" in error_of(response)["details"]


# GET /webhooks


async def test_list_webhooks_without_secret_with_stats(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    async with running_receiver(lambda n: Reply(200 if n == 0 else 400)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await _hook(client, office_b)
        await emit_event(app, office_a.id)
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
    response = await client.get("/webhooks", headers=office_a.headers)
    assert response.status_code == 200
    body = response.json()
    assert body["totalResults"] == 1 and body["totalPages"] == 1
    [item] = body["data"]
    assert item["id"] == hook["id"] and "secret" not in item
    assert item["stats"] == {
        "totalDeliveries": 2,
        "successCount": 1,
        "failedCount": 0,
        "successRate": 1.0,
    }


async def test_list_webhooks_bad_input(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    response = await client.get("/webhooks?limit=0", headers=office_a.headers)
    assert response.status_code == 400 and "query.limit" in error_of(response)["details"]


async def test_list_webhooks_without_key(client: httpx.AsyncClient) -> None:
    assert (await client.get("/webhooks")).status_code == 401


# GET /webhooks/{webhookId}


async def test_read_webhook_with_secret(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    hook = await _hook(client, office_a, secret="my-secret-value")
    response = await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)
    assert response.status_code == 200
    assert response.json() == {**hook, "secret": "my-secret-value"}


async def test_the_secret_appears_only_in_the_single_read(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _hook(client, office_a, secret="only-here-123")
    path = f"/webhooks/{hook['id']}"
    responses = [
        await client.get("/webhooks", headers=office_a.headers),
        await client.patch(path, json={"name": "new"}, headers=office_a.headers),
        await client.post(f"{path}/test", headers=office_a.headers),
        await client.get(f"{path}/deliveries", headers=office_a.headers),
        await client.delete(path, headers=office_a.headers),
    ]
    assert "secret" not in hook
    for response in responses:
        assert "only-here-123" not in response.text, response.request.url


async def test_read_webhook_bad_id(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    response = await client.get("/webhooks/not-an-id", headers=office_a.headers)
    assert response.status_code == 400 and "path.webhookId" in error_of(response)["details"]


async def test_read_webhook_of_another_office(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    hook = await _hook(client, office_b)
    response = await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)
    assert response.status_code == 404 and error_of(response)["code"] == "NOT_FOUND"


async def test_read_webhook_without_key(client: httpx.AsyncClient) -> None:
    assert (await client.get(f"/webhooks/{MISSING}")).status_code == 401


# PATCH /webhooks/{webhookId}


async def test_update_webhook_changes_only_the_fields_sent(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _hook(client, office_a, description="keep", headers={"A": "1"})
    response = await client.patch(
        f"/webhooks/{hook['id']}",
        json={"name": "Renamed", "events": ["crm.lead.created"]},
        headers=office_a.headers,
    )
    assert response.status_code == 200
    body = response.json()
    assert "secret" not in body
    assert body["name"] == "Renamed" and body["events"] == ["crm.lead.created"]
    assert body["description"] == "keep" and body["headers"] == {"A": "1"} and body["url"] == URL


async def test_update_webhook_null_removes_description_and_headers(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _hook(client, office_a, description="gone", headers={"A": "1"})
    response = await client.patch(
        f"/webhooks/{hook['id']}",
        json={"description": None, "headers": None},
        headers=office_a.headers,
    )
    assert response.json()["description"] is None and response.json()["headers"] is None


async def test_sending_the_secret_rotates_it(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _hook(client, office_a, secret="first-secret")
    await client.patch(
        f"/webhooks/{hook['id']}", json={"secret": "second-secret"}, headers=office_a.headers
    )
    read = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
    assert read["secret"] == "second-secret"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"name": ""}, "body.name"),
        ({"name": None}, "body.name"),
        ({"events": []}, "body.events"),
        ({"events": None}, "body.events"),
        ({"events": ["nope"]}, "body.events"),
        ({"secret": "1234567"}, "body.secret"),
        ({"url": "javascript:alert(1)"}, "body.url"),
        ({"url": None}, "body.url"),
        ({"description": "d" * 501}, "body.description"),
        ({"isActive": None}, "body.isActive"),
        ({"headers": {"A": None}}, "body.headers"),
    ],
)
async def test_update_webhook_bad_input_names_the_field_and_changes_nothing(
    client: httpx.AsyncClient, office_a: OfficeFixture, change: dict[str, Any], field: str
) -> None:
    hook = await _hook(client, office_a)
    before = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
    response = await client.patch(f"/webhooks/{hook['id']}", json=change, headers=office_a.headers)
    assert response.status_code == 400
    assert field in error_of(response)["details"]
    after = (await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)).json()
    assert after == before


async def test_update_webhook_of_another_office(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    hook = await _hook(client, office_b)
    response = await client.patch(
        f"/webhooks/{hook['id']}", json={"name": "x"}, headers=office_a.headers
    )
    assert response.status_code == 404
    read = (await client.get(f"/webhooks/{hook['id']}", headers=office_b.headers)).json()
    assert read["name"] == "CRM sync"


async def test_update_webhook_without_key(client: httpx.AsyncClient) -> None:
    response = await client.patch(f"/webhooks/{MISSING}", json={"name": "x"})
    assert response.status_code == 401


# DELETE /webhooks/{webhookId}


async def test_delete_webhook(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    hook = await _hook(client, office_a)
    response = await client.delete(f"/webhooks/{hook['id']}", headers=office_a.headers)
    assert response.status_code == 200 and response.json()["id"] == hook["id"]
    again = await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)
    assert again.status_code == 404


async def test_delete_webhook_bad_id(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    response = await client.delete("/webhooks/x-1", headers=office_a.headers)
    assert response.status_code == 400 and "path.webhookId" in error_of(response)["details"]


async def test_delete_webhook_of_another_office(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    hook = await _hook(client, office_b)
    response = await client.delete(f"/webhooks/{hook['id']}", headers=office_a.headers)
    assert response.status_code == 404
    assert (
        await client.get(f"/webhooks/{hook['id']}", headers=office_b.headers)
    ).status_code == 200


async def test_delete_webhook_without_key(client: httpx.AsyncClient) -> None:
    assert (await client.delete(f"/webhooks/{MISSING}")).status_code == 401


# POST /webhooks/{webhookId}/test


async def test_send_test_event(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        response = await client.post(f"/webhooks/{hook['id']}/test", headers=office_a.headers)
        assert response.status_code == 200
        await delivery_worker(app, settings).run_until_idle()
    assert response.json() == {"eventId": receiver.event_ids()[0], "webhookId": hook["id"]}
    assert receiver.received[0].json["event"] == "webhook.test"


async def test_send_test_bad_id(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    response = await client.post("/webhooks/zzz/test", headers=office_a.headers)
    assert response.status_code == 400 and "path.webhookId" in error_of(response)["details"]


async def test_send_test_to_another_office(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    hook = await _hook(client, office_b)
    response = await client.post(f"/webhooks/{hook['id']}/test", headers=office_a.headers)
    assert response.status_code == 404
    from tests.helpers import outbox

    assert await outbox(app, office_a.id) == [] and await outbox(app, office_b.id) == []


async def test_send_test_without_key(client: httpx.AsyncClient) -> None:
    assert (await client.post(f"/webhooks/{MISSING}/test")).status_code == 401


# GET /webhooks/{webhookId}/deliveries and /deliveries/{deliveryId}


async def _delivered(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office: OfficeFixture
) -> dict[str, Any]:
    async with running_receiver(lambda n: Reply(500 if n == 1 else 200)) as receiver:
        hook = await create_webhook(
            client, office, receiver.url, events=["contact.created", "contact.updated"]
        )
        await emit_event(app, office.id, "contact.created")
        await emit_event(app, office.id, "contact.updated")
        await delivery_worker(app, settings).run_until_idle()
    return hook


async def test_list_deliveries_newest_first_with_filters(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _delivered(app, settings, client, office_a)
    path = f"/webhooks/{hook['id']}/deliveries"
    response = await client.get(path, headers=office_a.headers)
    assert response.status_code == 200
    body = response.json()
    assert body["total"] == 2 and body["page"] == 1 and body["limit"] == 20
    assert body["totalPages"] == 1
    assert {d["event"] for d in body["data"]} == {"contact.created", "contact.updated"}
    first = body["data"][0]
    assert set(first) == {
        "id",
        "webhookId",
        "event",
        "status",
        "statusCode",
        "payload",
        "responseBody",
        "errorMessage",
        "durationMs",
        "attemptCount",
        "nextRetryAt",
        "createdAt",
        "expiresAt",
    }
    retrying = (await client.get(f"{path}?status=RETRYING", headers=office_a.headers)).json()
    assert [d["statusCode"] for d in retrying["data"]] == [500]
    assert retrying["data"][0]["nextRetryAt"] is not None
    by_event = (await client.get(f"{path}?event=contact.created", headers=office_a.headers)).json()
    assert [d["event"] for d in by_event["data"]] == ["contact.created"]
    assert by_event["data"][0]["payload"]["event"] == "contact.created"


async def test_list_deliveries_bad_input(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _hook(client, office_a)
    response = await client.get(
        f"/webhooks/{hook['id']}/deliveries?status=LOST", headers=office_a.headers
    )
    assert response.status_code == 400 and "query.status" in error_of(response)["details"]


async def test_list_deliveries_of_another_office(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    hook = await _hook(client, office_b)
    response = await client.get(f"/webhooks/{hook['id']}/deliveries", headers=office_a.headers)
    assert response.status_code == 404


async def test_list_deliveries_without_key(client: httpx.AsyncClient) -> None:
    assert (await client.get(f"/webhooks/{MISSING}/deliveries")).status_code == 401


async def test_read_delivery(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _delivered(app, settings, client, office_a)
    delivery = (await deliveries(app, hook["id"]))[0]
    response = await client.get(
        f"/webhooks/{hook['id']}/deliveries/{delivery.id}", headers=office_a.headers
    )
    assert response.status_code == 200
    body = response.json()
    assert body["id"] == delivery.id and body["webhookId"] == hook["id"]
    assert len(body["attempts"]) == 1


async def test_read_delivery_bad_id(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    hook = await _hook(client, office_a)
    response = await client.get(f"/webhooks/{hook['id']}/deliveries/nope", headers=office_a.headers)
    assert response.status_code == 400 and "path.deliveryId" in error_of(response)["details"]


async def test_read_delivery_of_another_office(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    hook = await _delivered(app, settings, client, office_b)
    delivery = (await deliveries(app, hook["id"]))[0]
    response = await client.get(
        f"/webhooks/{hook['id']}/deliveries/{delivery.id}", headers=office_a.headers
    )
    assert response.status_code == 404


async def test_read_delivery_without_key(client: httpx.AsyncClient) -> None:
    response = await client.get(f"/webhooks/{MISSING}/deliveries/{MISSING}")
    assert response.status_code == 401


# POST /webhooks/deliveries/{deliveryId}/retry


async def test_retry_a_retrying_delivery_sends_it_now(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(lambda n: Reply(500 if n == 0 else 200)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        worker = delivery_worker(app, settings)
        await worker.run_until_idle()
        [delivery] = await deliveries(app, hook["id"])
        response = await client.post(
            f"/webhooks/deliveries/{delivery.id}/retry", headers=office_a.headers
        )
        assert response.status_code == 200
        assert response.json()["status"] == "PENDING" and response.json()["id"] == delivery.id
        await worker.run_until_idle()
    assert len(receiver.received) == 2
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "SUCCESS"


async def test_retry_of_a_successful_delivery_is_a_conflict(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await _delivered(app, settings, client, office_a)
    ok = next(d for d in await deliveries(app, hook["id"]) if d.status == "SUCCESS")
    response = await client.post(f"/webhooks/deliveries/{ok.id}/retry", headers=office_a.headers)
    assert response.status_code == 409 and error_of(response)["code"] == "CONFLICT"


async def test_retry_bad_id(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    response = await client.post("/webhooks/deliveries/bad/retry", headers=office_a.headers)
    assert response.status_code == 400 and "path.deliveryId" in error_of(response)["details"]


async def test_retry_delivery_of_another_office(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    hook = await _delivered(app, settings, client, office_b)
    failed = next(d for d in await deliveries(app, hook["id"]) if d.status == "RETRYING")
    response = await client.post(
        f"/webhooks/deliveries/{failed.id}/retry", headers=office_a.headers
    )
    assert response.status_code == 404
    [still] = [d for d in await deliveries(app, hook["id"]) if d.id == failed.id]
    assert still.status == "RETRYING"


async def test_retry_without_key(client: httpx.AsyncClient) -> None:
    assert (await client.post(f"/webhooks/deliveries/{MISSING}/retry")).status_code == 401


async def test_openapi_lists_the_webhook_routes(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert set(paths["/webhooks/{webhookId}"]) == {"get", "patch", "delete"}
    assert "post" in paths["/webhooks/deliveries/{deliveryId}/retry"]
    assert "get" in paths["/webhooks/events"]
