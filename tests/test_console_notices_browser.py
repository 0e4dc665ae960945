"""The console's "Avisos de processos" in Chromium (Portuguese, as it opens): pending case
notices with the case number, the movement (name and date), the explanation and the text;
one edited and approved (it goes out, read back through the API), one discarded, and a
refusal of the API (409) said in Portuguese. The rule that also tells the client is named."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from tests.datajud_standin import movement
from tests.helpers import OfficeFixture
from tests.test_case_notices import (
    JUDGMENT,
    WITH_TEMPLATE,
    _client,
    _notices_from_watch,
    _put_settings,
)
from tests.test_console_browser import TIMEOUT, log_in_in_portuguese
from tests.whatsapp_platform import Platform

PETITION = movement(85, "Petição", "2026-01-06T12:00:00.000Z", "Petição (outras)")
LATE_PETITION = movement(85, "Petição", "2026-01-07T12:00:00.000Z", "Petição (outras)")


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    return whatsapp_settings


async def notices_by_date(client: httpx.AsyncClient, office: OfficeFixture) -> dict[str, Any]:
    r = await client.get("/case-notices", headers=office.headers)
    assert r.status_code == 200, r.text
    return {n["occurredAt"][:10]: n for n in r.json()["data"]}


async def test_pending_notices_are_edited_approved_and_discarded_from_the_console(
    page: Page,
    server_url: str,
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    h = office_a.headers
    contact, conversation_id = await _client(session, office_a)
    await _put_settings(client, office_a, WITH_TEMPLATE)
    await _notices_from_watch(
        app,
        settings,
        client,
        office_a,
        contact.id,
        conversation_id,
        JUDGMENT,
        PETITION,
        LATE_PETITION,
    )
    # the client wrote: inside the 24-hour window the (edited) text goes out
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound", json={"text": "Oi"}, headers=h
    )
    assert r.status_code == 201, r.text
    rule = {
        "name": "Aviso automático",
        "triggerEvent": "case.movement.created",
        "actions": [
            {"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "Novidade", "delayMinutes": 1}}
        ],
    }
    assert (await client.post("/automation-rules", json=rule, headers=h)).status_code == 201
    by_date = await notices_by_date(client, office_a)
    judgment, petition, late = by_date["2026-01-05"], by_date["2026-01-06"], by_date["2026-01-07"]

    await log_in_in_portuguese(page, server_url, office_a.key)
    await page.get_by_role("link", name="Avisos de processos").click()
    await expect(page.get_by_role("heading", name="Avisos de processos")).to_be_visible()
    await expect(page.locator("#notices-rules")).to_contain_text("Aviso automático")
    await expect(page.locator("#notices-rules")).to_contain_text("duas mensagens")
    card = page.locator(f'li[data-notice-id="{judgment["id"]}"]')
    await expect(card).to_have_attribute("data-status", "PENDING", timeout=TIMEOUT)
    await expect(page.locator("li.case-notice")).to_have_count(3)
    await expect(card).to_contain_text(f"Processo nº {judgment['caseNumber']}")
    await expect(card).to_contain_text("Aguardando aprovação")
    await expect(card).to_contain_text("Procedência")
    await expect(card).to_contain_text("05/01/2026 10:30")  # 13:30 UTC in São Paulo
    explanation = card.get_by_label("Explicação (preenche o modelo fora da janela de 24 horas)")
    await expect(explanation).to_have_value(judgment["explanation"])
    text = card.get_by_label("Texto para o cliente")
    await expect(text).to_have_value(judgment["text"])

    # edit, save (PATCH), approve: it goes out as the edited text
    edited = "Maria, o juiz decidiu a seu favor. Ligamos amanhã para explicar os próximos passos."
    await text.fill(edited)
    await card.get_by_role("button", name="Salvar").click()
    await expect(page.get_by_role("status")).to_contain_text("salvo", timeout=TIMEOUT)
    r = await client.get(f"/case-notices/{judgment['id']}", headers=h)
    assert r.json()["text"] == edited and r.json()["status"] == "PENDING"
    await card.get_by_role("button", name="Aprovar e enviar").click()
    sent_card = page.locator(f'li[data-notice-id="{judgment["id"]}"]')
    await expect(sent_card).to_have_attribute("data-status", "SENT", timeout=TIMEOUT)
    await expect(sent_card).to_contain_text("Enviado")
    await expect(sent_card.get_by_role("button")).to_have_count(0)
    r = await client.get(f"/case-notices/{judgment['id']}", headers=h)
    approved = r.json()
    assert approved["status"] == "SENT" and approved["sentAs"] == "TEXT"
    r = await client.get(f"/conversation/{conversation_id}/messages", headers=h)
    [message] = [m for m in r.json()["data"] if m["id"] == approved["messageId"]]
    assert message["direction"] == "OUTBOUND" and message["text"] == edited

    # the second is discarded
    second = page.locator(f'li[data-notice-id="{petition["id"]}"]')
    await second.get_by_role("button", name="Descartar").click()
    await expect(second).to_have_attribute("data-status", "DISCARDED", timeout=TIMEOUT)
    await expect(second).to_contain_text("Descartado")
    r = await client.get(f"/case-notices/{petition['id']}", headers=h)
    assert r.json()["status"] == "DISCARDED" and r.json()["messageId"] is None

    # the third changes behind the page's back: its discard is refused, said in Portuguese
    r = await client.post(f"/case-notices/{late['id']}/approve", headers=h)
    assert r.status_code == 200 and r.json()["status"] == "SENT"
    third = page.locator(f'li[data-notice-id="{late["id"]}"]')
    await third.get_by_role("button", name="Descartar").click()
    alert = page.locator("#notice")
    await expect(alert).to_have_attribute("data-code", "NOTICE_CLOSED", timeout=TIMEOUT)
    await expect(alert).to_contain_text("409")
    await expect(alert).to_contain_text("Este aviso já mudou de situação")
    r = await client.get(f"/case-notices/{late['id']}", headers=h)
    assert r.json()["status"] == "SENT"

    # the list of pending notices is empty now
    await page.get_by_role("button", name="Recarregar").click()
    await expect(page.locator("li.case-notice")).to_have_count(0, timeout=TIMEOUT)
    await expect(page.locator("#notice-list")).to_contain_text("Nenhum aviso nesta situação.")
