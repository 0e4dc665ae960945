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

from playwright.async_api import Browser, Page, Playwright, async_playwright, expect


def chromium_path() -> str:
    configured = os.environ.get("OFFICEHUB_CHROMIUM")
    if configured:
        return configured
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    raise RuntimeError("Chromium is not installed: run `make chromium` (Debian's package)")


async def _launch(playwright: Playwright) -> Browser:
    return await playwright.chromium.launch(
        executable_path=chromium_path(),
        headless=True,
        args=["--no-sandbox", "--disable-dev-shm-usage"],
    )


@asynccontextmanager
async def launched_browser() -> AsyncIterator[Browser]:
    """A headless Chromium of its own; closed afterwards."""
    async with async_playwright() as playwright:
        browser = await _launch(playwright)
        try:
            yield browser
        finally:
            await browser.close()


class SharedBrowser:
    """One headless Chromium for a pytest session (a launch costs about a second of CPU),
    launched at first use and again when it is gone. Tests share nothing through it: each
    page has a context of its own (``new_page``), and ``lend`` closes every context a test
    left open."""

    def __init__(self) -> None:
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None

    @asynccontextmanager
    async def lend(self) -> AsyncIterator[Browser]:
        if self._playwright is None:
            self._playwright = await async_playwright().start()
        if self._browser is None or not self._browser.is_connected():
            self._browser = await _launch(self._playwright)
        browser = self._browser
        try:
            yield browser
        finally:
            for context in list(browser.contexts):
                await context.close()

    async def close(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            await self._browser.close()
        if self._playwright is not None:
            await self._playwright.stop()


@asynccontextmanager
async def new_page(browser: Browser, width: int = 1280, height: int = 800) -> AsyncIterator[Page]:
    """A page in its own context (own storage), so tests never share a session."""
    context = await browser.new_context(viewport={"width": width, "height": height})
    try:
        page = await context.new_page()
        yield page
    finally:
        await context.close()


async def nav_to(page: Page, name: str, *, exact: bool = False) -> None:
    """Opens a page from the nav, first opening the "Menu" a phone folds it behind."""
    menu = page.locator("#nav-toggle")
    if await menu.is_visible() and await menu.get_attribute("aria-expanded") != "true":
        await menu.click()
    await page.locator("#nav").get_by_role("link", name=name, exact=exact).click()


async def sign_in(
    page: Page, server_url: str, email: str, *, who: str | None = None, wait_ms: int = 10_000
) -> None:
    """Signs in to the console with email and the test password (``accounts_helpers``).

    Signed in is the user's name shown (``who`` when given, else the name's place visible).
    """
    from tests.accounts_helpers import PASSWORD

    await page.goto(f"{server_url}/console")
    await page.get_by_label("E-mail").fill(email)
    await page.get_by_label("Senha").fill(PASSWORD)
    await page.get_by_role("button", name="Entrar com e-mail").click()
    if who is None:
        await expect(page.locator("#who")).to_be_visible(timeout=wait_ms)
    else:
        await expect(page.locator("#who")).to_contain_text(who, timeout=wait_ms)
