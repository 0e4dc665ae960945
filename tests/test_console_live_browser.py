"""The live inbox in Debian's Chromium (issue 29): people signed in with their own
accounts at once see a client's message appear without reloading, only where their role
and inboxes let them; an agent answers with a fast message, quoting the client; the
delivery status the platform reports changes on screen; a new message in one's own
conversation rings and notifies."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Browser, Locator, Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from tests import factories as f
from tests.accounts_helpers import PASSWORD, make_account
from tests.browser import new_page
from tests.helpers import OfficeFixture
from tests.whatsapp_world import (
    notification,
    official_integration,
    post_notification,
    status,
    worker,
)
from tests.whatsapp_world import text_message as client_text

TIMEOUT = 10_000
LIVE = 15_000
"""What arrives by the stream: the hub reads at each commit that emitted. Half its safety
read (30 s), so an event left to that read fails here (it did on SQLite: a savepoint's
release woke the hub before the commit, tests/test_wakeup.py)."""


# Browser APIs the test watches (not the console's code): the notifications shown and
# the tones started, with the permission already given.
WATCH_ALERTS = """
window.__notified = [];
window.__tones = 0;
class FakeNotification {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) {
    window.__notified.push({ title, body: options?.body });
    document.documentElement.dataset.notified = String(window.__notified.length);
  }
  close() {}
}
window.Notification = FakeNotification;
const start = OscillatorNode.prototype.start;
OscillatorNode.prototype.start = function (...args) {
  window.__tones += 1;
  return start.apply(this, args);
};
"""


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The official channel's Cloud API is the local stand-in (tests/whatsapp_platform.py)."""
    return whatsapp_settings


@asynccontextmanager
async def signed_in_console(
    browser: Browser, server_url: str, email: str, role_text: str
) -> AsyncIterator[Page]:
    """A person's own browser context, signed in with email and password (Portuguese),
    on the conversations with the live stream open."""
    async with new_page(browser) as page:
        await page.add_init_script(WATCH_ALERTS)
        await page.goto(f"{server_url}/console")
        await page.get_by_label("E-mail").fill(email.upper())
        await page.get_by_label("Senha").fill(PASSWORD)
        await page.get_by_role("button", name="Entrar com e-mail").click()
        who = page.locator("#who")
        await expect(who).to_have_text(f"Beatriz Nogueira · {role_text}", timeout=TIMEOUT)
        await page.get_by_role("link", name="Conversas").click()
        await expect(page.locator("#live")).to_have_attribute("data-state", "on", timeout=TIMEOUT)
        await expect(page.locator("#live")).to_have_text("Ao vivo")
        yield page


def item(page: Page, text: str) -> Locator:
    return page.locator(".conversation-item", has_text=text)


def by_id(page: Page, conversation_id: str) -> Locator:
    return page.locator(f'.conversation-item[data-conversation-id="{conversation_id}"]')


