"""The settings pages for a SUPERVISOR and an AGENT (issue 42), in Debian's Chromium: on
each page the role may open, the create, edit and delete controls shown are the ones the
API allows the role (the OpenAPI document's x-allowed-roles), a write the
page offers succeeds, and an admin page typed as an address answers with a sentence, not a
broken page."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from playwright.async_api import Page, expect

from tests.accounts_helpers import make_account
from tests.browser import sign_in as browser_sign_in
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture

TIMEOUT = 15_000
# A settings page of records: (address, title, its "add" button, the API's create and
# delete routes, the record of the office listed on it).
RECORD_PAGES = [
    ("inboxes", "Caixas de entrada e canais", "Nova caixa de entrada", "/inbox", "/inbox/{id}"),
    ("tags", "Etiquetas", "Nova etiqueta", "/tag", "/tag/{id}"),
    ("areas", "Áreas do direito", "Nova área", "/legal-areas", "/legal-areas/{id}"),
    ("fast", "Mensagens rápidas", "Nova mensagem rápida", "/fast-message", "/fast-message/{id}"),
    ("sla", "Prazos de atendimento (SLA)", "Novo prazo", "/sla-policies", "/sla-policies/{id}"),
    ("tickets", "Tickets", "Nova situação", "/ticket-statuses", None),
]
# A settings page of one form: (address, title, the API's route that saves it).
FORM_PAGES = [
    ("hours", "Horário de atendimento", "PUT", "/inbox/{id}/business-hours"),
    ("notice-settings", "Configurações dos avisos de processos", "PUT", "/case-notice-settings"),
]
READ_ONLY = "Seu papel pode ver esta configuração, mas não alterá-la."


def may(doc: dict[str, Any], role: str, method: str, path: str) -> bool:
    """Whether the API lets the role call the operation: its published role rule (the
    OpenAPI document's x-allowed-roles, which tests/test_roles.py holds to the answers)."""
    operation = doc["paths"][path][method.lower()]
    return role in operation["x-allowed-roles"]


async def sign_in(page: Page, server_url: str, email: str) -> None:
    await browser_sign_in(page, server_url, email, who="Beatriz Nogueira", wait_ms=TIMEOUT)


async def open_page(page: Page, name: str, title: str) -> None:
    await page.goto(page.url.split("#")[0] + f"#{name}")
    view = page.locator(f"#view-{name}")
    await expect(view.get_by_role("heading", level=1, name=title)).to_be_visible(timeout=TIMEOUT)
    await expect(view.get_by_text("Carregando…")).to_have_count(0, timeout=TIMEOUT)


async def office_records(
    http: httpx.AsyncClient, office: OfficeFixture, world: World
) -> dict[str, str]:
    """One record of each page, made with the office's key: {page: its name}."""
    area = await http.post(
        "/legal-areas", json={"name": "Trabalhista", "color": "#1E88E5"}, headers=office.headers
    )
    assert area.status_code == 201, area.text
    fast = await http.post(
        "/fast-message",
        json={"inboxId": world.inbox.id, "title": "Documentos", "kind": "TEXT", "text": "Envie."},
        headers=office.headers,
    )
    assert fast.status_code == 201, fast.text
    return {
        "inboxes": world.inbox.name,
        "tags": world.tag.name,
        "areas": "Trabalhista",
        "fast": "Documentos",
    }


async def test_each_settings_page_offers_a_role_only_the_writes_the_api_allows_it(
    page: Page, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=3)
        await s.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        names = await office_records(http, office_a, world)
        doc = (await http.get("/openapi.json")).json()
        accounts = {
            role: (await make_account(http, office_a, role, inbox_ids=[world.inbox.id]))[1]
            for role in ("SUPERVISOR", "AGENT")
        }
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    seen: dict[tuple[str, str], bool] = {}
    for role, email in accounts.items():
        await sign_in(page, server_url, email)
        for name, title, button, create, remove in RECORD_PAGES:
            await open_page(page, name, title)
            view = page.locator(f"#view-{name}")
            writes = may(doc, role, "POST", create)
            seen[(role, name)] = writes
            await expect(view.get_by_role("button", name=button, exact=True)).to_have_count(
                1 if writes else 0
            )
            if name not in names or remove is None:
                continue
            record = names[name]
            edits = may(doc, role, "PATCH", remove)
            deletes = may(doc, role, "DELETE", remove)
            await expect(view.get_by_role("button", name=f"Editar {record}")).to_have_count(
                1 if edits else 0
            )
            await expect(view.get_by_role("button", name=f"Excluir {record}")).to_have_count(
                1 if deletes else 0
            )
            if not edits:
                await expect(view.get_by_role("button", name="Editar", exact=True)).to_have_count(0)
        for name, title, method, path in FORM_PAGES:
            await open_page(page, name, title)
            view = page.locator(f"#view-{name}")
            saves = may(doc, role, method, path)
            await expect(view.get_by_role("button", name="Salvar", exact=True)).to_have_count(
                1 if saves else 0
            )
            await expect(view.get_by_text(READ_ONLY)).to_have_count(0 if saves else 1)
        await page.get_by_role("button", name="Sair").click()
        await expect(page.get_by_label("E-mail")).to_be_visible(timeout=TIMEOUT)
    # the roles' rules as the issue states them: a supervisor keeps the working lists
    assert seen[("SUPERVISOR", "tags")] and seen[("SUPERVISOR", "fast")]
    assert not seen[("SUPERVISOR", "areas")] and not seen[("AGENT", "tags")]
    assert seen[("AGENT", "tickets")]
    assert errors == []


async def test_a_write_the_page_offers_a_role_succeeds(
    page: Page, server_url: str, app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=3)
        await s.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, supervisor = await make_account(http, office_a, "SUPERVISOR", inbox_ids=[world.inbox.id])
        _, agent = await make_account(http, office_a, "AGENT", inbox_ids=[world.inbox.id])
    status = page.locator("#status")

    # a supervisor adds a tag, renames it and removes it
    await sign_in(page, server_url, supervisor)
    await open_page(page, "tags", "Etiquetas")
    view = page.locator("#view-tags")
    await view.get_by_role("button", name="Nova etiqueta", exact=True).click()
    await view.get_by_label("Nome").fill("Retorno")
    await view.get_by_role("button", name="Salvar", exact=True).click()
    await expect(status).to_have_text("Criado com sucesso.", timeout=TIMEOUT)
    tags = (await client.get("/tag", headers=office_a.headers)).json()["data"]
    assert sorted(tag["name"] for tag in tags) == sorted(["Retorno", world.tag.name])
    await view.get_by_role("button", name="Excluir Retorno", exact=True).click()
    await page.get_by_role("button", name="Confirmar exclusão").click()
    await expect(status).to_contain_text("Retorno excluído", timeout=TIMEOUT)
    tags = (await client.get("/tag", headers=office_a.headers)).json()["data"]
    assert [tag["name"] for tag in tags] == [world.tag.name]
    await page.get_by_role("button", name="Sair").click()

    # an agent adds a ticket status
    await sign_in(page, server_url, agent)
    await open_page(page, "tickets", "Tickets")
    view = page.locator("#view-tickets")
    await view.get_by_role("button", name="Nova situação", exact=True).click()
    await view.locator(".settings-editor").get_by_label("Nome").fill("Aguardando cliente")
    await view.get_by_role("button", name="Salvar", exact=True).click()
    await expect(status).to_have_text("Criado com sucesso.", timeout=TIMEOUT)
    statuses = (await client.get("/ticket-statuses", headers=office_a.headers)).json()["data"]
    assert "Aguardando cliente" in [s["name"] for s in statuses]


async def test_an_admin_page_typed_as_an_address_is_refused_with_a_sentence(
    page: Page, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=3)
        await s.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, agent = await make_account(http, office_a, "AGENT", inbox_ids=[world.inbox.id])
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    await sign_in(page, server_url, agent)
    for address, title in (
        ("rules", "Automações"),
        ("webhooks", "Webhooks"),
        ("flows", "Fluxos"),
        ("reports", "Relatórios"),
    ):
        await page.goto(f"{server_url}/console/#{address}")
        await expect(page.locator("#notice")).to_contain_text(
            f"Seu perfil não permite abrir a tela “{title}”; abrimos o Funil.", timeout=TIMEOUT
        )
        await expect(page.locator("#view-board")).to_be_visible()
        await expect(page.locator(f"#view-{address}")).to_be_hidden()
        assert page.url.endswith("#board")
    # a settings page of admins alone: its title and why, no form
    await page.goto(f"{server_url}/console/#retention")
    view = page.locator("#view-retention")
    await expect(view).to_contain_text(
        "Só administradores veem e alteram a retenção de dados.", timeout=TIMEOUT
    )
    await expect(view.get_by_role("heading", level=1, name="Retenção de dados")).to_be_visible()
    await expect(view.locator("form, input, button")).to_have_count(0)
    assert errors == []
