from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin
from officehub.kit.encryption import SealedText


class UserToken(IdMixin, Base):
    """A one-use link that sets a user's password: an invitation (``invite``) or a reset
    (``reset``). Only the token's SHA-256 is kept; ``used_at`` is set by the one request
    that spends it (a conditional update: two at once, one wins)."""

    __tablename__ = "user_tokens"
    __table_args__ = (Index("ix_user_tokens_office_id_user_id", "office_id", "user_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    purpose: Mapped[str] = mapped_column(String(16))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    created_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]


class UserSession(IdMixin, Base):
    """A signed-in browser: the cookie's and the CSRF token's SHA-256, when it was made and
    last used (idle timeout) and when it ends whatever happens (absolute timeout)."""

    __tablename__ = "user_sessions"
    __table_args__ = (Index("ix_user_sessions_office_id_user_id", "office_id", "user_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    csrf_hash: Mapped[str] = mapped_column(String(64))
    user_agent: Mapped[str | None] = mapped_column(String(300))
    created_at: Mapped[datetime]
    last_seen_at: Mapped[datetime]
    expires_at: Mapped[datetime]


class UserTotp(IdMixin, Base):
    """A user's TOTP second factor (one per user): the secret, sealed at rest; active once
    ``confirmed_at`` is set. ``last_step`` is the last 30 s time step whose code was
    accepted: a code is taken by a conditional update of this row (``last_step`` below its
    step), so one code works once, and of two submissions at once one wins."""

    __tablename__ = "user_totp"
    __table_args__ = (Index("ix_user_totp_office_id_user_id", "office_id", "user_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), unique=True)
    secret: Mapped[str] = mapped_column(SealedText("user_totp.secret"))
    confirmed_at: Mapped[datetime | None]
    last_step: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime]


class UserRecoveryCode(IdMixin, Base):
    """One of the ten recovery codes of an active TOTP: its SHA-256 (80 random bits each, so
    a plain hash suffices); ``used_at`` set by the one request that spends it."""

    __tablename__ = "user_recovery_codes"
    __table_args__ = (Index("ix_user_recovery_codes_office_id_user_id", "office_id", "user_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    code_hash: Mapped[str] = mapped_column(String(64), unique=True)
    used_at: Mapped[datetime | None]
