"""The "Pessoas" page (issue 42), in Debian's Chromium: an ADMIN creates a person with a
role and inboxes and gets the invitation link to copy, changes them, deactivates them and
makes a new-password link; a SUPERVISOR and an AGENT see the team and are offered no
change. Accessibility (axe-core) and the layout at 1366 x 768 and 390 x 844 (nothing wider
than the screen) on the people page and the onboarding page."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from tests.accessibility import serious_violations
from tests.accounts_helpers import PASSWORD, make_account
from tests.browser import nav_to, new_page, sign_in
from tests.helpers import OfficeFixture

TIMEOUT = 10_000
FITS = "document.documentElement.scrollWidth <= window.innerWidth"


async def _shot(page: Page, folder: Path, name: str) -> None:
    """A full-page screenshot, in ``OFFICEHUB_SCREENSHOTS_DIR`` when set (to look at)."""
    where = Path(os.environ.get("OFFICEHUB_SCREENSHOTS_DIR") or folder)
    await page.screenshot(path=str(where / f"{name}.png"), full_page=True)
    assert (where / f"{name}.png").stat().st_size > 10_000


async def _inbox(client: httpx.AsyncClient, office: OfficeFixture, name: str) -> str:
    made = await client.post("/inbox", json={"name": name}, headers=office.headers)
    assert made.status_code == 201, made.text
    inbox_id: str = made.json()["id"]
    return inbox_id


async def test_an_admin_creates_a_person_gets_the_link_changes_and_deactivates_them(
    page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    family = await _inbox(client, office_a, "Família")
    labour = await _inbox(client, office_a, "Trabalhista")
    admin_id, email = await make_account(client, office_a, "ADMIN")
    await sign_in(page, server_url, email)
    await nav_to(page, "Pessoas")
    await expect(page.get_by_role("heading", name="Pessoas do escritório")).to_be_visible()
    me = page.locator(f'tr[data-user-id="{admin_id}"]')
    await expect(me).to_contain_text("Beatriz Nogueira (você)", timeout=TIMEOUT)
    # nobody deactivates themselves from here
    await expect(me.get_by_role("button", name="Desativar: Beatriz Nogueira")).to_have_count(0)

    await page.get_by_role("button", name="Nova pessoa").click()
    form = page.locator(".person-form")
    await form.get_by_label("Nome").fill("Otávio Lins")
    await form.get_by_label("E-mail").fill("otavio@escritorio.example")
    await form.get_by_label("Papel").select_option(label="supervisor")
    await expect(form).to_contain_text("Supervisor: atende e acompanha a equipe")
    await form.get_by_label("Trabalhista").check()
    assert await serious_violations(page) == []
    await form.get_by_role("button", name="Criar e gerar o convite").click()

    box = page.locator(".link-box")
    await expect(box.get_by_role("heading", name="Link para Otávio Lins")).to_be_visible(
        timeout=TIMEOUT
    )
    url = await box.get_by_label("Link para copiar").input_value()
    assert "/console/#invite=" in url
    await expect(box).to_contain_text("Ele serve uma vez, até ")
    row = page.locator("tr", has_text="Otávio Lins")
    await expect(row).to_contain_text("supervisor")
    await expect(row).to_contain_text("Trabalhista")
    await expect(row).to_contain_text("Convite pendente")
    listed = (await client.get("/user", headers=office_a.headers)).json()["data"]
    made = next(u for u in listed if u["email"] == "otavio@escritorio.example")
    assert made["role"] == "SUPERVISOR" and made["inboxIds"] == [labour]
    token = url.split("#invite=", 1)[1]
    r = await client.post("/auth/invite/accept", json={"token": token, "password": PASSWORD})
    assert r.status_code == 200, r.text

    # a taken email is refused in a sentence naming the field in words
    await page.get_by_role("button", name="Nova pessoa").click()
    await form.get_by_label("Nome").fill("Outro Otávio")
    await form.get_by_label("E-mail").fill("OTAVIO@escritorio.example")
    await form.get_by_role("button", name="Criar e gerar o convite").click()
    notice = page.locator("#notice")
    await expect(notice).to_have_attribute("data-code", "EMAIL_TAKEN", timeout=TIMEOUT)
    assert "Outra pessoa já usa este e-mail." in await notice.inner_text()
    await form.get_by_role("button", name="Cancelar").click()

    # role and inboxes changed
    await row.get_by_role("button", name="Editar: Otávio Lins").click()
    await form.get_by_label("Papel").select_option(label="atendente")
    await form.get_by_label("Família").check()
    await form.get_by_label("Trabalhista").uncheck()
    await form.get_by_role("button", name="Salvar as alterações").click()
    await expect(row).to_contain_text("atendente", timeout=TIMEOUT)
    await expect(row).to_contain_text("Família")
    await expect(row).to_contain_text("Ativa")
    stored = (await client.get(f"/user/{made['id']}", headers=office_a.headers)).json()
    assert stored["role"] == "AGENT" and stored["inboxIds"] == [family]

    # a person with a password gets a new-password link
    await row.get_by_role("button", name="Link de nova senha: Otávio Lins").click()
    await expect(box.get_by_label("Link para copiar")).to_have_value(
        re.compile(r"/console/#reset=[A-Za-z0-9_-]+$"), timeout=TIMEOUT
    )

    # deactivated after a confirmation
    page.once("dialog", lambda dialog: dialog.accept())
    await row.get_by_role("button", name="Desativar: Otávio Lins").click()
    await expect(row).to_contain_text("Desativada", timeout=TIMEOUT)
    await expect(row.get_by_role("button", name="Reativar: Otávio Lins")).to_be_visible()
    stored = (await client.get(f"/user/{made['id']}", headers=office_a.headers)).json()
    assert stored["isActive"] is False
    r = await client.post(
        "/auth/login", json={"email": "otavio@escritorio.example", "password": PASSWORD}
    )
    assert r.status_code == 401


@pytest.mark.parametrize("role", ["SUPERVISOR", "AGENT"])
async def test_a_supervisor_or_an_agent_sees_the_team_and_no_change(
    role: str, page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    inbox = await _inbox(client, office_a, "Previdenciário")
    _, email = await make_account(client, office_a, role, inbox_ids=[inbox])
    other = {"name": "Rita Prado", "email": "rita@escritorio.example", "role": "ADMIN"}
    assert (await client.post("/user", json=other, headers=office_a.headers)).status_code == 201
    await sign_in(page, server_url, email)
    await nav_to(page, "Pessoas")
    rita = page.locator("tr", has_text="Rita Prado")
    await expect(rita).to_contain_text("administrador", timeout=TIMEOUT)
    await expect(rita).to_contain_text("Convite pendente")
    await expect(page.locator("tr", has_text="(você)")).to_contain_text("Previdenciário")
    await expect(page.get_by_text("Só um administrador cria pessoas")).to_be_visible()
    # no write is offered: the API would refuse it
    view = page.locator("#view-users")
    await expect(view.get_by_role("button", name="Nova pessoa")).to_have_count(0)
    await expect(view.get_by_role("columnheader", name="Ações")).to_have_count(0)
    await expect(view.locator("td.actions button")).to_have_count(0)
    assert await serious_violations(page) == []


@pytest.mark.parametrize(("width", "height"), [(1366, 768), (390, 844)])
async def test_the_pages_fit_the_screen(
    width: int,
    height: int,
    browser: Browser,
    server_url: str,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    for name in ("Família e Sucessões", "Trabalhista", "Previdenciário e Tributário"):
        await _inbox(client, office_a, name)
    _, email = await make_account(client, office_a, "ADMIN")
    long_one = {
        "name": "Maria Eduarda de Albuquerque Cavalcanti Wanderley",
        "email": "maria.eduarda.albuquerque.cavalcanti.wanderley@escritorio-de-advocacia.example",
        "role": "SUPERVISOR",
    }
    assert (await client.post("/user", json=long_one, headers=office_a.headers)).status_code == 201
    async with new_page(browser) as page:
        await page.set_viewport_size({"width": width, "height": height})
        await sign_in(page, server_url, email)
        await nav_to(page, "Pessoas")
        row = page.locator("tr", has_text="Maria Eduarda")
        await expect(row).to_be_visible(timeout=TIMEOUT)
        assert await page.evaluate(FITS)
        await _shot(page, tmp_path, f"users-{width}")
        await row.get_by_role("button", name="Link de convite: Maria Eduarda").click()
        await expect(page.locator(".link-box")).to_be_visible(timeout=TIMEOUT)
        url = await page.locator("#user-link").input_value()
        assert await page.evaluate(FITS)
        await _shot(page, tmp_path, f"users-link-{width}")
        await page.get_by_role("button", name="Nova pessoa").click()
        await expect(page.locator(".person-form")).to_be_visible()
        assert await page.evaluate(FITS)
        assert await serious_violations(page) == []
        await _shot(page, tmp_path, f"users-form-{width}")

    async with new_page(browser) as page:
        await page.set_viewport_size({"width": width, "height": height})
        await page.goto(f"{server_url}/console/#invite={url.split('#invite=', 1)[1]}")
        await page.get_by_label("Nova senha", exact=True).fill("1234567890")
        await page.get_by_label("Repita a nova senha").fill("1234567890")
        await page.get_by_role("button", name="Salvar a senha e entrar").click()
        await expect(page.locator("#notice")).to_have_attribute(
            "data-code", "WEAK_PASSWORD", timeout=TIMEOUT
        )
        assert await page.evaluate(FITS)
        assert await serious_violations(page) == []
        await _shot(page, tmp_path, f"onboard-{width}")
