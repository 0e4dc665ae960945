from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.cases.models import CaseMovement as CaseMovement
from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin
from officehub.kit.encryption import SealedDocument


class Flow(IdMixin, TimestampMixin, Base):
    """``content`` is stored as the API shows it: ``{steps, initialStepId}``."""

    __tablename__ = "flows"
    __table_args__ = (
        Index("ix_flows_office_id_inbox_id_created_at", "office_id", "inbox_id", "created_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    inbox_id: Mapped[str] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text)
    color: Mapped[str | None] = mapped_column(String(32))
    is_social_flow: Mapped[bool] = mapped_column(Boolean)
    # A FIRE_WEBHOOK step's URL and header values are sealed at rest (kit.encryption).
    content: Mapped[dict[str, Any]] = mapped_column(SealedDocument("flows.content"))


class FlowSession(IdMixin, TimestampMixin, Base):
    """A conversation's run of a flow: one per conversation (unique), changed only by the
    flows consumer, which handles a conversation's events one after the other.

    ``status``: ``RUNNING`` (between steps), ``WAITING`` (a list step awaits the reply),
    ``PAUSED`` (a person took the conversation), ``ENDED``, ``EXPIRED``. ``steps`` is the
    log of steps taken, oldest first (the last ``MAX_LOG`` kept).
    """

    __tablename__ = "flow_sessions"
    __table_args__ = (
        Index(
            "ix_flow_sessions_office_id_conversation_id",
            "office_id",
            "conversation_id",
            unique=True,
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    flow_id: Mapped[str] = mapped_column(ForeignKey("flows.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(16))
    current_step_id: Mapped[str | None] = mapped_column(String(128))
    reasked: Mapped[bool] = mapped_column(Boolean)
    end_reason: Mapped[str | None] = mapped_column(String(32))
    steps: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    last_activity_at: Mapped[datetime] = mapped_column()
