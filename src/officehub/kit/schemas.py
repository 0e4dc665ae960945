"""Base models: snake_case in Python, camelCase on the wire."""

from __future__ import annotations

import re
from datetime import date
from functools import cache
from types import UnionType
from typing import Annotated, Any, ClassVar, Union, get_args, get_origin

from pydantic import (
    AwareDatetime,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)
from pydantic.alias_generators import to_camel

from officehub.kit.errors import ValidationFailed
from officehub.kit.ids import ID_PATTERN, WHITESPACE_CLASS


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


class _LongTextMarker:
    def __repr__(self) -> str:
        return "LONG_TEXT"


LONG_TEXT = _LongTextMarker()
LongText = Annotated[str, LONG_TEXT]
"""A string of several lines (a description, a message): it may hold tab and line breaks."""

# Control characters (Unicode category Cc) and the Unicode line and paragraph separators
# are refused in single-line strings; long text may hold tab, LF and CR (CRLF line breaks).
# Spelled as regex text so that the same classes check bodies and state the rule in the
# OpenAPI document (``pattern``), read alike by Python, Rust and ECMAScript engines.
SINGLE_LINE_REFUSED = r"\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069"
LONG_TEXT_REFUSED = r"\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f"
_SINGLE_LINE_REFUSED = re.compile(f"[{SINGLE_LINE_REFUSED}]")
"""C0 and C1 controls, line and paragraph separators, and the bidirectional embeddings,
overrides and isolates (U+202A-E, U+2066-9): a name holding U+202E reads reversed on every
screen that shows it (a spoofed file or client name). Right-to-left text needs none of
them; the marks U+200E/U+200F stay allowed."""
_LONG_TEXT_REFUSED = re.compile(f"[{LONG_TEXT_REFUSED}]")
SINGLE_LINE_PATTERN = f"^[^{SINGLE_LINE_REFUSED}]*$"
_LINE = f"[^{SINGLE_LINE_REFUSED}]*"
NON_BLANK_PATTERN = f"^{_LINE}[^{SINGLE_LINE_REFUSED}{WHITESPACE_CLASS}]{_LINE}$"
"""A single line that is not blank: what a name stripped of white space and then at least one
character long is, said in the document (``non_blank_schema``)."""


