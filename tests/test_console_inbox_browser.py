"""The inbox in three panes and the clients page (issue 42), in Debian's Chromium, acting
as a person of the office: answer a client with a fast message typed with `/`, add a note
(inline in the chat, in another colour), move the client's card from their file, move
through the inbox with the keyboard; the panes never cover each other at 1366x768 nor on
a phone (390x844, one pane at a time); no serious accessibility violation."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, Page, Route, expect

from officehub.contacts.normalize import fold
from tests import factories as f
from tests.accessibility import serious_violations
from tests.accounts_helpers import make_account
from tests.browser import nav_to, new_page
from tests.browser import sign_in as browser_sign_in
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture

TIMEOUT = 10_000
LONG_NAME = "Maria Aparecida dos Santos Albuquerque de Oliveira e Vasconcellos Filha"
LONG_PREVIEW = (
    "Boa tarde, doutora, preciso saber como anda o processo da pensão do meu filho, "
    "obrigada desde já"
)
SCREENSHOTS = os.environ.get("OFFICEHUB_SCREENSHOTS")
"""A folder: the tests save the inbox and the client's file there (docs/img's pictures)."""


async def sign_in(page: Page, server_url: str, email: str) -> None:
    await browser_sign_in(page, server_url, email, who="Beatriz Nogueira", wait_ms=TIMEOUT)


async def inbound(
    http: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, text: str
) -> None:
    answer = await http.post(
        f"/conversation/{conversation_id}/messages/inbound",
        json={"text": text},
        headers=office.headers,
    )
    assert answer.status_code == 201, answer.text


async def shot(page: Page, name: str) -> None:
    if SCREENSHOTS:
        await page.screenshot(path=str(Path(SCREENSHOTS) / name))


async def crowded_inbox(app: FastAPI, office: OfficeFixture) -> tuple[World, list[str]]:
    """A CRM world whose client has a long name and a card, and two more clients with long
    names, each with a conversation whose last message is about 95 characters long."""
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office.id, columns=3)
        world.contact.name = LONG_NAME
        world.contact.search_name = fold(LONG_NAME)
        await f.make_card(s, world.columns[0], world.contact.id, world.conversation.id)
        others = []
        for name in ("José Carlos Pereira da Silva Neto Junqueira Franco", "Ana Lúcia Ferreira"):
            contact = await f.make_contact(s, office.id, name=name)
            others.append(
                (await f.make_conversation(s, office.id, contact.id, world.integration)).id
            )
        await s.commit()
    return world, [world.conversation.id, *others]


async def test_answer_with_a_fast_message_add_a_note_and_move_the_card_from_the_file(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    world, conversation_ids = await crowded_inbox(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        for conversation_id in conversation_ids:
            await inbound(http, office_a, conversation_id, LONG_PREVIEW)
        fast = await http.post(
            "/fast-message",
            json={
                "inboxId": world.inbox.id,
                "title": "Pensão: andamento",
                "kind": "TEXT",
                "text": "O processo da pensão está em andamento; avisaremos cada novidade.",
            },
            headers=office_a.headers,
        )
        assert fast.status_code == 201, fast.text
        _, email = await make_account(http, office_a, "ADMIN")

        async with new_page(browser, 1366, 768) as page:
            await sign_in(page, server_url, email)
            await nav_to(page, "Conversas")
            row = page.locator(
                f'.conversation-item[data-conversation-id="{world.conversation.id}"]'
            )
            await expect(row.locator(".name")).to_have_text(LONG_NAME, timeout=TIMEOUT)
            await expect(row.locator(".unread")).to_have_text("1")
            await row.click()
            await expect(page.get_by_role("heading", name=LONG_NAME, level=2).first).to_be_visible(
                timeout=TIMEOUT
            )
            await expect(row.locator(".unread")).to_have_count(0, timeout=TIMEOUT)

            # A 👍 on the client's message (WhatsApp shows the client the office's reaction).
            like = page.get_by_role("button", name="Curtir")
            await expect(like).to_have_attribute("aria-pressed", "false")
            await like.click()
            await expect(page.locator(".message.inbound .reactions")).to_contain_text(
                "👍", timeout=TIMEOUT
            )
            await expect(like).to_have_attribute("aria-pressed", "true")

            # `/` and a few letters list the fast messages; Enter takes the chosen one.
            reply = page.get_by_label("Resposta")
            await reply.press_sequentially("/andam")
            options = page.get_by_role("listbox", name="Mensagens rápidas").get_by_role("option")
            await expect(options).to_have_count(1, timeout=TIMEOUT)
            await reply.press("Enter")
            await expect(reply).to_have_value(
                "O processo da pensão está em andamento; avisaremos cada novidade."
            )
            await page.get_by_role("button", name="Enviar resposta").click()
            sent = page.locator(".message.outbound")
            await expect(sent).to_contain_text("avisaremos cada novidade", timeout=TIMEOUT)
            await expect(sent).to_have_attribute("data-status", "QUEUED")
            await expect(reply).to_have_value("")

            # A private note: inline in the chat, after the reply, in another colour.
            await page.get_by_role("button", name="Nota interna").click()
            await page.get_by_label("Adicionar uma nota (só a equipe vê)").fill(
                "Cliente ansiosa: ligar na sexta"
            )
            await page.get_by_role("button", name="Adicionar nota").click()
            note = page.locator("#message-list .note")
            await expect(note).to_contain_text("ligar na sexta", timeout=TIMEOUT)
            order = await page.locator("#message-list > li").evaluate_all(
                "items => items.map((i) => i.className)"
            )
            assert order == ["message inbound", "message outbound", "note"], order
            colours = await page.evaluate(
                """() => ['.message.inbound', '.message.outbound', '.note'].map(
                     (s) => getComputedStyle(document.querySelector(s)).backgroundColor)"""
            )
            assert len(set(colours)) == 3, colours

            # The client's file beside the chat: the card, moved to the next column.
            file = page.locator(".inbox-file")
            card = file.locator(f'.file-card[data-column-id="{world.columns[0].id}"]')
            await expect(card).to_contain_text("Etapa 1", timeout=TIMEOUT)
            await expect(file).to_contain_text("+5511987654321")
            assert await serious_violations(page) == []
            await shot(page, "console-inbox.png")
            await file.get_by_label("Mover para").select_option(world.columns[1].id)
            await file.get_by_role("button", name="Mover cartão").click()
            moved = file.locator(f'.file-card[data-column-id="{world.columns[1].id}"]')
            await expect(moved).to_contain_text("Etapa 2", timeout=TIMEOUT)

        messages = (
            await http.get(
                f"/conversation/{world.conversation.id}/messages", headers=office_a.headers
            )
        ).json()["data"]
        assert [(m["direction"], m["text"][:20]) for m in messages] == [
            ("OUTBOUND", "O processo da pensão"),
            ("INBOUND", LONG_PREVIEW[:20]),
        ]
        notes = await http.get(
            "/conversation/notes",
            params={"conversationId": world.conversation.id},
            headers=office_a.headers,
        )
        assert [n["text"] for n in notes.json()["data"]] == ["Cliente ansiosa: ligar na sexta"]
        assert [r["emoji"] for r in messages[1]["reactions"]] == ["👍"]
        card_read = await http.get(
            f"/funnel-column-card/person/{world.contact.id}/conversation/{world.conversation.id}",
            headers=office_a.headers,
        )
        assert card_read.json()["columnId"] == world.columns[1].id


async def boxes(page: Page, selector: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await page.locator(selector).evaluate_all(
        """els => els.filter((e) => e.getClientRects().length).map((e) => {
             const r = e.getBoundingClientRect();
             return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
           })"""
    )
    return found


def overlap(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return bool(
        min(a["right"], b["right"]) - max(a["left"], b["left"]) > 0.5
        and min(a["bottom"], b["bottom"]) - max(a["top"], b["top"]) > 0.5
    )


async def nothing_overflows(page: Page, width: int) -> None:
    assert await page.evaluate("document.documentElement.scrollWidth") <= width
    # Every pane's text stays in its pane: names and previews are cut, never spill.
    spilled = await page.evaluate(
        """() => [...document.querySelectorAll('.pane')].filter((p) => p.getClientRects().length)
             .flatMap((pane) => {
               const edge = pane.getBoundingClientRect();
               return [...pane.querySelectorAll('h2, .name, .preview, .identity, p, button')]
                 .filter((e) => e.getClientRects().length && !e.closest('details:not([open])'))
                 .filter((e) => {
                   const r = e.getBoundingClientRect();
                   return r.right > edge.right + 1 || r.left < edge.left - 1;
                 }).map((e) => `${e.className || e.tagName}: ${e.textContent.trim().slice(0, 30)}`);
             })"""
    )
    assert spilled == [], spilled


async def test_no_pane_covers_another_at_1366_and_on_a_phone_one_pane_at_a_time(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    world, conversation_ids = await crowded_inbox(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        for conversation_id in conversation_ids:
            await inbound(http, office_a, conversation_id, LONG_PREVIEW)
        _, email = await make_account(http, office_a, "ADMIN")

    async with new_page(browser, 1366, 768) as page:
        await sign_in(page, server_url, email)
        await nav_to(page, "Conversas")
        row = page.locator(f'.conversation-item[data-conversation-id="{world.conversation.id}"]')
        await expect(row.locator(".name")).to_have_text(LONG_NAME, timeout=TIMEOUT)
        await row.click()
        await expect(page.locator("#message-list .message")).to_have_count(1, timeout=TIMEOUT)
        await expect(page.locator(".inbox-file .file-card")).to_be_visible(timeout=TIMEOUT)
        panes = await boxes(page, ".inbox > .pane")
        assert len(panes) == 3
        for i, a in enumerate(panes):
            assert 0 <= a["left"] and a["right"] <= 1366, panes
            assert a["bottom"] <= 768, panes  # the page itself does not scroll
            for b in panes[i + 1 :]:
                assert not overlap(a, b), panes
        # The long preview is cut with an ellipsis inside its line.
        preview = row.locator(".preview")
        assert await preview.evaluate("e => e.scrollWidth > e.clientWidth")
        assert await preview.evaluate("e => getComputedStyle(e).textOverflow") == "ellipsis"
        # The composer stays at the bottom of the chat pane, below the messages.
        [chat] = await boxes(page, ".inbox-chat")
        [composer] = await boxes(page, ".composer-area")
        assert chat["bottom"] - composer["bottom"] < 2, (chat, composer)
        await nothing_overflows(page, 1366)
        await shot(page, "console-inbox-1366.png")

    async with new_page(browser, 390, 844) as page:
        await sign_in(page, server_url, email)
        await nav_to(page, "Conversas")
        row = page.locator(f'.conversation-item[data-conversation-id="{world.conversation.id}"]')
        await expect(row.locator(".name")).to_have_text(LONG_NAME, timeout=TIMEOUT)
        assert len(await boxes(page, ".inbox > .pane")) == 1
        await nothing_overflows(page, 390)
        await shot(page, "console-inbox-phone-list.png")
        await row.click()
        await expect(page.locator("#message-list .message")).to_have_count(1, timeout=TIMEOUT)
        await expect(page.locator(".inbox-list")).to_be_hidden()
        assert len(await boxes(page, ".inbox > .pane")) == 1
        await nothing_overflows(page, 390)
        await shot(page, "console-inbox-phone.png")
        await page.get_by_role("button", name="Ficha do cliente").click()
        await expect(page.locator(".inbox-file .file-card")).to_be_visible(timeout=TIMEOUT)
        await expect(page.locator(".inbox-chat")).to_be_hidden()
        assert len(await boxes(page, ".inbox > .pane")) == 1
        await nothing_overflows(page, 390)
        await shot(page, "console-client-file-phone.png")
        await page.get_by_role("button", name="← Voltar").click()
        await expect(page.locator(".inbox-chat")).to_be_visible()
        await page.get_by_role("button", name="← Conversas").click()
        await expect(page.locator(".inbox-list")).to_be_visible()
        await expect(page.locator(".inbox-chat")).to_be_hidden()


async def test_search_filters_and_the_keyboard_move_through_the_inbox_write_and_close(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    world, conversation_ids = await crowded_inbox(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        for conversation_id in conversation_ids:
            await inbound(http, office_a, conversation_id, LONG_PREVIEW)
        _, email = await make_account(http, office_a, "SUPERVISOR", inbox_ids=[world.inbox.id])

        async with new_page(browser, 1366, 768) as page:
            await sign_in(page, server_url, email)
            await nav_to(page, "Conversas")
            items = page.locator(".conversation-item")
            await expect(items).to_have_count(3, timeout=TIMEOUT)
            order = [await items.nth(i).get_attribute("data-conversation-id") for i in range(3)]
            # The search (a name, part of a phone) and the tag filter narrow the list.
            search = page.get_by_label("Buscar conversas")
            await search.fill("ana lucia")
            await expect(items).to_have_count(1, timeout=TIMEOUT)
            await expect(items.locator(".name")).to_have_text("Ana Lúcia Ferreira")
            await search.fill("987654321")
            await expect(items).to_have_count(1, timeout=TIMEOUT)
            await expect(items.locator(".name")).to_have_text(LONG_NAME)
            await search.fill("")
            await expect(items).to_have_count(3, timeout=TIMEOUT)
            await page.get_by_text("Filtros").click()
            await page.get_by_label("Etiqueta").select_option(world.tag.id)
            await expect(items).to_have_count(1, timeout=TIMEOUT)
            await page.get_by_label("Etiqueta").select_option("")
            await expect(items).to_have_count(3, timeout=TIMEOUT)
            await page.get_by_text("Filtros").click()
            # The keys are written in the page.
            await page.get_by_text("Atalhos do teclado").click()
            await expect(page.locator(".shortcuts")).to_contain_text("próxima conversa")
            current = page.locator('.conversation-item[aria-current="true"]')
            await page.keyboard.press("j")
            await expect(current).to_have_attribute(
                "data-conversation-id", str(order[0]), timeout=TIMEOUT
            )
            await page.keyboard.press("j")
            await expect(current).to_have_attribute(
                "data-conversation-id", str(order[1]), timeout=TIMEOUT
            )
            await page.keyboard.press("k")
            await expect(current).to_have_attribute(
                "data-conversation-id", str(order[0]), timeout=TIMEOUT
            )
            await expect(page.locator("#message-list .message")).to_have_count(1, timeout=TIMEOUT)
            await page.keyboard.press("n")
            await expect(page.get_by_label("Adicionar uma nota (só a equipe vê)")).to_be_focused()
            await page.keyboard.press("Escape")
            await page.locator("#conversation-title").focus()
            await page.keyboard.press("r")
            await expect(page.get_by_label("Resposta")).to_be_focused()
            await page.locator("#conversation-title").focus()
            await page.keyboard.press("e")
            await expect(page.locator("#toggle-status")).to_have_text(
                "Reabrir conversa", timeout=TIMEOUT
            )
        closed = await http.get(f"/conversation/{order[0]}", headers=office_a.headers)
        assert closed.json()["status"] == "CLOSED"


async def test_a_note_begun_while_the_next_conversation_loads_keeps_the_focus(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    """`j` opens the next conversation and, once it has loaded, puts the focus on it in the
    list; a person who pressed `n` before the notes came back is writing a note, and the
    late focus must not take them out of it (CI saw it: the note's field lost its focus)."""
    world, conversation_ids = await crowded_inbox(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        for conversation_id in conversation_ids:
            await inbound(http, office_a, conversation_id, LONG_PREVIEW)
        _, email = await make_account(http, office_a, "SUPERVISOR", inbox_ids=[world.inbox.id])

    held = asyncio.Event()
    released = asyncio.Event()

    async def slow(route: Route) -> None:
        # the notes of the conversation being opened come back only once `n` was pressed
        held.set()
        await released.wait()
        await route.continue_()

    async with new_page(browser, 1366, 768) as page:
        await sign_in(page, server_url, email)
        await nav_to(page, "Conversas")
        items = page.locator(".conversation-item")
        await expect(items).to_have_count(3, timeout=TIMEOUT)
        first = await items.nth(0).get_attribute("data-conversation-id")
        await page.route("**/conversation/notes?*", slow)
        await page.evaluate("document.activeElement?.blur()")
        await page.keyboard.press("j")
        current = page.locator('.conversation-item[aria-current="true"]')
        await expect(current).to_have_attribute("data-conversation-id", str(first), timeout=TIMEOUT)
        await asyncio.wait_for(held.wait(), TIMEOUT / 1000)
        await page.keyboard.press("n")
        note = page.get_by_label("Adicionar uma nota (só a equipe vê)")
        await expect(note).to_be_focused()
        await note.press_sequentially("Cliente ligou")
        released.set()
        # the notes arrive and the conversation has loaded: the focus is still the note's
        await expect(page.locator("#message-list .message")).to_have_count(1, timeout=TIMEOUT)
        await page.wait_for_load_state("networkidle")
        await expect(note).to_be_focused()
        await expect(note).to_have_value("Cliente ligou")


async def test_the_clients_page_finds_a_client_and_opens_their_file(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    world, _ = await crowded_inbox(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office_a, "ADMIN")
    for width, height in ((1366, 768), (390, 844)):
        async with new_page(browser, width, height) as page:
            await sign_in(page, server_url, email)
            await nav_to(page, "Clientes", exact=True)
            await expect(page.locator("#contact-list .contact-item")).to_have_count(
                3, timeout=TIMEOUT
            )
            await page.get_by_label("Buscar cliente").fill("vasconcellos")
            found = page.locator("#contact-list .contact-item")
            await expect(found).to_have_count(1, timeout=TIMEOUT)
            await found.click()
            file = page.locator(".clients-file .client-file")
            await expect(file.get_by_role("heading", name=LONG_NAME)).to_be_visible(timeout=TIMEOUT)
            await expect(file.locator(".file-card")).to_contain_text("Etapa 1", timeout=TIMEOUT)
            await expect(file).to_contain_text("+5511987654321")
            assert await serious_violations(page) == []
            await nothing_overflows(page, width)
            await shot(page, f"console-client-file-{width}.png")
            if width == 1366:
                # The client withdraws marketing consent: recorded from the file.
                await file.get_by_role("button", name="Registrar recusa de marketing").click()
                await expect(file).to_contain_text(
                    "Recusou mensagens de marketing.", timeout=TIMEOUT
                )
                await expect(file).to_contain_text("Consentimento retirado (marketing)")
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        read = await http.get(f"/people/{world.contact.id}", headers=office_a.headers)
        assert read.json()["marketingOptOut"] is True


async def test_an_agent_works_the_inbox_and_the_file_without_the_admins_actions(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    world, conversation_ids = await crowded_inbox(app, office_a)
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        await inbound(http, office_a, conversation_ids[0], LONG_PREVIEW)
        _, email = await make_account(http, office_a, "AGENT", inbox_ids=[world.inbox.id])

    async with new_page(browser, 1366, 768) as page:
        await sign_in(page, server_url, email)
        await nav_to(page, "Conversas")
        row = page.locator(f'.conversation-item[data-conversation-id="{world.conversation.id}"]')
        await row.click()
        file = page.locator(".inbox-file .client-file")
        await expect(file.locator(".file-card")).to_contain_text("Etapa 1", timeout=TIMEOUT)
        await expect(file.get_by_role("button", name="Exportar dados (LGPD)")).to_be_visible()
        await expect(file.get_by_role("button", name="Apagar todos os dados")).to_have_count(0)
        await page.get_by_role("button", name="Nota interna").click()
        await page.get_by_label("Adicionar uma nota (só a equipe vê)").fill("Pedir RG")
        await page.get_by_role("button", name="Adicionar nota").click()
        await expect(page.locator("#message-list .note")).to_contain_text(
            "Pedir RG", timeout=TIMEOUT
        )
        await nav_to(page, "Clientes", exact=True)
        await page.get_by_label("Buscar cliente").fill("vasconcellos")
        found = page.locator("#contact-list .contact-item")
        await expect(found).to_have_count(1, timeout=TIMEOUT)
        await found.click()
        await expect(page.locator(".clients-file .file-card")).to_contain_text(
            "Etapa 1", timeout=TIMEOUT
        )
        # Nothing the agent was shown failed.
        assert (await page.locator("#notice").inner_text()).strip() == ""


async def test_a_closed_window_offers_the_approved_templates_and_sends_one(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        inbox = await f.make_inbox(s, office_a.id)
        official = await f.make_integration(
            s, office_a.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-window"
        )
        contact = await f.make_contact(s, office_a.id, name="Rui Prado")
        conversation = await f.make_conversation(s, office_a.id, contact.id, official)
        await s.commit()
    template = {
        "name": "retomar_contato",
        "status": "APPROVED",
        "category": "UTILITY",
        "language": "pt_BR",
        "components": [{"type": "BODY", "text": "Olá {{1}}, temos novidades do seu processo."}],
        "id": "tpl-retomar",
    }
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        put = await http.put(
            f"/integration/{official.id}/whatsapp-templates",
            json={"data": [template]},
            headers=office_a.headers,
        )
        assert put.status_code == 200, put.text
        _, email = await make_account(http, office_a, "ADMIN")

        async with new_page(browser, 1366, 768) as page:
            await sign_in(page, server_url, email)
            await nav_to(page, "Conversas")
            await page.locator(f'[data-conversation-id="{conversation.id}"]').click()
            picker = page.locator(".window-closed")
            await expect(picker).to_contain_text("janela de 24 horas", timeout=TIMEOUT)
            # Files are free-form too: the attach button waits for the client's next message.
            await expect(page.get_by_role("button", name="Anexar arquivo")).to_be_disabled()
            await picker.get_by_label("Modelo").select_option("tpl-retomar")
            await picker.get_by_label("Variável 1").fill("Rui")
            await picker.get_by_role("button", name="Enviar modelo").click()
            sent = page.locator(".message.outbound")
            await expect(sent).to_contain_text("retomar_contato", timeout=TIMEOUT)
            assert (await page.locator("#notice").inner_text()).strip() == ""

        listed = await http.get(
            f"/conversation/{conversation.id}/messages", headers=office_a.headers
        )
        [message] = listed.json()["data"]
        assert (message["direction"], message["templateName"]) == ("OUTBOUND", "retomar_contato")
