"""The SSRF guard: a delivery may only connect to a public address.

The guard sits in the HTTP client's network backend: it resolves the host itself, refuses
the name when any of its addresses is blocked, connects to the very address it checked
(so a DNS answer that changes between check and connect cannot slip through), and checks
the peer of the opened socket once more. TLS still verifies the certificate against the
URL's host name.
"""

from __future__ import annotations

import asyncio
import functools
import ipaddress
import socket
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import httpcore
import httpx

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# The IANA special-purpose registries for IPv4 and IPv6: a superset of what Svix blocks
# (see docs/decisions.md for the comparison).
BLOCKED_NETWORKS = tuple(
    ipaddress.ip_network(n)
    for n in (
        "0.0.0.0/8",  # "this network"
        "10.0.0.0/8",  # private
        "100.64.0.0/10",  # shared address space (carrier-grade NAT)
        "127.0.0.0/8",  # loopback
        "169.254.0.0/16",  # link-local (cloud metadata)
        "172.16.0.0/12",  # private
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation (TEST-NET-1)
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "192.168.0.0/16",  # private
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation (TEST-NET-2)
        "203.0.113.0/24",  # documentation (TEST-NET-3)
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, and the broadcast address
        "::/128",  # unspecified
        "::1/128",  # loopback
        "::/96",  # IPv4-compatible (deprecated): ::7f00:1 is 127.0.0.1 to some stacks
        "::ffff:0:0/96",  # IPv4-mapped (checked again as IPv4 below)
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
        "64:ff9b::/96",  # IPv4/IPv6 translation
        "64:ff9b:1::/48",  # local-use IPv4/IPv6 translation
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments
        "2001:db8::/32",  # documentation
        "2002::/16",  # 6to4
        "3fff::/20",  # documentation
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)


class AddressNotAllowed(httpcore.ConnectError):
    """The URL reaches an address deliveries may not connect to."""


def is_blocked(address: str | IPAddress) -> bool:
    ip = ipaddress.ip_address(address) if isinstance(address, str) else address
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return is_blocked(ip.ipv4_mapped)
    return any(ip in net for net in BLOCKED_NETWORKS if net.version == ip.version)


def literal_address(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def is_private_host(host: str) -> bool:
    """A URL host that is refused when saved: ``localhost`` or a literal blocked address
    (a name is checked when sent, against every address it resolves to)."""
    literal = literal_address(host)
    return host == "localhost" or (literal is not None and is_blocked(literal))


def refused_by_guard(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is the guard refusing an address."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, AddressNotAllowed):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


# The system resolver's shape (``loop.getaddrinfo``): host and port to address infos, whose
# fifth item's first element is the address.
Resolver = Callable[[str, int], Awaitable[Sequence[tuple[Any, ...]]]]


async def _system_resolver(host: str, port: int) -> Sequence[tuple[Any, ...]]:
    return await asyncio.get_running_loop().getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )


async def _resolve(host: str, port: int, resolver: Resolver) -> list[str]:
    literal = literal_address(host)
    if literal is not None:
        return [str(literal)]
    infos = await resolver(host, port)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


class GuardedBackend(httpcore.AsyncNetworkBackend):
    """``resolver`` and ``backend`` default to the system's resolver and httpcore's own
    network backend; tests pass stand-ins for them (a resolver with a chosen answer, a
    backend whose connection lands elsewhere)."""

    def __init__(
        self,
        *,
        resolver: Resolver = _system_resolver,
        backend: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._resolver = resolver
        self._backend = backend or httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            addresses = await _resolve(host, port, self._resolver)
        except OSError as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}") from exc
        if not addresses or any(is_blocked(a) for a in addresses):
            # The message names the URL's host, never the addresses it resolved to: it is
            # shown to the office, and internal names must not be mapped through it.
            raise AddressNotAllowed(
                f"{host} resolves to a loopback, private or reserved address, which is not allowed"
            )
        last: Exception | None = None
        for address in addresses:
            try:
                stream = await self._backend.connect_tcp(
                    address, port, timeout, local_address, socket_options
                )
            except httpcore.ConnectError as exc:
                last = exc
                continue
            peer = stream.get_extra_info("server_addr")
            if peer is None or is_blocked(str(peer[0])):
                await stream.aclose()
                raise AddressNotAllowed(
                    f"{host} connected to a loopback, private or reserved address, "
                    "which is not allowed"
                )
            return stream
        raise last or httpcore.ConnectError(f"cannot connect to {host}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore interface)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AddressNotAllowed("unix sockets are not allowed")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every delivery client: loading the CA bundle costs ~40 ms of
    CPU, paid once per process instead of once per client."""
    return httpx.create_ssl_context()


def delivery_client(*, allow_private: bool, timeout: float, connections: int) -> httpx.AsyncClient:
    """An HTTP client for deliveries: no redirects, no proxies from the environment."""
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    transport = httpx.AsyncHTTPTransport(verify=_tls(), limits=limits, trust_env=False)
    if not allow_private:
        pool: Any = transport._pool
        pool._network_backend = GuardedBackend()
    return httpx.AsyncClient(
        transport=transport, timeout=timeout, follow_redirects=False, trust_env=False
    )
