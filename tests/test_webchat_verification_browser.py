"""The web chat widget in Chromium: a visitor confirms the phone they gave with the code
WhatsApp (the stand-in) received, and every text the widget shows has its bidirectional
controls neutralised (issue 27, items 1 and 6)."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Page, expect

from officehub.kit.config import Settings
from tests.helpers import OfficeFixture
from tests.server import running_server, serving
from tests.test_webchat_browser import Site, running_worker
from tests.webchat_world import make_webchat
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import official_integration

TIMEOUT = 15_000
BIDI = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    return whatsapp_settings


async def _start_in_widget(page: Page, site_origin: str) -> None:
    await page.goto(f"{site_origin}/")
    await page.get_by_role("button", name="Abrir o chat").click()
    await page.get_by_label("Seu nome").fill("Maria Souza")
    await page.get_by_label("Seu telefone (com DDD)").fill("(11) 98765-4321")
    await page.get_by_role("button", name="Começar").click()
    await expect(page.get_by_label("Mensagem")).to_be_visible()


async def _chat(client: httpx.AsyncClient, office: OfficeFixture, origin: str) -> dict[str, Any]:
    return await make_webchat(client, office, origins=[origin])


async def test_a_visitor_confirms_their_phone_in_the_widget_with_the_code_whatsapp_received(
    page: Page,
    app: FastAPI,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    site = Site()
    async with app.state.sessionmaker() as s:
        await official_integration(s, office_a.id)
    async with (
        running_server(app) as api_url,
        serving(site) as site_port,
        httpx.AsyncClient(base_url=api_url, timeout=15) as client,
    ):
        site_origin = f"http://127.0.0.1:{site_port}"
        chat = await _chat(client, office_a, site_origin)
        site.script_url = f"{api_url}/webchat/{chat['id']}/widget.js"
        await _start_in_widget(page, site_origin)
        await expect(page.get_by_text("Confirme seu número")).to_be_visible(timeout=TIMEOUT)
        await page.get_by_role("button", name="Confirmar meu número").click()
        await expect(page.get_by_text("terminado em 4321")).to_be_visible(timeout=TIMEOUT)
        [sent] = platform.sent
        code = re.search(r"\b(\d{6})\b", sent["text"]["body"])
        assert code is not None and sent["to"] == "5511987654321"
        assert code.group(1) not in await page.content()

        wrong = f"{(int(code.group(1)) + 1) % 10**6:06d}"
        await page.get_by_label("Código recebido no WhatsApp").fill(wrong)
        await page.get_by_role("button", name="Confirmar", exact=True).click()
        await expect(page.get_by_role("alert").filter(has_text="Código incorreto")).to_contain_text(
            "4 tentativa(s) restante(s)", timeout=TIMEOUT
        )
        await page.get_by_label("Código recebido no WhatsApp").fill(code.group(1))
        await page.get_by_role("button", name="Confirmar", exact=True).click()
        await expect(page.get_by_text("Número confirmado.")).to_be_visible(timeout=TIMEOUT)
        await expect(page.get_by_role("button", name="Confirmar meu número")).to_be_hidden()

        # Coming back: the widget knows the phone is confirmed.
        await page.reload()
        await page.get_by_role("button", name="Abrir o chat").click()
        await expect(page.get_by_text("Número confirmado.")).to_be_visible(timeout=TIMEOUT)


async def test_the_widget_shows_bidi_controls_neutralised_and_the_api_keeps_them(
    page: Page,
    app: FastAPI,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    """ "abc\u202egpj.exe" would read "abcexe.jpg": the widget shows each bidi control (in
    the office's reply, the visitor's own message, the chat's title and greeting: single-line
    fields refuse all but the marks U+200E/U+200F, which they may hold) as a
    visible mark, in an element isolated from its neighbours; the visitor API answers the
    original characters."""
    spoofed = "Segue o arquivo abc\u202egpj.exe"
    mine = "Meu nome \u2066isolado\u2069 e \u200fmarca"
    site = Site()
    async with (
        running_server(app) as api_url,
        serving(site) as site_port,
        httpx.AsyncClient(base_url=api_url, timeout=15) as client,
        running_worker(app, settings),
    ):
        site_origin = f"http://127.0.0.1:{site_port}"
        chat = await make_webchat(
            client, office_a, origins=[site_origin], greeting="Olá \u200fvisitante!"
        )
        renamed = await client.patch(
            f"/integration/{chat['id']}",
            json={"name": "Chat \u200edo site"},
            headers=office_a.headers,
        )
        assert renamed.status_code == 200, renamed.text
        site.script_url = f"{api_url}/webchat/{chat['id']}/widget.js"
        await _start_in_widget(page, site_origin)
        await page.get_by_label("Mensagem").fill(mine)
        await page.get_by_label("Mensagem").press("Enter")
        await expect(page.locator(".msg.in")).to_have_text(
            "Meu nome ⟦U+2066⟧isolado⟦U+2069⟧ e ⟦U+200F⟧marca", timeout=TIMEOUT
        )
        conversations = await client.get(
            "/conversation", params={"inboxId": chat["inboxId"]}, headers=office_a.headers
        )
        [conversation] = conversations.json()["data"]
        reply = await client.post(
            f"/conversation/{conversation['id']}/messages",
            json={"text": spoofed},
            headers=office_a.headers,
        )
        assert reply.status_code == 201, reply.text

        out = page.locator(".msg.out", has_text="Segue o arquivo")
        await expect(out).to_have_text("Segue o arquivo abc⟦U+202E⟧gpj.exe", timeout=TIMEOUT)
        await expect(page.locator(".greeting")).to_have_text("Olá ⟦U+200F⟧visitante!")
        await expect(page.locator(".title")).to_have_text("Chat ⟦U+200E⟧do site")
        await expect(out).to_have_attribute("dir", "auto")
        isolation = await out.evaluate("e => getComputedStyle(e).unicodeBidi")
        assert isolation == "isolate"
        shown = await page.locator("officehub-webchat").evaluate(
            "host => host.shadowRoot.querySelector('.panel').innerText"
        )
        assert not BIDI.search(shown), shown

        token = await page.evaluate(f"localStorage.getItem('officehub-webchat:{chat['id']}')")
        history = await client.get(
            f"/webchat/{chat['id']}/messages",
            headers={"x-visitor-token": token, "origin": site_origin},
        )
        assert [m["text"] for m in history.json()["data"]] == [mine, spoofed]
