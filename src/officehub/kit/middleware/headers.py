"""A request header read straight from the ASGI scope, as ``starlette.datastructures.Headers``
reads it (the first header of that name, decoded as latin-1), without building a ``Headers``
(a copy of the list) in each layer that needs one value."""

from __future__ import annotations

from starlette.types import Scope


def first_header(scope: Scope, name: bytes) -> str | None:
    """The first value of the header ``name`` (lowercase, as servers pass names), or None."""
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    for key, value in headers:
        if key == name:
            return value.decode("latin-1")
    return None


def has_header(scope: Scope, name: bytes) -> bool:
    """Whether the request sent a header ``name`` (lowercase)."""
    headers: list[tuple[bytes, bytes]] = scope["headers"]
    for key, _ in headers:
        if key == name:
            return True
    return False
