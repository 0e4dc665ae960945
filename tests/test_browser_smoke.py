"""The browser set-up itself: Debian's Chromium renders a page of the test's server."""

from __future__ import annotations

from playwright.async_api import Page

from tests.accessibility import serious_violations


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


async def test_the_vendored_preact_draws_a_component_under_the_console_csp(
    page: Page, server_url: str
) -> None:
    """html.js (Preact + htm, vendored) runs under the console's CSP: no eval, no other
    host; a component with a hook draws and redraws on a click."""
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    await page.goto(f"{server_url}/console")
    drawn = await page.evaluate(
        """import('/console/html.js').then(({ html, render, useState }) => {
             function Counter() {
               const [n, setN] = useState(0);
               return html`<button id="count" onClick=${() => setN(n + 1)}>${n}</button>`;
             }
             const box = document.createElement('div');
             document.body.append(box);
             render(html`<${Counter} />`, box);
             return box.textContent;
           })"""
    )
    assert drawn == "0"
    await page.click("#count")
    await page.wait_for_function("document.getElementById('count').textContent === '1'")
    assert not [error for error in errors if "Content Security Policy" in error]


async def test_axe_runs_in_a_console_page_and_finds_a_planted_violation(
    page: Page, server_url: str
) -> None:
    """The accessibility check itself: axe-core runs under the console's CSP, the sign-in
    page has no serious violation, and an image without a text alternative is caught."""
    await page.goto(f"{server_url}/console")
    await page.wait_for_selector("#login-email")
    assert await serious_violations(page) == []
    await page.evaluate(
        "document.querySelector('main').insertAdjacentHTML('beforeend',"
        " '<button id=\"bare\"></button>')"
    )
    caught = await serious_violations(page)
    assert any(found["id"] == "button-name" for found in caught), caught
