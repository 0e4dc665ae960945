"""Base models: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator
from pydantic.alias_generators import to_camel


class ApiModel(BaseModel):
    """Responses and lenient request bodies (unknown fields ignored)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, from_attributes=True)


class StrictApiModel(ApiModel):
    """Request bodies where the spec says "no other keys"."""

    model_config = ConfigDict(extra="forbid")


def _refuse_nul(value: Any) -> None:
    if isinstance(value, str):
        if "\x00" in value:
            raise ValueError("text may not contain NUL characters")
    elif isinstance(value, dict):
        for key, item in value.items():
            _refuse_nul(key)
            _refuse_nul(item)
    elif isinstance(value, list | tuple):
        for item in value:
            _refuse_nul(item)


class BodyModel(ApiModel):
    """Request bodies: no text may hold a NUL character (PostgreSQL cannot store one)."""

    @field_validator("*", mode="after")
    @classmethod
    def _no_nul(cls, value: Any) -> Any:
        _refuse_nul(value)
        return value


class StrictBodyModel(BodyModel):
    """``BodyModel`` where the spec says "no other keys"."""

    model_config = ConfigDict(extra="forbid")
