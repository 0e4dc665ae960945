from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin
from officehub.kit.encryption import SealedDocument, SealedText, SealedURL

PENDING, RETRYING, SUCCESS, FAILED = "PENDING", "RETRYING", "SUCCESS", "FAILED"
DELIVERY_STATUSES = (PENDING, SUCCESS, FAILED, RETRYING)
OPEN_STATUSES = (PENDING, RETRYING)
CLAIM_TOKEN_LENGTH = 64


class Webhook(IdMixin, TimestampMixin, Base):
    """A subscription of an office to events, delivered to ``url``.

    ``previous_secret`` still signs deliveries for 24 h after ``secret_rotated_at``;
    ``failing_since`` is the first failed attempt since the last success (5 days → paused).
    """

    __tablename__ = "webhooks"
    __table_args__ = (Index("ix_webhooks_office_id_created_at", "office_id", "created_at"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    description: Mapped[str | None] = mapped_column(String(500))
    url: Mapped[str] = mapped_column(SealedURL("webhooks.url"))  # sealed with credentials
    # Sealed at rest (kit.encryption): read back in clear where a delivery is signed.
    secret: Mapped[str] = mapped_column(SealedText("webhooks.secret"))
    previous_secret: Mapped[str | None] = mapped_column(SealedText("webhooks.previous_secret"))
    secret_rotated_at: Mapped[datetime | None]
    events: Mapped[list[str]] = mapped_column(JSONType)
    is_active: Mapped[bool] = mapped_column(default=True)
    # Custom header values sealed at rest (names in clear).
    headers: Mapped[dict[str, Any] | None] = mapped_column(
        SealedDocument("webhooks.headers", headers=True)
    )
    disabled_reason: Mapped[str | None] = mapped_column(String(500))
    failing_since: Mapped[datetime | None]
    rate_limit_per_second: Mapped[int | None]
    """At most this many delivery attempts begin in any one second (null: no pace)."""
    pace_second: Mapped[int | None]
    """The Unix second ``pace_used`` counts in: every worker reserves its attempts here."""
    pace_used: Mapped[int] = mapped_column(default=0, server_default=text("0"))


class WebhookDelivery(IdMixin, Base):
    """One event for one webhook; ``next_retry_at`` doubles as the claim lease.

    A worker claims a due delivery by moving ``next_retry_at`` past its lease and setting
    ``claim_token``; if it dies, the delivery is simply due again when the lease ends.
    """

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        Index(
            "ix_webhook_deliveries_office_id_webhook_id_event_id",
            "office_id",
            "webhook_id",
            "event_id",
            unique=True,
        ),
        Index(
            "ix_webhook_deliveries_office_id_webhook_id_created_at",
            "office_id",
            "webhook_id",
            "created_at",
        ),
        Index(
            "ix_webhook_deliveries_due",
            "next_retry_at",
            sqlite_where=text("status IN ('PENDING', 'RETRYING')"),
            postgresql_where=text("status IN ('PENDING', 'RETRYING')"),
        ),
        Index("ix_webhook_deliveries_expiry_due", "expires_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    webhook_id: Mapped[str] = mapped_column(ForeignKey("webhooks.id", ondelete="CASCADE"))
    event_id: Mapped[str] = mapped_column(String(32))
    event: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType)
    status: Mapped[str] = mapped_column(String(16))
    status_code: Mapped[int | None]
    response_body: Mapped[str | None] = mapped_column(Text)
    error_message: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int | None]
    attempt_count: Mapped[int] = mapped_column(default=0)
    next_retry_at: Mapped[datetime | None]
    claim_token: Mapped[str | None] = mapped_column(String(CLAIM_TOKEN_LENGTH))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]


class WebhookDeliveryAttempt(IdMixin, Base):
    """Every try of a delivery, as the receiver answered it."""

    __tablename__ = "webhook_delivery_attempts"
    __table_args__ = (
        Index(
            "ix_webhook_delivery_attempts_office_id_delivery_id",
            "office_id",
            "delivery_id",
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    delivery_id: Mapped[str] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE")
    )
    number: Mapped[int]
    status_code: Mapped[int | None]
    response_body: Mapped[str | None] = mapped_column(Text)
    error_message: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int]
    worker_id: Mapped[str | None] = mapped_column(String(128))
    created_at: Mapped[datetime]


class ActionDelivery(IdMixin, Base):
    """A ``FIRE_WEBHOOK`` of an automation rule or a flow step, sent like a delivery.

    Claimed like a delivery (``next_retry_at`` moved past the lease, ``claim_token`` set)
    in a short transaction; the HTTP call is made with no transaction open and its
    outcome recorded in a new one, only while the claim still holds. ``attempts`` keeps
    every try (at most the retry schedule's length plus one, plus manual ones); ``secret``
    signs the body and is never shown.
    """

    __tablename__ = "action_deliveries"
    __table_args__ = (
        Index(
            "ix_action_deliveries_office_id_rule_id_created_at",
            "office_id",
            "rule_id",
            "created_at",
        ),
        Index(
            "ix_action_deliveries_office_id_flow_id_created_at",
            "office_id",
            "flow_id",
            "created_at",
        ),
        Index(
            "ix_action_deliveries_due",
            "next_retry_at",
            sqlite_where=text("status IN ('PENDING', 'RETRYING')"),
            postgresql_where=text("status IN ('PENDING', 'RETRYING')"),
        ),
        Index("ix_action_deliveries_expiry_due", "expires_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    rule_id: Mapped[str | None] = mapped_column(
        ForeignKey("automation_rules.id", ondelete="CASCADE")
    )
    flow_id: Mapped[str | None] = mapped_column(ForeignKey("flows.id", ondelete="CASCADE"))
    event_id: Mapped[str | None] = mapped_column(String(32))
    event: Mapped[str] = mapped_column(String(64))
    url: Mapped[str] = mapped_column(SealedURL("action_deliveries.url"))
    method: Mapped[str] = mapped_column(String(8))
    headers: Mapped[dict[str, Any]] = mapped_column(
        SealedDocument("action_deliveries.headers", headers=True)
    )
    secret: Mapped[str | None] = mapped_column(SealedText("action_deliveries.secret"))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType)
    status: Mapped[str] = mapped_column(String(16))
    status_code: Mapped[int | None]
    response_body: Mapped[str | None] = mapped_column(Text)
    error_message: Mapped[str | None] = mapped_column(Text)
    duration_ms: Mapped[int | None]
    attempt_count: Mapped[int] = mapped_column(default=0)
    attempts: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    next_retry_at: Mapped[datetime | None]
    claim_token: Mapped[str | None] = mapped_column(String(CLAIM_TOKEN_LENGTH))
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
