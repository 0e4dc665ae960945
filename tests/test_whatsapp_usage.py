"""``GET /reports/whatsapp-usage`` (issue 40): what the office pays WhatsApp, billable and
free sends by pricing category and month, from the pricing the platform's signed statuses
put on each send, served by a running server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from playwright.async_api import Page, expect
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.whatsapp import sign
from officehub.inboxes.models import Integration
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from tests.helpers import OfficeFixture, error_of
from tests.test_console_browser import TIMEOUT, log_in_in_portuguese
from tests.whatsapp_fixtures import FIXTURES, sent_message
from tests.whatsapp_world import APP_SECRET, notification, official_integration, status

PATH = "/reports/whatsapp-usage"


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    return whatsapp_settings


@pytest.fixture
async def served(server_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server_url, timeout=30) as c:
        yield c


async def _post(served: httpx.AsyncClient, integration_id: str, body: dict[str, Any]) -> None:
    raw = json.dumps(body).encode()
    r = await served.post(
        f"/channels/whatsapp/{integration_id}/webhook",
        content=raw,
        headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(APP_SECRET, raw)},
    )
    assert r.status_code == 200, r.text


def _priced(wamid: str, pricing: dict[str, Any]) -> dict[str, Any]:
    return {**status(wamid, "delivered"), "pricing": pricing}


def _pmp(kind: str, category: str) -> dict[str, Any]:
    return {
        "billable": kind == "regular",
        "pricing_model": "PMP",
        "type": kind,
        "category": category,
    }


async def _priced_sends(
    served: httpx.AsyncClient, session: AsyncSession, integration: Integration
) -> None:
    """Five sends of this month priced by the platform, one of January 2024."""
    prices = {
        "wamid.u1": _pmp("regular", "utility"),
        "wamid.u2": _pmp("regular", "utility"),
        "wamid.s1": _pmp("free_customer_service", "service"),
        "wamid.m1": _pmp("regular", "marketing_lite"),
        "wamid.c1": {"billable": True, "pricing_model": "CBP", "category": "marketing"},
        "wamid.old": _pmp("regular", "utility"),
    }
    for n, wamid in enumerate(prices):
        await sent_message(session, integration, wamid, phone=f"+551198765{n:04d}")
    old = await session.scalar(select_message(integration.office_id, "wamid.old"))
    assert old is not None
    old.created_at = datetime(2024, 1, 15, 12, tzinfo=UTC)
    await session.commit()
    statuses = [_priced(w, p) for w, p in prices.items()]
    await _post(served, integration.id, notification(statuses=statuses))


def select_message(office_id: str, wamid: str) -> Any:
    return select(Message).where(Message.office_id == office_id, Message.external_id == wamid)


def _this_month() -> str:
    now = utcnow()
    return f"{now.year:04d}-{now.month:02d}"


async def test_the_report_counts_billable_and_free_sends_by_category_and_month(
    served: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    integration = await official_integration(session, office_a.id)
    await _priced_sends(served, session, integration)
    elsewhere = await official_integration(session, office_b.id)
    await sent_message(session, elsewhere, "wamid.b1")
    await _post(
        served,
        elsewhere.id,
        notification(statuses=[_priced("wamid.b1", _pmp("regular", "utility"))]),
    )
    month = _this_month()
    r = await served.get(PATH, headers=office_a.headers)
    assert r.status_code == 200, r.text
    report = r.json()
    assert (report["to"], report["integrationId"]) == (month, None)
    assert report["rows"] == [
        {"month": month, "category": "marketing", "billable": 1, "free": 0},
        {"month": month, "category": "marketing_lite", "billable": 1, "free": 0},
        {"month": month, "category": "service", "billable": 0, "free": 1},
        {"month": month, "category": "utility", "billable": 2, "free": 0},
    ]
    assert report["totals"] == {"billable": 4, "free": 1}
    # The January 2024 send, in a range of its own; one integration named.
    r = await served.get(
        PATH,
        params={"from": "2024-01", "to": "2024-02", "integrationId": integration.id},
        headers=office_a.headers,
    )
    assert r.json()["rows"] == [
        {"month": "2024-01", "category": "utility", "billable": 1, "free": 0}
    ]


async def test_the_report_as_csv_has_the_same_numbers(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _priced_sends(served, session, integration)
    month = _this_month()
    r = await served.get(PATH, params={"format": "csv"}, headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/csv")
    assert r.text.split("\r\n") == [
        "month,category,billable,free",
        f"{month},marketing,1,0",
        f"{month},marketing_lite,1,0",
        f"{month},service,0,1",
        f"{month},utility,2,0",
        "total,,4,1",
        "",
    ]
    accepted = await served.get(PATH, headers={**office_a.headers, "Accept": "text/csv"})
    assert accepted.text == r.text


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2026-13"}, "query.from"),
        ({"to": "26-01"}, "query.to"),
        ({"from": "2026-05", "to": "2026-04"}, "query.to"),
        ({"from": "2023-01", "to": "2026-01"}, "query.to"),
        ({"integrationId": "not an id!"}, "query.integrationId"),
        ({"format": "xml"}, "query.format"),
    ],
)
async def test_bad_input_is_400_naming_the_field(
    served: httpx.AsyncClient, office_a: OfficeFixture, params: dict[str, str], field: str
) -> None:
    r = await served.get(PATH, params=params, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field in json.dumps(error_of(r)["details"]) or field in error_of(r)["message"]


async def test_another_offices_integration_is_404(
    served: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    theirs = await official_integration(session, office_b.id)
    r = await served.get(PATH, params={"integrationId": theirs.id}, headers=office_a.headers)
    assert r.status_code == 404, r.text
    assert error_of(r)["code"] == "NOT_FOUND"


async def test_no_key_or_a_bad_key_is_401(served: httpx.AsyncClient) -> None:
    assert (await served.get(PATH)).status_code == 401
    bad = {"x-service-api-key": "not-a-key"}
    assert (await served.get(PATH, headers=bad)).status_code == 401


async def test_an_account_update_changing_the_pricing_tier_is_kept(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    body = json.loads((FIXTURES / "identity" / "account_update_pricing_tier.json").read_text())
    await _post(served, integration.id, body)
    r = await served.get(
        f"/integration/{integration.id}/whatsapp-account-notices", headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    [notice] = r.json()["data"]
    assert notice["event"] == "VOLUME_BASED_PRICING_TIER_UPDATE"
    assert notice["value"]["volume_tier_info"] == {
        "tier_update_time": 1767225600,
        "pricing_category": "authentication_international",
        "tier": "25000001:50000000",
        "effective_month": "2026-12",
    }


async def test_the_reports_page_shows_the_whatsapp_usage_chart_and_table(
    page: Page, served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _priced_sends(served, session, integration)
    month = _this_month()
    await log_in_in_portuguese(page, str(served.base_url), office_a.key)
    await page.get_by_role("link", name="Relatórios").click()
    await expect(page.get_by_role("heading", name="Uso do WhatsApp")).to_be_visible()
    utility = page.locator(f'#usage-table tbody tr[data-month="{month}"][data-category="utility"]')
    await expect(utility).to_contain_text("2", timeout=TIMEOUT)
    total = page.locator('#usage-table tbody tr[data-month="total"]')
    await expect(total).to_contain_text("4")
    billable = page.locator(f'#usage-chart svg rect.bar-billable[data-key="{month}"]')
    await expect(billable).to_have_attribute("data-value", "4")
    free = page.locator(f'#usage-chart svg rect.bar-free[data-key="{month}"]')
    await expect(free).to_have_attribute("data-value", "1")


@pytest.mark.parametrize(
    ("params", "months"),
    [({"to": "0001-05"}, ("0001-01", "0001-05")), ({"from": "9999-01", "to": "9999-12"}, None)],
)
async def test_the_first_and_last_months_there_are_answer(
    served: httpx.AsyncClient,
    office_a: OfficeFixture,
    params: dict[str, str],
    months: tuple[str, str] | None,
) -> None:
    """No year 0 nor 10000: the default range stops at 0001-01, 9999-12 has no month after."""
    r = await served.get(PATH, params=params, headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert (r.json()["from"], r.json()["to"]) == (months or (params["from"], params["to"]))
    assert r.json()["rows"] == []
    zero = await served.get(PATH, params={"to": "0000-12"}, headers=office_a.headers)
    assert zero.status_code == 400 and "query.to" in zero.text
