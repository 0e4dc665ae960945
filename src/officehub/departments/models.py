from __future__ import annotations

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, TimestampMixin


class Department(IdMixin, TimestampMixin, Base):
    __tablename__ = "departments"
    __table_args__ = (Index("ix_departments_office_id_name", "office_id", "name"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
