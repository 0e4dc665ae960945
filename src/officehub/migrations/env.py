"""Alembic environment: run with a connection handed over by ``officehub.migrate``."""

from __future__ import annotations

from alembic import context

import officehub.models  # noqa: F401  - registers every table on Base.metadata
from officehub.db import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
