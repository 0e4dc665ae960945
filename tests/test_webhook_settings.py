"""Issue 8, part 1: what can never be sent is refused when a webhook is saved.

Both POST and PATCH /webhooks answer 400 naming the field (``body.url``) or the header
(``body.headers.<Name>``), and store nothing.
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from officehub.kit.config import Settings
from officehub.kit.outbound.urls import HeaderRefused, check_headers, check_url
from tests.helpers import OfficeFixture, error_of
from tests.webhook_helpers import create_webhook

URL = "https://hooks.example.com/officehub"

UNSENDABLE_URLS = [
    "http://0177.0.0.1/hook",  # octal IPv4
    "http://0x7f.1/hook",  # hex IPv4
    "http://127.1/hook",  # short IPv4
    "http://2130706433/hook",  # one-number IPv4
    "http://012.10.10.10/hook",
    "http://hooks.example.com/a\x01b",  # control character in the path
    "http://hooks.example.com/a\x7fb",
    "http://hooks\x00.example.com/",
    "http://xn--a.com/hook",  # invalid IDNA (punycode of nothing valid)
    "http://☃.com/hook",
    "http://hooks.example.com:99999/hook",  # port out of range
    "http://hooks.example.com:0/hook",
    "http://hoo ks.example.com/hook",  # space in the host
    "http://hooks..example.com/hook",  # empty label
    "http://-hooks.example.com/hook",
    "http://[12345::1]/hook",
    "ftp://hooks.example.com/hook",
    "http:///hook",
]

SENDABLE_URLS = [
    "https://hooks.example.com/officehub?token=abc#frag",
    "http://bücher.example/hook",  # IDNA
    "http://hooks.example.com:8443/a%20b",
    "http://93.184.216.34/hook",
    "http://[2606:4700:4700::1111]:8080/hook",
    "http://my_service.example.com/hook",
    "http://hooks.example.com./hook",
]

UNSENDABLE_HEADERS: list[tuple[dict[str, str], str]] = [
    ({"X-Name": "José"}, "X-Name"),
    ({"X-Emoji": "ok 😀"}, "X-Emoji"),
    ({"X-Ctl": "a\x01b"}, "X-Ctl"),
    ({"X-Del": "a\x7fb"}, "X-Del"),
    ({"X-Newline": "a\r\nInjected: yes"}, "X-Newline"),
    ({"X-Lead": " padded"}, "X-Lead"),
    ({"X-Trail": "padded\t"}, "X-Trail"),
    ({"Bad Header": "v"}, "Bad Header"),
    ({"X-Ünicode": "v"}, "X-Ünicode"),
    ({"Content-Length": "0"}, "Content-Length"),
    ({"content-length": "0"}, "content-length"),
    ({"Host": "internal.example"}, "Host"),
    ({"Transfer-Encoding": "chunked"}, "Transfer-Encoding"),
    ({"Connection": "close"}, "Connection"),
    ({"Keep-Alive": "timeout=5"}, "Keep-Alive"),
    ({"TE": "trailers"}, "TE"),
    ({"Upgrade": "websocket"}, "Upgrade"),
    ({"Trailer": "X-Sig"}, "Trailer"),
    ({"Proxy-Authorization": "Basic eDp5"}, "Proxy-Authorization"),
    ({"Proxy-Connection": "keep-alive"}, "Proxy-Connection"),
]


def _body(**change: Any) -> dict[str, Any]:
    return {"name": "CRM sync", "url": URL, "events": ["contact.created"], **change}


async def _count(client: httpx.AsyncClient, office: OfficeFixture) -> int:
    total: int = (await client.get("/webhooks", headers=office.headers)).json()["totalResults"]
    return total


@pytest.mark.parametrize("url", UNSENDABLE_URLS)
async def test_a_url_the_sender_cannot_send_is_refused_on_create(
    client: httpx.AsyncClient, office_a: OfficeFixture, url: str
) -> None:
    response = await client.post("/webhooks", json=_body(url=url), headers=office_a.headers)
    assert response.status_code == 400, response.text
    assert error_of(response)["details"].startswith("body.url:")
    assert await _count(client, office_a) == 0


@pytest.mark.parametrize("url", UNSENDABLE_URLS)
async def test_a_url_the_sender_cannot_send_is_refused_on_update(
    client: httpx.AsyncClient, office_a: OfficeFixture, url: str
) -> None:
    hook = await create_webhook(client, office_a, URL)
    response = await client.patch(
        f"/webhooks/{hook['id']}", json={"url": url}, headers=office_a.headers
    )
    assert response.status_code == 400, response.text
    assert error_of(response)["details"].startswith("body.url:")
    read = await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)
    assert read.json()["url"] == URL


@pytest.mark.parametrize("url", SENDABLE_URLS)
async def test_urls_the_sender_can_send_are_accepted(
    client: httpx.AsyncClient, office_a: OfficeFixture, url: str
) -> None:
    hook = await create_webhook(client, office_a, url)
    assert hook["url"] == url
    httpx.URL(url)  # and the sender parses it


@pytest.mark.parametrize(("headers", "name"), UNSENDABLE_HEADERS)
async def test_a_header_that_cannot_be_sent_is_refused_naming_it_on_create(
    client: httpx.AsyncClient, office_a: OfficeFixture, headers: dict[str, str], name: str
) -> None:
    response = await client.post("/webhooks", json=_body(headers=headers), headers=office_a.headers)
    assert response.status_code == 400, response.text
    assert error_of(response)["details"].startswith(f"body.headers.{name}:")
    assert await _count(client, office_a) == 0


@pytest.mark.parametrize(("headers", "name"), UNSENDABLE_HEADERS)
async def test_a_header_that_cannot_be_sent_is_refused_naming_it_on_update(
    client: httpx.AsyncClient, office_a: OfficeFixture, headers: dict[str, str], name: str
) -> None:
    hook = await create_webhook(client, office_a, URL, headers={"Authorization": "Bearer x"})
    response = await client.patch(
        f"/webhooks/{hook['id']}", json={"headers": headers}, headers=office_a.headers
    )
    assert response.status_code == 400, response.text
    assert error_of(response)["details"].startswith(f"body.headers.{name}:")
    read = await client.get(f"/webhooks/{hook['id']}", headers=office_a.headers)
    assert read.json()["headers"] == {"Authorization": "Bearer x"}


async def test_at_most_20_custom_headers(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    twenty = {f"X-H{n}": "v" for n in range(20)}
    await create_webhook(client, office_a, URL, headers=twenty)
    response = await client.post(
        "/webhooks", json=_body(headers={**twenty, "X-H20": "v"}), headers=office_a.headers
    )
    assert response.status_code == 400
    assert error_of(response)["details"].startswith("body.headers:")


async def test_custom_headers_hold_at_most_8_kib_in_all(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    # names "X-A".."X-D" (3 bytes each) + values: exactly 8192 bytes in all
    exact = {f"X-{c}": "v" * (2048 - 3) for c in "ABCD"}
    await create_webhook(client, office_a, URL, headers=exact)
    over = {**exact, "X-D": "v" * (2048 - 2)}
    response = await client.post("/webhooks", json=_body(headers=over), headers=office_a.headers)
    assert response.status_code == 400
    assert error_of(response)["details"].startswith("body.headers:")


async def test_header_values_may_hold_spaces_and_tabs_inside_and_be_empty(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    headers = {"Authorization": "Bearer a b", "X-Tab": "a\tb", "X-Empty": "", "X-Sym": "!~"}
    hook = await create_webhook(client, office_a, URL, headers=headers)
    assert hook["headers"] == headers


async def test_a_literal_ipv4_compatible_loopback_is_refused_at_registration(
    settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI
) -> None:
    app.state.settings = settings.model_copy(update={"webhook_allow_private": False})
    for url in ("http://[::7f00:1]/hook", "http://[::a9fe:a9fe]/latest"):
        response = await client.post("/webhooks", json=_body(url=url), headers=office_a.headers)
        assert response.status_code == 400, url
        assert error_of(response)["code"] == "WEBHOOK_URL_NOT_ALLOWED"


def test_the_checks_are_reusable_outside_the_webhook_routes() -> None:
    """Automation's FIRE_WEBHOOK and flow webhook steps call the same two functions."""
    assert check_url("https://hooks.example.com/x").host == "hooks.example.com"
    with pytest.raises(ValueError, match="IPv4"):
        check_url("http://0x7f.1/")
    with pytest.raises(HeaderRefused) as refused:
        check_headers({"Authorization": "ok", "Content-Length": "0"})
    assert refused.value.name == "Content-Length"
