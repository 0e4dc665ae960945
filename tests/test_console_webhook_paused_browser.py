"""A webhook paused after its retry window failed is told on the console's webhooks page
(issue 44, item 4), in Portuguese, with a button that turns it back on; what it missed is
then sent again (tests/test_webhook_operations.py checks the resend itself)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, Page, expect
from sqlalchemy import update

from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.webhooks.models import Webhook
from tests.accessibility import serious_violations
from tests.browser import nav_to, new_page
from tests.helpers import OfficeFixture
from tests.receiver import Reply, running_receiver
from tests.test_console_browser import log_in_in_portuguese
from tests.webhook_helpers import Clock, create_webhook, delivery_worker, pause_by_failures

TIMEOUT = 10_000
# Looked at by a person when the page changes (not compared by the test).
SCREENSHOTS = Path(tempfile.gettempdir())


async def test_a_paused_webhook_is_told_on_the_console_and_turned_back_on_from_there(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    browser: Browser,
    server_url: str,
) -> None:
    async with (
        running_receiver(lambda _n: Reply(410, "gone")) as gone,
        running_receiver() as fine,
    ):
        hook = await create_webhook(client, office_a, gone.url, name="ERP do escritório")
        await create_webhook(client, office_a, fine.url, name="Planilha")
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await pause_by_failures(app, settings, office_a, worker, clock)

    async with new_page(browser, 1366, 768) as page:
        await _check_the_alert(page, server_url, office_a, client, hook["id"])


async def _check_the_alert(
    page: Page, server_url: str, office_a: OfficeFixture, client: httpx.AsyncClient, hook_id: str
) -> None:
    await log_in_in_portuguese(page, server_url, office_a.key)
    await nav_to(page, "Webhooks")
    alert = page.locator("#webhooks-paused")
    await expect(alert).to_contain_text("O webhook ERP do escritório foi pausado", timeout=TIMEOUT)
    await expect(alert).not_to_contain_text("Planilha")
    row = page.locator(f'tr[data-webhook-id="{hook_id}"]')
    await expect(row).to_contain_text("pausado automaticamente")
    assert await serious_violations(page, within="#view-webhooks") == []
    await page.screenshot(path=SCREENSHOTS / "webhooks-paused-1366.png")
    await alert.get_by_role("button", name="Reativar e reenviar: webhook ERP do escritório").click()
    await expect(alert).to_be_hidden(timeout=TIMEOUT)
    await expect(row).to_contain_text("ativo")
    read = (await client.get(f"/webhooks/{hook_id}", headers=office_a.headers)).json()
    assert read["isActive"] is True and read["disabledReason"] is None


async def test_the_paused_alert_fits_a_phone(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    browser: Browser,
    server_url: str,
) -> None:
    hook = await create_webhook(client, office_a, "https://hooks.example.com/x", name="ERP")
    async with app.state.sessionmaker() as s:
        await s.execute(
            update(Webhook)
            .where(Webhook.id == hook["id"])
            .values(is_active=False, disabled_reason="Paused automatically", failing_since=utcnow())
        )
        await s.commit()
    async with new_page(browser, 390, 844) as phone:
        await log_in_in_portuguese(phone, server_url, office_a.key)
        await phone.goto(f"{server_url}/console#webhooks")
        await expect(phone.locator("#webhooks-paused")).to_contain_text("ERP", timeout=TIMEOUT)
        await phone.screenshot(path=SCREENSHOTS / "webhooks-paused-390.png")
        assert await phone.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), (
            "the page is wider than the phone"
        )
