"""Security headers on every surface (issue 27, item 4) and the client address and scheme
a trusted proxy gives (item 2): rate limits key on it, HSTS follows its https."""

from __future__ import annotations

import asyncio
import ipaddress
import re
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from fastapi import FastAPI
from playwright.async_api import Browser, Request

from officehub.app import create_app
from officehub.kit.config import Settings
from tests.browser import new_page
from tests.helpers import OfficeFixture
from tests.server import running_server
from tests.webchat_world import SITE, make_webchat, start_visitor, visitor_headers

MISSING = "c" + "0" * 24


@asynccontextmanager
async def served(
    database_url: str, tmp_path: Path, **settings: str
) -> AsyncIterator[tuple[FastAPI, str]]:
    """A real uvicorn (as ``officehub serve`` runs it) of an app with these settings."""
    app = create_app(
        Settings(
            database_url=database_url,
            data_dir=tmp_path / "served",
            signing_key="test-signing-key",
            **settings,  # type: ignore[arg-type]
        )
    )
    async with app.router.lifespan_context(app), running_server(app) as url:
        yield app, url


async def _surfaces(client: httpx.AsyncClient, office: OfficeFixture) -> dict[str, httpx.Response]:
    chat = await make_webchat(client, office)
    h = office.headers
    return {
        "api": await client.get("/people", headers=h),
        "api error 404": await client.get(f"/people/{MISSING}", headers=h),
        "api error 401": await client.get("/people"),
        "health": await client.get("/health"),
        "docs": await client.get("/docs"),
        "redoc": await client.get("/redoc"),
        "docs assets": await client.get("/docs-assets/redoc.standalone.js"),
        "openapi": await client.get("/openapi.json"),
        "console": await client.get("/console"),
        "widget": await client.get(f"/webchat/{chat['id']}/widget.js"),
        "visitor api": await client.post(
            f"/webchat/{chat['id']}/start", json={}, headers={"origin": SITE}
        ),
    }


