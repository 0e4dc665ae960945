"""Reading a public outside source (DataJud, DJEN): one bounded answer, and why there is none.

Both sources answer JSON over HTTP, both throttle (429 with ``Retry-After``) and both fail
now and then (5xx, timeouts). A caller tells apart what to try again later
(``Unavailable``, with the wait the source asked for) from what will not get better by
asking again (``Refused``: another status, an answer too large). The body is read as it
streams in and given up at ``max_body`` bytes, never held whole beyond that.
"""

from __future__ import annotations

from typing import Any

import httpx

from officehub.kit.outbound.retry import retry_after


class Unavailable(Exception):
    """The source did not answer usefully (429, 5xx, a network failure): try again later."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class Refused(Exception):
    """The source refused the request itself (another 4xx, a body that is not its answer)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


async def read_answer(
    client: httpx.AsyncClient, method: str, url: str, max_body: int, **request: Any
) -> bytes:
    """The body of the source's 200 answer, at most ``max_body`` bytes.

    ``Unavailable`` for 429, a 5xx or a network failure (with the ``Retry-After`` asked
    for); ``Refused`` for another status or a body over ``max_body``."""
    try:
        async with client.stream(method, url, **request) as response:
            if response.status_code == 429 or response.status_code >= 500:
                raise Unavailable(
                    f"HTTP {response.status_code}", retry_after(response.headers.get("retry-after"))
                )
            if response.status_code != 200:
                raise Refused(f"HTTP {response.status_code}")
            raw = bytearray()
            async for chunk in response.aiter_bytes():
                raw += chunk
                if len(raw) > max_body:
                    raise Refused(f"answer larger than {max_body} bytes")
    except httpx.TransportError as exc:
        raise Unavailable(type(exc).__name__) from exc
    return bytes(raw)
