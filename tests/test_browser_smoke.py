"""The browser set-up itself: Debian's Chromium renders a page of the test's server."""

from __future__ import annotations

from playwright.async_api import Page


async def test_chromium_renders_the_offline_docs_of_the_test_server(
    page: Page, server_url: str
) -> None:
    answer = await page.goto(f"{server_url}/docs")
    assert answer is not None and answer.status == 200
    await page.wait_for_selector(".swagger-ui .information-container", timeout=15_000)
    assert "officehub" in (await page.title()).lower()