async def test_a_client_message_appears_live_only_where_allowed_and_its_status_moves(
    browser: Browser,
    server_url: str,
    app: FastAPI,
    settings: Settings,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    family = await official_integration(session, office_a.id)
    labour_inbox = await f.make_inbox(session, office_a.id, name="Trabalhista")
    labour = await f.make_integration(session, office_a.id, labour_inbox.id, type="WEBCHAT")
    labour_contact = await f.make_contact(
        session, office_a.id, name="Cliente Trabalhista", phone="+5521987650000"
    )
    await session.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, admin_email = await make_account(http, office_a, "ADMIN")
        agent_id, agent_email = await make_account(
            http, office_a, "AGENT", inbox_ids=[family.inbox_id]
        )
        _, other_email = await make_account(http, office_a, "AGENT", inbox_ids=[labour_inbox.id])
        fast = await http.post(
            "/fast-message",
            json={
                "inboxId": family.inbox_id,
                "title": "Pensão: documentos",
                "kind": "TEXT",
                "text": "Para a pensão, envie RG, CPF e a certidão de nascimento.",
            },
            headers=office_a.headers,
        )
        assert fast.status_code == 201, fast.text

        async with (
            signed_in_console(browser, server_url, admin_email, "administrador") as admin,
            signed_in_console(browser, server_url, agent_email, "atendente") as agent,
            signed_in_console(browser, server_url, other_email, "atendente") as other,
        ):
            # A client writes on WhatsApp to the family inbox.
            text = "Olá, preciso de ajuda com a pensão"
            answer = await post_notification(
                http, family.id, notification([client_text("wamid.CLIENT1", body=text)])
            )
            assert answer.status_code == 200, answer.text
            for page in (admin, agent):
                row = item(page, text)
                await expect(row).to_be_visible(timeout=LIVE)
                await expect(row.locator(".channel")).to_have_text("WhatsApp")
                await expect(row.locator(".unread")).to_have_text("1")
                await expect(row.locator(".name")).to_have_text("Maria Souza")
            conversation_id = await conversation_of(item(admin, text))

            # The other inbox's agent sees their own client live, and never this one.
            labour_conversation = await http.post(
                "/conversation",
                json={
                    "personId": labour_contact.id,
                    "inboxId": labour_inbox.id,
                    "integrationId": labour.id,
                },
                headers=office_a.headers,
            )
            assert labour_conversation.status_code == 201, labour_conversation.text
            inbound = await http.post(
                f"/conversation/{labour_conversation.json()['id']}/messages/inbound",
                json={"text": "Fui demitido ontem"},
                headers=office_a.headers,
            )
            assert inbound.status_code == 201, inbound.text
            await expect(item(other, "Fui demitido ontem")).to_be_visible(timeout=LIVE)
            await expect(item(admin, "Fui demitido ontem")).to_be_visible(timeout=LIVE)
            await expect(item(other, text)).to_have_count(0)
            await expect(item(agent, "Fui demitido ontem")).to_have_count(0)

            # The agent opens it (read: the badge goes), answers with a fast message,
            # quoting the client.
            await by_id(agent, conversation_id).click()
            await expect(agent.get_by_role("heading", name="Maria Souza")).to_be_visible(
                timeout=TIMEOUT
            )
            await expect(agent.locator("#conversation-channel")).to_have_text("Canal: WhatsApp")
            await expect(by_id(agent, conversation_id).locator(".unread")).to_have_count(
                0, timeout=TIMEOUT
            )
            await agent.get_by_role("button", name=f"Responder a “{text}”").click()
            await expect(agent.locator("#reply-quote")).to_contain_text(text)
            reply = agent.get_by_label("Resposta")
            await reply.press_sequentially("/pens")
            options = agent.get_by_role("listbox", name="Mensagens rápidas").get_by_role("option")
            await expect(options).to_have_count(1, timeout=TIMEOUT)
            await expect(options.first).to_contain_text("Pensão: documentos")
            await reply.press("Enter")
            await expect(reply).to_have_value(
                "Para a pensão, envie RG, CPF e a certidão de nascimento."
            )
            await agent.get_by_role("button", name="Enviar resposta").click()
            sent = agent.locator(".message.outbound")
            await expect(sent).to_have_attribute("data-status", "QUEUED", timeout=TIMEOUT)
            await expect(sent.locator(".badge")).to_have_text("Na fila")
            await expect(sent.locator(".quoted")).to_contain_text(text)

            listed = await http.get(
                f"/conversation/{conversation_id}/messages",
                headers=office_a.headers,
            )
            [stored] = [m for m in listed.json()["data"] if m["direction"] == "OUTBOUND"]
            [received] = [m for m in listed.json()["data"] if m["direction"] == "INBOUND"]
            assert stored["replyTo"] == received["id"]
            assert stored["text"].startswith("Para a pensão")

            # The dispatcher sends it to the platform (the stand-in), which takes it; then
            # the platform says delivered, then failed: the screen follows, no reload.
            assert await worker(app, settings).run_once() == 1
            await expect(sent).to_have_attribute("data-status", "SENT", timeout=LIVE)
            await expect(sent.locator(".badge")).to_have_text("Enviada")
            listed = await http.get(
                f"/conversation/{conversation_id}/messages", headers=office_a.headers
            )
            [wamid] = [m["externalId"] for m in listed.json()["data"] if m["id"] == stored["id"]]
            delivered = notification(statuses=[status(wamid, "delivered")])
            assert (await post_notification(http, family.id, delivered)).status_code == 200
            await expect(sent).to_have_attribute("data-status", "DELIVERED", timeout=LIVE)
            await expect(sent.locator(".badge")).to_have_text("Entregue")
            error = {"code": 131026, "title": "Message undeliverable"}
            failed = notification(statuses=[status(wamid, "failed", [error])])
            assert (await post_notification(http, family.id, failed)).status_code == 200
            await expect(sent).to_have_attribute("data-status", "FAILED", timeout=LIVE)
            await expect(sent.locator(".error-text")).to_contain_text(
                "Não entregue: 131026 · Message undeliverable"
            )
            await expect(admin.locator(".message")).to_have_count(0)  # admin opened nothing

            # The admin gives the conversation to the agent: the agent's list says so;
            # the agent turned alerts on, so the client's next message rings.
            await agent.get_by_role("button", name="Ativar alertas").click()
            await expect(agent.locator("#alerts")).to_have_text("Alertas ativados")
            assigned = await http.patch(
                f"/conversation/{conversation_id}",
                json={"assignedUserId": agent_id},
                headers=office_a.headers,
            )
            assert assigned.status_code == 200, assigned.text
            await expect(by_id(agent, conversation_id)).to_contain_text(
                "Beatriz Nogueira", timeout=LIVE
            )
            await expect(agent.locator("#conversation-state")).to_contain_text(
                "atribuída a Beatriz Nogueira"
            )
            again = "Obrigada, vou mandar os documentos"
            answer = await post_notification(
                http, family.id, notification([client_text("wamid.CLIENT2", body=again)])
            )
            assert answer.status_code == 200
            await expect(agent.locator(".message.inbound", has_text=again)).to_be_visible(
                timeout=LIVE
            )
            await expect(agent.locator("html")).to_have_attribute(
                "data-notified", "1", timeout=LIVE
            )
            assert await agent.evaluate("window.__notified") == [
                {"title": "Nova mensagem de Maria Souza", "body": again}
            ]
            assert await agent.evaluate("window.__tones") == 1
            # Not the admin's conversation: no alert there.
            await expect(item(admin, again)).to_be_visible(timeout=LIVE)
            assert await admin.evaluate("window.__notified") == []


async def conversation_of(row: Locator) -> str:
    ident = await row.get_attribute("data-conversation-id")
    assert ident
    return str(ident)


async def test_sign_in_with_email_and_password_shows_who_sends_the_csrf_token_and_signs_out(
    page: Page, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id, type="WEBCHAT")
    contact = await f.make_contact(session, office_a.id, name="Rita Paiva", phone="+5531987650001")
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        user_id, email = await make_account(http, office_a, "SUPERVISOR", inbox_ids=[inbox.id])

    await page.goto(f"{server_url}/console")
    await page.get_by_label("E-mail").fill(email)
    await page.get_by_label("Senha").fill("not the password")
    await page.get_by_role("button", name="Entrar com e-mail").click()
    await expect(page.get_by_role("alert")).to_contain_text("401", timeout=TIMEOUT)
    await page.get_by_label("Senha").fill(PASSWORD)
    await page.get_by_role("button", name="Entrar com e-mail").click()
    await expect(page.locator("#who")).to_have_text(
        "Beatriz Nogueira · supervisor", timeout=TIMEOUT
    )
    # The session is an HttpOnly cookie; the tab keeps only the CSRF token.
    assert await page.evaluate("document.cookie") == ""
    assert await page.evaluate("Object.keys(sessionStorage)") == ["officehub.csrfToken"]

    # A change (a note) goes with the CSRF token and is recorded as this user's.
    await page.get_by_role("link", name="Conversas").click()
    await by_id(page, conversation.id).click()
    await page.get_by_role("button", name="Nota interna").click()
    await page.get_by_label("Adicionar uma nota (só a equipe vê)").fill("Ligar amanhã às 10h")
    await page.get_by_role("button", name="Adicionar nota").click()
    await expect(page.locator(".note")).to_contain_text("Ligar amanhã às 10h", timeout=TIMEOUT)
    await expect(page.locator(".note .meta")).to_contain_text("Beatriz Nogueira")
    notes = await page.request.get(
        f"{server_url}/conversation/notes?conversationId={conversation.id}"
    )
    assert notes.status == 200
    [note] = (await notes.json())["data"]
    assert (note["text"], note["userId"]) == ("Ligar amanhã às 10h", user_id)
    # Without the token the same session may not change anything.
    refused = await page.request.post(
        f"{server_url}/conversation/note",
        data={"conversationId": conversation.id, "text": "sem token"},
    )
    assert refused.status == 403 and (await refused.json())["code"] == "CSRF_FAILED"

    # Signing out ends the session on the server, not only in the tab.
    await page.get_by_role("button", name="Sair").click()
    await expect(page.get_by_label("Senha")).to_be_visible(timeout=TIMEOUT)
    assert await page.evaluate("sessionStorage.length") == 0
    assert (await page.request.get(f"{server_url}/me")).status == 401
