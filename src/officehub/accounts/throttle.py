"""Wrong passwords counted per email and per client address (the ``limits`` library, in
memory or in Redis when ``OFFICEHUB_REDIS_URL`` is set, shared by every process).

Only failures count. Once either count is full, every sign-in of that email (or from that
address) answers 429 with ``Retry-After`` until the window ends, the right password
included, so guessing goes no faster by luck. An email nobody has is counted and locked the
same way: the answers never tell whether an account exists. Emails are counted by their
SHA-256 (no address in memory or in Redis). If Redis cannot be reached, sign-ins are heard
unthrottled and a warning is logged (as the key rate limits: an outage of the limiter is no
outage of signing in).
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from typing import Any

from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import FixedWindowRateLimiter

logger = logging.getLogger("officehub.accounts.throttle")


class LoginThrottle:
    def __init__(
        self, email_limits: str, address_limits: str, redis_url: str = "", key_prefix: str = ""
    ) -> None:
        self._limits: dict[str, list[RateLimitItem]] = {
            "login-email": parse_many(email_limits) if email_limits.strip() else [],
            "login-address": parse_many(address_limits) if address_limits.strip() else [],
        }
        self._pool: Any = None
        storage: Storage = MemoryStorage()
        if redis_url:
            import redis.asyncio  # only with OFFICEHUB_REDIS_URL: the "redis" extra

            self._pool = redis.asyncio.ConnectionPool.from_url(redis_url)
            uri = redis_url if redis_url.startswith("async+") else f"async+{redis_url}"
            storage = RedisStorage(
                uri,
                implementation="redispy",
                key_prefix=f"{key_prefix}:login",
                connection_pool=self._pool,
            )
        self.strategy = FixedWindowRateLimiter(storage)

    @staticmethod
    def _subjects(email: str, address: str) -> list[tuple[str, str]]:
        email_hash = hashlib.sha256(email.strip().lower().encode()).hexdigest()
        return [("login-email", email_hash), ("login-address", address)]

    async def locked_for(self, email: str, address: str) -> int | None:
        """Seconds until sign-ins of this email and address are heard again, or ``None``."""
        wait = 0.0
        try:
            for kind, subject in self._subjects(email, address):
                for item in self._limits[kind]:
                    if not await self.strategy.test(item, kind, subject):
                        stats = await self.strategy.get_window_stats(item, kind, subject)
                        wait = max(wait, stats.reset_time - time.time())
        except Exception:
            logger.warning("login throttle storage unreachable: sign-ins are not throttled")
            return None
        return max(1, math.ceil(wait)) if wait > 0 else None

    async def failed(self, email: str, address: str) -> None:
        try:
            for kind, subject in self._subjects(email, address):
                for item in self._limits[kind]:
                    await self.strategy.hit(item, kind, subject)
        except Exception:
            logger.warning("login throttle storage unreachable: a wrong password went uncounted")

    async def close(self) -> None:
        if self._pool is not None:
            await self._pool.disconnect()
