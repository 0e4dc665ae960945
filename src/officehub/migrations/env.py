"""Alembic environment: run with a connection handed over by ``officehub.migrate``."""

from __future__ import annotations

from typing import Any, Literal

import sqlalchemy as sa
from alembic import context
from alembic.autogenerate.api import AutogenContext

import officehub.models  # noqa: F401  - registers every table on Base.metadata
from officehub.kit.db import Base, UTCDateTime

connection = context.config.attributes["connection"]


def render_item(type_: str, obj: Any, autogen_context: AutogenContext) -> str | Literal[False]:
    """Renders our column types as the plain types migrations use (see ``types.py``)."""
    if type_ == "type" and isinstance(obj, UTCDateTime):
        return "sa.DateTime(timezone=True)"
    if type_ == "type" and isinstance(obj, sa.JSON):
        autogen_context.imports.add("from officehub.migrations.types import JSON")
        return "JSON"
    return False


context.configure(
    render_item=render_item,
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
