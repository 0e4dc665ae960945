"""The clients map: conversations by the state (UF) of the contact phone's area code.

The DDD → UF table (67 area codes, 27 states) is package data (``ddd_uf.json``). The
database groups by DDD; the grouping into states happens on those few rows. Each office's
map is cached in the process for five minutes; ``cacheAt`` says when it was computed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from importlib import resources

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.dashboard import repository
from officehub.dashboard.schemas import ClientsMap, DddCount, StateCount
from officehub.kit.timeutil import utcnow

CACHE_TTL = timedelta(minutes=5)


@dataclass(frozen=True)
class State:
    uf: str
    name: str
    ddds: tuple[str, ...]


@cache
def states() -> tuple[State, ...]:
    raw = json.loads(resources.files("officehub.dashboard").joinpath("ddd_uf.json").read_text())
    return tuple(State(s["uf"], s["name"], tuple(s["ddds"])) for s in raw["states"])


@dataclass
class ClientsMapCache:
    ttl: timedelta = CACHE_TTL
    clock: Callable[[], datetime] = utcnow
    entries: dict[str, ClientsMap] = field(default_factory=dict)

    def get(self, office_id: str) -> ClientsMap | None:
        entry = self.entries.get(office_id)
        if entry is None or self.clock() - entry.cache_at >= self.ttl:
            return None
        if _STALE_SINCE.get(office_id, entry.cache_at) > entry.cache_at:
            return None  # computed before an erasure: counted the erased client
        return entry

    def put(self, office_id: str, value: ClientsMap) -> None:
        self.entries[office_id] = value


_STALE_SINCE: dict[str, datetime] = {}
"""When an office's cached maps of this process last went stale (an erasure)."""


def forget_cached(office_id: str) -> None:
    """This process's cached maps of the office are computed afresh (a contact was erased;
    another process's copy, counts only, expires within ``CACHE_TTL``)."""
    _STALE_SINCE[office_id] = utcnow()


def build(counts: dict[str, int], at: datetime) -> ClientsMap:
    rows: list[StateCount] = []
    for state in states():
        ddds = [DddCount(ddd=d, total=counts[d]) for d in state.ddds if counts.get(d)]
        if ddds:
            ddds.sort(key=lambda d: (-d.total, d.ddd))
            rows.append(
                StateCount(
                    uf=state.uf, name=state.name, total=sum(d.total for d in ddds), ddds=ddds
                )
            )
    rows.sort(key=lambda s: (-s.total, s.uf))
    return ClientsMap(cache_at=at, total=sum(s.total for s in rows), states=rows)


async def clients_map(session: AsyncSession, office_id: str, cache_: ClientsMapCache) -> ClientsMap:
    cached = cache_.get(office_id)
    if cached is not None:
        return cached
    value = build(await repository.conversations_by_ddd(session, office_id), cache_.clock())
    cache_.put(office_id, value)
    return value
