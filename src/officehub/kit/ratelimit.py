"""Requests per API key, counted by the ``limits`` library: in this process's memory, or in
Redis when ``OFFICEHUB_REDIS_URL`` is set (then every process shares the count).

Fixed windows (one counter per key and window: one storage call per request). In memory
the count is a dict entry of this process (``LocalWindows``: no await, no lock, O(1));
``limits``' own memory storage costs several awaits and a lock per hit. A request
over a limit answers 429 ``RATE_LIMITED`` with ``Retry-After`` and ``X-RateLimit-Limit``,
``X-RateLimit-Remaining`` and ``X-RateLimit-Reset`` (epoch seconds). If Redis cannot be
reached the request is let through and a warning logged: a limiter outage is no outage of
the API.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import Any

from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import FixedWindowRateLimiter

logger = logging.getLogger("officehub.ratelimit")


@dataclass(frozen=True)
class Refusal:
    """The limit a request went over, and when its window ends (epoch seconds)."""

    limit: RateLimitItem
    reset_at: float

    @property
    def retry_after(self) -> int:
        return max(1, math.ceil(self.reset_at - time.time()))

    def headers(self) -> list[tuple[bytes, bytes]]:
        return [
            (b"retry-after", str(self.retry_after).encode()),
            (b"x-ratelimit-limit", str(self.limit.amount).encode()),
            (b"x-ratelimit-remaining", b"0"),
            (b"x-ratelimit-reset", str(math.ceil(self.reset_at)).encode()),
        ]

    def details(self) -> str:
        return f"At most {self.limit}; retry in {self.retry_after} s"


class RateLimiter:
    """``limits``: e.g. ``"100/second;6000/minute"`` (every one holds); empty: no limit."""

    def __init__(self, limits: str, redis_url: str = "", key_prefix: str = "officehub") -> None:
        self.items = parse_many(limits) if limits.strip() else []
        self._pool: Any = None
        self.local: LocalWindows | None = None
        storage: Storage = MemoryStorage()
        if not redis_url:
            self.local = LocalWindows()
        else:
            import redis.asyncio  # only with OFFICEHUB_REDIS_URL: the "redis" extra

            # Our own pool, so that ``close`` can let go of its connections.
            self._pool = redis.asyncio.ConnectionPool.from_url(redis_url)
            storage = RedisStorage(
                _async_uri(redis_url),
                implementation="redispy",
                key_prefix=key_prefix,
                connection_pool=self._pool,
            )
        self.strategy = FixedWindowRateLimiter(storage)
        self._warned = False

    async def hit(self, key_id: str) -> Refusal | None:
        """Counts a request of the key; the limit it went over, if any."""
        if self.local is not None:
            return self.local.hit(self.items, key_id)
        try:
            for item in self.items:
                if not await self.strategy.hit(item, "key", key_id):
                    stats = await self.strategy.get_window_stats(item, "key", key_id)
                    return Refusal(item, stats.reset_time)
        except Exception:
            if not self._warned:
                logger.warning("rate limit storage unreachable: requests are let through")
                self._warned = True
            return None
        self._warned = False
        return None

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.disconnect()


def _async_uri(url: str) -> str:
    """``redis://…`` as ``limits`` names its asyncio Redis storage (``async+redis://…``)."""
    return url if url.startswith("async+") else f"async+{url}"


class LocalWindows:
    """Fixed windows counted in this process's memory: ``{(key, limit's index): [ends_at,
    count]}``.

    As ``limits``' fixed windows: a window starts with a key's first request and lasts the
    limit's period; every request counts, a refused one too. Ended windows are swept when
    the table has grown past ``sweep_at`` entries, so memory stays bounded by the keys
    active within the longest period. Every step is synchronous: under asyncio no other
    request runs in between, so no lock is needed.
    """

    def __init__(self, sweep_at: int = 10_000, clock: Any = time.time) -> None:
        self.sweep_at = sweep_at
        self.clock = clock
        self._windows: dict[tuple[str, int], list[float]] = {}

    def hit(self, items: list[RateLimitItem], key_id: str) -> Refusal | None:
        now = self.clock()
        for index, item in enumerate(items):
            window = self._windows.get((key_id, index))
            if window is None or window[0] <= now:
                if len(self._windows) >= self.sweep_at:
                    self._sweep(now)
                window = [now + item.get_expiry(), 0.0]
                self._windows[(key_id, index)] = window
            window[1] += 1
            if window[1] > item.amount:
                return Refusal(item, window[0])
        return None

    def __len__(self) -> int:
        return len(self._windows)

    def _sweep(self, now: float) -> None:
        for key in [k for k, w in self._windows.items() if w[0] <= now]:
            del self._windows[key]
