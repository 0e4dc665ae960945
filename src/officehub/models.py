"""Imports every domain's tables so ``Base.metadata`` knows them all (Alembic, tests)."""

from __future__ import annotations

from officehub.events.models import JobLease, OutboxEvent
from officehub.offices.models import ApiKey, Office

__all__ = ["ApiKey", "JobLease", "Office", "OutboxEvent"]
