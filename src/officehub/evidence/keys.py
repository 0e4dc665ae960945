"""The office's Ed25519 evidence key: made on first use, its private half sealed at rest
(the column's type, ``kit.encryption.SealedText``)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from officehub.evidence.models import EvidenceKey
from officehub.kit.timeutil import utcnow


@dataclass(frozen=True)
class OfficeKey:
    public_key_pem: str
    fingerprint: str
    private: Ed25519PrivateKey | None = None


def public_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def fingerprint(key: Ed25519PublicKey) -> str:
    """SHA-256 of the raw 32-byte public key, hex: what a court or a client compares."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def _new_record(office_id: str) -> EvidenceKey:
    private = Ed25519PrivateKey.generate()
    raw = private.private_bytes(
        serialization.Encoding.Raw,
        serialization.PrivateFormat.Raw,
        serialization.NoEncryption(),
    )
    return EvidenceKey(
        office_id=office_id,
        public_key_pem=public_pem(private.public_key()),
        fingerprint=fingerprint(private.public_key()),
        private_key=raw.hex(),
        created_at=utcnow(),
    )


async def office_key(
    sessionmaker: async_sessionmaker[AsyncSession], office_id: str, *, with_private: bool
) -> OfficeKey:
    """The office's key, made (in a transaction of its own: the request may be a read) if
    it has none. Two first uses at once: the primary key keeps one, the other reads it."""
    async with sessionmaker() as session:
        record = await session.get(EvidenceKey, office_id)
        if record is None:
            try:
                session.add(_new_record(office_id))
                await session.commit()
            except IntegrityError:
                await session.rollback()
            record = await session.get(EvidenceKey, office_id, populate_existing=True)
        assert record is not None  # noqa: S101 - just made, or made by the race's winner
        private = None
        if with_private:
            raw = bytes.fromhex(record.private_key)
            private = Ed25519PrivateKey.from_private_bytes(raw)
        return OfficeKey(record.public_key_pem, record.fingerprint, private)
