"""The console's reports page (issue 32): charts drawn by the page from the JSON (inline
SVG, nothing from another host), the table of figures and the CSV download."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path

from playwright.async_api import Page, expect
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.timeutil import utcnow
from tests.helpers import OfficeFixture
from tests.test_console_browser import TIMEOUT, log_in_in_portuguese
from tests.test_reports import _world


async def test_the_reports_page_draws_charts_from_the_json_and_downloads_the_csv(
    page: Page, server_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a, "Trabalhista")
    now = utcnow()
    for minutes in (10, 30):
        start = now - timedelta(hours=3)
        await world.conversation(
            start,
            inbound=start,
            response=start + timedelta(minutes=minutes),
            closed=start + timedelta(hours=2),
            policy=True,
        )
    await session.commit()
    hosts: set[str] = set()
    page.on("request", lambda request: hosts.add(request.url.split("/")[2]))

    await log_in_in_portuguese(page, server_url, office_a.key)
    await page.get_by_role("link", name="Relatórios").click()
    await expect(page.get_by_role("heading", name="Relatórios de conversas")).to_be_visible()
    total = page.locator('#reports-table tbody tr[data-key="total"]')
    await expect(total).to_contain_text("Total", timeout=TIMEOUT)
    await expect(total).to_contain_text("100,0 %")  # two closed under a policy, no breach
    await expect(page.locator("#reports-summary")).to_contain_text("2 abertas, 2 encerradas")
    # 30 days by default, one bar of each series per day, drawn by the page.
    opened = page.locator("#reports-chart-volume svg rect.bar-opened")
    await expect(opened).to_have_count(30)
    values = [await bar.get_attribute("data-value") or "" for bar in await opened.all()]
    assert sorted(values)[-1] == "2" and values.count("0") + values.count("2") == 30
    await expect(page.locator("#reports-chart-times svg rect.bar-firstResponse")).to_have_count(30)

    await page.get_by_label("Agrupar por").select_option("inbox")
    await page.get_by_role("button", name="Mostrar").click()
    row = page.locator(f'#reports-table tbody tr[data-key="{world.integration.inbox_id}"]')
    await expect(row).to_contain_text("Trabalhista", timeout=TIMEOUT)
    await expect(row).to_contain_text("10 min")  # the lower median of 10 and 30 minutes
    await expect(page.locator("#reports-chart-volume svg rect.bar-opened")).to_have_count(1)

    async with page.expect_download() as info:
        await page.get_by_role("button", name="Baixar CSV").click()
    download = await info.value
    assert download.suggested_filename.startswith("relatorio-conversas-")
    assert download.suggested_filename.endswith("-inbox.csv")
    saved = await download.path()
    lines = (await asyncio.to_thread(Path(saved).read_text)).splitlines()
    assert lines[0].startswith("key,label,opened,closed,firstResponseMedianSeconds")
    assert lines[1].startswith(f"{world.integration.inbox_id},Trabalhista,2,2,600,1800,")
    assert lines[-1].startswith("total,,2,2,600,1800,")
    assert hosts == {server_url.split("/")[2]}
