"""The console entered with an API key updates live too (issue 29): an EventSource cannot
carry the key's header, so the console reads ``GET /stream`` with fetch, the key in its
header, and reconnects with ``Last-Event-ID`` when the stream ends, missing nothing."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Request, expect
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from tests import factories as f
from tests.browser import new_page
from tests.conftest import _test_settings
from tests.helpers import OfficeFixture
from tests.test_console_browser import log_in_in_portuguese

TIMEOUT = 10_000
LIVE = 15_000
"""As in tests/test_console_live_browser.py: half the hub's safety read (30 s)."""
STREAM_SECONDS = 3.0


@pytest.fixture
def settings(database_url: str, tmp_path: Path) -> Settings:
    """Streams end after a few seconds, so the console has to reconnect during the test."""
    return _test_settings(database_url, tmp_path, stream_max_seconds=STREAM_SECONDS)


async def test_a_key_console_shows_new_messages_live_and_resumes_after_the_stream_ends(
    browser: Browser, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id, type="WEBCHAT")
    contact = await f.make_contact(session, office_a.id, name="Joana Prado")
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    streams: list[dict[str, str]] = []

    def watch(request: Request) -> None:
        if request.url.endswith("/stream"):
            streams.append(request.headers)

    async with (
        new_page(browser) as page,
        httpx.AsyncClient(base_url=server_url, timeout=15) as http,
    ):
        page.on("request", watch)
        await log_in_in_portuguese(page, server_url, office_a.key)
        await page.get_by_role("link", name="Conversas").click()
        live = page.locator("#live")
        await expect(live).to_have_attribute("data-state", "on", timeout=TIMEOUT)
        await expect(live).to_have_text("Ao vivo")
        assert streams and streams[0]["x-service-api-key"] == office_a.key

        first = await http.post(
            f"/conversation/{conversation.id}/messages/inbound",
            json={"text": "Primeira mensagem ao vivo"},
            headers=office_a.headers,
        )
        assert first.status_code == 201, first.text
        row = page.locator(".conversation-item", has_text="Primeira mensagem ao vivo")
        await expect(row).to_be_visible(timeout=LIVE)

        # The stream ends after STREAM_SECONDS; the console opens it again, naming the last
        # event it received, and what comes next still arrives without a reload.
        await page.wait_for_function(
            "n => performance.getEntriesByType('resource')"
            ".filter(e => e.name.endsWith('/stream')).length >= n",
            arg=2,
            timeout=TIMEOUT + STREAM_SECONDS * 1000,
        )
        resumed = [h for h in streams[1:] if "last-event-id" in h]
        assert resumed, streams
        second = await http.post(
            f"/conversation/{conversation.id}/messages/inbound",
            json={"text": "Segunda, depois de reconectar"},
            headers=office_a.headers,
        )
        assert second.status_code == 201, second.text
        row = page.locator(".conversation-item", has_text="Segunda, depois de reconectar")
        await expect(row).to_be_visible(timeout=LIVE)
