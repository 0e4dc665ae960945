"""Requests per API key, counted by the ``limits`` library: in this process's memory, or in
Redis when ``OFFICEHUB_REDIS_URL`` is set (then every process shares the count).

Fixed windows (one counter per key and window: one storage call per request). A request
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
        storage: Storage = MemoryStorage()
        if redis_url:
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
