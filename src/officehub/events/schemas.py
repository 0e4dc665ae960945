from __future__ import annotations

from typing import Any

from officehub.kit.schemas import ApiModel


class EventTypeOut(ApiModel):
    name: str
    group: str
    description: str
    example_payload: dict[str, Any]


class EventTypeList(ApiModel):
    data: list[EventTypeOut]
    total_results: int
    total_pages: int
