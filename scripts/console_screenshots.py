"""Screenshots of the office console for the README (``docs/img/console-*.png``).

Runs the app on a fresh SQLite database in a temporary folder (with its embedded worker,
so webhook deliveries really happen), fills one office through the public API, and has
Debian's Chromium (``make chromium``) take a picture of each view::

    .venv/bin/python scripts/console_screenshots.py [--out docs/img]

A local receiver stands behind one webhook and fails its first calls, so the webhook
view shows failures, retries and a success. Nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from playwright.async_api import Page, expect
from sqlalchemy import update

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from officehub.app import create_app  # noqa: E402
from officehub.crm.models import Card  # noqa: E402
from officehub.kit.config import Settings  # noqa: E402
from officehub.kit.timeutil import utcnow  # noqa: E402
from officehub.migrate import migrate_async  # noqa: E402
from officehub.offices import service as offices  # noqa: E402
from tests.browser import launched_browser, new_page  # noqa: E402
from tests.receiver import Reply, running_receiver  # noqa: E402
from tests.server import running_server  # noqa: E402

PASSWORD = "Ipê-amarelo no quintal 42"  # noqa: S105 (a demo account on a throwaway server)
CLIENTS = [
    ("Maria Souza", "+5511987650001"),
    ("João Pereira", "+5511987650002"),
    ("Ana Costa", "+5521987650003"),
    ("Pedro Alves", "+5531987650004"),
    ("Lucia Ramos", "+5571987650005"),
    ("Rafael Lima", "+5551987650006"),
    ("Beatriz Rocha", "+5561987650007"),
    ("Carlos Melo", "+5581987650008"),
    ("Fernanda Dias", "+5511987650009"),
    ("Gustavo Nunes", "+5519987650010"),
    ("Helena Cruz", "+5541987650011"),
    ("Igor Santos", "+5585987650012"),
    ("Juliana Reis", "+5592987650013"),
    ("Marcos Teixeira", "+5527987650014"),
]


class Office:
    def __init__(self, client: httpx.AsyncClient, key: str) -> None:
        self.client = client
        self.headers = {"x-service-api-key": key}

    async def call(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self.client.request(method, path, headers=self.headers, **kwargs)
        if response.status_code >= 400:
            raise RuntimeError(f"{method} {path}: {response.status_code} {response.text}")
        return response.json()


async def seed(app: FastAPI, office: Office, receiver_url: str, failing_url: str) -> None:
    inbox = await office.call("POST", "/inbox", json={"name": "Atendimento"})
    await office.call(
        "POST",
        "/webhooks",
        json={
            "name": "ERP do escritório",
            "url": failing_url,
            "events": ["crm.lead.moved", "chat.message.received"],
        },
    )
    hook = await office.call(
        "POST",
        "/webhooks",
        json={
            "name": "Planilha de leads",
            "url": receiver_url + "?sheet=1",
            "events": ["crm.lead.created"],
        },
    )
    await office.call("POST", f"/webhooks/{hook['id']}/test")
    channel = await office.call(
        "POST",
        "/integration",
        json={"inboxId": inbox["id"], "type": "WHATSAPP", "name": "WhatsApp"},
    )
    users = [
        await office.call("POST", "/user", json={"name": name, "email": email})
        for name, email in [("Ana Lima", "ana@example.com"), ("Bruno Dias", "bruno@example.com")]
    ]
    tags = [
        await office.call(
            "POST",
            "/tag",
            json={
                "name": name,
                "color": color,
                "inboxId": inbox["id"],
                "modules": ["crm", "conversas"],
            },
        )
        for name, color in [
            ("urgente", "#B42318"),
            ("trabalhista", "#0B4F8A"),
            ("retorno", "#14532D"),
        ]
    ]
    funnel = await office.call(
        "POST",
        "/funnel",
        json={
            "name": "Novos casos",
            "inboxId": inbox["id"],
            "columns": [
                {"name": "Primeiro contato", "timeLimitDays": 2, "showBadgeProgress": True},
                {"name": "Documentos", "timeLimitDays": 5, "showBadgeProgress": True},
                {"name": "Proposta"},
                {"name": "Contrato assinado", "kind": "WON"},
            ],
        },
    )
    columns = funnel["columns"]
    conversations = []
    for i, (name, phone) in enumerate(CLIENTS):
        person = await office.call("POST", "/people", json={"name": name, "phone": phone})
        conversation = await office.call(
            "POST",
            "/conversation",
            json={"personId": person["id"], "inboxId": inbox["id"], "integrationId": channel["id"]},
        )
        conversations.append(conversation)
        if i % 3 == 0:
            await office.call(
                "POST",
                f"/conversation/{conversation['id']}/tags",
                json={"tagId": tags[(i // 3) % 3]["id"]},
            )
        if i < 10:
            card = await office.call(
                "POST",
                "/funnel-column-card",
                json={
                    "columnId": columns[i % 4]["id"],
                    "personId": person["id"],
                    "conversationId": conversation["id"],
                    "userId": users[i % 2]["id"] if i % 5 else None,
                },
            )
            if i in (0, 1, 5):
                async with app.state.sessionmaker() as s:
                    await s.execute(
                        update(Card)
                        .where(Card.id == card["id"])
                        .values(column_changed_at=utcnow() - timedelta(days=3 + i))
                    )
                    await s.commit()
    first = conversations[0]["id"]
    await office.call(
        "POST",
        f"/conversation/{first}/messages/inbound",
        json={"text": "Bom dia! Recebi a notificação do processo; quais são os próximos passos?"},
    )
    await office.call(
        "POST",
        f"/conversation/{first}/messages",
        json={"text": "Bom dia, Maria. Vou verificar o andamento e retorno ainda hoje."},
    )
    await office.call(
        "POST",
        f"/conversation/{first}/messages/inbound",
        json={"text": "Obrigada, fico no aguardo."},
    )
    await office.call(
        "POST",
        "/conversation/note",
        json={
            "conversationId": first,
            "text": "Prazo de contestação: 15 dias úteis a partir de 10/11.",
        },
    )
    await office.call("PATCH", f"/conversation/{first}", json={"assignedUserId": users[0]["id"]})
    # Maria's file: her CPF, the legal area, a ticket and her consent.
    maria = conversations[0]["personId"]
    await office.call("PATCH", f"/people/{maria}", json={"document": "529.982.247-25"})
    area = await office.call("POST", "/legal-areas", json={"name": "Família", "color": "#7A3E9D"})
    await office.call("PATCH", f"/conversation/{first}", json={"legalAreaId": area["id"]})
    status = await office.call("POST", "/ticket-statuses", json={"name": "Em andamento"})
    await office.call(
        "POST",
        "/ticket",
        json={
            "title": "Juntar a certidão de nascimento ao processo",
            "statusId": status["id"],
            "conversationId": first,
        },
    )
    await office.call(
        "POST",
        f"/people/{maria}/consents",
        json={"purpose": "service", "granted": True, "source": "contrato"},
    )
    # Ana Lima signs in with her own account (an administrator): invited, her password set.
    await office.call("PATCH", f"/user/{users[0]['id']}", json={"role": "ADMIN"})
    invite = await office.call("POST", f"/user/{users[0]['id']}/invite")
    accepted = await office.client.post(
        "/auth/invite/accept", json={"token": invite["token"], "password": PASSWORD}
    )
    if accepted.status_code != 200:
        raise RuntimeError(f"accepting the invitation: {accepted.status_code} {accepted.text}")


async def enter_with_key(page: Page, base: str, key: str) -> None:
    """The console as it opens (Portuguese), entered with the office's key."""
    await page.goto(f"{base}/console")
    await page.get_by_text("Integradores: entrar com uma chave de API").click()
    await page.get_by_label("Chave de API").fill(key)
    await page.get_by_role("button", name="Entrar com a chave").click()


