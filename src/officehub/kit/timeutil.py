"""Times are aware UTC datetimes inside, ISO 8601 with milliseconds and ``Z`` outside."""

from __future__ import annotations

from datetime import UTC, datetime
from functools import cache
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, PlainSerializer, WithJsonSchema, create_model
from pydantic.fields import FieldInfo


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """SQLite hands back naive datetimes; every stored time is UTC."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def isoformat(value: datetime) -> str:
    """``2026-03-04T05:06:07.891Z``. ``datetime.isoformat`` rather than ``strftime``: half
    the time, on every timestamp of every response (240 of them in a funnel page)."""
    utc = value if value.tzinfo is UTC else as_utc(value)
    return utc.isoformat(timespec="milliseconds")[:-6] + "Z"


# ``format: date-time`` in the document, so a generated client reads a datetime.
Timestamp = Annotated[
    datetime,
    PlainSerializer(isoformat, return_type=str, when_used="json"),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]


def is_timestamp(field: FieldInfo) -> bool:
    """Whether a model's field is a ``Timestamp``."""
    return field.annotation is datetime and any(
        isinstance(m, PlainSerializer) and m.func is isoformat for m in field.metadata
    )


def is_optional_timestamp(field: FieldInfo) -> bool:
    """Whether a model's field is a ``Timestamp | None``."""
    args = get_args(field.annotation)
    return (
        get_origin(field.annotation) in (Union, UnionType)
        and len(args) == 2
        and type(None) in args
        and any(_is_timestamp_type(a) for a in args)
    )


def _is_timestamp_type(annotation: Any) -> bool:
    return get_origin(annotation) is Annotated and any(
        isinstance(m, PlainSerializer) and m.func is isoformat for m in annotation.__metadata__
    )


@cache
def written_timestamps(model: type[BaseModel]) -> type[BaseModel]:
    """``model``'s twin for writing an answer whose timestamps come already written as
    ``isoformat`` writes them (by the database: ``kit.db.api_timestamp``): each
    ``Timestamp`` field a ``str`` (``Timestamp | None`` a ``str | None``), each nested model
    holding one (alone, in a list or optional) its own twin, every other field as it is
    (name, alias, order, serializer; a twin's field keeps its names and default).

    It only writes: the document and the route keep ``model``. 240 timestamps through
    ``Timestamp``'s serializer (a Python call each) were a funnel board's largest cost
    (docs/performance.md); a ``str`` is written by pydantic-core itself."""
    fields: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if is_timestamp(field):
            fields[name] = (str, FieldInfo(alias=field.alias))
            continue
        if is_optional_timestamp(field):
            fields[name] = (str | None, _written_field(field))
            continue
        annotation = _written(field.annotation)
        if annotation is field.annotation:
            fields[name] = (field.annotation, field)
        else:
            fields[name] = (annotation, _written_field(field))
    return create_model(f"{model.__name__}Written", __config__=model.model_config, **fields)


def _written_field(field: FieldInfo) -> FieldInfo:
    """A twin's field for ``field``: its names and default, not its type's serializer."""
    return FieldInfo(
        alias=field.alias, validation_alias=field.validation_alias, default=field.default
    )


def _written(annotation: Any) -> Any:
    """``annotation`` with the models in it that hold a ``Timestamp`` (a model, a list of
    them, or either or None) replaced by their ``written_timestamps`` twins."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return written_timestamps(annotation) if _holds_timestamps(annotation) else annotation
    args = get_args(annotation)
    if get_origin(annotation) is list and len(args) == 1:
        inner = _written(args[0])
        return annotation if inner is args[0] else list[inner]  # type: ignore[valid-type]
    if isinstance(annotation, UnionType) and len(args) == 2 and type(None) in args:
        [inner] = [a for a in args if a is not type(None)]
        written = _written(inner)
        return annotation if written is inner else written | None
    return annotation


def _holds_timestamps(model: type[BaseModel]) -> bool:
    return any(
        is_timestamp(f) or is_optional_timestamp(f) or _written(f.annotation) is not f.annotation
        for f in model.model_fields.values()
    )
