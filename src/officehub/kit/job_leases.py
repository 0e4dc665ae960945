"""The runner's own table: when each periodic job next runs."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base


class JobLease(Base):
    """One row per periodic job: whoever moves ``next_run_at`` forward runs it."""

    __tablename__ = "job_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    next_run_at: Mapped[datetime]
