"""One office's web chat cannot be flooded with contacts from many addresses (issue 39,
item 7): starts are capped per integration (``OFFICEHUB_WEBCHAT_STARTS_PER_INTEGRATION``),
past it 429 with ``Retry-After``, and the office is alerted once: ``chat.webchat.flooded``
on the console's live stream (and to its webhooks)."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.helpers import OfficeFixture, error_of, outbox
from tests.test_stream import opened, served
from tests.webchat_world import SITE, make_webchat


async def _start(http: httpx.AsyncClient, chat_id: str, n: int) -> httpx.Response:
    """A start from an address of its own (the trusted proxy's X-Forwarded-For)."""
    return await http.post(
        f"/webchat/{chat_id}/start",
        json={"name": f"Visitante {n}", "phone": f"+55 11 98765-{n:04d}"},
        headers={"origin": SITE, "x-forwarded-for": f"203.0.113.{n}"},
    )


async def test_starts_past_an_integrations_cap_are_429_and_alert_the_office_once(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    async with served(
        database_url,
        tmp_path,
        trusted_proxies="127.0.0.1",
        webchat_starts_per_integration="3/minute",
    ) as (app, http):
        flooded = await make_webchat(http, office_a)
        other = await make_webchat(http, office_a)
        people_before = (await http.get("/people", headers=office_a.headers)).json()
        async with opened(http, office_a) as stream:
            answers = [await _start(http, flooded["id"], n) for n in range(1, 7)]
            assert [a.status_code for a in answers] == [201, 201, 201, 429, 429, 429]
            refused = answers[3]
            assert error_of(refused)["code"] == "RATE_LIMITED"
            assert int(refused.headers["retry-after"]) >= 1
            # The cap is the integration's: the office's other widget still starts chats.
            assert (await _start(http, other["id"], 7)).status_code == 201
            alert = await stream.next(
                skip=("ready", "contact.created", "chat.conversation.created")
            )
        assert alert.event == "chat.webchat.flooded"
        assert alert.data["data"]["integrationId"] == flooded["id"]
        assert alert.data["data"]["inboxId"] == flooded["inboxId"]
        assert alert.data["data"]["limit"] == "3 per 1 minute"
        people = (await http.get("/people", headers=office_a.headers)).json()
        assert people["totalResults"] - people_before["totalResults"] == 4  # 3 + the other's
        alerts = await outbox(app, office_a.id, "chat.webchat.flooded")
        assert len(alerts) == 1  # three refusals, one alert