async def test_every_surface_says_nosniff_and_cannot_be_framed(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    for surface, answer in (await _surfaces(client, office_a)).items():
        assert answer.headers.get("x-content-type-options") == "nosniff", surface
        assert answer.headers.get("x-frame-options") == "DENY", surface
        assert answer.headers.get("referrer-policy") == "no-referrer", surface


async def test_api_answers_with_personal_data_are_not_stored(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    created = await client.post("/people", json={"name": "Ana"}, headers=office_a.headers)
    assert created.status_code == 201
    surfaces = await _surfaces(client, office_a)
    read = await client.get(f"/people/{created.json()['id']}", headers=office_a.headers)
    for answer in (created, read, surfaces["api"], surfaces["api error 404"]):
        assert answer.headers.get("cache-control") == "no-store", answer.request.url
    assert surfaces["visitor api"].headers.get("cache-control") == "no-store"
    assert surfaces["console"].headers["cache-control"] == "no-cache"  # its own, kept


async def test_the_docs_pages_cannot_be_framed_and_load_only_from_this_host(
    client: httpx.AsyncClient,
) -> None:
    for page in ("/docs", "/redoc"):
        answer = await client.get(page)
        policy = answer.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy, page
        assert "img-src 'self' data:" in policy, page
        assert answer.headers["x-frame-options"] == "DENY"


async def test_redoc_fetches_nothing_from_a_cdn(browser: Browser, server_url: str) -> None:
    """ReDoc's script shows a logo from cdn.redoc.ly: the page's policy keeps the browser
    from sending that request (or any other to another host): it fails, blocked by the
    policy ("csp"), before leaving the browser."""
    asked: list[str] = []
    failed: dict[str, str | None] = {}
    async with new_page(browser, 1280, 800) as page:

        def note(request: Request) -> None:
            asked.append(request.url)

        def note_failure(request: Request) -> None:
            failed[request.url] = request.failure

        page.on("request", note)
        page.on("requestfailed", note_failure)
        answer = await page.goto(f"{server_url}/redoc")
        assert answer is not None and answer.status == 200
        # A minute: ReDoc parses the whole document (about 650 KB) before it draws, 20-40 s
        # on 2 loaded cores (tests/test_browser_smoke.py says the same of Swagger UI).
        await page.wait_for_selector("h1", timeout=60_000)
        await page.wait_for_timeout(500)
    own = urlsplit(server_url).netloc
    elsewhere = [u for u in asked if urlsplit(u).scheme in ("http", "https")]
    elsewhere = [u for u in elsewhere if urlsplit(u).netloc != own]
    assert elsewhere == ["https://cdn.redoc.ly/redoc/logo-mini.svg"]
    assert all(failed.get(u) == "csp" for u in elsewhere), failed


async def test_hsts_is_sent_over_https_a_trusted_proxy_reports(
    database_url: str, tmp_path: Path
) -> None:
    async with (
        served(database_url, tmp_path, trusted_proxies="127.0.0.1") as (_app, url),
        httpx.AsyncClient() as http,
    ):
        plain = await http.get(f"{url}/health")
        proxied = await http.get(f"{url}/health", headers={"x-forwarded-proto": "https"})
    assert "strict-transport-security" not in plain.headers
    assert proxied.headers["strict-transport-security"].startswith("max-age=31536000")


async def test_hsts_does_not_follow_an_untrusted_forwarded_proto(
    database_url: str, tmp_path: Path
) -> None:
    async with (
        served(database_url, tmp_path, trusted_proxies="10.0.0.1") as (_app, url),
        httpx.AsyncClient() as http,
    ):
        forged = await http.get(f"{url}/health", headers={"x-forwarded-proto": "https"})
    assert "strict-transport-security" not in forged.headers


async def _starts(
    http: httpx.AsyncClient, url: str, chat_id: str, forwarded_for: list[str]
) -> list[int]:
    codes = []
    for n, address in enumerate(forwarded_for):
        answer = await http.post(
            f"{url}/webchat/{chat_id}/start",
            json={"name": "Visitante", "phone": f"119876500{n:02d}"},
            headers={"origin": SITE, "x-forwarded-for": address},
        )
        codes.append(answer.status_code)
    return codes


async def test_rate_limits_key_on_the_address_a_trusted_proxy_gives(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    """Behind the proxy every visitor arrives from its address: the limit is each
    visitor's own (the proxy's X-Forwarded-For), so one abuser blocks nobody else."""
    async with (
        served(
            database_url, tmp_path, trusted_proxies="127.0.0.1", webchat_ip_rate_limits="2/minute"
        ) as (_app, url),
        httpx.AsyncClient(base_url=url) as http,
    ):
        chat = await make_webchat(http, office_a)
        abuser = await _starts(http, url, chat["id"], ["203.0.113.7"] * 3)
        other = await _starts(http, url, chat["id"], ["198.51.100.9"])
    assert abuser == [201, 201, 429]
    assert other == [201]


async def test_a_forged_forwarded_for_from_an_untrusted_address_does_not_reset_the_limit(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    async with (
        served(
            database_url, tmp_path, trusted_proxies="10.0.0.1", webchat_ip_rate_limits="2/minute"
        ) as (_app, url),
        httpx.AsyncClient(base_url=url) as http,
    ):
        chat = await make_webchat(http, office_a)
        codes = await _starts(http, url, chat["id"], [f"203.0.113.{n}" for n in range(4)])
    assert codes == [201, 201, 429, 429]


async def test_no_proxy_is_trusted_by_default_so_a_local_process_forges_nothing(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    """Issue 39: with no OFFICEHUB_TRUSTED_PROXIES, a process on the server's own machine
    (127.0.0.1) sending X-Forwarded-For and -Proto neither resets a limit nor turns HSTS
    on: the headers are believed from the proxies an operator names, and none is named."""
    assert Settings().trusted_proxies == ""
    async with (
        served(database_url, tmp_path, webchat_ip_rate_limits="2/minute") as (app, url),
        httpx.AsyncClient(base_url=url) as http,
    ):
        assert app.state.settings.trusted_proxies == ""
        chat = await make_webchat(http, office_a)
        codes = await _starts(http, url, chat["id"], [f"203.0.113.{n}" for n in range(4)])
        forged = await http.get(f"{url}/health", headers={"x-forwarded-proto": "https"})
    assert codes == [201, 201, 429, 429]
    assert "strict-transport-security" not in forged.headers


ROOT = Path(__file__).resolve().parent.parent


def test_both_proxy_examples_keep_metrics_off_the_public_address() -> None:
    guide = (ROOT / "docs" / "deployment.md").read_text("utf-8")
    caddy = guide.split("```\nofficehub.example.com {", 1)[1].split("```", 1)[0]
    nginx = guide.split("```nginx", 1)[1].split("```", 1)[0]
    assert "respond /metrics 403" in caddy
    assert "location /metrics { deny all; }" in nginx


def test_the_compose_file_trusts_its_networks_gateway_as_the_proxy() -> None:
    compose = (ROOT / "compose.yaml").read_text("utf-8")
    [network] = re.findall(r"subnet: (\S+)\n\s+gateway: (\S+)", compose)
    trusted = re.search(
        r"OFFICEHUB_TRUSTED_PROXIES: \$\{OFFICEHUB_TRUSTED_PROXIES:-(\S+)\}", compose
    )
    assert trusted is not None
    assert trusted.group(1) == network[1]
    assert ipaddress.ip_address(network[1]) in ipaddress.ip_network(network[0])
    assert Settings(trusted_proxies=trusted.group(1)).trusted_proxies == network[1]


async def _open_stream(
    stack: AsyncExitStack, http: httpx.AsyncClient, chat_id: str, token: str, address: str
) -> int:
    headers = {**visitor_headers(token), "x-forwarded-for": address}
    stream = await stack.enter_async_context(
        http.stream("GET", f"/webchat/{chat_id}/events", headers=headers)
    )
    return stream.status_code


async def test_live_streams_are_capped_per_visitor_and_per_address(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    """A visitor holds at most its cap of open streams, an address its own cap (the
    address the trusted proxy gives); a closed stream gives its slot back."""
    async with (
        served(
            database_url,
            tmp_path,
            trusted_proxies="127.0.0.1",
            webchat_streams_per_visitor="2",
            webchat_streams_per_address="3",
        ) as (app, url),
        httpx.AsyncClient(base_url=url, timeout=15) as http,
    ):
        chat = await make_webchat(http, office_a)
        one = (await start_visitor(http, chat["id"], phone="11987650001"))["token"]
        two = (await start_visitor(http, chat["id"], phone="11987650002"))["token"]
        three = (await start_visitor(http, chat["id"], phone="11987650003"))["token"]
        async with AsyncExitStack() as first:
            codes = [await _open_stream(first, http, chat["id"], one, "203.0.113.1")]
            codes.append(await _open_stream(first, http, chat["id"], one, "203.0.113.2"))
            codes.append(await _open_stream(first, http, chat["id"], one, "203.0.113.3"))
            assert codes == [200, 200, 429]  # the visitor's cap, 2
            async with AsyncExitStack() as second:
                codes = [
                    await _open_stream(second, http, chat["id"], three, "203.0.113.1")
                    for _ in range(2)
                ]
                codes.append(await _open_stream(second, http, chat["id"], two, "203.0.113.1"))
                codes.append(await _open_stream(second, http, chat["id"], two, "203.0.113.4"))
                assert codes == [200, 200, 429, 200]  # the address's cap, 3
        for _ in range(100):
            if not app.state.webchat_streams.open:
                break
            await asyncio.sleep(0.05)
        assert not app.state.webchat_streams.open
        async with AsyncExitStack() as again:
            assert await _open_stream(again, http, chat["id"], one, "203.0.113.1") == 200
