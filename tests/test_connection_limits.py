"""What one client may make a server process hold, against a real ``officehub serve``.

Raw sockets, as a hostile or careless client would use them: a 64 MiB header, headers
sent a byte at a time, a body over the limit sent whole before reading the answer, more
connections than the process takes. The process's memory is its ``VmRSS`` in
``/proc/<pid>/status`` (the server is a child of this test, on Linux).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from tests.server_process import PNG_1X1, Server, avatar_link, clean_env, running_server

MIB = 1024 * 1024


@contextlib.asynccontextmanager
async def serving(folder: Path, **settings: str) -> AsyncIterator[Server]:
    env = clean_env(**{f"OFFICEHUB_{k.upper()}": v for k, v in settings.items()})
    async with running_server(folder, "--no-worker", env=env) as server:
        yield server


def people_post_head(server: Server, length: int) -> bytes:
    """The request line and headers of a ``POST /people`` with the demo key, its body to come."""
    return (
        f"POST /people HTTP/1.1\r\nHost: 127.0.0.1\r\nx-service-api-key: {server.demo_key}\r\n"
        f"content-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    ).encode()


def exited(pid: int) -> bool:
    """Whether the child is gone (or a zombie: exited, not yet reaped by the test)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    except (FileNotFoundError, ProcessLookupError):
        return True


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def connect(server: Server) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    port = int(server.url.rsplit(":", 1)[1])
    return await asyncio.open_connection("127.0.0.1", port)


