"""The console's settings pages (issue 42) in Chromium, in Portuguese, acting as a person:
an ADMIN creates, edits and deletes on each page (inboxes and channels, tags, legal areas,
fast messages, business hours, SLAs, case-notice settings, retention), each change read
back through the API; a refusal of the API is said in Portuguese at the field it names;
a SUPERVISOR and an AGENT are offered only the writes their role may make; every page has
no serious axe violation and nothing wider than the screen at 1366x768 and 390x844."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import httpx
from playwright.async_api import Page, expect

from tests.accessibility import serious_violations
from tests.accounts_helpers import PASSWORD, make_account
from tests.browser import nav_to
from tests.helpers import OfficeFixture
from tests.test_console_browser import TIMEOUT

PAGES = ["settings", "inboxes", "tags", "areas", "fast", "hours", "sla", "notice-settings",
         "retention"]  # fmt: skip


async def sign_in(page: Page, server_url: str, email: str) -> list[str]:
    """Signs in with email and password; the page's script errors are collected."""
    errors: list[str] = []
    page.set_default_timeout(TIMEOUT)
    page.on("pageerror", lambda error: errors.append(str(error)))
    await page.goto(f"{server_url}/console")
    await page.get_by_label("E-mail").fill(email)
    await page.get_by_label("Senha").fill(PASSWORD)
    await page.get_by_role("button", name="Entrar com e-mail").click()
    # signed in: the sign-out button (the nav is folded behind "Menu" on a phone)
    await expect(page.locator("#logout")).to_be_visible(timeout=TIMEOUT)
    return errors


async def person(server_url: str, office: OfficeFixture, role: str, inboxes: list[str]) -> str:
    async with httpx.AsyncClient(base_url=server_url, timeout=15) as http:
        _, email = await make_account(http, office, role, inbox_ids=inboxes)
    return email


async def listed(client: httpx.AsyncClient, office: OfficeFixture, path: str) -> list[Any]:
    r = await client.get(path, headers=office.headers, params={"limit": 100})
    assert r.status_code == 200, r.text
    data: list[Any] = r.json()["data"]
    return data


async def open_page(page: Page, name: str, title: str) -> None:
    await page.goto(page.url.split("#")[0] + f"#{name}")
    await expect(page.get_by_role("heading", level=1, name=title)).to_be_visible(timeout=TIMEOUT)


async def add(page: Page, button: str) -> None:
    await page.get_by_role("button", name=button, exact=True).click()


async def save(page: Page, what: str = "Criado com sucesso.") -> None:
    # the status line of the previous save may still be shown (it fades after 8 s)
    await page.evaluate("document.getElementById('status').textContent = ''")
    await page.get_by_role("button", name="Salvar", exact=True).click()
    await expect(page.locator("#status")).to_have_text(what, timeout=TIMEOUT)


async def delete(page: Page, name: str) -> None:
    await page.get_by_role("button", name=f"Excluir {name}", exact=True).click()
    await page.get_by_role("button", name="Confirmar exclusão").click()
    await expect(page.locator("#status")).to_contain_text(f"{name} excluído", timeout=TIMEOUT)


