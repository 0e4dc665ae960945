"""The TOTP second factor in the console (issue 29), in Debian's Chromium: a user turns it
on from "Minha conta" (the QR code is drawn by the page and carries the otpauth address;
the secret is shown as text), signs in with a code of their authenticator (computed here
with pyotp on the app's TOTP clock) or a recovery code, and turns it off."""

from __future__ import annotations

import re
from datetime import timedelta

import httpx
import pyotp
from fastapi import FastAPI
from playwright.async_api import Browser, Page, expect

from tests.accounts_helpers import PASSWORD, SteppedClock, make_account
from tests.browser import new_page
from tests.helpers import OfficeFixture
from tests.qr_reader import read

TIMEOUT = 10_000


async def _password_step(page: Page, server_url: str, email: str) -> None:
    await page.goto(f"{server_url}/console")
    await page.get_by_label("E-mail").fill(email)
    await page.get_by_label("Senha").fill(PASSWORD)
    await page.get_by_role("button", name="Entrar com e-mail").click()


async def _drawn_modules(page: Page) -> list[list[bool]]:
    """The QR code's modules as the page drew them (its path's unit squares)."""
    svg = page.locator("#totp-qr svg")
    size = int(await svg.get_attribute("data-modules") or "0")
    path = await svg.locator("path").get_attribute("d") or ""
    modules = [[False] * size for _ in range(size)]
    for x, y in re.findall(r"M(\d+) (\d+)h1v1h-1z", path):
        modules[int(y) - 4][int(x) - 4] = True
    return modules


async def _enrolled(
    server_url: str, office: OfficeFixture, clock: SteppedClock
) -> tuple[str, str, list[str]]:
    """A user with TOTP turned on through the API: (email, secret, recovery codes)."""
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office, "AGENT")
        signed = await http.post("/auth/login", json={"email": email, "password": PASSWORD})
        csrf = {"x-csrf-token": signed.json()["csrfToken"]}
        started = await http.post("/me/totp", headers=csrf)
        secret = started.json()["secret"]
        code = pyotp.TOTP(secret).at(clock.now)
        confirmed = await http.post("/me/totp/confirm", json={"code": code}, headers=csrf)
        assert confirmed.status_code == 200, confirmed.text
        return email, secret, confirmed.json()["recoveryCodes"]


async def test_enrolment_in_the_console_draws_the_qr_of_the_secret_and_confirms(
    page: Page, app: FastAPI, server_url: str, office_a: OfficeFixture
) -> None:
    clock = SteppedClock()
    app.state.totp_clock = clock
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office_a, "SUPERVISOR")
    await _password_step(page, server_url, email)
    await expect(page.locator("#who")).to_have_text(
        "Beatriz Nogueira · supervisor", timeout=TIMEOUT
    )
    await page.get_by_role("link", name="Minha conta").click()
    await expect(page.locator("#totp-state")).to_have_text(
        "Desativada: ao entrar, basta a senha.", timeout=TIMEOUT
    )
    await page.get_by_role("button", name="Ativar a verificação em duas etapas").click()
    qr = page.get_by_role("img", name="Código QR para o aplicativo autenticador")
    await expect(qr.locator("svg")).to_be_visible(timeout=TIMEOUT)
    # The page drew it: no image was asked of any host.
    assert await page.locator("img").count() == 0
    uri = read(await _drawn_modules(page))
    secret = (await page.locator("#totp-secret").inner_text()).replace(" ", "")
    parsed = pyotp.parse_uri(uri)
    assert uri.startswith("otpauth://totp/") and parsed.secret == secret
    totp = pyotp.TOTP(secret)

    code = page.get_by_label("Código de 6 dígitos")
    near = {totp.at(clock.now + timedelta(seconds=30 * k)) for k in (-1, 0, 1)}
    await code.fill(next(c for c in ("000000", "111111", "222222", "333333") if c not in near))
    await page.get_by_role("button", name="Confirmar e ativar").click()
    await expect(page.locator("#notice")).to_contain_text("INVALID_CODE", timeout=TIMEOUT)
    await code.fill(totp.at(clock.now))
    await page.get_by_role("button", name="Confirmar e ativar").click()
    await expect(page.locator("#totp-state")).to_have_attribute(
        "data-active", "true", timeout=TIMEOUT
    )
    await expect(page.locator("#totp-recovery li")).to_have_count(10)
    await expect(page.locator("#totp-enrol")).to_be_hidden()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        r = await http.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert r.json()["totpRequired"] is True


async def test_a_user_with_totp_signs_in_with_a_code_and_turns_it_off(
    page: Page, app: FastAPI, server_url: str, office_a: OfficeFixture
) -> None:
    clock = SteppedClock()
    app.state.totp_clock = clock
    email, secret, _ = await _enrolled(server_url, office_a, clock)
    await _password_step(page, server_url, email)
    code = page.get_by_label("Código de verificação")
    await expect(code).to_be_visible(timeout=TIMEOUT)
    await expect(page.locator("#password-form")).to_be_hidden()
    # The code of the step used to confirm is spent: a fresh step's code signs in.
    await code.fill(pyotp.TOTP(secret).at(clock.now))
    await page.get_by_role("button", name="Confirmar código").click()
    await expect(page.locator("#notice")).to_contain_text("INVALID_CODE", timeout=TIMEOUT)
    await expect(page.locator("#who")).to_be_hidden()
    clock.step()
    await code.fill(pyotp.TOTP(secret).at(clock.now))
    await page.get_by_role("button", name="Confirmar código").click()
    await expect(page.locator("#who")).to_have_text("Beatriz Nogueira · atendente", timeout=TIMEOUT)

    await page.get_by_role("link", name="Minha conta").click()
    await expect(page.locator("#totp-state")).to_have_attribute(
        "data-active", "true", timeout=TIMEOUT
    )
    clock.step()
    await page.get_by_label("Código do aplicativo ou código de recuperação").fill(
        pyotp.TOTP(secret).at(clock.now)
    )
    await page.get_by_role("button", name="Desativar a verificação em duas etapas").click()
    await expect(page.locator("#totp-state")).to_have_attribute(
        "data-active", "false", timeout=TIMEOUT
    )
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        r = await http.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert "csrfToken" in r.json()


async def test_a_recovery_code_signs_in_at_the_console_once(
    browser: Browser, app: FastAPI, server_url: str, office_a: OfficeFixture
) -> None:
    clock = SteppedClock()
    app.state.totp_clock = clock
    email, _, recovery = await _enrolled(server_url, office_a, clock)
    for attempt in ("accepted", "spent"):
        async with new_page(browser) as page:
            await _password_step(page, server_url, email)
            await page.get_by_label("Código de verificação").fill(recovery[0].upper())
            await page.get_by_role("button", name="Confirmar código").click()
            if attempt == "accepted":
                await expect(page.locator("#who")).to_have_text(
                    "Beatriz Nogueira · atendente", timeout=TIMEOUT
                )
            else:
                await expect(page.locator("#notice")).to_contain_text(
                    "INVALID_CODE", timeout=TIMEOUT
                )
                await expect(page.locator("#who")).to_be_hidden()
