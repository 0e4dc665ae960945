"""Joining the office in the console (issue 42), in Debian's Chromium, as a person would:
an invitation link (made through the API or by `officehub user create`) opens a page that
sets the password and signs the person in; a reset link of an account with TOTP asks for a
code; a used link and a wrong password are said in Portuguese sentences."""

from __future__ import annotations

import httpx
import pyotp
from fastapi import FastAPI
from playwright.async_api import Page, expect

from tests.accessibility import serious_violations
from tests.accounts_helpers import PASSWORD, SteppedClock, make_account
from tests.helpers import OfficeFixture
from tests.test_cli import json_of, officehub

TIMEOUT = 10_000
NEW_PASSWORD = "Jabuticaba no pé da serra"


async def _invited(client: httpx.AsyncClient, office: OfficeFixture, role: str = "AGENT") -> str:
    """A new user of ``role`` ("Carla Mendes") and their invitation token."""
    body = {"name": "Carla Mendes", "email": "carla@escritorio.example", "role": role}
    made = await client.post("/user", json=body, headers=office.headers)
    assert made.status_code == 201, made.text
    invite = await client.post(f"/user/{made.json()['id']}/invite", headers=office.headers)
    assert invite.status_code == 201, invite.text
    assert invite.json()["inviteUrl"].endswith(f"/console/#invite={invite.json()['token']}")
    token: str = invite.json()["token"]
    return token


async def _choose(page: Page, password: str, repeat: str | None = None) -> None:
    await page.get_by_label("Nova senha", exact=True).fill(password)
    await page.get_by_label("Repita a nova senha").fill(repeat if repeat is not None else password)
    await page.get_by_role("button", name="Salvar a senha e entrar").click()