async def test_an_admin_sets_up_inboxes_channels_tags_and_legal_areas_from_their_pages(
    page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    email = await person(server_url, office_a, "ADMIN", [])
    errors = await sign_in(page, server_url, email)
    await nav_to(page, "Configurações")
    await expect(page.get_by_role("heading", level=1, name="Configurações")).to_be_visible()
    await page.get_by_role("link", name="Caixas de entrada e canais").click()
    await expect(
        page.get_by_role("heading", level=1, name="Caixas de entrada e canais")
    ).to_be_visible()

    # an inbox: created, renamed
    await add(page, "Nova caixa de entrada")
    await page.get_by_label("Nome").fill("Atendimento")
    await page.get_by_label("Distribuição").select_option(label="Rodízio")
    await save(page)
    [inbox] = await listed(client, office_a, "/inbox")
    assert inbox["name"] == "Atendimento" and inbox["assignment"]["policy"] == "ROUND_ROBIN"
    await page.get_by_role("button", name="Editar Atendimento").click()
    await page.get_by_label("Nome").fill("Atendimento geral")
    await save(page, "Alterações salvas.")
    [inbox] = await listed(client, office_a, "/inbox")
    assert inbox["name"] == "Atendimento geral"

    # the official WhatsApp: the values to paste into Meta's platform
    await add(page, "Novo canal")
    await page.get_by_label("Tipo").select_option(label="WhatsApp oficial (API da Meta)")
    await page.get_by_label("Nome").fill("WhatsApp do escritório")
    await page.get_by_label("Identificador do aparelho").fill("aparelho-1")
    await page.get_by_label("ID do número de telefone").fill("1234567890")
    await page.get_by_label("ID da conta do WhatsApp Business").fill("9876543210")
    await page.get_by_label("Token de acesso").fill("EAAG-token-de-teste")
    await page.get_by_label("Chave secreta do aplicativo").fill("segredo-do-app")
    await page.get_by_label("Token de verificação").fill("ipe-amarelo-42")
    await save(page)
    [official] = await listed(client, office_a, "/integration")
    assert official["type"] == "WHATSAPP_OFFICIAL" and official["whatsapp"]["verifyTokenSet"]
    paste = page.locator(".channel-paste")
    await expect(paste).to_contain_text(f"{server_url}/channels/whatsapp/{official['id']}/webhook")
    await expect(paste).to_contain_text("O token de verificação que você salvou")
    await expect(paste.get_by_role("button", name="Testar a conexão")).to_be_visible()

    # the web chat: the snippet; a bad origin is refused at its field, in Portuguese
    await add(page, "Novo canal")
    await page.get_by_label("Tipo").select_option(label="Chat do site")
    await page.get_by_label("Nome").fill("Chat do site")
    await page.get_by_label("Sites autorizados").fill("http://escritorio.example")
    await page.get_by_role("button", name="Salvar", exact=True).click()
    await expect(page.locator("#notice")).to_have_attribute(
        "data-code", "VALIDATION_ERROR", timeout=TIMEOUT
    )
    field_error = page.locator(".settings-editor .field-error")
    await expect(field_error).to_contain_text("Endereço inválido")
    await page.get_by_label("Sites autorizados").fill("https://escritorio.example")
    await save(page)
    webchat = next(
        c for c in await listed(client, office_a, "/integration") if c["type"] == "WEBCHAT"
    )
    snippet = f'<script src="{server_url}/webchat/{webchat["id"]}/widget.js" async></script>'
    await expect(page.locator("pre.paste")).to_have_text(snippet)
    await delete(page, "Chat do site")
    assert [c["id"] for c in await listed(client, office_a, "/integration")] == [official["id"]]

    # tags
    await open_page(page, "tags", "Etiquetas")
    await add(page, "Nova etiqueta")
    await page.get_by_label("Nome").fill("   ")
    await page.get_by_role("button", name="Salvar", exact=True).click()
    await expect(page.locator(".settings-editor .field-error")).to_have_text(
        "Preencha este campo.", timeout=TIMEOUT
    )
    await page.get_by_label("Nome").fill("Urgente")
    await page.get_by_role("checkbox", name="Funil").check()
    await save(page)
    [tag] = await listed(client, office_a, "/tag")
    assert tag["name"] == "Urgente" and set(tag["modules"]) == {"conversas", "crm"}
    assert tag["inboxId"] == inbox["id"]
    await page.get_by_role("button", name="Editar Urgente").click()
    await page.get_by_label("Nome").fill("Muito urgente")
    await page.get_by_role("checkbox", name="Conversas").uncheck()
    await save(page, "Alterações salvas.")
    [tag] = await listed(client, office_a, "/tag")
    assert tag["name"] == "Muito urgente" and tag["modules"] == ["crm"]
    await delete(page, "Muito urgente")
    assert await listed(client, office_a, "/tag") == []

    # legal areas: the defaults cannot be changed, the office's own can
    await open_page(page, "areas", "Áreas do direito")
    defaults = await listed(client, office_a, "/legal-areas")
    await expect(page.locator("#view-areas table.settings-table tbody tr")).to_have_count(
        len(defaults)
    )
    await expect(page.get_by_role("button", name="Editar", exact=False)).to_have_count(0)
    await add(page, "Nova área")
    await page.get_by_label("Nome").fill("Direito digital")
    await save(page)
    await page.get_by_role("button", name="Editar Direito digital").click()
    await page.get_by_label("Nome").fill("Direito digital e LGPD")
    await save(page, "Alterações salvas.")
    own = [a for a in await listed(client, office_a, "/legal-areas") if a["officeId"]]
    assert [a["name"] for a in own] == ["Direito digital e LGPD"]
    await delete(page, "Direito digital e LGPD")
    assert [a for a in await listed(client, office_a, "/legal-areas") if a["officeId"]] == []
    assert errors == []


async def test_an_admin_sets_fast_messages_hours_slas_notices_and_retention_from_their_pages(
    page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    h = office_a.headers
    inbox = (await client.post("/inbox", json={"name": "Atendimento"}, headers=h)).json()
    email = await person(server_url, office_a, "ADMIN", [inbox["id"]])
    errors = await sign_in(page, server_url, email)

    # fast messages: a text, turned into a sequence, deleted
    await open_page(page, "fast", "Mensagens rápidas")
    await add(page, "Nova mensagem rápida")
    await page.get_by_label("Título").fill("boasvindas")
    await page.get_by_label("Texto", exact=True).fill("Olá! Recebemos sua mensagem.")
    await save(page)
    [fast] = await listed(client, office_a, "/fast-message")
    assert fast["kind"] == "TEXT" and fast["text"] == "Olá! Recebemos sua mensagem."
    await page.get_by_role("button", name="Editar boasvindas").click()
    await page.get_by_label("Tipo").select_option(label="Sequência")
    await page.get_by_label("Mensagens da sequência").fill(
        "Olá!\nIMAGE https://escritorio.example/logo.png\nEm que podemos ajudar?"
    )
    await save(page, "Alterações salvas.")
    [fast] = await listed(client, office_a, "/fast-message")
    assert fast["kind"] == "SEQUENCE"
    assert [(b["kind"], b["text"] or b["mediaUrl"]) for b in fast["blocks"]] == [
        ("TEXT", "Olá!"),
        ("IMAGE", "https://escritorio.example/logo.png"),
        ("TEXT", "Em que podemos ajudar?"),
    ]
    await delete(page, "boasvindas")
    assert await listed(client, office_a, "/fast-message") == []

    # business hours: Monday 09:00-18:00, a closed day typed dd/mm/aaaa (a bad one refused)
    await open_page(page, "hours", "Horário de atendimento")
    await page.get_by_label("Segunda: abre às").fill("09:00")
    await page.get_by_label("Segunda: fecha às").fill("18:00")
    await page.get_by_label("Dias fechados").fill("24/12/2026, 31/02/2026")
    await page.get_by_role("button", name="Salvar", exact=True).click()
    await expect(page.locator("#view-hours .field-error")).to_have_text(
        '"31/02/2026" não é uma data no formato dd/mm/aaaa.', timeout=TIMEOUT
    )
    await page.get_by_label("Dias fechados").fill("24/12/2026, 31/12/2026")
    await page.get_by_label("Mensagem de ausência").fill("Voltamos às 9h.")
    await save(page, "Alterações salvas.")
    hours = (await client.get(f"/inbox/{inbox['id']}/business-hours", headers=h)).json()
    assert hours["week"] == [{"day": 0, "open": "09:00", "close": "18:00"}]
    assert hours["closedDates"] == ["2026-12-24", "2026-12-31"]
    assert hours["awayMessage"]["text"] == "Voltamos às 9h."
    await expect(page.get_by_label("Dias fechados")).to_have_value("24/12/2026, 31/12/2026")

    # SLAs: created, a refused value said at its field, edited, deleted
    await open_page(page, "sla", "Prazos de atendimento (SLA)")
    await add(page, "Novo prazo")
    await page.get_by_label("Prioridade").select_option(label="alta")
    await page.get_by_label("Primeira resposta (min)").fill("15")
    await save(page)
    [sla] = await listed(client, office_a, "/sla-policies")
    assert sla["priority"] == "HIGH" and sla["firstResponseMinutes"] == 15
    name = "Atendimento · alta"
    await page.get_by_role("button", name=f"Editar {name}").click()
    await page.get_by_label("Solução (dias úteis)").fill("400")
    await page.get_by_role("button", name="Salvar", exact=True).click()
    await expect(page.locator("#view-sla .field-error")).to_have_text(
        "O número está fora do intervalo permitido.", timeout=TIMEOUT
    )
    await page.get_by_label("Solução (dias úteis)").fill("3")
    await save(page, "Alterações salvas.")
    [sla] = await listed(client, office_a, "/sla-policies")
    assert sla["resolutionBusinessDays"] == 3
    await delete(page, name)
    assert await listed(client, office_a, "/sla-policies") == []

    # case-notice settings: decisions go out on their own; quiet hours off
    await open_page(page, "notice-settings", "Configurações dos avisos de processos")
    await page.get_by_label("Decisões").select_option(label="Enviar automaticamente")
    await page.get_by_label("Não enviar em horário de descanso").uncheck()
    await save(page, "Alterações salvas.")
    notice = (await client.get("/case-notice-settings", headers=h)).json()
    assert notice["categories"]["decision"] == "SEND" and notice["quietHours"]["enabled"] is False

    # retention: 90 days for closed conversations, then off again
    await open_page(page, "retention", "Retenção de dados")
    await page.get_by_label("Conversas encerradas (dias)").fill("90")
    await save(page, "Alterações salvas.")
    office = (await client.get("/office", headers=h)).json()
    assert office["retentionDays"] == {"closedConversations": 90, "webhookDeliveries": None}
    await page.get_by_label("Conversas encerradas (dias)").fill("")
    await save(page, "Alterações salvas.")
    office = (await client.get("/office", headers=h)).json()
    assert office["retentionDays"]["closedConversations"] is None
    assert errors == []


async def _office_with_settings(client: httpx.AsyncClient, office: OfficeFixture) -> str:
    """An inbox with an official WhatsApp, a web chat, a tag, a fast message, a legal
    area of the office's, an SLA, a case of a client and a ticket: every page has rows."""
    h = office.headers

    async def made(path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = await client.post(path, json=body, headers=h)
        assert r.status_code == 201, r.text
        found: dict[str, Any] = r.json()
        return found

    inbox = await made("/inbox", {"name": "Atendimento"})
    whatsapp = {
        "phoneNumberId": "1234567890",
        "businessAccountId": "9876543210",
        "accessToken": "EAAG-token",
        "appSecret": "segredo",
        "verifyToken": "ipe-42",
    }
    await made(
        "/integration",
        {
            "inboxId": inbox["id"],
            "type": "WHATSAPP_OFFICIAL",
            "name": "WhatsApp do escritório",
            "deviceId": "aparelho-1",
            "whatsapp": whatsapp,
        },
    )
    await made(
        "/integration",
        {
            "inboxId": inbox["id"],
            "type": "WEBCHAT",
            "name": "Chat do site",
            "webchat": {"allowedOrigins": ["https://escritorio.example"]},
        },
    )
    await made(
        "/tag",
        {
            "inboxId": inbox["id"],
            "name": "Urgente",
            "color": "#B42318",
            "modules": ["conversas", "crm"],
        },
    )
    await made(
        "/fast-message",
        {
            "inboxId": inbox["id"],
            "title": "boasvindas",
            "kind": "TEXT",
            "text": "Olá! Recebemos sua mensagem e já vamos responder.",
        },
    )
    await made("/legal-areas", {"name": "Direito digital", "color": "#7A3E9D"})
    await made(
        "/sla-policies",
        {
            "inboxId": inbox["id"],
            "priority": "HIGH",
            "firstResponseMinutes": 15,
            "nextResponseMinutes": 60,
            "resolutionBusinessDays": 5,
        },
    )
    r = await client.put(
        f"/inbox/{inbox['id']}/business-hours",
        json={
            "timezone": "America/Sao_Paulo",
            "week": [{"day": d, "open": "09:00", "close": "18:00"} for d in range(5)],
            "closedDates": ["2026-12-24"],
            "awayMessage": {"text": "Voltamos às 9h."},
        },
        headers=h,
    )
    assert r.status_code == 200, r.text
    status = await made("/ticket-statuses", {"name": "Aberto"})
    await made("/ticket", {"title": "Juntar procuração", "statusId": status["id"]})
    inbox_id: str = inbox["id"]
    return inbox_id


async def test_each_page_has_no_serious_violation_and_fits_a_laptop_and_a_phone(
    page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    inbox_id = await _office_with_settings(client, office_a)
    email = await person(server_url, office_a, "ADMIN", [inbox_id])
    errors = await sign_in(page, server_url, email)
    shots = Path(tempfile.gettempdir()) / "console-settings"
    shots.mkdir(exist_ok=True)
    for width, height in ((1366, 768), (390, 844)):
        await page.set_viewport_size({"width": width, "height": height})
        for name in [*PAGES, "cases", "tickets"]:
            await page.goto(page.url.split("#")[0] + f"#{name}")
            view = page.locator(f"#view-{name}")
            await expect(view.get_by_role("heading", level=1)).to_be_visible(timeout=TIMEOUT)
            await expect(view.get_by_text("Carregando…")).to_have_count(0, timeout=TIMEOUT)
            if name == "inboxes":
                await expect(view.locator(".channel-paste")).to_have_count(2)
            fits = await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
            assert fits, (name, width)
            assert await serious_violations(page) == [], (name, width)
            await page.screenshot(path=str(shots / f"{name}-{width}.png"), full_page=True)
    # a form open (the tag's editor) fits the phone too
    await page.goto(page.url.split("#")[0] + "#tags")
    await page.get_by_role("button", name="Editar Urgente").click()
    await expect(page.get_by_role("button", name="Salvar", exact=True)).to_be_visible()
    assert await page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert await serious_violations(page) == []
    await page.screenshot(path=str(shots / "tags-edit-390.png"), full_page=True)
    assert errors == []


async def test_a_supervisor_and_an_agent_are_offered_only_the_writes_of_their_role(
    page: Page, server_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    inbox_id = await _office_with_settings(client, office_a)
    supervisor = await person(server_url, office_a, "SUPERVISOR", [inbox_id])
    agent = await person(server_url, office_a, "AGENT", [inbox_id])
    # what each role is offered: (page, title, a button it has, one it has not)
    admins_only = [
        ("inboxes", "Caixas de entrada e canais", "Nova caixa de entrada"),
        ("areas", "Áreas do direito", "Nova área"),
        ("sla", "Prazos de atendimento (SLA)", "Novo prazo"),
    ]
    managers = [
        ("tags", "Etiquetas", "Nova etiqueta"),
        ("fast", "Mensagens rápidas", "Nova mensagem rápida"),
    ]
    everyone = [("cases", "Processos", "Novo processo"), ("tickets", "Tickets", "Novo ticket")]

    async def offered(name: str, title: str, button: str, count: int) -> None:
        await open_page(page, name, title)
        view = page.locator(f"#view-{name}")
        await expect(view.get_by_text("Carregando…")).to_have_count(0, timeout=TIMEOUT)
        await expect(view.get_by_role("button", name=button, exact=True)).to_have_count(count)
        edits = view.get_by_role("button", name="Editar", exact=True)
        if count == 0:
            await expect(edits).to_have_count(0)

    for email, role, may in ((supervisor, "supervisor", managers + everyone),
                             (agent, "atendente", everyone)):  # fmt: skip
        errors = await sign_in(page, server_url, email)
        await expect(page.locator("#who")).to_contain_text(role)
        await nav_to(page, "Configurações")
        index = page.locator("#view-settings")
        await expect(index.get_by_role("link", name="Etiquetas")).to_be_visible()
        await expect(index.get_by_role("link", name="Retenção de dados")).to_have_count(0)
        for name, title, button in admins_only + managers + everyone:
            await offered(name, title, button, 1 if (name, title, button) in may else 0)
        # the settings a role may only read are shown, not offered as a form
        for name, title in (
            ("hours", "Horário de atendimento"),
            ("notice-settings", "Configurações dos avisos de processos"),
        ):
            await open_page(page, name, title)
            view = page.locator(f"#view-{name}")
            await expect(view).to_contain_text(
                "Seu papel pode ver esta configuração, mas não alterá-la."
            )
            await expect(view.get_by_role("button", name="Salvar")).to_have_count(0)
        await expect(page.locator("#view-hours")).to_contain_text("Segunda: 09:00\u201318:00")
        await open_page(page, "retention", "Retenção de dados")
        await expect(page.locator("#view-retention")).to_contain_text("Só administradores")
        # a tag the supervisor may edit: the write goes through
        if role == "supervisor":
            await open_page(page, "tags", "Etiquetas")
            await page.get_by_role("button", name="Editar Urgente").click()
            await page.get_by_label("Nome", exact=True).fill("Urgentíssimo")
            await save(page, "Alterações salvas.")
            [tag] = await listed(client, office_a, "/tag")
            assert tag["name"] == "Urgentíssimo"
        assert errors == []
        await page.get_by_role("button", name="Sair").click()
        await expect(page.get_by_label("E-mail")).to_be_visible(timeout=TIMEOUT)
