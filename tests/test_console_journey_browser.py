"""Issue 42's whole day in one go, in Debian's Chromium, as the person would live it: a
lawyer invited by the office opens the link, chooses a password and is signed in; answers
a client from the inbox with a fast message typed with `/`, adds a note, moves the client's
card from the client's file; then creates an automation rule and a flow from their pages.
Every step is read back through the API. (Each page has its own fuller tests:
test_console_onboarding_browser, test_console_inbox_browser, test_console_rules_browser,
test_console_flows_browser.)"""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, expect

from tests import factories as f
from tests.browser import new_page
from tests.crm_world import make_world
from tests.helpers import OfficeFixture

TIMEOUT = 15_000
PASSWORD = "Ipê amarelo na Paulista"
FAST_TEXT = "O processo da pensão está em andamento; avisaremos cada novidade."


async def test_an_invited_lawyer_joins_answers_notes_moves_the_card_and_builds_a_rule_and_a_flow(
    browser: Browser, server_url: str, app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        world = await make_world(s, office_a.id, columns=3)
        await f.make_card(s, world.columns[0], world.contact.id, world.conversation.id)
        await s.commit()
    h = office_a.headers
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        inbound = await http.post(
            f"/conversation/{world.conversation.id}/messages/inbound",
            json={"text": "Bom dia, como anda a pensão?"},
            headers=h,
        )
        assert inbound.status_code == 201, inbound.text
        fast = await http.post(
            "/fast-message",
            json={
                "inboxId": world.inbox.id,
                "title": "Pensão: andamento",
                "kind": "TEXT",
                "text": FAST_TEXT,
            },
            headers=h,
        )
        assert fast.status_code == 201, fast.text
        body = {"name": "Carla Mendes", "email": "carla@escritorio.example", "role": "ADMIN"}
        made = await http.post("/user", json=body, headers=h)
        assert made.status_code == 201, made.text
        invite = await http.post(f"/user/{made.json()['id']}/invite", headers=h)
        assert invite.status_code == 201, invite.text

        async with new_page(browser, 1366, 768) as page:
            # Joining: the link, a password, signed in.
            await page.goto(f"{server_url}/console/#invite={invite.json()['token']}")
            await page.get_by_label("Nova senha", exact=True).fill(PASSWORD)
            await page.get_by_label("Repita a nova senha").fill(PASSWORD)
            await page.get_by_role("button", name="Salvar a senha e entrar").click()
            await expect(page.locator("#who")).to_have_text(
                "Carla Mendes · administrador", timeout=TIMEOUT
            )

            # The inbox: a fast message with `/`, a note, the card moved from the file.
            await page.get_by_role("link", name="Conversas").click()
            await page.locator(
                f'.conversation-item[data-conversation-id="{world.conversation.id}"]'
            ).click()
            # The client's message read first, as a person does.
            await expect(page.locator("#message-list")).to_contain_text(
                "como anda a pensão", timeout=TIMEOUT
            )
            reply = page.get_by_label("Resposta")
            await reply.press_sequentially("/andam")
            await expect(
                page.get_by_role("listbox", name="Mensagens rápidas").get_by_role("option")
            ).to_have_count(1, timeout=TIMEOUT)
            await reply.press("Enter")
            await expect(reply).to_have_value(FAST_TEXT)
            await page.get_by_role("button", name="Enviar resposta").click()
            await expect(page.locator(".message.outbound")).to_contain_text(
                "avisaremos cada novidade", timeout=TIMEOUT
            )
            await page.get_by_role("button", name="Nota interna").click()
            await page.get_by_label("Adicionar uma nota (só a equipe vê)").fill("Ligar na sexta")
            await page.get_by_role("button", name="Adicionar nota").click()
            await expect(page.locator("#message-list .note")).to_contain_text(
                "Ligar na sexta", timeout=TIMEOUT
            )
            file = page.locator(".inbox-file")
            await file.get_by_label("Mover para").select_option(world.columns[1].id)
            await file.get_by_role("button", name="Mover cartão").click()
            await expect(
                file.locator(f'.file-card[data-column-id="{world.columns[1].id}"]')
            ).to_be_visible(timeout=TIMEOUT)

            # A rule from its page: a card reaching the third column is tagged.
            await page.get_by_role("link", name="Automações").click()
            await page.get_by_role("button", name="Nova regra").click()
            form = page.locator(".rule-form")
            await form.get_by_label("Nome").fill("Etiquetar quem chega ao fim")
            await form.get_by_label("Quando acontecer").select_option(
                label="Um cartão muda de coluna"
            )
            await form.get_by_label("O cartão entrou na coluna").select_option(
                label="Vendas \u203a Etapa 3"
            )
            await form.get_by_label("Ação 1").select_option(label="Etiquetar a conversa")
            await form.get_by_label("Etiqueta").select_option(label=world.tag.name)
            await form.get_by_role("button", name="Criar a regra").click()
            await expect(
                page.locator("tr", has_text="Etiquetar quem chega ao fim")
            ).to_contain_text("Ativa", timeout=TIMEOUT)

            # A flow from its page: one question, saved.
            await page.get_by_role("link", name="Fluxos").click()
            await page.get_by_role("button", name="Novo fluxo").click()
            new = page.get_by_role("region", name="Novo fluxo")
            await new.get_by_label("Nome").fill("Boas-vindas")
            await new.get_by_label("Caixa de entrada").select_option(label=world.inbox.name)
            await new.get_by_role("button", name="Criar o fluxo").click()
            first = page.locator('section.step-card[data-step-id="inicio"]')
            await first.get_by_label("Mensagem").fill("Olá! Em que podemos ajudar?")
            await page.get_by_role("button", name="Salvar o fluxo").click()
            await expect(page.locator("#status")).to_contain_text(
                "Fluxo salvo: Boas-vindas.", timeout=TIMEOUT
            )

        conversation = f"/conversation/{world.conversation.id}"
        messages = (await http.get(f"{conversation}/messages", headers=h)).json()["data"]
        assert [m["direction"] for m in messages] == ["OUTBOUND", "INBOUND"]
        assert messages[0]["text"] == FAST_TEXT
        notes = await http.get(
            "/conversation/notes", params={"conversationId": world.conversation.id}, headers=h
        )
        assert [n["text"] for n in notes.json()["data"]] == ["Ligar na sexta"]
        card = await http.get(
            f"/funnel-column-card/person/{world.contact.id}/conversation/{world.conversation.id}",
            headers=h,
        )
        assert card.json()["columnId"] == world.columns[1].id
        [rule] = (await http.get("/automation-rules", headers=h)).json()["data"]
        assert rule["conditions"] == {"toFunnelColumnId": world.columns[2].id}
        assert rule["actions"] == [
            {"action": "TAG_CONVERSATION", "actionParams": {"tagId": world.tag.id}}
        ]
        [flow] = (await http.get("/flow", headers=h)).json()["data"]
        assert flow["name"] == "Boas-vindas"
        steps = {step["id"]: step for step in flow["content"]["steps"]}
        assert steps["inicio"]["content"] == "Olá! Em que podemos ajudar?"