async def test_an_invited_person_chooses_a_password_and_is_signed_in(
    page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    token = await _invited(client, office_a)
    await page.goto(f"{server_url}/console/#invite={token}")
    await expect(page.get_by_role("heading", name="Bem-vindo ao officehub")).to_be_visible(
        timeout=TIMEOUT
    )
    # the token left the address bar at once (and the history: no way back to it)
    assert page.url.endswith("/console/#onboard") and token not in page.url
    assert await serious_violations(page) == []

    # two different passwords: said next to the field, nothing sent
    await _choose(page, NEW_PASSWORD, NEW_PASSWORD + "!")
    problem = page.locator("#onboard-problem")
    await expect(problem).to_have_text(
        "As duas senhas não são iguais: digite a mesma senha nos dois campos."
    )
    await expect(page.get_by_label("Repita a nova senha")).to_have_attribute("aria-invalid", "true")
    # a password the API refuses: its rule in a Portuguese sentence, not the API's English
    await _choose(page, "1234567890")
    notice = page.locator("#notice")
    await expect(notice).to_have_attribute("data-code", "WEAK_PASSWORD", timeout=TIMEOUT)
    shown = await notice.inner_text()
    assert "Esta senha é comum demais e fácil de adivinhar" in shown
    assert "Confira o campo: Senha." in shown
    assert "WEAK_PASSWORD" not in shown and "too common" not in shown
    # … which stay below, folded, for support
    await notice.get_by_text("Detalhes técnicos").click()
    await expect(notice).to_contain_text("400 WEAK_PASSWORD")

    await _choose(page, NEW_PASSWORD)
    await expect(page.locator("#who")).to_have_text("Carla Mendes · atendente", timeout=TIMEOUT)
    # an invited person lands on their account, where the second factor is offered
    await expect(page.get_by_role("heading", name="Minha conta")).to_be_visible()
    await expect(page.locator("#status")).to_contain_text("Olá, Carla Mendes!")
    assert page.url.endswith("#account")
    r = await client.post(
        "/auth/login", json={"email": "carla@escritorio.example", "password": NEW_PASSWORD}
    )
    assert r.status_code == 200

    # the link works once: opened again, a sentence says so and leads to the sign-in
    await page.get_by_role("button", name="Sair").click()
    await expect(page.get_by_role("button", name="Entrar com e-mail")).to_be_visible()
    await page.goto(f"{server_url}/console/#invite={token}")
    await _choose(page, "Outra senha bem comprida")
    await expect(notice).to_have_attribute("data-code", "INVALID_TOKEN", timeout=TIMEOUT)
    assert "Este link já foi usado, expirou" in await notice.inner_text()
    await page.get_by_role("link", name="Ir para a tela de entrada").click()
    await expect(page.get_by_role("button", name="Entrar com e-mail")).to_be_visible()


async def test_a_link_made_on_the_command_line_opens_the_page_too(
    page: Page, server_url: str, database_url: str, client: httpx.AsyncClient, app: FastAPI,
    office_a: OfficeFixture,
) -> None:  # fmt: skip
    printed = json_of(
        await officehub(
            database_url,
            "user",
            "create",
            "--office",
            office_a.id,
            "--email",
            "davi@escritorio.example",
            "--name",
            "Davi Rocha",
            "--role",
            "SUPERVISOR",
            "--json",
        )
    )
    fragment = printed["inviteUrl"].split("/console/", 1)[1]
    await page.goto(f"{server_url}/console/{fragment}")
    await _choose(page, NEW_PASSWORD)
    await expect(page.locator("#who")).to_have_text("Davi Rocha · supervisor", timeout=TIMEOUT)


async def test_a_reset_link_of_an_account_with_totp_asks_for_the_code(
    page: Page, app: FastAPI, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    clock = SteppedClock()
    app.state.totp_clock = clock
    user_id, email = await make_account(client, office_a, "AGENT")
    signed = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
    csrf = {"x-csrf-token": signed.json()["csrfToken"]}
    secret = (await client.post("/me/totp", headers=csrf)).json()["secret"]
    code = pyotp.TOTP(secret).at(clock.now)
    confirmed = await client.post("/me/totp/confirm", json={"code": code}, headers=csrf)
    assert confirmed.status_code == 200, confirmed.text
    made = await client.post(
        "/auth/password-reset", json={"userId": user_id}, headers=office_a.headers
    )
    assert made.status_code == 201, made.text

    await page.goto(f"{server_url}/console/#reset={made.json()['token']}")
    await expect(page.get_by_role("heading", name="Escolha uma nova senha")).to_be_visible(
        timeout=TIMEOUT
    )
    await _choose(page, NEW_PASSWORD)
    field = page.get_by_role("textbox", name="Código de verificação")
    await expect(field).to_be_visible(timeout=TIMEOUT)
    clock.step()
    await field.fill(pyotp.TOTP(secret).at(clock.now))
    await page.get_by_role("button", name="Confirmar o código e entrar").click()
    await expect(page.locator("#who")).to_have_text("Beatriz Nogueira · atendente", timeout=TIMEOUT)
    assert page.url.endswith("#board")


async def test_a_wrong_password_is_said_in_a_sentence(
    page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    _, email = await make_account(client, office_a, "AGENT")
    await page.goto(f"{server_url}/console")
    await page.get_by_label("E-mail").fill(email)
    await page.get_by_label("Senha").fill("nao-e-esta-senha")
    await page.get_by_role("button", name="Entrar com e-mail").click()
    notice = page.locator("#notice")
    await expect(notice).to_have_attribute("data-code", "INVALID_CREDENTIALS", timeout=TIMEOUT)
    shown = await notice.inner_text()
    assert "Entrar: E-mail ou senha incorretos. Confira e tente de novo." in shown
    assert "401" not in shown and "INVALID_CREDENTIALS" not in shown
    assert "Wrong email or password" not in shown
    await expect(page.locator("#who")).to_be_hidden()


async def test_an_incomplete_link_says_what_to_do(page: Page, server_url: str) -> None:
    await page.goto(f"{server_url}/console/#invite=")
    await expect(page.get_by_text("Este link está incompleto.")).to_be_visible(timeout=TIMEOUT)
    await expect(page.get_by_role("link", name="Ir para a tela de entrada")).to_be_visible()
    await expect(page.get_by_label("Nova senha", exact=True)).to_have_count(0)
