"""Base models: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """Responses and lenient request bodies (unknown fields ignored)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)


class StrictApiModel(ApiModel):
    """Request bodies where the spec says "no other keys"."""

    model_config = ConfigDict(extra="forbid")
