"""The flow edited from its graph (issue 42), in Debian's Chromium: an ADMIN builds a flow
of three steps with a branch from the graph alone: "Adicionar um passo" adds a node, a
node (a click, or Enter on it) opens its step's editor, the editor connects the step to
its next step(s), adds a step after it or removes it, and the graph redraws after each
change. The API's check runs as the person edits, without saving (``POST /flow/check``):
an unconnected node and a tagging step without its tag show their problems before any
save, and lose them once fixed. Saved, the page reloaded shows the same graph. Both screen
sizes fit (the graph pans in its frame, the editor stands below it on a phone) and pass
axe."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Locator, Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from tests.accessibility import serious_violations
from tests.accounts_helpers import make_account
from tests.browser import nav_to, sign_in
from tests.crm_world import make_world
from tests.helpers import OfficeFixture

TIMEOUT = 10_000
FITS = "document.documentElement.scrollWidth <= window.innerWidth"
MISSING = "Falta escolher o que esta ação usa (pessoa, etiqueta, coluna, título ou endereço)."
UNREACHABLE = "Nenhum passo leva a este: ele nunca será usado."


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
async def test_an_admin_builds_a_flow_from_its_graph_checked_as_they_edit(
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
    await page.get_by_role("button", name="Novo fluxo").click()
    new = page.get_by_role("region", name="Novo fluxo")
    await new.get_by_label("Nome").fill("Triagem")
    await new.get_by_label("Caixa de entrada").select_option(label=world.inbox.name)
    await new.get_by_role("button", name="Criar o fluxo").click()

    graph = page.get_by_role("region", name="Os passos em grafo")
    nodes = graph.locator("g.flow-node")
    edges = graph.locator("g.flow-edge")
    state = graph.locator(".flow-check-state")
    editor = page.locator("section.step-card")

    def node(ident: str) -> Locator:
        return graph.locator(f'g.flow-node[data-step-id="{ident}"]')

    await expect(nodes).to_have_count(1, timeout=TIMEOUT)
    await expect(state).to_have_text("Fluxo conferido: nenhum problema.", timeout=TIMEOUT)
    # the first step is open beside the graph: made a list of two options
    await expect(page.get_by_role("region", name="Passo 1: inicio")).to_be_visible()
    await editor.get_by_label("Tipo").select_option(label="Lista de opções")
    await editor.get_by_label("Mensagem").fill("Sobre qual assunto?")
    await editor.get_by_label("Opção 1", exact=True).fill("Trabalhista")
    await editor.get_by_role("button", name="Adicionar uma opção").click()
    await editor.get_by_label("Opção 2", exact=True).fill("Família")

    # a step added from the graph: a node nothing leads to, its problem shown before saving
    await graph.get_by_role("button", name="Adicionar um passo").click()
    await expect(nodes).to_have_count(2)
    await expect(page.locator("#step-editor-title")).to_be_focused()
    await expect(page.locator("#step-editor-title")).to_have_text("Passo 2: passo-2")
    await expect(node("passo-2")).to_have_attribute("data-problems", "true", timeout=TIMEOUT)
    await expect(node("passo-2").locator("desc")).to_contain_text(UNREACHABLE)
    await expect(editor.locator(".step-problems")).to_have_text(UNREACHABLE)
    await expect(state).to_have_text("Fluxo conferido: 1 passo precisa de atenção.")
    await editor.get_by_label("Mensagem").fill("Um advogado já vai falar com você.")
    # a step added after it: connected at once, and made a tagging step without its tag
    await editor.get_by_role("button", name="Adicionar um passo depois deste").click()
    await expect(nodes).to_have_count(3)
    await expect(
        graph.locator('g.flow-edge[data-from="passo-2"][data-to="passo-3"]')
    ).to_have_count(1)
    await expect(page.locator("#step-editor-title")).to_have_text("Passo 3: passo-3")
    await editor.get_by_label("Tipo").select_option(label="Ação do sistema")
    await editor.get_by_label("Ação", exact=True).select_option(label="Etiquetar")
    await expect(node("passo-3")).to_have_attribute("data-problems", "true", timeout=TIMEOUT)
    await expect(node("passo-3").locator(".flow-node-problem")).to_contain_text("⚠ Falta escolher")

    # the first node, opened by a click: its options connected to the two steps
    await node("inicio").click()
    await expect(page.locator("#step-editor-title")).to_be_focused()
    await expect(node("inicio")).to_have_class("flow-node selected")
    await editor.get_by_label("Quem escolher a opção 1 vai para").select_option(label="passo-2")
    await editor.get_by_label("Quem escolher a opção 2 vai para").select_option(label="passo-3")
    await expect(edges).to_have_count(3)
    branch_a = graph.locator('g.flow-edge[data-from="inicio"][data-to="passo-2"]')
    branch_b = graph.locator('g.flow-edge[data-from="inicio"][data-to="passo-3"]')
    await expect(branch_a.locator("text")).to_have_text("Trabalhista")
    await expect(branch_b.locator("text")).to_have_text("Família")
    # the unconnected node's problem is gone; the tagging step's stays, said and listed
    await expect(node("passo-2")).not_to_have_attribute("data-problems", "true", timeout=TIMEOUT)
    await expect(node("passo-3").locator("desc")).to_contain_text(MISSING)
    await expect(graph.get_by_role("list", name="Problemas do fluxo")).to_have_text(
        f"passo-3: {MISSING}"
    )
    await expect(state).to_have_text("Fluxo conferido: 1 passo precisa de atenção.")
    # laid out by depth: the first step above both branches
    top = await node("inicio").bounding_box()
    below = await node("passo-2").bounding_box()
    assert top is not None and below is not None and below["y"] > top["y"] + top["height"]
    # nothing was saved by the checks
    stored = (await client.get("/flow", headers=office_a.headers)).json()["data"][0]
    assert [s["id"] for s in stored["content"]["steps"]] == ["inicio"]
    assert await page.evaluate(FITS)
    assert await serious_violations(page) == []
    where = Path(os.environ.get("OFFICEHUB_SCREENSHOTS_DIR") or tmp_path)
    await page.evaluate("document.getElementById('flow-editor-title').scrollIntoView()")
    await page.screenshot(path=str(where / f"console-flows-{width}.png"))
    await graph.screenshot(path=str(where / f"console-flows-graph-{width}.png"))

    # the tagging step, opened with Enter on its focused node, gets its tag
    await node("passo-3").focus()
    await page.keyboard.press("Enter")
    await expect(page.locator("#step-editor-title")).to_be_focused()
    await expect(page.locator("#step-editor-title")).to_have_text("Passo 3: passo-3")
    await editor.get_by_label("Etiqueta").select_option(label=world.tag.name)
    await expect(state).to_have_text("Fluxo conferido: nenhum problema.", timeout=TIMEOUT)
    await expect(graph.locator("g.flow-node[data-problems]")).to_have_count(0)
    # a step added after it and removed again: its node and the arrow into it go
    await editor.get_by_role("button", name="Adicionar um passo depois deste").click()
    await expect(nodes).to_have_count(4)
    await expect(graph.locator('g.flow-edge[data-to="passo-4"]')).to_have_count(1)
    await editor.get_by_role("button", name="Remover o passo passo-4").click()
    await expect(nodes).to_have_count(3)
    await expect(edges).to_have_count(3)
    await expect(page.locator("#flow-graph-title")).to_be_focused()
    await expect(page.get_by_text("Escolha um passo no grafo")).to_be_visible()

    # a node dragged with the mouse takes its new place (a drag opens no step); Shift and
    # an arrow move the focused node; the places are the steps' stored `position`
    lower = node("passo-3")
    before = await lower.get_attribute("transform")
    others = [await node(ident).get_attribute("transform") for ident in ("inicio", "passo-2")]
    box = await lower.bounding_box()
    assert box is not None and before is not None
    x0, y0 = (float(v) for v in before.removeprefix("translate(").rstrip(")").split())
    await page.mouse.move(box["x"] + 20, box["y"] + 20)
    await page.mouse.down()
    await page.mouse.move(box["x"] + 60, box["y"] + 80, steps=6)
    await page.mouse.up()
    await expect(lower).to_have_attribute("transform", f"translate({x0 + 40:g} {y0 + 60:g})")
    await expect(page.get_by_text("Escolha um passo no grafo")).to_be_visible()
    # the other nodes stay where they were
    for ident, transform in zip(("inicio", "passo-2"), others, strict=True):
        await expect(node(ident)).to_have_attribute("transform", transform or "")
    await node("inicio").focus()
    start = await node("inicio").get_attribute("transform")
    await page.keyboard.press("Shift+ArrowRight")
    assert start is not None
    sx, sy = (float(v) for v in start.removeprefix("translate(").rstrip(")").split())
    await expect(node("inicio")).to_have_attribute("transform", f"translate({sx + 20:g} {sy:g})")
    await expect(edges).to_have_count(3)

    await page.get_by_role("button", name="Salvar o fluxo").click()
    await expect(page.locator("#status")).to_contain_text("Fluxo salvo: Triagem.", timeout=TIMEOUT)
    drawn = {
        ident: await node(ident).get_attribute("transform")
        for ident in ("inicio", "passo-2", "passo-3")
    }

    # reloaded, the flow shows the same graph
    await page.reload()
    await expect(page.locator("#who")).to_be_visible(timeout=TIMEOUT)
    await nav_to(page, "Fluxos")
    await page.get_by_role("button", name="Editar: Triagem").click()
    await expect(nodes).to_have_count(3, timeout=TIMEOUT)
    await expect(edges).to_have_count(3)
    for source, target in (("inicio", "passo-2"), ("inicio", "passo-3"), ("passo-2", "passo-3")):
        arrow = graph.locator(f'g.flow-edge[data-from="{source}"][data-to="{target}"]')
        await expect(arrow).to_have_count(1)
    await expect(branch_a.locator("text")).to_have_text("Trabalhista")
    for ident, transform in drawn.items():
        await expect(node(ident)).to_have_attribute("transform", transform or "")
    await graph.screenshot(path=str(where / f"console-flows-graph-placed-{width}.png"))
    await expect(state).to_have_text("Fluxo conferido: nenhum problema.", timeout=TIMEOUT)
    await expect(graph.locator("g.flow-node[data-problems]")).to_have_count(0)
    flows = (await client.get("/flow", headers=office_a.headers)).json()["data"]
    by_id = {step["id"]: step for step in flows[0]["content"]["steps"]}
    assert list(by_id) == ["inicio", "passo-2", "passo-3"]
    assert [o["nextStepId"] for o in by_id["inicio"]["options"]] == ["passo-2", "passo-3"]
    assert by_id["passo-2"]["nextStepId"] == "passo-3"
    assert by_id["passo-3"]["nextStepId"] is None
    assert by_id["passo-3"]["metadata"]["tagIds"] == [world.tag.id]
    assert by_id["passo-3"]["position"] == {"x": x0 + 40, "y": y0 + 60}
    assert by_id["inicio"]["position"] == {"x": sx + 20, "y": sy}
    assert flows[0]["warnings"] == []
    # laid out by depth again: the places are forgotten
    await graph.get_by_role("button", name="Organizar os passos automaticamente").click()
    await expect(node("passo-3")).not_to_have_attribute("transform", drawn["passo-3"] or "")
    await expect(
        graph.get_by_role("button", name="Organizar os passos automaticamente")
    ).to_have_count(0)
    assert await page.evaluate(FITS)
    await page.screenshot(path=str(where / f"console-flows-reloaded-{width}.png"), full_page=True)


async def test_a_field_the_check_refuses_is_shown_on_its_node_until_fixed(
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
    _, email = await make_account(client, office_a, "ADMIN")
    await sign_in(page, server_url, email)
    await nav_to(page, "Fluxos")
    await page.get_by_role("button", name="Editar: Boas-vindas").click()
    graph = page.get_by_role("region", name="Os passos em grafo")
    state = graph.locator(".flow-check-state")
    editor = page.locator("section.step-card")
    oi = graph.locator('g.flow-node[data-step-id="oi"]')
    await expect(state).to_have_text("Fluxo conferido: nenhum problema.", timeout=TIMEOUT)
    # a media step whose address is no URL: the check's 400 names the step's field
    await editor.get_by_label("Tipo").select_option(label="Mídia (imagem, áudio, vídeo, documento)")
    await editor.get_by_label("Endereço (URL) da mídia").fill("foto de boas-vindas")
    await expect(oi).to_have_attribute("data-problems", "true", timeout=TIMEOUT)
    await expect(editor.locator(".step-problems")).to_have_text(
        "Um campo deste passo está incompleto ou inválido (o endereço da mídia, por exemplo)."
    )
    await editor.get_by_label("Endereço (URL) da mídia").fill("https://example.com/oi.png")
    await expect(oi).not_to_have_attribute("data-problems", "true", timeout=TIMEOUT)
    await expect(state).to_have_text("Fluxo conferido: nenhum problema.")
    # renamed, the step stays the first one
    await editor.get_by_label("Nome do passo").fill("ola")
    await expect(graph.locator('g.flow-node[data-step-id="ola"]')).to_have_count(1)
    await expect(page.get_by_label("Passo inicial")).to_have_value("ola")
    await expect(state).to_have_attribute("data-state", "done", timeout=TIMEOUT)
    await expect(state).to_have_text("Fluxo conferido: nenhum problema.")
    assert await serious_violations(page) == []
