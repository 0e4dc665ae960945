"""The console's "Publicações" in Chromium (Portuguese, as it opens): a new publication of
the DJEN appears unread with its court, kind, case number, the day made available, the
deadline (dd/mm/aaaa and business days), the text collapsed and DJEN's link; it is marked
read, its period changed (the recounted deadline shows), a bad period is refused in
Portuguese; the filters (unread only, lawyer, the case) narrow the list."""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any

import httpx
from playwright.async_api import Page, Route, expect
from sqlalchemy.ext.asyncio import AsyncSession

from tests import factories as f
from tests.helpers import OfficeFixture
from tests.test_console_browser import TIMEOUT, log_in_in_portuguese

ANA = {"name": "Dra. Ana Lima", "oab": {"number": "123456", "uf": "SP"}}
BRUNO = {"name": "Dr. Bruno Reis", "oab": {"number": "654321", "uf": "SP"}}
LINK = "https://comunicaapi.pje.jus.br/api/v1/comunicacao/abc/certidao"
TEXT = "Intimem-se as partes.\nPrazo para manifestação sobre o laudo pericial."


async def _publication(
    client: httpx.AsyncClient, office: OfficeFixture, ident: str
) -> dict[str, Any]:
    r = await client.get(f"/publications/{ident}", headers=office.headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def test_a_new_publication_appears_unread_is_marked_read_and_its_period_recounted(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    h = office_a.headers
    ana = (await client.post("/lawyers", json=ANA, headers=h)).json()
    bruno = (await client.post("/lawyers", json=BRUNO, headers=h)).json()
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    case_body = {"number": "1009131-52.2024.8.26.0224", "personId": contact.id}
    case = (await client.post("/cases", json=case_body, headers=h)).json()
    older = await f.make_publication(
        session, office_a.id, lawyer_id=bruno["id"], made_available=date(2026, 3, 20),
        case_number=None, court="TRT2", kind="Edital", category="OTHER",
        deadline_days=None, deadline_days_source=None, deadline_at=None,
        deadline_calendar=None,
    )  # fmt: skip
    await session.commit()
    r = await client.patch(f"/publications/{older.id}", json={"read": True}, headers=h)
    assert r.status_code == 200, r.text

    await log_in_in_portuguese(page, server_url, office_a.key)
    await page.get_by_role("link", name="Publicações").click()
    await expect(page.get_by_role("heading", name="Publicações", exact=True)).to_be_visible()
    await expect(page.locator("li.publication")).to_have_count(1, timeout=TIMEOUT)
    old_card = page.locator(f'li[data-publication-id="{older.id}"]')
    await expect(old_card).to_have_attribute("data-read", "true")
    await expect(old_card).to_contain_text("Edital · TRT2")
    await expect(old_card).to_contain_text("Sem número de processo")
    await expect(old_card).to_contain_text("Sem prazo")

    # a new publication comes (as the DJEN sync stores it): it appears unread, on top
    new = await f.make_publication(
        session, office_a.id, lawyer_id=ana["id"], case_id=case["id"], link=LINK, text=TEXT
    )
    await session.commit()
    await page.get_by_role("button", name="Recarregar").click()
    await expect(page.locator("li.publication")).to_have_count(2, timeout=TIMEOUT)
    await expect(page.locator("li.publication").first).to_have_attribute(
        "data-publication-id", new.id
    )
    card = page.locator(f'li[data-publication-id="{new.id}"]')
    await expect(card).to_have_attribute("data-read", "false")
    await expect(card.get_by_role("heading")).to_contain_text("Intimação · TJSP")
    await expect(card.get_by_role("heading")).to_contain_text("Não lida")
    await expect(card).to_contain_text("Processo nº 1009131-52.2024.8.26.0224")
    await expect(card).to_contain_text("1ª Vara Cível")
    await expect(card).to_contain_text("Disponibilizada em 27/03/2026; publicada em 30/03/2026.")
    await expect(card).to_contain_text("Prazo até 07/04/2026 (5 dias úteis, padrão da intimação)")
    await expect(card.get_by_role("link", name="Documento no DJEN")).to_have_attribute("href", LINK)
    # the text is collapsed until opened
    text = card.locator(".publication-text")
    await expect(text).to_be_hidden()
    await card.get_by_text("Texto da publicação").click()
    await expect(text).to_be_visible()
    await expect(text).to_contain_text("laudo pericial")

    # the filters: unread only, then one lawyer
    await page.get_by_label("Somente não lidas").check()
    await expect(page.locator("li.publication")).to_have_count(1, timeout=TIMEOUT)
    await expect(page.locator(f'li[data-publication-id="{new.id}"]')).to_be_visible()
    await page.get_by_label("Somente não lidas").uncheck()
    await page.get_by_label("Advogado").select_option(label="Dr. Bruno Reis (OAB 654321/SP)")
    await expect(page.locator("li.publication")).to_have_count(1, timeout=TIMEOUT)
    await expect(old_card).to_be_visible()
    await page.get_by_label("Advogado").select_option(label="Todos os advogados")
    await expect(page.locator("li.publication")).to_have_count(2, timeout=TIMEOUT)

    # opened and marked read
    card = page.locator(f'li[data-publication-id="{new.id}"]')
    await card.get_by_role("button", name="Marcar como lida").click()
    await expect(card).to_have_attribute("data-read", "true", timeout=TIMEOUT)
    await expect(card.get_by_role("heading")).not_to_contain_text("Não lida")
    await expect(card.get_by_role("button", name="Marcar como não lida")).to_be_visible()
    await expect(page.get_by_role("status")).to_contain_text("marcada como lida")
    assert (await _publication(client, office_a, new.id))["read"] is True

    # the period changed: the deadline is recounted in business days and shown
    await card.get_by_label("Prazo em dias úteis").fill("10")
    await card.get_by_role("button", name="Definir prazo").click()
    recounted = "Prazo até 14/04/2026 (10 dias úteis, escolhido pelo advogado)"
    await expect(card).to_contain_text(recounted, timeout=TIMEOUT)
    stored = await _publication(client, office_a, new.id)
    assert (stored["deadlineDays"], stored["deadlineOn"]) == (10, "2026-04-14")
    assert stored["deadlineDaysSource"] == "LAWYER"

    # a period the API refuses (400) is said in Portuguese, and nothing changes
    await card.get_by_label("Prazo em dias úteis").fill("0")
    await card.get_by_role("button", name="Definir prazo").click()
    alert = page.locator("#notice")
    await expect(alert).to_have_attribute("data-code", "VALIDATION_ERROR", timeout=TIMEOUT)
    await expect(alert).to_contain_text("400")
    await expect(alert).to_contain_text("Dados inválidos")
    await expect(alert).to_contain_text("deadlineDays")
    assert (await _publication(client, office_a, new.id))["deadlineDays"] == 10
    await expect(card).to_contain_text(recounted)

    # the case number of a case of the office narrows the list to that case
    await card.get_by_role("button", name="Processo nº 1009131-52.2024.8.26.0224").click()
    await expect(page.locator("li.publication")).to_have_count(1, timeout=TIMEOUT)
    await expect(page.locator("#publications-case")).to_contain_text(
        "Somente o processo nº 1009131-52.2024.8.26.0224."
    )
    await page.get_by_role("button", name="Mostrar todos os processos").click()
    await expect(page.locator("li.publication")).to_have_count(2, timeout=TIMEOUT)

    # and marked unread again
    card = page.locator(f'li[data-publication-id="{new.id}"]')
    await card.get_by_role("button", name="Marcar como não lida").click()
    await expect(card).to_have_attribute("data-read", "false", timeout=TIMEOUT)
    assert (await _publication(client, office_a, new.id))["read"] is False


async def test_an_answer_that_comes_late_does_not_replace_the_filter_chosen_after_it(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    h = office_a.headers
    ana = (await client.post("/lawyers", json=ANA, headers=h)).json()
    bruno = (await client.post("/lawyers", json=BRUNO, headers=h)).json()
    mine = await f.make_publication(session, office_a.id, lawyer_id=ana["id"])
    theirs = await f.make_publication(session, office_a.id, lawyer_id=bruno["id"])
    await session.commit()

    released = asyncio.Event()

    async def slow(route: Route) -> None:
        # the answer for one lawyer is slow: it comes after the person chose "all" again
        await released.wait()
        await route.continue_()

    await page.route(f"**/publications?*lawyerId={bruno['id']}*", slow)
    await log_in_in_portuguese(page, server_url, office_a.key)
    await page.get_by_role("link", name="Publicações").click()
    await expect(page.locator("li.publication")).to_have_count(2, timeout=TIMEOUT)
    await page.get_by_label("Advogado").select_option(label="Dr. Bruno Reis (OAB 654321/SP)")
    await page.get_by_label("Advogado").select_option(label="Todos os advogados")
    await expect(page.locator("li.publication")).to_have_count(2, timeout=TIMEOUT)
    async with page.expect_response(lambda r: "lawyerId" in r.url) as late:
        released.set()
    assert (await late.value).ok
    await page.wait_for_timeout(300)  # time for the late answer to be drawn, were it drawn
    await expect(page.locator("li.publication")).to_have_count(2)
    for publication in (mine, theirs):
        await expect(page.locator(f'li[data-publication-id="{publication.id}"]')).to_be_visible()
