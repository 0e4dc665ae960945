from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType
from officehub.kit.timeutil import utcnow
from officehub.messages.models import ReadReceipt as ReadReceipt  # the dispatcher sends it


class ChannelPeer(IdMixin, Base):
    """Who a contact is on a bridged channel (the gateway's sender id: a phone number on
    WhatsApp, a user id on Instagram): where its replies go."""

    __tablename__ = "channel_peers"
    __table_args__ = (
        Index(
            "ux_channel_peers_office_id_integration_id_peer_id",
            "office_id",
            "integration_id",
            "peer_id",
            unique=True,
        ),
        Index(
            "ix_channel_peers_office_id_integration_id_contact_id",
            "office_id",
            "integration_id",
            "contact_id",
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id", ondelete="CASCADE"))
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    peer_id: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AccountNotice(IdMixin, Base):
    """A notification about the WhatsApp account rather than a message (phone number
    quality, account update or alert, capability change, an unknown field): kept as the
    platform sent it, for the office's records. Never holds a client's personal data: a
    client's marketing preference goes to the contact, not here."""

    __tablename__ = "whatsapp_account_notices"
    __table_args__ = (
        Index(
            "ix_whatsapp_account_notices_office_integration_received",
            "office_id",
            "integration_id",
            "received_at",
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id", ondelete="CASCADE"))
    field: Mapped[str] = mapped_column(String(64))
    event: Mapped[str | None] = mapped_column(String(64))
    value: Mapped[dict[str, Any]] = mapped_column(JSONType)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)
