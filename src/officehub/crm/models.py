"""Funnels, their columns, and the cards (leads) that sit in them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin

COLUMN_KINDS = ("NORMAL", "WON", "LOST")
"""``NORMAL`` holds open leads; ``WON`` and ``LOST`` close them (no time limit runs there)."""
CLOSING_KINDS = ("WON", "LOST")


class Funnel(IdMixin, TimestampMixin, Base):
    __tablename__ = "crm_funnels"
    __table_args__ = (Index("ix_crm_funnels_office_id_inbox_id", "office_id", "inbox_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    inbox_id: Mapped[str] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    card_config: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)


class FunnelColumn(IdMixin, TimestampMixin, Base):
    """``position`` is the column's ``index`` on the wire: 0-based and contiguous per funnel,
    unique per funnel (assigned under the funnel's lock, renumbered in two steps)."""

    __tablename__ = "crm_columns"
    __table_args__ = (
        Index(
            "ux_crm_columns_office_id_funnel_id_position",
            "office_id",
            "funnel_id",
            "position",
            unique=True,
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    funnel_id: Mapped[str] = mapped_column(ForeignKey("crm_funnels.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    color: Mapped[str] = mapped_column(String(32))
    position: Mapped[int]
    kind: Mapped[str] = mapped_column(String(8), default="NORMAL")
    time_limit_days: Mapped[int | None]
    show_badge_progress: Mapped[bool] = mapped_column(default=False)


class Card(IdMixin, TimestampMixin, Base):
    """A lead: one per contact and conversation.

    ``integration_id`` is the conversation's channel, kept so events name it without a lookup.

    ``overdue_at`` is when the current stay passes the column's time limit; it is null when
    the column has none, or once ``crm.lead.overdue`` was emitted for this stay. The partial
    index over it is the overdue job's queue, claimed across offices (hence ``_due``).
    """

    __tablename__ = "crm_cards"
    __table_args__ = (
        Index(
            "ix_crm_cards_office_id_column_id_column_changed_at_id",
            "office_id",
            "column_id",
            "column_changed_at",
            "id",
        ),
        Index(
            "ix_crm_cards_office_id_column_id_user_id_column_changed_at",
            "office_id",
            "column_id",
            "user_id",
            "column_changed_at",
        ),
        Index(
            "ix_crm_cards_office_id_person_id_conversation_id",
            "office_id",
            "person_id",
            "conversation_id",
            unique=True,
        ),
        Index(
            "ux_crm_cards_office_id_person_id_without_conversation",
            "office_id",
            "person_id",
            unique=True,
            sqlite_where=text("conversation_id IS NULL"),
            postgresql_where=text("conversation_id IS NULL"),
        ),
        Index("ix_crm_cards_office_id_conversation_id", "office_id", "conversation_id"),
        Index(
            "ix_crm_cards_overdue_due",
            "overdue_at",
            sqlite_where=text("overdue_at IS NOT NULL"),
            postgresql_where=text("overdue_at IS NOT NULL"),
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    funnel_id: Mapped[str] = mapped_column(ForeignKey("crm_funnels.id", ondelete="CASCADE"))
    column_id: Mapped[str] = mapped_column(ForeignKey("crm_columns.id", ondelete="RESTRICT"))
    person_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    conversation_id: Mapped[str | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL")
    )
    integration_id: Mapped[str | None] = mapped_column(String(32))
    user_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    legal_area_id: Mapped[str | None] = mapped_column(
        ForeignKey("legal_areas.id", ondelete="SET NULL")
    )
    channel: Mapped[str | None] = mapped_column(String(32))
    custom_fields: Mapped[list[dict[str, Any]]] = mapped_column(JSONType, default=list)
    lead_origin: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    column_changed_at: Mapped[datetime]
    overdue_at: Mapped[datetime | None]
    overdue_emitted_at: Mapped[datetime | None]


class ColumnCount(Base):
    """Cards per column and owner (``owner_key`` is the user id, '' when unassigned).

    Kept by database triggers on ``crm_cards`` (migration 0003), so every insert, move,
    reassignment and delete counts, cascades included. The board's totals read these few
    rows instead of counting a column's cards.
    """

    __tablename__ = "crm_column_counts"

    office_id: Mapped[str] = mapped_column(
        ForeignKey("offices.id", ondelete="CASCADE"), primary_key=True
    )
    column_id: Mapped[str] = mapped_column(
        ForeignKey("crm_columns.id", ondelete="CASCADE"), primary_key=True
    )
    owner_key: Mapped[str] = mapped_column(String(32), primary_key=True)
    cards: Mapped[int] = mapped_column(default=0)
