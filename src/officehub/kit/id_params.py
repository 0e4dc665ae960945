"""Id types checked against the spec's pattern: a mismatch answers 400 naming the field."""

from __future__ import annotations

from typing import Annotated

from fastapi import Path
from pydantic import StringConstraints, WithJsonSchema

from officehub.kit.ids import ID_PATTERN

Id = Annotated[str, StringConstraints(pattern=ID_PATTERN)]
"""A body or query field holding an id with the spec's pattern."""

PathId = Annotated[str, Path(pattern=ID_PATTERN, description="An id: c followed by 8+ characters")]
"""A path parameter holding an id with the spec's pattern."""

ServerId = Annotated[str, WithJsonSchema({"type": "string", "pattern": ID_PATTERN})]
"""A response field holding an id the server made: documented with the spec's pattern (a
generated client can check it), not checked again on the way out (every id is made by
``ids.new_id``, which matches it)."""
