from __future__ import annotations

from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import Timestamp


class DddCount(ApiModel):
    ddd: str
    total: int


class StateCount(ApiModel):
    uf: str
    name: str
    total: int
    ddds: list[DddCount]


class ClientsMap(ApiModel):
    cache_at: Timestamp
    total: int
    states: list[StateCount]


class ClientsMapOut(ApiModel):
    data: ClientsMap
