"""The rules page (issue 42), in Debian's Chromium: a rule whose run really failed (a card
moved to a column of another funnel) says so in an alert on its row and its form, with
the run log one click away; a new rule's channel and its ticket's status, responsible
person and department are chosen from the office's lists; the list is filtered by trigger
(the API's filter) and by channel; both screen sizes fit and pass axe."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Browser, Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from tests import factories as f
from tests.accessibility import serious_violations
from tests.accounts_helpers import make_account
from tests.automation_helpers import automation_worker, create_rule, runs
from tests.browser import nav_to, new_page, sign_in
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture
from tests.webhook_helpers import Clock

TIMEOUT = 10_000
FITS = "document.documentElement.scrollWidth <= window.innerWidth"
ALERT = re.compile(
    r"Falhou 2 vezes; última falha em \d{2}/\d{2}/\d{4} \d{2}:\d{2}: "
    r"Mover o cartão do funil: .*COLUMN_OF_ANOTHER_FUNNEL"
)


async def _failing_rule(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office: OfficeFixture,
) -> tuple[World, dict[str, object]]:
    """A rule moving the conversation's card to another funnel's column, run twice for real
    (two inbound messages, the automation worker): both runs fail."""
    world = await make_world(session, office.id)
    await f.make_card(session, world.columns[0], world.contact.id, world.conversation.id)
    _other, elsewhere = await f.make_funnel(session, office.id, world.inbox.id, 1, name="B")
    await session.commit()
    bad = {"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": elsewhere[0].id}}
    rule = await create_rule(client, office, name="Mover quem escreve", actions=[bad])
    for text in ("Oi", "Olá"):
        r = await client.post(
            f"/conversation/{world.conversation.id}/messages/inbound",
            json={"text": text},
            headers=office.headers,
        )
        assert r.status_code == 201, r.text
        await automation_worker(app, settings, Clock()).run_until_idle()
    read = (await client.get(f"/automation-rules/{rule['id']}", headers=office.headers)).json()
    assert read["failureCount"] == 2
    return world, rule


async def test_a_rule_whose_runs_failed_shows_the_alert_and_its_run_log(
    app: FastAPI,
    settings: Settings,
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    _world, rule = await _failing_rule(app, settings, client, session, office_a)
    await create_rule(client, office_a, name="Pausar sem falhas")
    _, email = await make_account(client, office_a, "ADMIN")
    await sign_in(page, server_url, email)
    await nav_to(page, "Automações")

    row = page.locator("tr", has_text="Mover quem escreve")
    alert = row.get_by_role("alert")
    await expect(alert).to_have_text(ALERT, timeout=TIMEOUT)
    quiet = page.locator("tr", has_text="Pausar sem falhas")
    await expect(quiet).to_be_visible()
    await expect(quiet.get_by_role("alert")).to_have_count(0)
    assert await serious_violations(page) == []

    # the run log from the alert: both runs, the action failed
    await alert.get_by_role("button", name="Ver as execuções: Mover quem escreve").click()
    log = page.get_by_role("region", name="Execuções da regra: Mover quem escreve")
    await expect(log.locator("li")).to_have_count(2, timeout=TIMEOUT)
    await expect(log.locator("li").first).to_contain_text("Mover o cartão do funil (falhou)")
    assert len(await runs(client, office_a, str(rule["id"]))) == 2
    await log.get_by_role("button", name="Fechar").click()

    # the rule's form says it too, and the dry run is a click away from the row
    await row.get_by_role("button", name="Editar: Mover quem escreve").click()
    await expect(page.locator(".rule-form").get_by_role("alert")).to_have_text(ALERT)
    await page.locator(".rule-form").get_by_role("button", name="Cancelar").click()
    await row.get_by_role("button", name="Testar: Mover quem escreve").click()
    await expect(page.locator(".dry-run .verdict")).to_have_text(
        "Faria as ações do “então”.", timeout=TIMEOUT
    )


async def test_a_rules_parameters_come_from_lists_and_the_list_is_filtered(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    department = await f.make_department(session, office_a.id)
    await session.commit()
    status = await client.post(
        "/ticket-statuses", json={"name": "Aberto"}, headers=office_a.headers
    )
    assert status.status_code == 201, status.text
    await create_rule(client, office_a, name="Regra de todo canal")
    await create_rule(
        client,
        office_a,
        name="Regra de cartão",
        triggerEvent="crm.lead.moved",
        actions=[{"action": "PAUSE_AUTOMATION", "actionParams": {}}],
    )
    _, email = await make_account(client, office_a, "ADMIN")
    await sign_in(page, server_url, email)
    await nav_to(page, "Automações")
    await page.get_by_role("button", name="Nova regra").click()
    form = page.locator(".rule-form")
    await form.get_by_label("Nome").fill("Chamado para quem escreve")
    await form.get_by_label("Canal", exact=True).select_option(label=world.integration.name)
    await form.get_by_label("Agir no máximo uma vez em cada conversa").check()
    await form.get_by_label("Ação 1").select_option(label="Abrir um chamado")
    await form.get_by_label("Título do chamado").fill("Novo cliente")
    await form.get_by_label("Situação do chamado").select_option(label="Aberto")
    await form.get_by_label("Responsável pelo chamado").select_option(label=world.user.name)
    await form.get_by_label("Departamento do chamado").select_option(label=department.name)
    await form.get_by_role("button", name="Criar a regra").click()
    await expect(page.locator("tr", has_text="Chamado para quem escreve")).to_be_visible(
        timeout=TIMEOUT
    )
    made = [
        r
        for r in (await client.get("/automation-rules", headers=office_a.headers)).json()["data"]
        if r["name"] == "Chamado para quem escreve"
    ]
    assert len(made) == 1
    assert made[0]["integrationId"] == world.integration.id
    assert made[0]["runOncePerConversation"] is True
    assert made[0]["skipWhileHumanAssigned"] is False
    assert made[0]["actions"] == [
        {
            "action": "CREATE_TICKET",
            "actionParams": {
                "title": "Novo cliente",
                "ticketStatusId": status.json()["id"],
                "assigneeIds": [world.user.id],
                "departmentIds": [department.id],
            },
        }
    ]

    rows = page.locator("#view-rules tbody tr")
    await expect(rows).to_have_count(3)
    filters = page.get_by_role("search", name="Filtrar as regras")
    await filters.get_by_label("Gatilho").select_option(label="Um cartão muda de coluna")
    await expect(rows).to_have_count(1, timeout=TIMEOUT)
    await expect(rows.first).to_contain_text("Regra de cartão")
    await filters.get_by_label("Gatilho").select_option(label="Todos")
    await expect(rows).to_have_count(3, timeout=TIMEOUT)
    # a channel's rules: its own and those of every channel
    other = await f.make_integration(session, office_a.id, world.inbox.id)
    other.name = "Segundo canal"
    await session.commit()
    r = await client.patch(
        f"/automation-rules/{made[0]['id']}",
        json={"integrationId": other.id},
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    await page.reload()
    await nav_to(page, "Automações")
    await filters.get_by_label("Canal").select_option(label=world.integration.name)
    await expect(rows).to_have_count(2, timeout=TIMEOUT)
    await expect(page.locator("tr", has_text="Chamado para quem escreve")).to_have_count(0)
    await filters.get_by_label("Canal").select_option(label=other.name)
    await expect(rows).to_have_count(3)


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
async def test_the_rules_page_with_a_failed_rule_fits_the_screen(
    width: int,
    height: int,
    app: FastAPI,
    settings: Settings,
    browser: Browser,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    await _failing_rule(app, settings, client, session, office_a)
    await create_rule(client, office_a, name="Pausar quem pede", triggerEvent="crm.lead.moved")
    _, email = await make_account(client, office_a, "ADMIN")
    async with new_page(browser) as page:
        await page.set_viewport_size({"width": width, "height": height})
        await sign_in(page, server_url, email)
        await nav_to(page, "Automações")
        await expect(page.get_by_role("alert").first).to_have_text(ALERT, timeout=TIMEOUT)
        assert await page.evaluate(FITS)
        assert await serious_violations(page) == []
        where = Path(os.environ.get("OFFICEHUB_SCREENSHOTS_DIR") or tmp_path)
        await page.screenshot(path=str(where / f"console-rules-{width}.png"), full_page=True)
