"""What one client may make a server process hold: ``officehub serve``'s HTTP protocol.

uvicorn's httptools protocol (the fast one, and the one ``uvicorn.run`` picks when
httptools is installed, as it is here) bounds neither a request's headers nor the time a
client takes to send them: a 64 MiB header was held whole in memory, and a connection that
sends nothing, or a byte now and then, stayed open for ever. ``BoundedHttpToolsProtocol``
adds, per the settings:

- ``max_header_bytes``: a request line and headers larger than this are answered 431
  ``HEADERS_TOO_LARGE`` and the connection is closed; no more than that (and one read of
  the socket) is ever held;
- ``header_timeout_seconds``: a request's line and headers (and a new connection's first
  request) must arrive within this; else the connection is closed (408 when some of the
  request had come);
- ``body_timeout_seconds``: a request's body may pause at most this long between two
  reads of it (nginx's ``client_body_timeout``), or it is answered 408 (when no answer had
  begun) and the connection is closed; a pause that is ours (reading paused while the app
  has not taken what came, a ``100 Continue`` not yet sent) does not count;
- ``send_timeout_seconds``: a client that takes nothing of an answer waiting for it
  (uvicorn's write buffer over its high-water mark, and not shrinking) for this long is
  cut off (nginx's ``send_timeout``): the answer held in memory for it goes, and so does a
  request waiting to write more;
- ``max_connections``: uvicorn's ``limit_concurrency``, answered as our other errors are
  (503 ``SERVER_BUSY`` with ``Retry-After``, JSON) instead of uvicorn's plain text.

uvicorn itself closes an idle keep-alive connection (``keepalive_timeout_seconds``, its
``timeout_keep_alive``). The rest of an over-limit body is read and discarded by the
request middleware (``body_discard_bytes``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from uvicorn.config import Config
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol
from uvicorn.server import ServerState

from officehub.kit.config import get_settings
from officehub.kit.errors import error_payload
from officehub.kit.stream_slots import EVENT_STREAM

PROTOCOL = "officehub.kit.http_protocol:BoundedHttpToolsProtocol"
"""What ``officehub serve`` passes uvicorn as ``http``: a name each worker process imports."""

BUSY_RETRY_AFTER_SECONDS = 1


def _response(status: int, code: str, message: str, details: str, extra: str = "") -> bytes:
    body = json.dumps(error_payload(status, code, message, details)).encode()
    head = (
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        f"{extra}connection: close\r\n\r\n"
    ).encode()
    return STATUS_LINE[status] + head + body


def _asgi_answer(status: int, code: str, message: str, details: str, extra: dict[str, str]) -> Any:
    """An ASGI app that answers one fixed JSON error and closes the connection."""
    body = json.dumps(error_payload(status, code, message, details)).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
        *((k.encode(), v.encode()) for k, v in extra.items()),
    ]

    async def answer(_scope: Any, _receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    return answer


_BUSY = _asgi_answer(
    503,
    "SERVER_BUSY",
    "The service is busy",
    "This process serves as many connections as it may; retry shortly.",
    {"retry-after": str(BUSY_RETRY_AFTER_SECONDS)},
)


class EndsEventStreamsAtShutdown(HttpToolsProtocol):
    """At a server's shutdown, an open server-sent event stream (a request marked
    ``EVENT_STREAM``) is closed at once: uvicorn would wait for its response to end, which
    for a live stream is its whole lifetime (``stream_max_seconds``, 10 minutes), holding a
    restart or a deploy that long. The client reconnects, with ``Last-Event-ID``, to the
    server that replaces this one; other requests finish as uvicorn lets them."""

    def shutdown(self) -> None:
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and cycle.scope.get(EVENT_STREAM):
            self.transport.close()  # the app sees the client gone; the stream ends
            return
        super().shutdown()


class BoundedHttpToolsProtocol(EndsEventStreamsAtShutdown):
    """uvicorn's httptools protocol with a bound on header size and header time, which
    closes event streams at shutdown."""

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        settings = get_settings()
        self.max_header_bytes = settings.max_header_bytes
        self.header_timeout = settings.header_timeout_seconds
        # Checked here, to answer in JSON; uvicorn's own check (plain text) stands down.
        self.max_connections = self.limit_concurrency
        self.limit_concurrency = None
        self._too_large = _asgi_answer(
            431,
            "HEADERS_TOO_LARGE",
            "Request header fields too large",
            f"The request line and headers may be at most {self.max_header_bytes} bytes.",
            {},
        )
        self._in_head = True  # a new connection waits for its first request's head
        self._head_seen = 0  # bytes received while a head was incomplete
        self._head_size = 0  # the request line and headers parsed so far
        self._head_timer: asyncio.TimerHandle | None = None
        self._refused = False
        self.body_discard = settings.body_discard_bytes
        self._discard_left = 0
        self.body_timeout = settings.body_timeout_seconds
        self._body_at = 0.0  # when the incomplete body last received something
        self._body_timer: asyncio.TimerHandle | None = None
        self.send_timeout = settings.send_timeout_seconds
        self._unsent = 0  # what the write buffer held at the last check of a stalled reader
        self._send_timer: asyncio.TimerHandle | None = None

    # Connection
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # type: ignore[arg-type]
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        if self._body_timer is not None:
            self._body_timer.cancel()
            self._body_timer = None
        self._disarm_send_timer()
        super().connection_lost(exc)

    # Flow control: the transport's write buffer over its high-water mark, then under it
    def pause_writing(self) -> None:
        super().pause_writing()
        if self._send_timer is None:
            self._unsent = self.transport.get_write_buffer_size()
            self._send_timer = self.loop.call_later(self.send_timeout, self._reader_stalled)

    def resume_writing(self) -> None:
        self._disarm_send_timer()
        super().resume_writing()

    def data_received(self, data: bytes) -> None:
        if self._refused:  # answered: nothing more is parsed or held
            self._discard_left -= len(data)
            if self._discard_left < 0:
                self.transport.close()
            return
        super().data_received(data)
        if self._in_head and not self._refused:
            self._head_seen += len(data)
            if self._head_seen > self.max_header_bytes:
                self._refuse_head()
        elif self.cycle is not None and self.cycle.more_body and not self._refused:
            # a body still incomplete: it has this long until its next part
            self._body_at = self.loop.time()
            if self._body_timer is None:
                self._body_timer = self.loop.call_later(self.body_timeout, self._body_paused)

    # Parser callbacks
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_size = 0
        self._arm_head_timer()

    def on_url(self, url: bytes) -> None:
        super().on_url(url)
        self._head_size += len(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        super().on_header(name, value)
        self._head_size += len(name) + len(value) + 4

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._head_seen = 0
        self._disarm_head_timer()
        substitute = None
        if self._head_size > self.max_header_bytes:
            substitute = self._too_large
        elif self.max_connections is not None and (
            len(self.connections) >= self.max_connections or len(self.tasks) >= self.max_connections
        ):
            substitute = _BUSY
        if substitute is None:
            super().on_headers_complete()
            return
        app = self.app
        self.app = substitute  # the request is answered by it, whatever its route
        try:
            super().on_headers_complete()
        finally:
            self.app = app

    # Bounds
    def _refuse_head(self) -> None:
        """431 for a head still incomplete past the bound; the connection is closed."""
        self._refused = True
        self._disarm_head_timer()
        self.transport.write(
            _response(
                431,
                "HEADERS_TOO_LARGE",
                "Request header fields too large",
                f"The request line and headers may be at most {self.max_header_bytes} bytes.",
            )
        )
        self.parser = None  # type: ignore[assignment]  # what it held goes now
        # The client is likely still sending: closing now, on unread bytes, would reset
        # the connection before it reads the answer. The answer is followed by our end of
        # the connection; what the client still sends is read and dropped, up to a bound
        # of bytes and time, then the connection is closed.
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self._discard_left = self.body_discard
        self.loop.call_later(self.header_timeout, self.transport.close)

    def _arm_head_timer(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.header_timeout, self._head_timed_out)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or not self._in_head:
            return
        if self._head_seen or self._head_size:  # part of a request came: say why
            self._time_out(
                f"The request line and headers must arrive within {self.header_timeout} s."
            )
        self._refused = True
        self.transport.close()

    def _body_paused(self) -> None:
        self._body_timer = None
        cycle = self.cycle
        if self.transport.is_closing() or self._refused or cycle is None or not cycle.more_body:
            return
        now = self.loop.time()
        if self.flow.read_paused or cycle.waiting_for_100_continue:
            self._body_at = now  # the pause is ours: the app has not asked for more yet
        left = self._body_at + self.body_timeout - now
        if left > 0:
            self._body_timer = self.loop.call_later(left, self._body_paused)
            return
        if not cycle.response_started:
            self._time_out(f"The request's body paused for more than {self.body_timeout} s.")
        self._refused = True
        self.transport.close()  # the app reading the body sees the client gone

    def _disarm_send_timer(self) -> None:
        if self._send_timer is not None:
            self._send_timer.cancel()
            self._send_timer = None

    def _reader_stalled(self) -> None:
        self._send_timer = None
        if self.transport.is_closing() and not self.transport.get_write_buffer_size():
            return
        unsent = self.transport.get_write_buffer_size()
        if unsent < self._unsent:  # the client took some of it since: still reading
            self._unsent = unsent
            self._send_timer = self.loop.call_later(self.send_timeout, self._reader_stalled)
            return
        self._refused = True
        self.transport.abort()  # close() would wait for the client to take the rest

    def _time_out(self, details: str) -> None:
        """A 408 ``REQUEST_TIMEOUT`` written to the client (the connection then closed)."""
        self.transport.write(_response(408, "REQUEST_TIMEOUT", "Request timeout", details))
