from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin


class Office(IdMixin, TimestampMixin, Base):
    __tablename__ = "offices"

    name: Mapped[str] = mapped_column(String(200))


class ApiKey(IdMixin, Base):
    __tablename__ = "api_keys"
    __table_args__ = (Index("ix_api_keys_office_id_created_at", "office_id", "created_at"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    key_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    permissions: Mapped[list[str]] = mapped_column(JSONType)
    created_at: Mapped[datetime]
    revoked_at: Mapped[datetime | None]


class OfficeSettings(Base):
    """The office's own settings (``GET|PATCH /office``), one row per office made on the
    first change; no row, or a null column, means the service's default. More settings
    come as more columns."""

    __tablename__ = "office_settings"

    office_id: Mapped[str] = mapped_column(
        ForeignKey("offices.id", ondelete="CASCADE"), primary_key=True
    )
    # The words a client sends, alone, to stop (and to resume) marketing messages; null:
    # the defaults (``SAIR``, ``PARAR``, ``STOP``; ``VOLTAR``).
    opt_out_keywords: Mapped[list[str] | None] = mapped_column(JSONType)
    opt_in_keywords: Mapped[list[str] | None] = mapped_column(JSONType)
    # Retention (issue 30): closed conversations erased, and webhook delivery logs deleted,
    # this many days after closing (after being made); null: kept (off).
    closed_conversations_days: Mapped[int | None]
    webhook_deliveries_days: Mapped[int | None]
    # The office's IANA time zone; null: ``DEFAULT_TIME_ZONE`` (``offices.settings``).
    time_zone: Mapped[str | None] = mapped_column(String(64))
    updated_at: Mapped[datetime]
