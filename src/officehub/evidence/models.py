from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base
from officehub.kit.encryption import SealedText


class EvidenceKey(Base):
    """An office's Ed25519 evidence key: made on first use, one per office (the primary key
    holds it when two first uses race). The private key is sealed (``kit.encryption``) and
    never leaves the service; the public key is published (``GET /office/evidence-key``)."""

    __tablename__ = "evidence_keys"

    office_id: Mapped[str] = mapped_column(
        ForeignKey("offices.id", ondelete="CASCADE"), primary_key=True
    )
    public_key_pem: Mapped[str] = mapped_column(Text)
    fingerprint: Mapped[str] = mapped_column(String(64))
    # The raw private key, hex; sealed at rest (kit.encryption), in clear only when signing.
    private_key: Mapped[str] = mapped_column(
        "private_key_sealed", SealedText("evidence_keys.private_key_sealed")
    )
    created_at: Mapped[datetime]
