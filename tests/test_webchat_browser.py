"""The web chat in a real browser: a site on another origin embeds the widget; a visitor
chats, a flow answers, the office replies through the API and the visitor sees it live.

``OFFICEHUB_SCREENSHOTS=1`` also saves the widget's screenshot as
``docs/img/webchat-widget.png``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
from fastapi import FastAPI
from playwright.async_api import Page, expect
from starlette.types import Receive, Scope, Send

from officehub.jobs import queue_jobs
from officehub.kit.config import Settings
from officehub.kit.worker import Worker, WorkerContext
from tests.helpers import OfficeFixture
from tests.server import running_server, serving
from tests.webchat_world import make_webchat

DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"


class Site:
    """The office's own site: one page that pastes the widget's script tag."""

    def __init__(self) -> None:
        self.script_url = ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        page = (
            "<!doctype html><html lang='pt-BR'><head><meta charset='utf-8'>"
            "<title>Escritório Souza Advogados</title>"
            # The site's own CSS, aggressive on purpose: the widget's shadow root ignores it.
            "<style>body{font-family:Georgia,serif;background:#fdf6e3;margin:40px}"
            "button{background:red!important;font-size:40px} div{border:2px dashed green}</style>"
            "</head><body><h1>Souza Advogados</h1>"
            "<p>Direito de família, trabalhista e previdenciário.</p>"
            f"<script src='{self.script_url}' async></script></body></html>"
        ).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/html; charset=utf-8")],
            }
        )
        await send({"type": "http.response.body", "body": page})


@asynccontextmanager
async def running_worker(app: FastAPI, settings: Settings) -> AsyncIterator[None]:
    """Every queue job (flows, automation, the dispatcher) working in the background."""
    worker = Worker(WorkerContext(settings, app.state.engine, app.state.sessionmaker), queue_jobs())
    task = asyncio.create_task(worker.run())
    try:
        yield
    finally:
        worker.stop()
        await task


async def test_a_visitor_chats_through_the_widget_on_another_origin(
    page: Page, app: FastAPI, settings: Settings, office_a: OfficeFixture, tmp_path: Path
) -> None:
    site = Site()
    async with (
        running_server(app) as api_url,
        serving(site) as site_port,
        httpx.AsyncClient(base_url=api_url, timeout=15) as client,
        running_worker(app, settings),
    ):
        site_origin = f"http://127.0.0.1:{site_port}"
        assert site_origin != api_url
        chat = await make_webchat(
            client,
            office_a,
            origins=[site_origin],
            greeting="Olá! Conte-nos como podemos ajudar.",
        )
        flow = await client.post(
            "/flow",
            json={
                "name": "Boas-vindas do site",
                "inboxId": chat["inboxId"],
                "content": {
                    "initialStepId": "s1",
                    "steps": [
                        {
                            "id": "s1",
                            "type": "text",
                            "content": "Recebemos sua mensagem! Um advogado já vai responder.",
                            "nextStepId": None,
                        }
                    ],
                },
            },
            headers=office_a.headers,
        )
        assert flow.status_code == 201, flow.text
        site.script_url = f"{api_url}/webchat/{chat['id']}/widget.js"

        await page.goto(f"{site_origin}/")
        await page.get_by_role("button", name="Abrir o chat").click()
        await expect(page.get_by_text("Olá! Conte-nos como podemos ajudar.")).to_be_visible()
        await page.get_by_label("Seu nome").fill("Maria Souza")
        await page.get_by_label("Seu telefone (com DDD)").fill("(11) 98765-4321")
        await page.get_by_role("button", name="Começar").click()
        await expect(page.get_by_label("Seu nome")).to_be_hidden()
        message = page.get_by_label("Mensagem")
        await message.fill("Boa tarde, preciso de ajuda com uma pensão alimentícia.")
        await message.press("Enter")
        await expect(page.locator(".msg.in")).to_have_text(
            "Boa tarde, preciso de ajuda com uma pensão alimentícia."
        )
        # The flow answers the first message, through the worker and the dispatcher.
        await expect(page.locator(".msg.out").first).to_have_text(
            "Recebemos sua mensagem! Um advogado já vai responder.", timeout=15_000
        )
        conversations = await client.get(
            "/conversation", params={"inboxId": chat["inboxId"]}, headers=office_a.headers
        )
        [conversation] = conversations.json()["data"]
        reply = await client.post(
            f"/conversation/{conversation['id']}/messages",
            json={"text": "Boa tarde, Maria! Sou a Dra. Ana. Pode me contar mais?"},
            headers=office_a.headers,
        )
        assert reply.status_code == 201, reply.text
        await expect(page.locator(".msg.out").nth(1)).to_have_text(
            "Boa tarde, Maria! Sou a Dra. Ana. Pode me contar mais?", timeout=15_000
        )
        # No trace of the office's key in the page; the visitor's token is in localStorage.
        html = await page.content()
        assert office_a.key not in html
        stored = await page.evaluate(f"localStorage.getItem('officehub-webchat:{chat['id']}')")
        assert isinstance(stored, str) and len(stored) >= 40
        shot = tmp_path / "webchat-widget.png"
        await page.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000
        if os.environ.get("OFFICEHUB_SCREENSHOTS") == "1":
            DOCS_IMG.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(shot, DOCS_IMG / "webchat-widget.png")

        # Coming back: the same conversation, from the token kept in the browser.
        await page.reload()
        await page.get_by_role("button", name="Abrir o chat").click()
        await expect(page.locator(".msg")).to_have_count(3, timeout=15_000)
        delivered = await client.get(
            f"/conversation/{conversation['id']}/messages", headers=office_a.headers
        )
        statuses = {m["text"]: m["status"] for m in delivered.json()["data"]}
        assert statuses["Boa tarde, Maria! Sou a Dra. Ana. Pode me contar mais?"] == "DELIVERED"


async def test_the_widget_on_a_page_of_another_origin_says_why_in_portuguese(
    page: Page, app: FastAPI, office_a: OfficeFixture
) -> None:
    site = Site()
    async with (
        running_server(app) as api_url,
        serving(site) as site_port,
        httpx.AsyncClient(base_url=api_url, timeout=15) as client,
    ):
        chat = await make_webchat(client, office_a, origins=["https://www.souza.example"])
        site.script_url = f"{api_url}/webchat/{chat['id']}/widget.js"
        await page.goto(f"http://127.0.0.1:{site_port}/")
        await page.get_by_role("button", name="Abrir o chat").click()
        await page.get_by_label("Seu nome").fill("Maria Souza")
        await page.get_by_label("Seu telefone (com DDD)").fill("(11) 98765-4321")
        await page.get_by_role("button", name="Começar").click()
        alert = page.get_by_role("alert").first
        await expect(alert).to_contain_text("não está autorizado a usar este chat")
        await expect(alert).to_contain_text(f"http://127.0.0.1:{site_port}")
        await expect(alert).not_to_contain_text("Sem conexão")
