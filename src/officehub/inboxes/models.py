from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, false
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin
from officehub.kit.encryption import SealedJSON

WHATSAPP_SECRETS = ("accessToken", "appSecret", "verifyToken")
BRIDGE_SECRETS = ("secret",)

INTEGRATION_TYPES = ("WHATSAPP_OFFICIAL", "WHATSAPP", "INSTAGRAM", "WEBCHAT")


class Inbox(IdMixin, TimestampMixin, Base):
    __tablename__ = "inboxes"
    __table_args__ = (Index("ix_inboxes_office_id_name", "office_id", "name"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    # Routing (issue 32): MANUAL, ROUND_ROBIN or LEAST_BUSY; by the conversation's legal
    # area or not; the user round robin gave the last conversation to (it goes on after).
    assignment_policy: Mapped[str] = mapped_column(
        String(16), default="MANUAL", server_default="MANUAL"
    )
    assign_by_legal_area: Mapped[bool] = mapped_column(default=False, server_default=false())
    round_robin_cursor: Mapped[str | None] = mapped_column(String(32))

    @property
    def assignment(self) -> dict[str, Any]:
        """The routing settings as ``InboxOut.assignment`` shows them."""
        return {"policy": self.assignment_policy, "by_legal_area": self.assign_by_legal_area}


class Integration(IdMixin, TimestampMixin, Base):
    """A channel of an inbox. An official-channel (``WHATSAPP_OFFICIAL``) one has a deviceId."""

    __tablename__ = "integrations"
    __table_args__ = (
        Index("ix_integrations_office_id_inbox_id", "office_id", "inbox_id"),
        Index("ix_integrations_office_id_device_id", "office_id", "device_id", unique=True),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    inbox_id: Mapped[str] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"))
    type: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(200))
    device_id: Mapped[str | None] = mapped_column(String(200))
    # WHATSAPP_OFFICIAL: phoneNumberId, businessAccountId, accessToken, appSecret, verifyToken.
    # Its accessToken, appSecret and verifyToken are sealed at rest (kit.encryption).
    whatsapp: Mapped[dict[str, Any] | None] = mapped_column(
        SealedJSON("integrations.whatsapp", WHATSAPP_SECRETS)
    )
    # WEBCHAT: allowedOrigins, ask (PHONE or EMAIL), greeting.
    webchat: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # WHATSAPP (through a gateway) and INSTAGRAM: bridgeUrl, secret (write-only).
    bridge: Mapped[dict[str, Any] | None] = mapped_column(
        SealedJSON("integrations.bridge", BRIDGE_SECRETS)
    )


class InboxBusinessHours(Base):
    """An inbox's business hours (``GET|PUT /inbox/{id}/business-hours``); no row: always
    open. ``week``, ``closed_dates``, ``open_dates`` and ``away_message`` in the API's shape
    (``officehub.inboxes.business_hours.Hours.of`` reads them)."""

    __tablename__ = "inbox_business_hours"

    inbox_id: Mapped[str] = mapped_column(
        ForeignKey("inboxes.id", ondelete="CASCADE"), primary_key=True
    )
    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    timezone: Mapped[str] = mapped_column(String(64))
    week: Mapped[list[dict[str, Any]]] = mapped_column(JSONType)
    closed_dates: Mapped[list[str]] = mapped_column(JSONType)
    open_dates: Mapped[list[str]] = mapped_column(JSONType)
    away_message: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    updated_at: Mapped[datetime]

    def settings(self) -> dict[str, Any]:
        return {
            "timezone": self.timezone,
            "week": self.week,
            "closedDates": self.closed_dates,
            "openDates": self.open_dates,
        }
