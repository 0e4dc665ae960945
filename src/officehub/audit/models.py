from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType


class AuditEntry(IdMixin, Base):
    """One read or change. ``seq`` numbers an office's entries from 1 with no gap; the
    unique index on (office, seq) is what keeps two writers from forking the chain: the
    second to take a number fails and takes the next. ``hash`` is the SHA-256 of the
    entry's fields and ``previous_hash`` (``officehub.audit.chain``)."""

    __tablename__ = "audit_entries"
    __table_args__ = (
        Index("ux_audit_entries_office_id_seq", "office_id", "seq", unique=True),
        Index("ix_audit_entries_office_id_at", "office_id", "at"),
        Index("ix_audit_entries_office_id_person_id_at", "office_id", "person_id", "at"),
        Index("ix_audit_entries_office_id_actor_id_at", "office_id", "actor_id", "at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    seq: Mapped[int] = mapped_column(BigInteger)
    at: Mapped[datetime]
    actor_kind: Mapped[str] = mapped_column(String(8))
    actor_id: Mapped[str] = mapped_column(String(64))
    actor_address: Mapped[str] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    record_type: Mapped[str] = mapped_column(String(32))
    record_id: Mapped[str | None] = mapped_column(String(64))
    # The contact concerned, by id only (no foreign key: the trail outlives an erasure).
    person_id: Mapped[str | None] = mapped_column(String(32))
    # What a system run did, as counts (``{"closedConversations": 3}``): no personal data.
    details: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    previous_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
