"""The LGPD actions in the client's file, as an admin does them in a real browser: export the
client's data (the API's zip, downloaded: the button once parsed it as JSON and saved
nothing), hold the data with a reason (the erase button goes away, the API
refuses an erasure), release the hold, erase the client (confirmed), and an agent sees
neither the hold nor the erasure."""

from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, Page, expect
from playwright.async_api import TimeoutError as PlaywrightTimeout

from tests.accessibility import serious_violations
from tests.accounts_helpers import make_account
from tests.browser import new_page
from tests.browser import sign_in as browser_sign_in
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture

TIMEOUT = 10_000
SCREENSHOTS = os.environ.get("OFFICEHUB_SCREENSHOTS")
"""A folder: the tests save the held file there when set."""
REASON = "Processo 0001234-56.2026.8.26.0100"


async def sign_in(page: Page, server_url: str, email: str) -> None:
    await browser_sign_in(page, server_url, email, who="Beatriz Nogueira", wait_ms=TIMEOUT)


async def client_world(app: FastAPI, office: OfficeFixture) -> World:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office.id)
        await s.commit()
    return world


async def open_file(page: Page, server_url: str, name: str) -> None:
    await page.goto(f"{server_url}/console/#contacts")
    await page.get_by_label("Buscar cliente").fill(name)
    found = page.locator("#contact-list .contact-item")
    await expect(found).to_have_count(1, timeout=TIMEOUT)
    await found.click()


async def test_an_admin_exports_holds_releases_and_erases_a_client_from_the_file(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture, tmp_path: Path
) -> None:
    world = await client_world(app, office_a)
    person = world.contact
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office_a, "ADMIN")
    async with new_page(browser, 1366, 768) as page:
        page.on("dialog", lambda dialog: dialog.accept())
        await sign_in(page, server_url, email)
        await open_file(page, server_url, person.name)
        file = page.locator(".clients-file .client-file")
        await expect(file.get_by_role("heading", name=person.name)).to_be_visible(timeout=TIMEOUT)

        async with page.expect_download() as waiting:
            await file.get_by_role("button", name="Exportar dados (LGPD)").click()
        download = await waiting.value
        saved = tmp_path / download.suggested_filename
        await download.save_as(saved)
        assert download.suggested_filename == f"dados-{person.id}.zip"
        with zipfile.ZipFile(saved) as archive:
            assert json.loads(archive.read("contact.json"))["id"] == person.id
            assert "README.txt" in archive.namelist()

        await file.get_by_label("Motivo da retenção").fill(REASON)
        await file.get_by_role("button", name="Reter os dados (retenção legal)").click()
        await expect(file).to_contain_text("Dados sob retenção legal", timeout=TIMEOUT)
        await expect(file).to_contain_text(f"Motivo: {REASON}")
        await expect(file.get_by_role("button", name="Apagar todos os dados")).to_have_count(0)
        assert await serious_violations(page) == []
        if SCREENSHOTS:
            await page.screenshot(path=str(Path(SCREENSHOTS) / "console-client-held.png"))
        async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
            held = (await http.get(f"/people/{person.id}", headers=office_a.headers)).json()
            assert (held["legalHold"], held["legalHoldReason"]) == (True, REASON)
            refused = await http.post(f"/people/{person.id}/erase", headers=office_a.headers)
            assert refused.status_code == 409, refused.text

        await file.get_by_role("button", name="Liberar a retenção").click()
        await expect(page.locator("body")).to_contain_text("Retenção liberada.", timeout=TIMEOUT)
        await expect(file.get_by_role("button", name="Apagar todos os dados")).to_be_visible(
            timeout=TIMEOUT
        )
        await expect(file).not_to_contain_text("Dados sob retenção legal")
        await file.get_by_role("button", name="Apagar todos os dados").click()
        # The file closes and the list no longer finds the client. (The status line's
        # "Cliente apagado." can be replaced at once by a background view's own summary, so
        # the test reads what stays.)
        await expect(page.locator(".clients-file .client-file")).to_have_count(0, timeout=TIMEOUT)
        await page.get_by_label("Buscar cliente").fill(person.name[:5])
        await expect(page.locator("#contact-list .contact-item")).to_have_count(0, timeout=TIMEOUT)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        gone = await http.get(f"/people/{person.id}", headers=office_a.headers)
        assert gone.status_code == 404, gone.text


async def test_an_agent_sees_neither_the_hold_nor_the_erasure_in_the_file(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    world = await client_world(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office_a, "AGENT", inbox_ids=[world.inbox.id])
    async with new_page(browser, 390, 844) as page:
        await sign_in(page, server_url, email)
        await open_file(page, server_url, world.contact.name)
        file = page.locator(".clients-file .client-file")
        await expect(file.get_by_role("button", name="Exportar dados (LGPD)")).to_be_visible(
            timeout=TIMEOUT
        )
        await expect(
            file.get_by_role("button", name="Reter os dados (retenção legal)")
        ).to_have_count(0)
        await expect(file.get_by_role("button", name="Apagar todos os dados")).to_have_count(0)
        if SCREENSHOTS:
            await page.screenshot(path=str(Path(SCREENSHOTS) / "console-client-agent-390.png"))


async def test_the_reports_page_downloads_its_csv_through_the_shared_download(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture, tmp_path: Path
) -> None:
    await client_world(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office_a, "ADMIN")
    async with new_page(browser, 1366, 768) as page:
        await sign_in(page, server_url, email)
        await page.goto(f"{server_url}/console/#reports")
        # as a person does: the page's report shown, then its CSV asked for
        await expect(page.locator("#reports-summary")).not_to_be_empty(timeout=TIMEOUT)
        answers: list[str] = []  # what the CSV's request was answered, said if no file comes
        page.on(
            "response",
            lambda r: answers.append(f"{r.status} {r.url}") if "format=csv" in r.url else None,
        )
        try:
            async with page.expect_download() as waiting:
                await page.get_by_role("button", name="Baixar CSV").click()
            download = await waiting.value
        except PlaywrightTimeout as error:
            shown = await page.locator("[role=alert], .error").all_inner_texts()
            raise AssertionError(f"no file: answers {answers}, page says {shown}") from error
        assert download.suggested_filename.startswith("relatorio-conversas-")
        saved = tmp_path / "report.csv"
        await download.save_as(saved)
        header = saved.read_text(encoding="utf-8-sig").splitlines()[0]
        assert "," in header or ";" in header, header


async def test_the_funnel_board_scrolls_inside_its_box_on_a_phone(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=4)
        await s.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office_a, "ADMIN")
    async with new_page(browser, 390, 844) as page:
        await sign_in(page, server_url, email)
        await page.goto(f"{server_url}/console/#board")
        await expect(page.locator("#board-columns .column")).to_have_count(
            len(world.columns), timeout=TIMEOUT
        )
        assert await page.evaluate("document.documentElement.scrollWidth") <= 390
        board = page.locator("#board-columns")
        widths = await board.evaluate("b => [b.clientWidth, b.scrollWidth]")
        assert widths[0] <= 390 < widths[1], widths  # the columns scroll in the board
        if SCREENSHOTS:
            await page.screenshot(path=str(Path(SCREENSHOTS) / "console-board-390.png"))
