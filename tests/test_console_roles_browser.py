"""Every page of the console for a SUPERVISOR and an AGENT (issue 42), in Debian's
Chromium: the nav shows only the pages the role may use (the API's role rules,
officehub.kit.auth.TAG_ROLES), each page shown opens without an error, the nav's groups
are named and work on a phone (390x844), an admin-only page's address is refused with a
Portuguese sentence, and a `/` typed as the chat opens lists the fast messages once they
arrive."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, Page, Route, expect

from tests.accessibility import serious_violations
from tests.accounts_helpers import make_account
from tests.browser import new_page
from tests.browser import sign_in as browser_sign_in
from tests.crm_world import make_world
from tests.helpers import OfficeFixture

TIMEOUT = 15_000
SCREENSHOTS = os.environ.get("OFFICEHUB_SCREENSHOTS")
EVERY_PAGE = [
    "conversations", "contacts", "board", "cases", "tickets", "notices", "publications",
    "reports", "map", "users", "rules", "flows", "webhooks", "settings", "account",
]  # fmt: skip
# The pages each role is not shown: what the API refuses the role (reads).
HIDDEN = {
    "ADMIN": set(),
    "SUPERVISOR": {"rules", "webhooks"},
    "AGENT": {"rules", "webhooks", "flows", "reports", "map"},
}
GROUPS = ["Atendimento", "Jurídico", "Gestão", "Configurações"]
# The groups each role is shown (a group whose pages are all hidden is hidden).
SHOWN_GROUPS = {
    "ADMIN": GROUPS,
    "SUPERVISOR": GROUPS,
    "AGENT": ["Atendimento", "Jurídico", "Configurações"],
}


async def sign_in(page: Page, server_url: str, email: str) -> None:
    await browser_sign_in(page, server_url, email, who="Beatriz Nogueira", wait_ms=TIMEOUT)


async def shown_pages(page: Page) -> set[str]:
    links = page.locator("#nav a[data-view]")
    return {
        str(await links.nth(i).get_attribute("data-view"))
        for i in range(await links.count())
        if await links.nth(i).is_visible()
    }


async def test_each_role_sees_and_opens_only_its_pages(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=3)
        await s.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        accounts = {
            role: (await make_account(http, office_a, role, inbox_ids=[world.inbox.id]))[1]
            for role in ("SUPERVISOR", "AGENT")
        }
    failed: list[str] = []
    for role, email in accounts.items():
        async with new_page(browser, 1366, 768) as page:
            page.on("response", lambda r: failed.append(r.url) if r.status >= 500 else None)
            await sign_in(page, server_url, email)
            titles = page.get_by_role("navigation", name="Telas").locator(".nav-group-title")
            await expect(titles.filter(visible=True)).to_have_text(SHOWN_GROUPS[role])
            assert await shown_pages(page) == set(EVERY_PAGE) - HIDDEN[role], role
            for name in EVERY_PAGE:
                if name in HIDDEN[role]:
                    continue
                await page.locator(f'#nav a[data-view="{name}"]').click()
                view = page.locator(f"#view-{name}")
                await expect(view).to_be_visible(timeout=TIMEOUT)
                await expect(page.locator(f'#nav a[data-view="{name}"]')).to_have_attribute(
                    "aria-current", "page"
                )
                # let the page's reads come back, then nothing it was shown failed
                await page.wait_for_load_state("networkidle")
                notice = (await page.locator("#notice").inner_text()).strip()
                assert notice == "", (role, name, notice)
            assert await serious_violations(page) == [], role
            # An admin-only page's address: refused in Portuguese, the funnel shown instead.
            await page.goto(f"{server_url}/console/#webhooks")
            await expect(page.locator("#notice")).to_contain_text(
                "Seu perfil não permite abrir a tela “Webhooks”", timeout=TIMEOUT
            )
            await expect(page.locator("#view-board")).to_be_visible()
            await expect(page.locator("#view-webhooks")).to_be_hidden()
    assert failed == []


async def test_the_nav_on_a_phone_opens_from_its_menu_button(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=3)
        await s.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office_a, "AGENT", inbox_ids=[world.inbox.id])
    async with new_page(browser, 390, 844) as page:
        await sign_in(page, server_url, email)
        # on arrival the menu is folded: the page itself is what the phone shows
        menu = page.get_by_role("button", name="Menu")
        await expect(menu).to_have_attribute("aria-expanded", "false")
        await expect(page.locator("#nav")).to_be_hidden()
        board = page.locator("#view-board")
        await expect(board.get_by_role("heading", level=1)).to_be_in_viewport(timeout=TIMEOUT)
        if SCREENSHOTS:
            await page.screenshot(path=str(Path(SCREENSHOTS) / "nav-phone-closed-390.png"))
        # reached by the keyboard: the button takes the focus and Enter opens the menu
        await menu.focus()
        await page.keyboard.press("Enter")
        await expect(menu).to_have_attribute("aria-expanded", "true")
        titles = page.locator("#nav .nav-group-title")
        await expect(titles.filter(visible=True)).to_have_text(SHOWN_GROUPS["AGENT"])
        assert await serious_violations(page) == []
        if SCREENSHOTS:
            await page.screenshot(path=str(Path(SCREENSHOTS) / "nav-phone-open-390.png"))
        # each group's links within the screen
        for box in (
            await page.locator("#nav a")
            .filter(visible=True)
            .evaluate_all("links => links.map((a) => a.getBoundingClientRect().right)")
        ):
            assert box <= 390
        # Escape folds it again and gives the focus back to the button
        await page.locator("#nav").get_by_role("link", name="Conversas").focus()
        await page.keyboard.press("Escape")
        await expect(menu).to_have_attribute("aria-expanded", "false")
        await expect(menu).to_be_focused()
        await expect(page.get_by_role("link", name="Conversas")).to_be_hidden()
        # a link chosen opens its page, and the menu folds away
        await menu.click()
        await expect(menu).to_have_attribute("aria-expanded", "true")
        await page.get_by_role("link", name="Conversas").click()
        await expect(page.locator("#view-conversations")).to_be_visible(timeout=TIMEOUT)
        await expect(menu).to_have_attribute("aria-expanded", "false")
        await expect(page.locator("#nav")).to_be_hidden()
        await expect(page.locator(".conversation-item")).to_have_count(1, timeout=TIMEOUT)
        await expect(page.locator(".conversation-item")).to_be_in_viewport()
        if SCREENSHOTS:
            await page.screenshot(path=str(Path(SCREENSHOTS) / "nav-phone-chosen-390.png"))
        assert await page.evaluate("document.documentElement.scrollWidth") <= 390


async def test_a_slash_typed_as_the_chat_opens_lists_the_fast_messages_when_they_arrive(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=3)
        await s.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        fast = await http.post(
            "/fast-message",
            json={
                "inboxId": world.inbox.id,
                "title": "Documentos",
                "kind": "TEXT",
                "text": "Envie o RG e o comprovante de residência, por favor.",
            },
            headers=office_a.headers,
        )
        assert fast.status_code == 201, fast.text
        _, email = await make_account(http, office_a, "AGENT", inbox_ids=[world.inbox.id])

    released = asyncio.Event()

    async def slow(route: Route) -> None:
        # the fast messages come back only once the `/` is typed (a slow network)
        await released.wait()
        await route.continue_()

    async with new_page(browser, 1366, 768) as page:
        await page.route("**/fast-message?*", slow)
        await sign_in(page, server_url, email)
        await page.get_by_role("link", name="Conversas").click()
        await page.locator(
            f'.conversation-item[data-conversation-id="{world.conversation.id}"]'
        ).click()
        reply = page.get_by_label("Resposta")
        await reply.press_sequentially("/")
        listbox = page.get_by_role("listbox", name="Mensagens rápidas")
        await expect(listbox).to_contain_text("Carregando as mensagens rápidas", timeout=TIMEOUT)
        await reply.press_sequentially("doc")
        released.set()
        options = listbox.get_by_role("option")
        await expect(options).to_have_count(1, timeout=TIMEOUT)
        await expect(options).to_contain_text("Documentos")
        await expect(reply).to_be_focused()
        await reply.press("Enter")
        await expect(reply).to_have_value("Envie o RG e o comprovante de residência, por favor.")