async def go_to(page: Page, name: str) -> None:
    """Opens a page of the navigation; on a phone it is behind the "Menu" button."""
    link = page.get_by_role("link", name=name, exact=True)
    if not await link.is_visible():
        await page.get_by_role("button", name="Menu").click()
    await link.click()


async def shoot(page: Page, base: str, key: str, out: Path) -> None:
    await enter_with_key(page, base, key)
    await page.locator(".card .tag").first.wait_for()
    await page.locator(".badge.danger").first.wait_for()
    await page.screenshot(path=out / "console-board.png", full_page=True)

    await go_to(page, "Conversas")
    await page.locator(".conversation-item", has_text="Maria Souza").click()
    await page.locator(".note").first.wait_for()
    await page.evaluate("window.scrollTo(0, 0)")
    await page.screenshot(path=out / "console-conversation.png", full_page=True)

    await go_to(page, "Mapa de clientes")
    await page.locator('path[data-uf="SP"]').hover()
    await page.locator("#map-detail .state-total").wait_for()
    await page.screenshot(path=out / "console-map.png", full_page=True)

    await go_to(page, "Webhooks")
    await page.get_by_role("button", name="Entregas de ERP do escritório").click()
    await page.locator("#delivery-table tbody tr[data-delivery-id]").first.wait_for()
    await page.locator("#delivery-table details").first.locator("summary").click()
    await page.screenshot(path=out / "console-webhooks.png", full_page=True)


