from __future__ import annotations

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin

TAG_MODULES = ("crm", "conversas", "pessoas", "fast-messages", "tickets")


class Tag(IdMixin, TimestampMixin, Base):
    """``name_key`` is the lower-cased name: one tag of a name per inbox (409 on a second)."""

    __tablename__ = "tags"
    __table_args__ = (
        Index(
            "ix_tags_office_id_inbox_id_name_key", "office_id", "inbox_id", "name_key", unique=True
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    inbox_id: Mapped[str] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    name_key: Mapped[str] = mapped_column(String(100))
    color: Mapped[str] = mapped_column(String(32))
    modules: Mapped[list[str]] = mapped_column(JSONType)
