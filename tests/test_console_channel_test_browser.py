"""The official WhatsApp channel's "Testar a conexão" in the console (issue 42), against a
stand-in of Meta's Graph API: with the stored credentials right, the template catalogue is
read and the page says how many templates came; with a token the platform refuses, the
page says the credentials were refused and shows the API's code."""

from __future__ import annotations

import httpx
import pytest
from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from tests.helpers import OfficeFixture
from tests.test_console_browser import TIMEOUT
from tests.test_console_settings_browser import open_page, person, sign_in
from tests.test_whatsapp_templates import template
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import official_integration


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    return whatsapp_settings


async def test_the_connection_test_reads_the_catalogue_or_says_the_credentials_were_refused(
    page: Page,
    server_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    good = await official_integration(session, office_a.id, device_id="aparelho-bom")
    platform.templates = [template("boas_vindas"), template("lembrete"), template("aviso")]
    whatsapp = {
        "phoneNumberId": "1234567890",
        "businessAccountId": "9876543210",
        "accessToken": "token-errado",
        "appSecret": "segredo",
        "verifyToken": "ipe-42",
    }
    body = {
        "inboxId": good.inbox_id,
        "type": "WHATSAPP_OFFICIAL",
        "name": "Número antigo",
        "deviceId": "aparelho-velho",
        "whatsapp": whatsapp,
    }
    r = await client.post("/integration", json=body, headers=office_a.headers)
    assert r.status_code == 201, r.text
    bad_id = r.json()["id"]
    email = await person(server_url, office_a, "ADMIN", [good.inbox_id])
    errors = await sign_in(page, server_url, email)
    await open_page(page, "inboxes", "Caixas de entrada e canais")

    details = page.locator("#view-inboxes tr.settings-details")
    await expect(details).to_have_count(2, timeout=TIMEOUT)
    good_row = page.locator(f'#view-inboxes tr[data-id="{good.id}"] + tr')
    await good_row.get_by_role("button", name="Testar a conexão").click()
    await expect(good_row).to_contain_text(
        "Conexão com a Meta funcionando: 3 modelos de mensagem lidos.", timeout=TIMEOUT
    )
    assert platform.template_calls >= 1

    bad_row = page.locator(f'#view-inboxes tr[data-id="{bad_id}"] + tr')
    await bad_row.get_by_role("button", name="Testar a conexão").click()
    await expect(bad_row).to_contain_text("A Meta recusou as credenciais salvas", timeout=TIMEOUT)
    await expect(page.locator("#notice")).to_contain_text("502")
    assert errors == []