async def read_response(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    lines = head.split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    body = await reader.readexactly(int(headers.get("content-length", "0")))
    return int(lines[0].split(" ", 2)[1]), headers, body


async def closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """What the server sent before it closed the connection, if it did within ``seconds``."""
    received = b""
    async with asyncio.timeout(seconds):
        while chunk := await reader.read(65536):
            received += chunk
    return received


def parse_response(raw: bytes) -> tuple[int, dict[str, str], bytes] | None:
    """The status, headers and body of one whole response in ``raw``; None while partial."""
    head, sep, rest = raw.partition(b"\r\n\r\n")
    if not sep:
        return None
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            name, value = line.split(":", 1)
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    if len(rest) < length:
        return None
    return int(lines[0].split(" ", 2)[1]), headers, rest[:length]


async def huge_header(server: Server, size: int, *, read_while_sending: bool = True) -> int:
    """Sends a request whose one header is ``size`` bytes, reading while it sends (and
    stopping once answered, as curl does), or reading only once all is sent or refused.

    On a bare socket, not asyncio's streams: once the server has answered and dropped as
    much as it drops, it closes on bytes still coming, and our next send fails (EPIPE or a
    reset). A stream then ends its reading side too, losing the answer that already sits in
    the socket; the kernel still hands it to ``recv``, so reading goes on after a failed send.
    """
    loop = asyncio.get_running_loop()
    port = int(server.url.rsplit(":", 1)[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)  # a network, not RAM
    sock.setblocking(False)
    answered = asyncio.Event()

    async def send() -> None:
        with contextlib.suppress(ConnectionError):
            await loop.sock_sendall(sock, b"GET /tag HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: ")
            chunk = b"a" * (64 * 1024)
            for _ in range(size // len(chunk)):
                if answered.is_set():
                    return
                await loop.sock_sendall(sock, chunk)
            await loop.sock_sendall(sock, b"\r\n\r\n")

    try:
        await loop.sock_connect(sock, ("127.0.0.1", port))
        sender = asyncio.create_task(send())
        if not read_while_sending:
            await sender
        try:
            received = b""
            async with asyncio.timeout(60):
                while (response := parse_response(received)) is None:
                    chunk = await loop.sock_recv(sock, 65536)
                    assert chunk, f"closed before a whole answer: {received[:200]!r}"
                    received += chunk
            answered.set()
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sender
    finally:
        sock.close()
    status, _headers, body = response
    if status == 431:
        assert json.loads(body)["code"] == "HEADERS_TOO_LARGE"
    return status


async def test_an_oversized_header_is_431_and_the_process_memory_stays_bounded(
    tmp_path: Path,
) -> None:
    async with serving(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as client:
        for _ in range(20):  # warm: the first requests load what the process keeps
            assert (
                await client.get("/tag", headers={"x-service-api-key": server.demo_key})
            ).status_code == 200
        before = rss_mib(server.pid)
        statuses = await asyncio.gather(*(huge_header(server, 64 * MIB) for _ in range(4)))
        after = rss_mib(server.pid)
        print(f"VmRSS before {before:.1f} MiB, after four 64 MiB headers {after:.1f} MiB")
        assert statuses == [431] * 4
        assert after - before < 32, (before, after)
        # Just under the bound is fine: a big header is not refused as such.
        ok = await client.get(
            "/tag", headers={"x-service-api-key": server.demo_key, "x-padding": "a" * 16_000}
        )
        assert ok.status_code == 200, ok.text


async def test_a_client_sending_its_headers_slowly_is_disconnected_after_the_header_timeout(
    tmp_path: Path,
) -> None:
    async with serving(
        tmp_path, header_timeout_seconds="1", keepalive_timeout_seconds="1"
    ) as server:
        # A byte every 0.2 s: never idle, never done.
        reader, writer = await connect(server)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()

        async def dribble() -> None:
            with contextlib.suppress(ConnectionError):
                while True:
                    writer.write(b"X")
                    await writer.drain()
                    await asyncio.sleep(0.2)

        dribbler = asyncio.create_task(dribble())
        try:
            sent = await closed_within(reader, 4)
        finally:
            dribbler.cancel()
            writer.close()
        assert time.monotonic() - started < 4
        assert sent.startswith(b"HTTP/1.1 408 ")
        # A connection that sends nothing at all is closed as well.
        reader, writer = await connect(server)
        assert await closed_within(reader, 4) == b""
        writer.close()
        # An idle keep-alive connection is closed after its timeout.
        reader, writer = await connect(server)
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        status, _headers, _body = await read_response(reader)
        assert status == 200
        started = time.monotonic()
        assert await closed_within(reader, 4) == b""
        assert time.monotonic() - started < 3
        writer.close()


async def send_body_then_read(server: Server, size: int) -> tuple[int, dict[str, str], bytes]:
    """A client that sends its whole body before it reads the answer (as most do)."""
    reader, writer = await connect(server)
    sock = writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)  # a network, not RAM
    head = (
        "POST /tag HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-Service-Api-Key: {server.demo_key}\r\nContent-Length: {size}\r\n\r\n"
    )
    writer.write(head.encode())
    chunk = b" " * (64 * 1024)
    try:
        for _ in range(size // len(chunk)):
            writer.write(chunk)
            await writer.drain()
        async with asyncio.timeout(20):
            return await read_response(reader)
    finally:
        writer.close()


async def test_a_client_sending_an_over_limit_body_whole_reads_the_413(tmp_path: Path) -> None:
    async with serving(tmp_path) as server:
        for _ in range(10):
            status, _headers, body = await send_body_then_read(server, 2 * MIB)
            assert status == 413, body
            assert json.loads(body)["code"] == "PAYLOAD_TOO_LARGE"
        # Beyond what is discarded, the 413 goes out at once (and the connection closes).
        assert (await huge_declared(server, 64 * MIB)) == 413


async def huge_declared(server: Server, size: int) -> int:
    reader, writer = await connect(server)
    head = (
        "POST /tag HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"X-Service-Api-Key: {server.demo_key}\r\nContent-Length: {size}\r\n\r\n"
    )
    writer.write(head.encode())
    try:
        async with asyncio.timeout(10):
            status, headers, _body = await read_response(reader)
    finally:
        writer.close()
    assert headers["connection"] == "close"
    return status


async def test_connections_beyond_the_cap_are_answered_503(tmp_path: Path) -> None:
    async with serving(tmp_path, max_connections="4") as server:
        held = []
        statuses = []
        for _ in range(6):
            reader, writer = await connect(server)
            held.append(writer)
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            status, headers, body = await read_response(reader)
            statuses.append(status)
            if status == 503:
                assert json.loads(body)["code"] == "SERVER_BUSY"
                assert headers["retry-after"] == "1"
        # Four connections at most, this one included: three kept open, then refusals.
        assert statuses == [200, 200, 200, 503, 503, 503]
        for writer in held:
            writer.close()
        # The closed connections are given back: a new one is served again, soon.
        async with httpx.AsyncClient(base_url=server.url) as client, asyncio.timeout(5):
            while (await client.get("/healthz")).status_code != 200:  # noqa: ASYNC110 (the server tells nothing)
                await asyncio.sleep(0.05)


async def test_the_431_reaches_a_client_that_sends_its_whole_header_before_reading(
    tmp_path: Path,
) -> None:
    # Past what it drops the server closes on bytes still coming (a reset), and the client's
    # send fails; the answer was written before, and a client reading then still has it.
    async with serving(tmp_path, body_discard_bytes=str(MIB)) as server:
        statuses = await asyncio.gather(
            *(huge_header(server, 16 * MIB, read_while_sending=False) for _ in range(4))
        )
        assert statuses == [431] * 4


async def test_a_request_running_at_shutdown_is_cancelled_after_the_grace_and_the_server_exits(
    tmp_path: Path,
) -> None:
    """SIGTERM lets the requests in progress finish for ``shutdown_grace_seconds``; one still
    running then (a client dripping its body) is cancelled and the process exits, where it
    used to wait for it for ever (a deploy held until the orchestrator's kill -9)."""
    grace = 3.0
    async with serving(tmp_path, shutdown_grace_seconds=str(grace)) as server:
        body = json.dumps({"name": "Ana Lúcia"}).encode()

        # One client never finishes its body; another finishes it just after the SIGTERM.
        _stuck_reader, stuck = await connect(server)
        stuck.write(people_post_head(server, 10_000) + b'{"name": "')
        await stuck.drain()
        late_reader, late = await connect(server)
        late.write(people_post_head(server, len(body)) + body[:5])
        await late.drain()
        await asyncio.sleep(0.3)  # both requests are in the app, reading their bodies
        started = time.monotonic()
        os.kill(server.pid, signal.SIGTERM)
        await asyncio.sleep(0.5)
        late.write(body[5:])
        await late.drain()
        status, _headers, answer = await asyncio.wait_for(read_response(late_reader), 5)
        assert status == 201, answer  # within the grace: finished and answered
        async with asyncio.timeout(grace + 10):
            while not exited(server.pid):  # noqa: ASYNC110 (a process's state, polled)
                await asyncio.sleep(0.1)
        took = time.monotonic() - started
        assert grace - 0.5 <= took < grace + 10, took  # waited its grace for the stuck one
        stuck.close()
        late.close()


async def test_a_body_that_pauses_past_the_body_timeout_is_408_and_a_slow_steady_one_is_served(
    tmp_path: Path,
) -> None:
    """A client that sends its head and part of its body, then nothing (or a byte now and
    then, slower than the bound), held a connection and a request of the process for as
    long as it liked; a body arriving slowly but steadily is still served."""
    async with serving(tmp_path, body_timeout_seconds="1") as server:
        key = server.demo_key

        # Part of the body, then silence.
        reader, writer = await connect(server)
        writer.write(people_post_head(server, 100) + b'{"name": "Ana')
        await writer.drain()
        started = time.monotonic()
        sent = await closed_within(reader, 6)
        writer.close()
        assert time.monotonic() - started < 4
        parsed = parse_response(sent)
        assert parsed is not None, sent
        status, _headers, body = parsed
        assert status == 408
        assert json.loads(body)["code"] == "REQUEST_TIMEOUT"
        # A part every 0.4 s: never a pause of a second, so it is served in full.
        body_bytes = json.dumps({"name": "Ana Lúcia Ferreira"}).encode()
        reader, writer = await connect(server)
        writer.write(people_post_head(server, len(body_bytes)))
        for i in range(0, len(body_bytes), 4):
            await asyncio.sleep(0.4)
            writer.write(body_bytes[i : i + 4])
            await writer.drain()
        status, _headers, answer = await asyncio.wait_for(read_response(reader), 5)
        writer.close()
        assert status == 201, answer
        async with httpx.AsyncClient(base_url=server.url) as client:
            people = await client.get("/people", headers={"x-service-api-key": key})
        names = [p["name"] for p in people.json()["data"]]
        assert names.count("Ana Lúcia Ferreira") == 1 and "Ana" not in names
    assert "Traceback" not in server.stderr, server.stderr


async def test_a_client_that_stops_reading_its_answer_is_cut_off_after_the_send_timeout(
    tmp_path: Path,
) -> None:
    """A client that asks for a large file and reads none of it held the request (waiting
    to write), the stored file open and its connection for as long as it liked; one that
    reads slowly but steadily gets all of it. The file is larger than what the kernel's
    buffers take (up to 4 MiB for a socket here), so the server's own writes stall."""
    async with serving(tmp_path, send_timeout_seconds="1") as server:
        link = (await avatar_link(server)).removeprefix(server.url)
        size = 12 * MIB
        # a large file under the same link (the test's own folder, written before any read)
        stored = next(tmp_path.rglob(link.split("?", 1)[0].rsplit("/", 1)[1]))  # noqa: ASYNC240
        stored.write_bytes(PNG_1X1 + bytes(size - len(PNG_1X1)))
        port = int(server.url.rsplit(":", 1)[1])
        request = f"GET {link} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()

        def small_window(window: int) -> socket.socket:
            sock = socket.socket()
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, window)  # before connecting
            sock.connect(("127.0.0.1", port))
            sock.setblocking(False)
            return sock

        # Asks, then reads nothing for four times the bound.
        reader, writer = await asyncio.open_connection(sock=small_window(4096))
        writer.write(request)
        await writer.drain()
        await asyncio.sleep(4)
        received = b""
        with contextlib.suppress(ConnectionError):
            async with asyncio.timeout(10):
                while chunk := await reader.read(MIB):
                    received += chunk
        writer.close()
        assert received.startswith(b"HTTP/1.1 200"), received[:200]
        assert len(received) < size  # cut off: the rest was never sent
        # Reads a part every 0.1 s: never stalled for a second, so it gets the whole file.
        reader, writer = await asyncio.open_connection(sock=small_window(256 * 1024))
        writer.write(request)
        await writer.drain()
        whole = await asyncio.wait_for(read_chunked_slowly(reader), 60)
        writer.close()
        assert len(whole) == size


async def read_chunked_slowly(reader: asyncio.StreamReader) -> bytes:
    """The body of one chunked 200 response, read a part every 0.1 s."""
    received = b""
    while not received.endswith(b"\r\n0\r\n\r\n"):
        await asyncio.sleep(0.1)
        chunk = await reader.read(MIB)
        assert chunk, "closed before the whole answer"
        received += chunk
    head, _, rest = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200"), head
    body = bytearray()
    while True:
        line, _, rest = rest.partition(b"\r\n")
        length = int(line, 16)
        if not length:
            return bytes(body)
        body += rest[:length]
        rest = rest[length + 2 :]
