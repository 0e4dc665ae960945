"""The SSRF guard: deliveries never connect to loopback, private or reserved addresses.

These tests turn ``webhook_allow_private`` off (the ``settings`` fixture turns it on).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable, Sequence
from typing import Any

import httpcore
import httpx
import pytest
from fastapi import FastAPI

from officehub.kit.config import Settings
from officehub.kit.outbound.ssrf import (
    AddressNotAllowed,
    GuardedBackend,
    Resolver,
    delivery_client,
    is_blocked,
)
from officehub.webhooks.delivery import NOT_CONNECTED
from tests.helpers import OfficeFixture
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import create_webhook, deliveries, delivery_worker, emit_event

BLOCKED = [
    "0.1.2.3",  # 0.0.0.0/8 "this network"
    "10.1.2.3",  # private
    "100.64.0.1",  # shared (carrier-grade NAT)
    "127.0.0.1",  # loopback
    "127.255.255.254",
    "169.254.169.254",  # link-local, cloud metadata
    "172.16.0.1",  # private
    "172.31.255.255",
    "192.0.0.8",  # IETF protocol assignments
    "192.0.2.1",  # documentation
    "192.88.99.1",  # 6to4 relay
    "192.168.1.1",  # private
    "198.18.0.1",  # benchmarking
    "198.51.100.7",  # documentation
    "203.0.113.9",  # documentation
    "224.0.0.1",  # multicast
    "239.255.255.250",
    "240.0.0.1",  # reserved
    "255.255.255.255",  # broadcast
    "::",  # unspecified
    "::1",  # loopback
    "::ffff:127.0.0.1",  # IPv4-mapped loopback
    "::ffff:10.0.0.1",  # IPv4-mapped private
    "64:ff9b::a00:1",  # NAT64
    "100::1",  # discard-only
    "2001::1",  # IETF protocol assignments (Teredo)
    "2001:db8::1",  # documentation
    "2002:7f00:1::",  # 6to4
    "fc00::1",  # unique local
    "fd12:3456::1",
    "fe80::1",  # link-local
    "fec0::1",  # site-local
    "ff02::1",  # multicast
]
ADDED_RANGES = [
    "::7f00:1",  # IPv4-compatible (::/96): 127.0.0.1
    "::a00:1",  # IPv4-compatible: 10.0.0.1
    "::a9fe:a9fe",  # IPv4-compatible: 169.254.169.254
    "::808:808",  # IPv4-compatible, even of a public IPv4: deprecated, never routed
    "::ffff:0:7f00:1",  # IPv4-translated (::ffff:0:0:0/96)
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "93.184.216.34", "2606:4700:4700::1111", "2a00:1450::1"]


@pytest.mark.parametrize("address", BLOCKED)
def test_each_blocked_range_is_refused(address: str) -> None:
    assert is_blocked(address)


@pytest.mark.parametrize("address", ADDED_RANGES)
def test_ipv4_compatible_and_translated_ipv6_are_refused(address: str) -> None:
    assert is_blocked(address)


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_allowed(address: str) -> None:
    assert not is_blocked(address)


async def _attempt(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office: OfficeFixture,
    host: str,
) -> tuple[int, str | None]:
    guarded = settings.model_copy(update={"webhook_allow_private": False})
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office, receiver.url_at(host))
        await emit_event(app, office.id)
        await delivery_worker(app, guarded).run_until_idle()
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "RETRYING" and delivery.status_code is None
    return len(receiver.received), delivery.error_message


async def test_a_name_that_resolves_to_127_0_0_1_is_not_connected_to(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    received, error = await _attempt(app, settings, client, office_a, "localhost")
    assert received == 0
    # Not even that the name resolves to a refused address (issue 39): one answer for it, a
    # name that does not resolve and a receiver that refuses.
    assert error == NOT_CONNECTED and "localhost" not in error and "resolves" not in error
    assert "127.0.0.1" not in error and "::1" not in error  # never what the name resolved to


async def test_a_literal_loopback_address_is_not_connected_to(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    received, error = await _attempt(app, settings, client, office_a, "127.0.0.1")
    assert received == 0
    assert error == NOT_CONNECTED and "not allowed" in error


async def test_the_setting_allows_private_addresses_for_development(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url_at("localhost"))
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
    assert len(receiver.received) == 1


# A name with several addresses, and the peer actually connected


def _answering(*addresses: str) -> Resolver:
    """A resolver stand-in (the system resolver's shape) answering ``addresses`` in order."""

    async def resolve(host: str, port: int) -> Sequence[tuple[Any, ...]]:
        family = socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses]

    return resolve


class _SeenAs(httpcore.AsyncNetworkStream):
    """A real connection whose peer reads as ``peer`` (a public address a NAT forwards)."""

    def __init__(self, stream: httpcore.AsyncNetworkStream, peer: str) -> None:
        self._stream, self._peer = stream, peer

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        await self._stream.write(buffer, timeout)

    async def aclose(self) -> None:
        await self._stream.aclose()

    def get_extra_info(self, info: str) -> Any:
        return (self._peer, 443) if info == "server_addr" else self._stream.get_extra_info(info)