async def shoot_signed_in(page: Page, base: str, office: Office, out: Path) -> None:
    """The sign-in page, then Ana Lima's live inbox: a client writes while it is open."""
    await page.goto(f"{base}/console")
    await page.get_by_label("E-mail").wait_for()
    await page.screenshot(path=out / "console-login.png")
    await page.get_by_label("E-mail").fill("ana@example.com")
    await page.get_by_label("Senha").fill(PASSWORD)
    await page.get_by_role("button", name="Entrar com e-mail").click()
    await page.locator("#who").wait_for()
    await go_to(page, "Conversas")
    await page.locator('#live[data-state="on"]').wait_for()
    listed = await office.call("GET", "/conversation", params={"limit": 20})
    writer = listed["data"][-1]  # a client further down the list writes; it rises to the top
    await office.call(
        "POST",
        f"/conversation/{writer['id']}/messages/inbound",
        json={"text": "Boa tarde! A audiência foi remarcada?"},
    )
    await page.locator(".conversation-item", has_text="A audiência foi remarcada?").wait_for()
    await expect(
        page.locator(".conversation-item .name", has_text=re.compile("^…$"))
    ).to_have_count(0, timeout=10_000)
    await page.screenshot(path=out / "console-live.png", full_page=True)


async def shoot_workspace(page: Page, base: str, out: Path, suffix: str = "") -> None:
    """Ana Lima's inbox in three panes (one at a time on a phone) and Maria's file."""
    await page.goto(f"{base}/console")
    await page.get_by_label("E-mail").fill("ana@example.com")
    await page.get_by_label("Senha").fill(PASSWORD)
    await page.get_by_role("button", name="Entrar com e-mail").click()
    await page.locator("#who").wait_for()
    await go_to(page, "Conversas")
    await page.locator(".conversation-item", has_text="Maria Souza").click()
    await page.locator("#message-list .note").wait_for()
    await page.locator(".inbox-file .file-card").wait_for(state="attached")
    await expect(
        page.locator(".conversation-item .name", has_text=re.compile("^…$"))
    ).to_have_count(0, timeout=10_000)
    await page.screenshot(path=out / f"console-inbox{suffix}.png")
    if suffix:
        await page.get_by_role("button", name="Ficha do cliente").click()
        await page.locator(".inbox-file .file-card").wait_for()
        await page.screenshot(path=out / f"console-client-file{suffix}.png")
        return
    await go_to(page, "Clientes")
    await page.locator(".contact-item", has_text="Maria Souza").click()
    await page.locator(".clients-file .file-card").wait_for()
    await page.screenshot(path=out / "console-client-file.png")


async def main(out: Path) -> None:
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite+aiosqlite:///{folder}/officehub.db"
        await migrate_async(url)
        settings = Settings(
            database_url=url,
            data_dir=Path(folder) / "data",
            webhook_allow_private=True,
            worker_poll_seconds=0.2,
            signing_key="screenshots",
        )
        app = create_app(settings, embedded_worker=True)
        down = Reply(503, '{"error":"ERP under maintenance until 18:00"}')
        async with (
            app.router.lifespan_context(app),
            running_receiver(lambda _n: Reply(200, '{"ok":true}')) as receiver,
            running_receiver(lambda _n: down) as failing,
        ):
            async with app.state.sessionmaker() as s:
                made = await offices.create_office(s, "Souza & Lima Advogados")
                key = (await offices.create_api_key(s, made.id, "console")).key
                await s.commit()
            async with running_server(app) as base, httpx.AsyncClient(base_url=base) as client:
                await seed(app, Office(client, key), receiver.url, failing.url)
                await receiver.wait_for(11, seconds=30)
                await failing.wait_for(2, seconds=20)
                await asyncio.sleep(0.5)
                async with launched_browser() as browser:
                    async with new_page(browser, 1280, 860) as page:
                        await shoot(page, base, key, out)
                    async with new_page(browser, 1280, 860) as page:
                        await shoot_signed_in(page, base, Office(client, key), out)
                    async with new_page(browser, 1366, 768) as page:
                        await shoot_workspace(page, base, out)
                    async with new_page(browser, 390, 844) as phone:
                        await shoot_workspace(phone, base, out, "-phone")
                    async with new_page(browser, 390, 844) as phone:
                        await enter_with_key(phone, base, key)
                        await phone.locator(".card .tag").first.wait_for()
                        await phone.screenshot(path=out / "console-phone.png")
    print(f"screenshots written to {out}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    target = parser.parse_args().out
    target.mkdir(parents=True, exist_ok=True)
    asyncio.run(main(target))
