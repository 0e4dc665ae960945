"""The automation rules page (issue 42), in Debian's Chromium: an ADMIN creates a rule with
a trigger, a condition and then/else actions whose parameters are chosen from lists of the
office's own records, tests it without running it, reads its (empty) run log, pauses and
deletes it; a SUPERVISOR is not offered the page (the API keeps rules to admins)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.async_api import Browser, Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from tests import factories as f
from tests.accessibility import serious_violations
from tests.accounts_helpers import make_account
from tests.browser import nav_to, new_page, sign_in
from tests.crm_world import make_world
from tests.helpers import OfficeFixture

TIMEOUT = 10_000


def column(n: int) -> str:
    """A column's name in the lists: its funnel, an arrow (U+203A), the column."""
    return f"Vendas \u203a Etapa {n}"


FITS = "document.documentElement.scrollWidth <= window.innerWidth"


async def test_an_admin_creates_tests_pauses_and_deletes_a_rule(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    _, email = await make_account(client, office_a, "ADMIN")
    await sign_in(page, server_url, email)
    await nav_to(page, "Automações")
    await expect(page.get_by_text("O escritório ainda não tem regras de automação.")).to_be_visible(
        timeout=TIMEOUT
    )
    await page.get_by_role("button", name="Nova regra").click()
    form = page.locator(".rule-form")
    await form.get_by_label("Nome").fill("Etiquetar quem avança")
    await form.get_by_label("Quando acontecer").select_option(label="Um cartão muda de coluna")
    await form.get_by_label("O cartão entrou na coluna").select_option(label=column(2))
    await form.get_by_label("Ação 1").select_option(label="Etiquetar a conversa")
    await form.get_by_label("Etiqueta").select_option(label="urgente")
    await form.get_by_role("button", name="Adicionar uma ação ao “senão”").click()
    else_branch = form.locator('fieldset[data-branch="else"]')
    await else_branch.get_by_label("Ação 1").select_option(label="Mover o cartão do funil")
    await else_branch.get_by_label("Mover para a coluna").select_option(label=column(3))
    assert await serious_violations(page) == []
    await form.get_by_role("button", name="Criar a regra").click()

    row = page.locator("tr", has_text="Etiquetar quem avança")
    await expect(row).to_contain_text("Um cartão muda de coluna", timeout=TIMEOUT)
    await expect(row).to_contain_text("Etiquetar a conversa")
    await expect(row).to_contain_text("Ativa")
    listed = (await client.get("/automation-rules", headers=office_a.headers)).json()["data"]
    assert len(listed) == 1
    rule = listed[0]
    assert rule["triggerEvent"] == "crm.lead.moved"
    assert rule["conditions"] == {"toFunnelColumnId": world.columns[1].id}
    assert rule["actions"] == [
        {"action": "TAG_CONVERSATION", "actionParams": {"tagId": world.tag.id}}
    ]
    assert rule["elseActions"] == [
        {"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": world.columns[2].id}}
    ]

    # a dry run: no card moved yet, so an example is given; nothing is done
    await row.get_by_role("button", name="Testar: Etiquetar quem avança").click()
    test = page.locator(".dry-run")
    await expect(test).to_contain_text("Ainda não aconteceu nenhum evento", timeout=TIMEOUT)
    await test.get_by_label("O cartão entrou na coluna").select_option(label=column(2))
    await test.get_by_role("button", name="Testar com este exemplo").click()
    await expect(test.locator(".verdict")).to_have_text(
        "Faria as ações do “então”.", timeout=TIMEOUT
    )
    await expect(test).to_contain_text("Ações: Etiquetar a conversa")
    await test.get_by_label("O cartão entrou na coluna").select_option(label=column(1))
    await test.get_by_role("button", name="Testar com este exemplo").click()
    await expect(test.locator(".verdict")).to_have_text("Faria as ações do “senão”.")
    await test.get_by_role("button", name="Fechar").click()

    await row.get_by_role("button", name="Execuções: Etiquetar quem avança").click()
    await expect(page.get_by_text("A regra ainda não agiu.")).to_be_visible(timeout=TIMEOUT)

    # paused from its form
    await row.get_by_role("button", name="Editar: Etiquetar quem avança").click()
    await form.get_by_label("Regra ativa (age sozinha)").uncheck()
    await form.get_by_role("button", name="Salvar a regra").click()
    await expect(row).to_contain_text("Pausada", timeout=TIMEOUT)
    stored = (await client.get(f"/automation-rules/{rule['id']}", headers=office_a.headers)).json()
    assert stored["enabled"] is False and stored["elseActions"] == rule["elseActions"]

    page.once("dialog", lambda dialog: dialog.accept())
    await row.get_by_role("button", name="Apagar: Etiquetar quem avança").click()
    await expect(page.get_by_text("O escritório ainda não tem regras de automação.")).to_be_visible(
        timeout=TIMEOUT
    )
    listed = (await client.get("/automation-rules", headers=office_a.headers)).json()["data"]
    assert listed == []


