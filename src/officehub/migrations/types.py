"""Column types shared by the migration scripts (the same the models use)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

JSON = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def ts(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def ident(name: str = "id", nullable: bool = False, primary_key: bool = False) -> sa.Column[str]:
    return sa.Column(name, sa.String(32), nullable=nullable, primary_key=primary_key)
