from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin


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
