"""Accessibility checks with axe-core (tests/fixtures/axe) in a page under test.

The script is evaluated through the browser's debugging protocol, so the console's CSP
(no inline script) does not stop it and the console ships nothing for it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from playwright.async_api import Page

AXE = Path(__file__).resolve().parent / "fixtures/axe/axe.min.js"
SERIOUS = {"serious", "critical"}


@cache
def _axe_source() -> str:
    return AXE.read_text(encoding="utf-8")


async def violations(page: Page, *, within: str | None = None) -> list[dict[str, Any]]:
    """axe's violations of the page (or of the element `within` selects), each with its
    rule id, impact, help text and the selectors of the nodes that break it."""
    if not await page.evaluate("typeof window.axe !== 'undefined'"):
        await page.evaluate(_axe_source())
    found: list[dict[str, Any]] = await page.evaluate(
        """async (within) => {
             const result = await axe.run(within ? document.querySelector(within) : document,
                                          { resultTypes: ['violations'] });
             return result.violations.map((v) => ({
               id: v.id, impact: v.impact, help: v.help,
               nodes: v.nodes.map((n) => n.target.join(' ')),
             }));
           }""",
        within,
    )
    return found


async def serious_violations(page: Page, *, within: str | None = None) -> list[dict[str, Any]]:
    """The violations whose impact is serious or critical: a console page has none."""
    return [found for found in await violations(page, within=within) if found["impact"] in SERIOUS]
