"""The browser set-up itself: Debian's Chromium renders a page of the test's server."""

from __future__ import annotations

from playwright.async_api import Page


async def test_chromium_renders_the_offline_docs_of_the_test_server(
    page: Page, server_url: str
) -> None:
    answer = await page.goto(f"{server_url}/docs")
    assert answer is not None and answer.status == 200
    # The document is 650 KB (every route, event body and schema): on a loaded 2-core
    # machine Swagger UI takes 20-40 s to parse it (measured at load 8-10), on a quiet one
    # a few seconds. The test is about the browser set-up, so it allows a minute.
    await page.wait_for_selector(".swagger-ui .information-container", timeout=60_000)
    assert "officehub" in (await page.title()).lower()
