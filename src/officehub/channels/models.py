from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.db import Base, IdMixin
from officehub.timeutil import utcnow


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
