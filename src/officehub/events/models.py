from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType


class OutboxEvent(IdMixin, Base):
    """An event recorded in the transaction of the change that caused it.

    Each consumer that wants it (webhook fan-out, automation, flows) has its own progress
    row (``ConsumerEvent``), written in the same transaction.
    """

    __tablename__ = "outbox_events"
    __table_args__ = (
        Index("ix_outbox_events_office_id_created_at", "office_id", "created_at"),
        Index("ix_outbox_events_purge_due", "created_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(64))
    data: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime]
    causation_id: Mapped[str | None] = mapped_column(String(32))
    depth: Mapped[int] = mapped_column(default=0)
    conversation_id: Mapped[str | None] = mapped_column(String(32))
    integration_id: Mapped[str | None] = mapped_column(String(32))
    target_webhook_id: Mapped[str | None] = mapped_column(String(32))
    # The record the event is about (its conversation, else the payload's ``id``) and the
    # event's place among that subject's events (1, 2, …; ``EventSubject``). Null for an
    # event about no record, and for events recorded before issue 44.
    subject: Mapped[str | None] = mapped_column(String(40))
    sequence: Mapped[int | None]


class EventSubject(Base):
    """The last sequence given to a subject's events in an office. ``emit`` increments it
    with an upsert in the emitting transaction, so two transactions emitting about the same
    subject take turns on its row: the sequence follows the order they commit in."""

    __tablename__ = "event_subjects"

    office_id: Mapped[str] = mapped_column(
        ForeignKey("offices.id", ondelete="CASCADE"), primary_key=True
    )
    subject: Mapped[str] = mapped_column(String(40), primary_key=True)
    last_sequence: Mapped[int]


class ConsumerEvent(Base):
    """One consumer's progress on one event: the idempotency record per event and consumer.

    ``emit`` adds one row per consumer in the change's transaction. A worker leases a row
    (``lease_until``, ``claim_token``), handles the event and sets ``done_at`` in the same
    transaction as the handler's changes, so the event is acted on once. Rows of one
    ``ordering_key`` (the conversation, else the event itself) are handled in ``seq`` order:
    a row is claimable only when no earlier row of its key is still undone.
    """

    __tablename__ = "outbox_consumer_events"
    __table_args__ = (
        Index(
            "ix_outbox_consumer_events_office_id_consumer_event_id",
            "office_id",
            "consumer",
            "event_id",
            unique=True,
        ),
        Index(
            "ix_outbox_consumer_events_due",
            "consumer",
            "ordering_key",
            "seq",
            sqlite_where=text("done_at IS NULL"),
            postgresql_where=text("done_at IS NULL"),
        ),
    )

    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    consumer: Mapped[str] = mapped_column(String(32))
    event_id: Mapped[str] = mapped_column(ForeignKey("outbox_events.id", ondelete="CASCADE"))
    ordering_key: Mapped[str] = mapped_column(String(40))
    created_at: Mapped[datetime]
    lease_until: Mapped[datetime | None]
    claim_token: Mapped[str | None] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(default=0)
    done_at: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(String(1000))
