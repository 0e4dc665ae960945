from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, Float, ForeignKey, Index, Integer, String, false
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin
from officehub.kit.encryption import SealedDocument


class AutomationRule(IdMixin, TimestampMixin, Base):
    """``conditions``, ``actions`` and ``else_actions`` are stored as the API shows them.

    The evaluation index finds an office's enabled rules of one trigger, in priority order,
    without reading any other rule.
    """

    __tablename__ = "automation_rules"
    __table_args__ = (
        Index(
            "ix_automation_rules_office_id_trigger_event_enabled_priority",
            "office_id",
            "trigger_event",
            "enabled",
            "priority",
        ),
        Index("ix_automation_rules_office_id_created_at", "office_id", "created_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    integration_id: Mapped[str | None] = mapped_column(
        ForeignKey("integrations.id", ondelete="CASCADE")
    )
    name: Mapped[str] = mapped_column(String(100))
    enabled: Mapped[bool] = mapped_column(Boolean)
    trigger_event: Mapped[str] = mapped_column(String(64))
    conditions: Mapped[dict[str, Any]] = mapped_column(JSONType)
    # A FIRE_WEBHOOK's secret, header values and URL are sealed at rest (kit.encryption).
    actions: Mapped[list[dict[str, Any]]] = mapped_column(
        SealedDocument("automation_rules.actions")
    )
    else_actions: Mapped[list[dict[str, Any]] | None] = mapped_column(
        SealedDocument("automation_rules.else_actions")
    )
    priority: Mapped[float] = mapped_column(Float)
    # Rules that behave (issue 43): act once per conversation; stand aside while a person
    # has the conversation.
    run_once_per_conversation: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )
    skip_while_human_assigned: Mapped[bool] = mapped_column(
        Boolean, default=False, server_default=false()
    )
    # The runs that failed since the last one that did not (an action failed: the console's
    # alert), and the newest failure: {at, runId, eventId, event, action, error}.
    failure_count: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    last_failure: Mapped[dict[str, Any] | None] = mapped_column(JSONType, nullable=True)


class AutomationRuleConversation(Base):
    """A ``runOncePerConversation`` rule has acted in this conversation: the primary key
    holds "once" against two events handled at the same time."""

    __tablename__ = "automation_rule_conversations"

    rule_id: Mapped[str] = mapped_column(
        ForeignKey("automation_rules.id", ondelete="CASCADE"), primary_key=True
    )
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True
    )
    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime]


class AutomationRun(IdMixin, Base):
    """One rule's handling of one event; unique per (rule, event): a rule acts once."""

    __tablename__ = "automation_runs"
    __table_args__ = (
        Index(
            "ix_automation_runs_office_id_rule_id_event_id",
            "office_id",
            "rule_id",
            "event_id",
            unique=True,
        ),
        Index(
            "ix_automation_runs_office_id_rule_id_created_at", "office_id", "rule_id", "created_at"
        ),
        Index("ix_automation_runs_purge_due", "created_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    rule_id: Mapped[str] = mapped_column(ForeignKey("automation_rules.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(String(32))
    event_name: Mapped[str] = mapped_column(String(64))
    conversation_id: Mapped[str | None] = mapped_column(String(32))
    causation_id: Mapped[str | None] = mapped_column(String(32))
    depth: Mapped[int]
    branch: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(String(500))
    outcomes: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    created_at: Mapped[datetime]


class AutomationPause(Base):
    """Rules stop for a conversation until ``until`` (null: until resumed)."""

    __tablename__ = "automation_pauses"

    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True
    )
    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    until: Mapped[datetime | None]
    resume_on_template_sent: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime]


class CardColumnEntry(Base):
    """A card has entered a column at least once (``restartOnReturn`` false fires on the
    first entry only). Recorded by the automation consumer for every create and move."""

    __tablename__ = "automation_card_column_entries"

    card_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    column_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    created_at: Mapped[datetime]