def _template(name: str, language: str, text: str, status: str = "APPROVED") -> dict[str, Any]:
    return {
        "name": name,
        "status": status,
        "category": "UTILITY",
        "language": language,
        "components": [{"type": "BODY", "text": text}],
        "id": f"tpl-{name}-{language}",
    }


async def test_a_rule_sends_a_template_chosen_from_the_channels_approved_list(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    world = await make_world(session, office_a.id)
    official = await f.make_integration(
        session, office_a.id, world.inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-rules"
    )
    other = await f.make_integration(
        session, office_a.id, world.inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-other"
    )
    await session.commit()
    catalogue = [
        _template("boas_vindas", "pt_BR", "Olá! Recebemos a sua mensagem."),
        _template("boas_vindas", "en_US", "Hello! We got your message."),
        _template("andamento", "pt_BR", "Seu processo {{2}} teve: {{1}} em {{3}}."),
        _template("lembrete", "pt_BR", "Olá {{1}}, ainda precisa de ajuda?"),
        _template("em_analise", "pt_BR", "Ainda não aprovado.", status="PENDING"),
    ]
    put = await client.put(
        f"/integration/{official.id}/whatsapp-templates",
        json={"data": catalogue},
        headers=office_a.headers,
    )
    assert put.status_code == 200, put.text
    put = await client.put(
        f"/integration/{other.id}/whatsapp-templates",
        json={"data": [_template("so_do_outro", "pt_BR", "Outro canal.")]},
        headers=office_a.headers,
    )
    assert put.status_code == 200, put.text
    _, email = await make_account(client, office_a, "ADMIN")
    await sign_in(page, server_url, email)
    await nav_to(page, "Automações")
    await page.get_by_role("button", name="Nova regra").click()
    form = page.locator(".rule-form")
    await form.get_by_label("Nome").fill("Avisar da movimentação")
    await form.get_by_label("Canal", exact=True).select_option(str(official.id))
    # the condition's template is chosen from the same list
    await form.get_by_label("O modelo enviado é").select_option(label="boas_vindas (en_US, pt_BR)")
    then = form.locator('fieldset[data-branch="then"]')
    await then.get_by_label("Ação 1").select_option(label="Enviar uma mensagem rápida")
    await then.get_by_label("Enviar").select_option(label="Um modelo aprovado (WhatsApp oficial)")
    chosen = then.get_by_label("Modelo", exact=True)
    # the channel's APPROVED templates, each with its languages; no pending one, no other
    # channel's
    options = await chosen.locator("option").all_inner_texts()
    assert options == [
        "Escolha…",
        "andamento (pt_BR)",
        "boas_vindas (en_US, pt_BR)",
        "lembrete (pt_BR)",
    ], options
    await chosen.select_option(label="andamento (pt_BR)")
    preview = then.locator(".template-preview")
    await expect(preview).to_contain_text("Seu processo {{2}} teve: {{1}}")
    await expect(preview).to_contain_text("Tem 3 variáveis")
    # a second action: a scheduled text whose fallback template has a variable to fill
    await then.get_by_role("button", name="Adicionar uma ação ao “então”").click()
    second = then.locator('.action-editor[data-index="1"]')
    await second.get_by_label("Ação 2").select_option(label="Agendar uma mensagem")
    await second.get_by_label("Texto da mensagem").fill("Ainda precisa de ajuda?")
    await second.get_by_label("Depois de quantos minutos").fill("30")
    await second.get_by_label("Modelo se a janela de 24 horas estiver fechada").select_option(
        label="lembrete (pt_BR)"
    )
    await expect(second.locator(".template-preview")).to_contain_text(
        "Preencha a variável do modelo"
    )
    await second.get_by_label("Variável 1").fill("cliente")
    assert await serious_violations(page) == []
    where = Path(os.environ.get("OFFICEHUB_SCREENSHOTS_DIR") or tmp_path)
    await page.screenshot(path=str(where / "rules-template-1280.png"), full_page=True)
    await form.get_by_role("button", name="Criar a regra").click()
    row = page.locator("tr", has_text="Avisar da movimentação")
    await expect(row).to_be_visible(timeout=TIMEOUT)
    assert (await page.locator("#notice").inner_text()).strip() == ""

    listed = (await client.get("/automation-rules", headers=office_a.headers)).json()["data"]
    assert len(listed) == 1
    rule = listed[0]
    assert rule["integrationId"] == official.id
    assert rule["conditions"] == {"templateName": "boas_vindas"}
    assert rule["actions"] == [
        {"action": "SEND_FAST_MESSAGE", "actionParams": {"templateName": "andamento"}},
        {
            "action": "SCHEDULE_MESSAGE",
            "actionParams": {
                "text": "Ainda precisa de ajuda?",
                "delayMinutes": 30,
                "fallbackTemplate": {
                    "name": "lembrete",
                    "language": "pt_BR",
                    "variables": ["cliente"],
                },
            },
        },
    ]
    # opened again, the form shows the template chosen
    await row.get_by_role("button", name="Editar: Avisar da movimentação").click()
    first = then.locator('.action-editor[data-index="0"]')
    await expect(first.get_by_label("Enviar")).to_have_value("template")
    await expect(first.get_by_label("Modelo", exact=True)).to_have_value("andamento")
    await expect(second.get_by_label("Enviar")).to_have_value("own")
    await expect(second.get_by_label("Variável 1")).to_have_value("cliente")


async def test_a_refused_rule_is_said_in_a_sentence_naming_the_field(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    await make_world(session, office_a.id)
    _, email = await make_account(client, office_a, "ADMIN")
    await sign_in(page, server_url, email)
    await nav_to(page, "Automações")
    await page.get_by_role("button", name="Nova regra").click()
    form = page.locator(".rule-form")
    await form.get_by_label("Nome").fill("Avisar o sistema")
    await form.get_by_label("Ação 1").select_option(label="Agendar uma mensagem")
    await form.get_by_label("Texto da mensagem").fill("Olá!")
    await form.get_by_label("Depois de quantos minutos").fill("999999999")
    await form.get_by_role("button", name="Criar a regra").click()
    notice = page.locator("#notice")
    await expect(notice).to_have_attribute("data-code", "VALIDATION_ERROR", timeout=TIMEOUT)
    shown = await notice.inner_text()
    assert "Dados inválidos" in shown and "Confira o campo: Depois de quantos minutos." in shown
    assert (await client.get("/automation-rules", headers=office_a.headers)).json()["data"] == []


@pytest.mark.parametrize("role", ["SUPERVISOR", "AGENT"])
async def test_the_page_is_not_offered_to_a_supervisor_or_an_agent(
    role: str, page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    _, email = await make_account(client, office_a, role)
    await sign_in(page, server_url, email)
    await expect(page.get_by_role("link", name="Pessoas")).to_be_visible()
    await expect(page.get_by_role("link", name="Automações")).to_have_count(0)


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
async def test_the_rules_page_fits_the_screen(
    width: int,
    height: int,
    browser: Browser,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    await make_world(session, office_a.id)
    _, email = await make_account(client, office_a, "ADMIN")
    async with new_page(browser) as page:
        await page.set_viewport_size({"width": width, "height": height})
        await sign_in(page, server_url, email)
        await nav_to(page, "Automações")
        await page.get_by_role("button", name="Nova regra").click()
        form = page.locator(".rule-form")
        await form.get_by_label("Nome").fill("Boas-vindas fora do horário")
        await form.get_by_label("Horário de atendimento").select_option(
            label="Fora do horário de atendimento"
        )
        await form.get_by_role("button", name="Adicionar uma ação ao “senão”").click()
        assert await page.evaluate(FITS)
        assert await serious_violations(page) == []
        where = Path(os.environ.get("OFFICEHUB_SCREENSHOTS_DIR") or tmp_path)
        await page.screenshot(path=str(where / f"rules-form-{width}.png"), full_page=True)