class _LandsLocally(httpcore.AsyncNetworkBackend):
    """httpcore's own backend, except that every connection lands on a local server, as
    a NAT or a resolver answer changing under the guard would; it records what it was
    asked to connect to. Addresses in ``refusing`` refuse the connection; those in
    ``forwarded`` land locally but read as that public peer."""

    def __init__(
        self,
        port: int,
        refusing: frozenset[str] = frozenset(),
        forwarded: frozenset[str] = frozenset(),
    ) -> None:
        self.asked: list[str] = []
        self._port = port
        self._refusing, self._forwarded = refusing, forwarded
        self._real = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.asked.append(host)
        if host in self._refusing:
            raise httpcore.ConnectError(f"{host} refused the connection")
        stream = await self._real.connect_tcp(
            "127.0.0.1", self._port, timeout, local_address, socket_options
        )
        return _SeenAs(stream, host) if host in self._forwarded else stream

    async def sleep(self, seconds: float) -> None:
        await self._real.sleep(seconds)


@pytest.mark.parametrize(
    "addresses", [("93.184.216.34", "10.0.0.7"), ("10.0.0.7", "93.184.216.34")]
)
async def test_a_name_with_any_private_address_is_refused_though_another_is_public(
    addresses: tuple[str, str],
) -> None:
    async with running_receiver() as receiver:
        landing = _LandsLocally(receiver.port)
        guard = GuardedBackend(resolver=_answering(*addresses), backend=landing)
        with pytest.raises(AddressNotAllowed, match=r"hooks\.example\.com resolves to"):
            await guard.connect_tcp("hooks.example.com", 443)
    assert landing.asked == []  # refused before any connection, to either address


async def test_the_guard_checks_the_peer_actually_connected_not_only_the_answer() -> None:
    async with running_receiver() as receiver:
        landing = _LandsLocally(receiver.port)
        guard = GuardedBackend(resolver=_answering("93.184.216.34"), backend=landing)
        with pytest.raises(AddressNotAllowed, match=r"hooks\.example\.com connected to"):
            await guard.connect_tcp("hooks.example.com", 443)
    assert landing.asked == ["93.184.216.34"]  # the very address it checked
    assert receiver.received == []


async def test_a_name_that_does_not_resolve_is_a_connect_error() -> None:
    async def failing(host: str, port: int) -> Sequence[tuple[Any, ...]]:
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    guard = GuardedBackend(resolver=failing, backend=_LandsLocally(9))
    with pytest.raises(httpcore.ConnectError, match=r"cannot resolve hooks\.example\.com"):
        await guard.connect_tcp("hooks.example.com", 443)


async def test_a_refusing_address_is_passed_over_for_the_next_and_a_public_peer_is_kept() -> None:
    async with running_receiver() as receiver:
        landing = _LandsLocally(
            receiver.port,
            refusing=frozenset({"93.184.216.34"}),
            forwarded=frozenset({"8.8.8.8"}),
        )
        guard = GuardedBackend(resolver=_answering("93.184.216.34", "8.8.8.8"), backend=landing)
        stream = await guard.connect_tcp("hooks.example.com", 443)
        try:
            assert stream.get_extra_info("server_addr") == ("8.8.8.8", 443)
            request = f"GET {receiver.path} HTTP/1.1\r\nHost: hooks.example.com\r\n\r\n"
            await stream.write(request.encode())
            assert (await stream.read(1024)).startswith(b"HTTP/1.1 200 ")
        finally:
            await stream.aclose()
    assert landing.asked == ["93.184.216.34", "8.8.8.8"]


async def test_when_every_address_refuses_the_last_refusal_is_the_error() -> None:
    """The delivery records why it failed: the last address's own refusal, not a vaguer
    error of the guard's."""
    landing = _LandsLocally(9, refusing=frozenset({"93.184.216.34", "8.8.8.8"}))
    guard = GuardedBackend(resolver=_answering("93.184.216.34", "8.8.8.8"), backend=landing)
    with pytest.raises(httpcore.ConnectError, match=r"^8\.8\.8\.8 refused the connection$"):
        await guard.connect_tcp("hooks.example.com", 443)
    assert landing.asked == ["93.184.216.34", "8.8.8.8"]


async def test_the_delivery_client_follows_no_redirect() -> None:
    """A 302 is the receiver's answer (a failed delivery), never a second request to its
    ``Location``, which could name an address the first check never saw."""
    moved = Reply(302, headers={"location": "/elsewhere"})
    async with running_receiver(lambda _n: moved) as receiver:
        async with delivery_client(allow_private=True, timeout=5, connections=1) as client:
            answer = await client.post(receiver.url, content=b"{}")
    assert answer.status_code == 302
    assert [r.body for r in receiver.received] == [b"{}"]


async def test_the_delivery_client_takes_no_proxy_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``HTTP_PROXY`` and its kin in the process's environment are not used: through a
    proxy, the peer the guard checks would be the proxy, not the receiver."""
    async with running_receiver() as proxy, running_receiver() as receiver:
        for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
            monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
            monkeypatch.setenv(name.lower(), f"http://127.0.0.1:{proxy.port}")
        monkeypatch.delenv("NO_PROXY", raising=False)
        monkeypatch.delenv("no_proxy", raising=False)
        async with delivery_client(allow_private=True, timeout=5, connections=1) as client:
            answer = await client.post(receiver.url, content=b"{}")
    assert answer.status_code == 200
    assert len(receiver.received) == 1 and proxy.received == []
