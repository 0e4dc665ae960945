"""The shared outbound-HTTP kit (``officehub.kit.outbound``) on its own: ``Retry-After``,
the saved-URL check, the SSRF guard's address rules and DNS answers, and the signatures.

Webhook deliveries, automation actions, flows and the channels (WhatsApp, bridge) all
use these; their own test files cover each route through them."""

from __future__ import annotations

import socket
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import httpcore
import httpx
import pytest

from officehub.kit.errors import ValidationFailed
from officehub.kit.outbound import (
    AddressNotAllowed,
    WebhookVerificationError,
    delivery_client,
    is_blocked,
    is_private_host,
    refuse_private_url,
    refused_by_guard,
    retry_after,
    signature_header,
    verify,
)
from officehub.kit.outbound.ssrf import GuardedBackend

NOW = datetime(2026, 11, 28, 12, 0, 0, tzinfo=UTC)


# Retry-After


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("120", 120.0), (" 7 ", 7.0), ("0", 0.0), ("1.5", 1.5), ("-3", 0.0)],
)
def test_retry_after_in_seconds(value: str, seconds: float) -> None:
    assert retry_after(value, NOW) == seconds


def test_retry_after_as_an_http_date_in_gmt() -> None:
    assert retry_after("Sat, 28 Nov 2026 12:01:30 GMT", NOW) == 90.0


def test_retry_after_as_a_date_without_a_zone_is_utc_not_local_time() -> None:
    # "-0000" (and no zone at all) is read as UTC whatever the machine's time zone: the
    # copies this replaced read it as local time, off by the machine's offset.
    assert retry_after("Sat, 28 Nov 2026 12:00:10 -0000", NOW) == 10.0
    assert retry_after("Sat, 28 Nov 2026 12:00:10", NOW) == 10.0


def test_retry_after_with_another_zone_is_converted() -> None:
    assert retry_after("Sat, 28 Nov 2026 09:00:20 -0300", NOW) == 20.0


def test_retry_after_in_the_past_is_zero() -> None:
    assert retry_after("Sat, 28 Nov 2026 11:00:00 GMT", NOW) == 0.0
    assert retry_after("Thu, 01 Jan 1970 00:00:00 GMT", NOW) == 0.0


def test_retry_after_without_now_reads_the_clock() -> None:
    later = datetime.now(UTC) + timedelta(seconds=100)
    wait = retry_after(later.strftime("%a, %d %b %Y %H:%M:%S GMT"))
    assert wait is not None and 95.0 <= wait <= 100.0


@pytest.mark.parametrize(
    "value", [None, "", "   ", "soon", "12 seconds", "inf", "nan", "-inf", "Sat, 99 Foo 2026"]
)
def test_retry_after_garbage_or_absent_is_none(value: str | None) -> None:
    assert retry_after(value, NOW) is None


# The saved-URL check


@pytest.mark.parametrize(
    "host",
    [
        "localhost",
        "127.0.0.1",
        "10.0.0.5",
        "192.168.0.1",
        "169.254.169.254",
        "[::1]",
        "[fe80::1]",
        "[::ffff:127.0.0.1]",
        "[::ffff:10.0.0.1]",
    ],
)
def test_a_url_naming_a_private_loopback_or_link_local_host_is_refused(host: str) -> None:
    url = f"https://{host}/hook"
    assert is_private_host(httpx.URL(url).host)
    with pytest.raises(ValidationFailed) as caught:
        refuse_private_url(url, allow_private=False, field="body.url", code="URL_NOT_ALLOWED")
    assert caught.value.code == "URL_NOT_ALLOWED"
    assert caught.value.details is not None and caught.value.details.startswith("body.url: ")
    refuse_private_url(url, allow_private=True, field="body.url", code="URL_NOT_ALLOWED")


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com/x",
        # Names sorting after "localhost": only that very name is refused when saved.
        "https://www.example.com/x",
        "https://localhost.example.com/x",
        "https://93.184.216.34/x",
        "https://[2606:4700::1]/",
    ],
)
def test_a_public_address_or_any_name_passes_when_saved(url: str) -> None:
    assert not is_private_host(httpx.URL(url).host)
    refuse_private_url(url, allow_private=False, field="body.url", code="URL_NOT_ALLOWED")


