"""The console's cases and tickets pages (issue 42) in Chromium, in Portuguese, acting as a
person: a case is opened for a client, its movements and publications shown (dd/mm/aaaa),
its legal area changed and the case deleted; ticket statuses and a ticket are created, the
ticket moved to another status and found under it. Each change is read back through the
API."""

from __future__ import annotations

from datetime import UTC, date, datetime

import httpx
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.models import CaseMovement
from tests import factories as f
from tests.helpers import OfficeFixture
from tests.test_console_settings_browser import add, delete, listed, open_page, person, save
from tests.test_console_settings_browser import sign_in as sign_in_as

NUMBER = "1009131-52.2024.8.26.0224"


async def test_cases_with_their_movements_and_tickets_by_status_from_their_pages(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id, name="Maria Souza")
    await session.commit()
    email = await person(server_url, office_a, "ADMIN", [])
    errors = await sign_in_as(page, server_url, email)

    # a case opened for the client
    await page.get_by_role("link", name="Processos", exact=True).click()
    await expect(page.get_by_role("heading", level=1, name="Processos")).to_be_visible()
    await add(page, "Novo processo")
    await page.get_by_label("Número", exact=True).fill(NUMBER)
    await page.get_by_label("Cliente", exact=True).select_option(label="Maria Souza")
    await page.get_by_label("Acompanhar no DataJud", exact=True).uncheck()
    await save(page)
    [case] = await listed(client, office_a, "/cases")
    assert case["number"] == NUMBER and case["personId"] == contact.id and case["watch"] is False
    row = page.locator(f'#view-cases tr[data-id="{case["id"]}"]')
    await expect(row).to_contain_text("Maria Souza")

    # a movement and a publication of the case arrive; both are shown, dd/mm/aaaa
    session.add(
        CaseMovement(
            office_id=office_a.id, person_id=contact.id, case_id=case["id"], case_number=NUMBER,
            code=193, description="Julgado procedente o pedido",
            occurred_at=datetime(2026, 3, 5, 13, 30, tzinfo=UTC),
        )
    )  # fmt: skip
    await f.make_publication(
        session, office_a.id, case_id=case["id"], made_available=date(2026, 3, 27)
    )
    await session.commit()
    await open_page(page, "tickets", "Tickets")
    await open_page(page, "cases", "Processos")
    await page.get_by_role("button", name=f"Movimentações e publicações de {NUMBER}").click()
    history = page.locator("#view-cases .case-history")
    await expect(history).to_contain_text("05/03/2026 Julgado procedente o pedido")
    await expect(history).to_contain_text("27/03/2026 Intimação · TJSP")
    await expect(history).to_contain_text("prazo até 07/04/2026")

    # its legal area changed, then the case deleted
    area = (await listed(client, office_a, "/legal-areas"))[0]
    await page.get_by_role("button", name=f"Editar {NUMBER}").click()
    await page.get_by_label("Área do direito", exact=True).select_option(label=area["name"])
    await save(page, "Alterações salvas.")
    [case] = await listed(client, office_a, "/cases")
    assert case["legalAreaId"] == area["id"]
    await delete(page, NUMBER)
    assert await listed(client, office_a, "/cases") == []

    # tickets: two statuses, a ticket opened and moved from one to the other
    await open_page(page, "tickets", "Tickets")
    for name in ("Aberto", "Concluído"):
        await add(page, "Nova situação")
        await page.get_by_label("Nome", exact=True).fill(name)
        await save(page)
    statuses = {s["name"]: s["id"] for s in await listed(client, office_a, "/ticket-statuses")}
    assert set(statuses) == {"Aberto", "Concluído"}
    await add(page, "Novo ticket")
    await page.get_by_label("Título", exact=True).fill("Juntar procuração")
    await page.get_by_label("Situação", exact=True).last.select_option(label="Aberto")
    await page.get_by_label("Prioridade", exact=True).select_option(label="alta")
    await save(page)
    [ticket] = await listed(client, office_a, "/ticket")
    assert ticket["title"] == "Juntar procuração" and ticket["statusId"] == statuses["Aberto"]
    assert ticket["priority"] == "HIGH"
    await page.get_by_role("button", name="Editar Juntar procuração").click()
    await (
        page.locator("#view-tickets .settings-editor")
        .get_by_label("Situação", exact=True)
        .select_option(label="Concluído")
    )
    await save(page, "Alterações salvas.")
    [ticket] = await listed(client, office_a, "/ticket")
    assert ticket["statusId"] == statuses["Concluído"]
    tickets = page.locator("#view-tickets table").first.locator("tbody tr")
    await page.locator("#tickets-status").select_option(label="Aberto")
    await expect(tickets).to_have_text(["Nenhum registro ainda."])
    await page.locator("#tickets-status").select_option(label="Concluído")
    await expect(tickets).to_have_count(1)
    await expect(tickets).to_contain_text("Juntar procuração")
    assert errors == []
