"""What the live stream brings never clears the person's own error: a client writing while
an agent reads why their reply was refused leaves the refusal on screen until they close
it (the list's names of new clients were filled with ``attempt``, which clears the notice:
stop 51's CI saw the web chat's flood alert wiped that way)."""

from __future__ import annotations

import re

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, expect

from tests import factories as f
from tests.browser import new_page
from tests.helpers import OfficeFixture
from tests.test_console_browser import open_conversations_live

TIMEOUT = 10_000
LIVE = 15_000
"""As in tests/test_console_live_browser.py: half the hub's safety read (30 s)."""


async def test_a_client_writing_live_does_not_clear_the_persons_error(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        inbox = await f.make_inbox(s, office_a.id)
        official = await f.make_integration(
            s, office_a.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-1"
        )
        carla = await f.make_contact(s, office_a.id, name="Carla Dias")
        await f.make_conversation(s, office_a.id, carla.id, official)
        await s.commit()
    headers = office_a.headers
    async with (
        new_page(browser) as page,
        httpx.AsyncClient(base_url=server_url, timeout=15) as http,
    ):
        await open_conversations_live(page, server_url, office_a.key)
        await page.get_by_role("button", name=re.compile("^Carla Dias")).click()
        await expect(page.get_by_role("heading", name="Carla Dias")).to_be_visible(timeout=TIMEOUT)
        # No message from Carla yet: outside WhatsApp's 24-hour window the reply is refused.
        await page.get_by_label("Resposta").fill("Bom dia, Carla")
        await page.get_by_role("button", name="Enviar resposta").click()
        notice = page.locator("#notice")
        await expect(notice).to_contain_text("409 OUTSIDE_SERVICE_WINDOW", timeout=TIMEOUT)

        # Meanwhile a new client writes: the list shows them, with their name, live.
        rafael = await http.post(
            "/people", json={"name": "Rafael Lima", "phone": "+5511912345678"}, headers=headers
        )
        assert rafael.status_code == 201, rafael.text
        opened = await http.post(
            "/conversation",
            json={
                "personId": rafael.json()["id"],
                "inboxId": inbox.id,
                "integrationId": official.id,
            },
            headers=headers,
        )
        assert opened.status_code == 201, opened.text
        inbound = await http.post(
            f"/conversation/{opened.json()['id']}/messages/inbound",
            json={"text": "Boa tarde, preciso de ajuda"},
            headers=headers,
        )
        assert inbound.status_code == 201, inbound.text
        await expect(page.get_by_role("button", name=re.compile("^Rafael Lima"))).to_be_visible(
            timeout=LIVE
        )

        # The refusal is still there, until the agent closes it.
        await expect(notice).to_contain_text("409 OUTSIDE_SERVICE_WINDOW")
        await notice.get_by_role("button", name="Fechar").click()
        await expect(notice).to_be_empty()
