from __future__ import annotations

from typing import Any

from pydantic import Field

from officehub.kit.schemas import ApiModel


class EventTypeOut(ApiModel):
    name: str
    group: str
    description: str
    example_payload: dict[str, Any] = Field(description="A payload of this event (``data``)")
    payload_schema: dict[str, Any] = Field(
        description="The JSON Schema (2020-12) of the payload: the webhook body's ``data``"
    )


class EventTypeList(ApiModel):
    data: list[EventTypeOut]
    total_results: int
    total_pages: int