def test_ipv6_mapped_and_link_local_addresses_are_blocked() -> None:
    assert is_blocked("::ffff:169.254.169.254") and is_blocked("fe80::abcd")
    assert not is_blocked("::ffff:8.8.8.8")


# The guard: DNS answers pointing inside


def _answering(*addresses: str) -> Any:
    async def resolve(host: str, port: int) -> Sequence[tuple[Any, ...]]:
        family = socket.AF_INET6 if ":" in addresses[0] else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    return resolve


@pytest.mark.parametrize(
    "answer", [("127.0.0.1",), ("10.1.2.3",), ("169.254.169.254",), ("::1",), ("::ffff:10.0.0.1",)]
)
async def test_a_name_whose_dns_answer_points_inside_is_refused_before_connecting(
    answer: tuple[str, ...],
) -> None:
    guard = GuardedBackend(resolver=_answering(*answer))
    with pytest.raises(AddressNotAllowed) as caught:
        await guard.connect_tcp("inside.example.com", 443)
    assert "inside.example.com resolves to" in str(caught.value)
    assert answer[0] not in str(caught.value)  # the office never learns the address
    assert refused_by_guard(caught.value)


async def test_the_guarded_client_refuses_a_literal_loopback_url() -> None:
    async with delivery_client(allow_private=False, timeout=2, connections=1) as client:
        with pytest.raises(httpx.ConnectError) as caught:
            await client.get("http://127.0.0.1:9/")
    assert refused_by_guard(caught.value)


def test_refused_by_guard_follows_the_chain_and_no_further() -> None:
    try:
        try:
            raise AddressNotAllowed("x resolves to a private address")
        except AddressNotAllowed as inner:
            raise httpx.ConnectError("wrapped") from inner
    except httpx.ConnectError as outer:
        assert refused_by_guard(outer)
    assert not refused_by_guard(httpx.ConnectError("refused"))
    assert not refused_by_guard(httpcore.ConnectError("refused"))


def _raised(make: Any) -> BaseException:
    try:
        make()
    except Exception as exc:
        return exc
    raise AssertionError("nothing raised")


def _refusal() -> None:
    raise AddressNotAllowed("x resolves to a private address")


def test_refused_by_guard_finds_a_refusal_chained_only_implicitly_or_only_explicitly() -> None:
    # A caller that wraps the guard's refusal without ``from`` (only ``__context__`` set),
    # or with ``from`` outside the handler (only ``__cause__``), still rejects the address
    # instead of retrying it as a network failure.
    def only_context() -> None:
        try:
            _refusal()
        except AddressNotAllowed:
            raise httpx.ConnectError("wrapped")  # noqa: B904 (the implicit chain under test)

    def only_cause() -> None:
        raise httpx.ConnectError("wrapped") from _raised(_refusal)

    implicit = _raised(only_context)
    assert implicit.__cause__ is None and isinstance(implicit.__context__, AddressNotAllowed)
    assert refused_by_guard(implicit)
    explicit = _raised(only_cause)
    assert explicit.__context__ is None and isinstance(explicit.__cause__, AddressNotAllowed)
    assert refused_by_guard(explicit)


# Signatures


def test_a_signature_verifies_and_a_tampered_body_does_not() -> None:
    now = int(time.time())
    body = b'{"event":"x"}'
    headers = {"X-Service-Signature": signature_header(["s3cret-key"], now, body)}
    assert verify("s3cret-key", headers, body) == {"event": "x"}
    with pytest.raises(WebhookVerificationError):
        verify("s3cret-key", headers, b'{"event":"y"}')
    with pytest.raises(WebhookVerificationError):
        verify("other-key", headers, body)
