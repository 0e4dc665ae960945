"""The flows page (issue 42), in Debian's Chromium: an ADMIN creates a flow, builds its
steps and their connections (a list whose option leads to a text step, a system step
tagging the conversation), sees the API's graph check on the steps it names (a refusal,
then the unreachable-step warning), and a SUPERVISOR reads the flow without being offered
a change; an AGENT is not offered the page."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from tests.accessibility import serious_violations
from tests.accounts_helpers import make_account
from tests.browser import nav_to, sign_in
from tests.crm_world import make_world
from tests.helpers import OfficeFixture

TIMEOUT = 10_000
FITS = "document.documentElement.scrollWidth <= window.innerWidth"


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
async def test_an_admin_builds_a_flow_and_sees_the_graph_check_on_the_steps(
    width: int,
    height: int,
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    world = await make_world(session, office_a.id)
    _, email = await make_account(client, office_a, "ADMIN")
    await page.set_viewport_size({"width": width, "height": height})
    await sign_in(page, server_url, email)
    await nav_to(page, "Fluxos")
    await expect(page.get_by_text("O escritório ainda não tem fluxos.")).to_be_visible(
        timeout=TIMEOUT
    )
    await page.get_by_role("button", name="Novo fluxo").click()
    new = page.get_by_role("region", name="Novo fluxo")
    await new.get_by_label("Nome").fill("Triagem")
    await new.get_by_label("Caixa de entrada").select_option(label="Atendimento")
    await new.get_by_role("button", name="Criar o fluxo").click()

    graph = page.get_by_role("region", name="Os passos em grafo")
    editor = page.locator("section.step-card")
    await expect(editor).to_have_attribute("data-step-id", "inicio", timeout=TIMEOUT)
    await editor.get_by_label("Tipo").select_option(label="Lista de opções")
    await editor.get_by_label("Mensagem").fill("Sobre qual assunto?")
    await editor.get_by_label("Opção 1", exact=True).fill("Trabalhista")
    await graph.get_by_role("button", name="Adicionar um passo").click()
    await expect(editor).to_have_attribute("data-step-id", "passo-2")
    await editor.get_by_label("Mensagem").fill("Um advogado já vai falar com você.")
    await editor.get_by_role("button", name="Adicionar um passo depois deste").click()
    await expect(editor).to_have_attribute("data-step-id", "passo-3")
    await editor.get_by_label("Tipo").select_option(label="Ação do sistema")
    await editor.get_by_label("Ação", exact=True).select_option(label="Etiquetar")
    await graph.locator('g.flow-node[data-step-id="inicio"]').click()
    await editor.get_by_label("Quem escolher a opção 1 vai para").select_option(label="passo-2")

    # the API refuses a tagging step with no tag: said on that step
    await page.get_by_role("button", name="Salvar o fluxo").click()
    await expect(page.locator("#notice")).to_have_attribute(
        "data-code", "INVALID_FLOW_GRAPH", timeout=TIMEOUT
    )
    await expect(editor.locator(".step-problems")).to_have_count(0)
    await graph.locator('g.flow-node[data-step-id="passo-3"]').click()
    await expect(editor.locator(".step-problems")).to_have_text(
        "Falta escolher o que esta ação usa (pessoa, etiqueta, coluna, título ou endereço)."
    )
    assert await page.evaluate(FITS)
    assert await serious_violations(page) == []
    where = Path(os.environ.get("OFFICEHUB_SCREENSHOTS_DIR") or tmp_path)
    await page.screenshot(path=str(where / f"flows-editor-{width}.png"), full_page=True)

    await editor.get_by_label("Etiqueta").select_option(label="urgente")
    await page.get_by_role("button", name="Salvar o fluxo").click()
    await expect(page.locator("#status")).to_contain_text("Fluxo salvo: Triagem.", timeout=TIMEOUT)
    flows = (await client.get("/flow", headers=office_a.headers)).json()["data"]
    assert len(flows) == 1
    content = flows[0]["content"]
    assert content["initialStepId"] == "inicio"
    by_id = {step["id"]: step for step in content["steps"]}
    assert by_id["inicio"]["type"] == "list"
    assert by_id["inicio"]["options"][0]["title"] == "Trabalhista"
    assert by_id["inicio"]["options"][0]["nextStepId"] == "passo-2"
    assert by_id["passo-2"]["nextStepId"] == "passo-3"
    assert by_id["passo-3"]["systemAction"] == "ADD_LABELS"
    assert by_id["passo-3"]["metadata"]["tagIds"] == [world.tag.id]
    row = page.locator("tr", has_text="Triagem")
    await expect(row).to_contain_text("Sem avisos")

    # a step no other leads to is saved with a warning, shown on it
    await graph.get_by_role("button", name="Adicionar um passo").click()
    await expect(editor).to_have_attribute("data-step-id", "passo-4")
    await editor.get_by_label("Mensagem").fill("Passo esquecido")
    await page.get_by_role("button", name="Salvar o fluxo").click()
    await expect(page.locator("#status")).to_contain_text("Fluxo salvo: Triagem.", timeout=TIMEOUT)
    await graph.locator('g.flow-node[data-step-id="passo-4"]').click()
    await expect(editor.locator(".step-problems")).to_have_text(
        "Nenhum passo leva a este: ele nunca será usado.", timeout=TIMEOUT
    )
    await expect(row).to_contain_text("1 aviso")


async def test_a_supervisor_reads_a_flow_and_an_agent_is_not_offered_the_page(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    body = {
        "name": "Boas-vindas",
        "inboxId": world.inbox.id,
        "content": {
            "initialStepId": "oi",
            "steps": [{"id": "oi", "type": "text", "content": "Olá!", "nextStepId": None}],
        },
    }
    assert (await client.post("/flow", json=body, headers=office_a.headers)).status_code == 201
    _, supervisor = await make_account(client, office_a, "SUPERVISOR")
    await sign_in(page, server_url, supervisor)
    await nav_to(page, "Fluxos")
    await expect(page.get_by_text("só um administrador os altera")).to_be_visible(timeout=TIMEOUT)
    view = page.locator("#view-flows")
    await expect(view.get_by_role("button", name="Novo fluxo")).to_have_count(0)
    await expect(view.get_by_role("button", name="Apagar: Boas-vindas")).to_have_count(0)
    await view.get_by_role("button", name="Ver: Boas-vindas").click()
    card = page.locator('section.step-card[data-step-id="oi"]')
    await expect(card.get_by_label("Mensagem")).to_have_value("Olá!", timeout=TIMEOUT)
    await expect(card.get_by_label("Mensagem")).to_be_disabled()
    await expect(view.get_by_role("button", name="Salvar o fluxo")).to_have_count(0)
    await expect(view.get_by_role("button", name="Adicionar um passo")).to_have_count(0)
    await expect(card.get_by_role("button", name="Remover o passo oi")).to_have_count(0)
    assert await serious_violations(page) == []

    await page.get_by_role("button", name="Sair").click()
    _, agent = await make_account(client, office_a, "AGENT")
    await sign_in(page, server_url, agent)
    await expect(page.get_by_role("link", name="Pessoas")).to_be_visible()
    await expect(page.get_by_role("link", name="Fluxos")).to_have_count(0)
