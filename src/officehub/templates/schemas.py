from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StringConstraints
from typing_extensions import TypeAliasType

from officehub.kit.schemas import ApiModel, BodyModel

TemplateStatus = TypeAliasType(
    "TemplateStatus", Literal["APPROVED", "PENDING", "REJECTED", "PAUSED"]
)


class TemplateIn(BodyModel):
    name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    status: TemplateStatus
    category: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    language: Annotated[str, StringConstraints(min_length=1, max_length=16)]
    components: Annotated[list[dict[str, Any]], Field(max_length=20)]
    id: Annotated[str, StringConstraints(min_length=1, max_length=128)] | None = None


class TemplateCatalogueIn(BodyModel):
    data: Annotated[list[TemplateIn], Field(max_length=1000)]


class TemplateOut(ApiModel):
    """``id`` is the platform's template id when known, else the catalogue entry's own."""

    name: str
    status: TemplateStatus
    category: str
    language: str
    components: list[dict[str, Any]]
    id: str


class TemplateList(ApiModel):
    data: list[TemplateOut]
