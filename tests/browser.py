"""A real Chromium (Debian's package, no downloaded browser) driven by Playwright.

Browser tests take the ``page`` fixture (``tests/conftest.py``) and a server of the
test's app (``server_url`` or ``running_server``)::

    async def test_x(page: Page, server_url: str) -> None:
        await page.goto(f"{server_url}/console")

``make test`` installs Chromium where it is missing (``make chromium``). The executable
is ``OFFICEHUB_CHROMIUM`` when set, else the first of ``chromium`` /
``chromium-browser`` on the PATH.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from playwright.async_api import Browser, Page, async_playwright


def chromium_path() -> str:
    configured = os.environ.get("OFFICEHUB_CHROMIUM")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("Chromium is not installed: run `make chromium` (Debian's package)")


@asynccontextmanager
async def launched_browser() -> AsyncIterator[Browser]:
    """A headless Chromium for one test; closed afterwards."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_path(),
            headless=True,
            args=["--no-sandbox", "--disable-dev-shm-usage"],
        )
        try:
            yield browser
        finally:
            await browser.close()


@asynccontextmanager
async def new_page(browser: Browser, width: int = 1280, height: int = 800) -> AsyncIterator[Page]:
    """A page in its own context (own storage), so tests never share a session."""
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await context.new_page()
        yield page
    finally:
        await context.close()
