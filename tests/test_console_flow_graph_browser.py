"""The flow's graph (issue 42), in Debian's Chromium: an ADMIN builds a flow of three steps
with a branch and sees a node per step and a labelled arrow per connection, redrawn as
steps and connections are added; a node opens its step's card (a click, or Enter on the
focused node); the graph check's problems are drawn on the nodes they name (a refusal,
then a warning) and listed; both screen sizes fit (the graph pans in its frame) and pass
axe."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from tests.accessibility import serious_violations
from tests.accounts_helpers import PASSWORD, make_account
from tests.browser import nav_to
from tests.crm_world import make_world
from tests.helpers import OfficeFixture

TIMEOUT = 10_000
FITS = "document.documentElement.scrollWidth <= window.innerWidth"
MISSING = "Falta escolher o que esta ação usa (pessoa, etiqueta, coluna, título ou endereço)."


async def _sign_in(page: Page, server_url: str, email: str) -> None:
    await page.goto(f"{server_url}/console")
    await page.get_by_label("E-mail").fill(email)
    await page.get_by_label("Senha").fill(PASSWORD)
    await page.get_by_role("button", name="Entrar com e-mail").click()
    await expect(page.locator("#who")).to_be_visible(timeout=TIMEOUT)


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
async def test_the_flow_is_drawn_as_a_graph_with_the_checks_problems_on_its_nodes(
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
    await _sign_in(page, server_url, email)
    await nav_to(page, "Fluxos")
    await page.get_by_role("button", name="Novo fluxo").click()
    new = page.get_by_role("region", name="Novo fluxo")
    await new.get_by_label("Nome").fill("Triagem")
    await new.get_by_label("Caixa de entrada").select_option(label=world.inbox.name)
    await new.get_by_role("button", name="Criar o fluxo").click()

    graph = page.get_by_role("region", name="Os passos em grafo")
    nodes = graph.locator("g.flow-node")
    edges = graph.locator("g.flow-edge")
    await expect(nodes).to_have_count(1, timeout=TIMEOUT)
    await expect(edges).to_have_count(0)

    # three steps: a list whose two options branch to a text step and a system step
    first = page.locator('li.step-card[data-step-id="inicio"]')
    await first.get_by_label("Tipo").select_option(label="Lista de opções")
    await first.get_by_label("Mensagem").fill("Sobre qual assunto?")
    await first.get_by_label("Opção 1", exact=True).fill("Trabalhista")
    await first.get_by_role("button", name="Adicionar uma opção").click()
    await first.get_by_label("Opção 2", exact=True).fill("Família")
    await page.get_by_role("button", name="Adicionar um passo").click()
    await page.get_by_role("button", name="Adicionar um passo").click()
    await expect(nodes).to_have_count(3)
    second = page.locator("li.step-card").nth(1)
    third = page.locator("li.step-card").nth(2)
    await second.get_by_label("Mensagem").fill("Um advogado já vai falar com você.")
    await third.get_by_label("Tipo").select_option(label="Ação do sistema")
    await third.get_by_label("Ação", exact=True).select_option(label="Etiquetar")
    await first.get_by_label("Quem escolher a opção 1 vai para").select_option(label="passo-2")
    await first.get_by_label("Quem escolher a opção 2 vai para").select_option(label="passo-3")
    await expect(edges).to_have_count(2)
    branch_a = graph.locator('g.flow-edge[data-from="inicio"][data-to="passo-2"]')
    branch_b = graph.locator('g.flow-edge[data-from="inicio"][data-to="passo-3"]')
    await expect(branch_a.locator("text")).to_have_text("Trabalhista")
    await expect(branch_b.locator("text")).to_have_text("Família")
    await second.get_by_label("Depois, ir para").select_option(label="passo-3")
    await expect(edges).to_have_count(3)
    await expect(
        graph.locator('g.flow-edge[data-from="passo-2"][data-to="passo-3"]')
    ).to_have_count(1)
    # laid out by depth: the first step above both branches
    top = await graph.locator('g.flow-node[data-step-id="inicio"]').bounding_box()
    below = await graph.locator('g.flow-node[data-step-id="passo-2"]').bounding_box()
    assert top is not None and below is not None and below["y"] > top["y"] + top["height"]

    # the API refuses the tagging step with no tag: said on its node and in the list
    await page.get_by_role("button", name="Salvar o fluxo").click()
    await expect(page.locator("#notice")).to_have_attribute(
        "data-code", "INVALID_FLOW_GRAPH", timeout=TIMEOUT
    )
    troubled = graph.locator('g.flow-node[data-step-id="passo-3"]')
    await expect(troubled).to_have_attribute("data-problems", "true")
    await expect(troubled).to_have_class("flow-node has-problems")
    await expect(troubled.locator(".flow-node-problem")).to_contain_text("⚠ Falta escolher")
    await expect(troubled.locator("desc")).to_contain_text(MISSING)
    await expect(graph.locator('g.flow-node[data-step-id="inicio"]')).not_to_have_attribute(
        "data-problems", "true"
    )
    await expect(graph.get_by_role("list", name="Problemas do fluxo")).to_have_text(
        f"passo-3: {MISSING}"
    )
    assert await page.evaluate(FITS)
    assert await serious_violations(page) == []
    where = Path(os.environ.get("OFFICEHUB_SCREENSHOTS_DIR") or tmp_path)
    await page.evaluate("document.getElementById('flow-editor-title').scrollIntoView()")
    await page.screenshot(path=str(where / f"console-flows-{width}.png"))
    await graph.screenshot(path=str(where / f"console-flows-graph-{width}.png"))

    # a node opens its step's card: a click, or Enter on the focused node
    await troubled.click()
    await expect(third.locator("h3")).to_be_focused()
    await expect(third).to_have_class("step-card selected")
    await third.get_by_label("Etiqueta").select_option(label=world.tag.name)
    await graph.locator('g.flow-node[data-step-id="passo-2"]').focus()
    await page.keyboard.press("Enter")
    await expect(second.locator("h3")).to_be_focused()
    await page.get_by_role("button", name="Salvar o fluxo").click()
    await expect(page.locator("#status")).to_contain_text("Fluxo salvo: Triagem.", timeout=TIMEOUT)
    await expect(graph.locator("g.flow-node[data-problems]")).to_have_count(0)

    # a step no other leads to: the API's warning, on its node
    await page.get_by_role("button", name="Adicionar um passo").click()
    await page.locator("li.step-card").nth(3).get_by_label("Mensagem").fill("Passo esquecido")
    await page.get_by_role("button", name="Salvar o fluxo").click()
    lonely = graph.locator('g.flow-node[data-step-id="passo-4"]')
    await expect(lonely).to_have_attribute("data-problems", "true", timeout=TIMEOUT)
    await expect(lonely.locator("desc")).to_contain_text(
        "Nenhum passo leva a este: ele nunca será usado."
    )
    flows = (await client.get("/flow", headers=office_a.headers)).json()["data"]
    by_id = {step["id"]: step for step in flows[0]["content"]["steps"]}
    assert [o["nextStepId"] for o in by_id["inicio"]["options"]] == ["passo-2", "passo-3"]
    assert by_id["passo-2"]["nextStepId"] == "passo-3"
    warned = [(w["stepId"], w["reason"]) for w in flows[0]["warnings"]]
    assert warned == [("passo-4", "UNREACHABLE")]
