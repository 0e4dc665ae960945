from __future__ import annotations

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, TimestampMixin


class LegalArea(IdMixin, TimestampMixin, Base):
    """``office_id`` null marks a default area: every office sees it, none may change it."""

    __tablename__ = "legal_areas"
    __table_args__ = (Index("ix_legal_areas_office_id_name", "office_id", "name"),)

    office_id: Mapped[str | None] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    color: Mapped[str] = mapped_column(String(32))


DEFAULT_LEGAL_AREAS = (
    ("clegalarea000000000000001", "Trabalhista", "#1E88E5"),
    ("clegalarea000000000000002", "Cível", "#43A047"),
    ("clegalarea000000000000003", "Previdenciário", "#FB8C00"),
    ("clegalarea000000000000004", "Família", "#8E24AA"),
    ("clegalarea000000000000005", "Criminal", "#E53935"),
    ("clegalarea000000000000006", "Tributário", "#6D4C41"),
    ("clegalarea000000000000007", "Consumidor", "#00ACC1"),
    ("clegalarea000000000000008", "Empresarial", "#3949AB"),
)