def non_blank_schema(max_length: int) -> WithJsonSchema:
    """The document's schema of a stripped name of 1 to ``max_length`` characters."""
    return WithJsonSchema(
        {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": NON_BLANK_PATTERN}
    )


LONG_TEXT_PATTERN = f"^[^{LONG_TEXT_REFUSED}]*$"
BODY_ID_PATTERN = rf"^[cC][^{WHITESPACE_CLASS}{SINGLE_LINE_REFUSED}-]{{8,}}$"
"""An id in a body: the id pattern and the single-line rule at once."""
_VISIBLE = f"{WHITESPACE_CLASS}{SINGLE_LINE_REFUSED}"
EMAIL_PATTERN = rf"^[^@{_VISIBLE}]+@[^@{_VISIBLE}]+\.[^@{_VISIBLE}]+$"
"""``^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$`` and the single-line rule at once."""
HTTP_URL_PATTERN = rf"^https?://[^{_VISIBLE}]+$"
"""``^https?://\\S+$`` and the single-line rule at once."""
WEB_URL_PATTERN = rf"^[hH][tT][tT][pP][sS]?://[^{_VISIBLE}]+$"
"""An http or https URL, the scheme in any case (what a link a page shows may be)."""
HEX_COLOR_PATTERN = r"^#[0-9a-fA-F]{6}$"
"""A colour: ``#rrggbb``, nothing a page could read as anything else."""
HOST_URL_PATTERN = rf"^[hH][tT][tT][pP][sS]?://[^/?#{_VISIBLE}]+([/?#][^{SINGLE_LINE_REFUSED}]*)?$"
"""What an outbound URL (webhooks, bridges) looks like: http or https and a host. Its
full rule (a host httpx can parse, a valid IDNA name, no private address) no pattern
states."""


def _holds_long_text(annotation: Any) -> bool:
    if get_origin(annotation) is Annotated:
        if any(meta is LONG_TEXT for meta in get_args(annotation)[1:]):
            return True
    return any(_holds_long_text(arg) for arg in get_args(annotation))


@cache
def _is_long_text(model: type[BaseModel], name: str) -> bool:
    field = model.model_fields[name]
    return any(m is LONG_TEXT for m in field.metadata) or _holds_long_text(field.annotation)


def _refuse_controls(value: Any, refused: re.Pattern[str]) -> None:
    texts = [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else []
    for text in texts:
        found = refused.search(text) if isinstance(text, str) else None
        if found:
            raise ValueError(f"may not contain the control character U+{ord(found[0]):04X}")


def _plain_types(annotation: Any) -> set[Any]:
    """The types a field's annotation admits (``Annotated`` and unions unwrapped)."""
    if get_origin(annotation) is Annotated:
        return _plain_types(get_args(annotation)[0])
    args = get_args(annotation)
    if args and get_origin(annotation) in (UnionType, Union):
        return set().union(*(_plain_types(a) for a in args))
    return {get_origin(annotation) or annotation}


@cache
def _scalar_kind(model: type[BaseModel], name: str) -> str | None:
    """``bool``, ``number`` or ``time`` where the field is one of these (or null) and
    nothing else."""
    types = _plain_types(model.model_fields[name].annotation) - {type(None)}
    if types == {bool}:
        return "bool"
    if types <= {int, float} and types:
        return "number"
    if types and all(
        t is AwareDatetime or (isinstance(t, type) and issubclass(t, date)) for t in types
    ):
        return "time"
    return None


ISO_DATE_START = re.compile(r"\d{4}-\d{2}-\d{2}")
"""How a date or a date-time the document states as text begins: pydantic would also read a
number (or a string of digits) as seconds since 1970."""


def iso_text(value: Any) -> Any:
    """A date or date-time given as ISO 8601 text (or as the object itself, in code)."""
    if isinstance(value, date) or value is None:
        return value
    if isinstance(value, str) and ISO_DATE_START.match(value):
        return value
    raise ValueError("must be ISO 8601 text (aaaa-mm-dd, or aaaa-mm-ddThh:mm:ssZ)")


IsoDateTime = Annotated[AwareDatetime, BeforeValidator(iso_text)]
"""An aware date-time parameter, as ISO 8601 text only."""
IsoDate = Annotated[date, BeforeValidator(iso_text)]
"""A date parameter, as ISO 8601 text only (``to=0`` is a 400, not 1970-01-01)."""


def _state_text_rule(node: Any, pattern: str) -> None:
    """Puts ``pattern`` on every string schema in ``node`` (unions and arrays followed;
    referenced models state their own rule; an id's pattern becomes the body-id one)."""
    if not isinstance(node, dict):
        return
    if node.get("type") == "string" and "enum" not in node and "const" not in node:
        if "pattern" not in node:
            node["pattern"] = pattern
        elif node["pattern"] == ID_PATTERN:
            node["pattern"] = BODY_ID_PATTERN
    for key in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(key, []):
            _state_text_rule(branch, pattern)
    _state_text_rule(node.get("items"), pattern)


def _body_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """``json_schema_extra`` of every body: the document states the control-character rule."""
    properties = schema.get("properties", {})
    not_null: frozenset[str] = getattr(model, "NOT_NULL", frozenset())
    for name, field in model.model_fields.items():
        prop = properties.get(field.alias or name)
        if prop is None:
            continue
        long_text = _is_long_text(model, name)
        _state_text_rule(prop, LONG_TEXT_PATTERN if long_text else SINGLE_LINE_PATTERN)
        if name in not_null:
            _drop_null(prop)
    schema.update(getattr(model, "SCHEMA_RULES", {}))


def _drop_null(prop: dict[str, Any]) -> None:
    """A PATCH field that may be left out but not sent as ``null``: its schema says so."""
    if prop.get("default", 0) is None:
        del prop["default"]
    branches = [b for b in prop.get("anyOf", []) if b.get("type") != "null"]
    if "anyOf" in prop and len(branches) == 1:
        del prop["anyOf"]
        prop.update(branches[0])
    elif "anyOf" in prop:
        prop["anyOf"] = branches


class BodyModel(ApiModel):
    """Request bodies: no text may hold a NUL character (PostgreSQL cannot store one), and
    no string field a control character, except tab and line breaks in ``LongText`` fields.

    The control rule applies to the strings of a field (or of a list field); free-form
    objects (``dict``/``Any`` fields) are checked for NUL only.

    A boolean field takes only ``true``/``false`` and a number field only numbers: the
    document says the type, so ``0``, ``"yes"`` or ``false`` for a number are refused
    rather than coerced.

    The document states both rules: each string schema carries the pattern its field is
    checked against (``_body_schema``).
    """

    model_config = ConfigDict(extra="forbid", json_schema_extra=_body_schema)

    NOT_NULL: ClassVar[frozenset[str]] = frozenset()
    """Fields (Python names) of a partial update that may be left out but not be ``null``;
    the services refuse a ``null`` for them (``refuse_sent_nulls``: 400), and the document
    drops ``null`` from their schemas."""
    SCHEMA_RULES: ClassVar[dict[str, Any]] = {}
    """Rules across fields, as JSON Schema keywords added to the model's schema (``anyOf``,
    ``oneOf``): the document states what the service checks."""

    def refuse_sent_nulls(self) -> None:
        """400 naming the first field of ``NOT_NULL`` (in declaration order) sent as ``null``:
        a partial update may leave such a field out, not clear it."""
        sent = self.model_fields_set
        for name, field in type(self).model_fields.items():
            if name in self.NOT_NULL and name in sent and getattr(self, name) is None:
                raise ValidationFailed.field(f"body.{field.alias or name}", "may not be null")

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        kind = None if info.field_name is None else _scalar_kind(cls, info.field_name)
        if kind == "bool" and value is not None and not isinstance(value, bool):
            raise ValueError("must be a boolean (true or false)")
        if kind == "number" and (isinstance(value, bool | str)):
            raise ValueError("must be a number")
        if kind == "time":
            return iso_text(value)
        return value

    @field_validator("*", mode="after")
    @classmethod
    def _text_rules(cls, value: Any, info: ValidationInfo) -> Any:
        _refuse_nul(value)
        name = info.field_name
        long_text = name is not None and _is_long_text(cls, name)
        _refuse_controls(value, _LONG_TEXT_REFUSED if long_text else _SINGLE_LINE_REFUSED)
        return value


class StrictBodyModel(BodyModel):
    """``BodyModel`` where the spec says "no other keys"."""

    model_config = ConfigDict(extra="forbid")
