from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, false, text, true
from sqlalchemy.orm import Mapped, mapped_column, validates

from officehub.kit.db import Base, IdMixin, TimestampMixin


class User(IdMixin, TimestampMixin, Base):
    """An operator of the office. ``image_path`` is the storage key behind ``image_url``;
    ``email_key`` (kept from ``email``) is unique per office (``EMAIL_TAKEN``), and among
    users who can sign in (a ``password_hash``) unique across offices: the email names one
    account at ``POST /auth/login``. An inactive user cannot sign in and their sessions
    answer 401 from the next request on."""

    __tablename__ = "users"
    __table_args__ = (
        Index("ux_users_office_id_email_key", "office_id", "email_key", unique=True),
        Index("ix_users_office_id_name", "office_id", "name"),
        Index(
            "ux_users_sign_in_email",
            "email_key",
            unique=True,
            sqlite_where=text("password_hash IS NOT NULL"),
            postgresql_where=text("password_hash IS NOT NULL"),
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    email: Mapped[str] = mapped_column(String(320))
    email_key: Mapped[str] = mapped_column(String(320))
    role: Mapped[str] = mapped_column(String(32))
    document: Mapped[str | None] = mapped_column(String(64))
    image_url: Mapped[str | None] = mapped_column(String(1000))
    image_path: Mapped[str | None] = mapped_column(String(500))
    password_hash: Mapped[str | None] = mapped_column(String(200))
    is_active: Mapped[bool] = mapped_column(default=True, server_default=true())
    only_assigned_conversations: Mapped[bool] = mapped_column(default=False, server_default=false())
    # Routing (issue 32): who may receive conversations, and how many open ones at most
    # (null: no limit).
    availability: Mapped[str] = mapped_column(String(8), default="ONLINE", server_default="ONLINE")
    capacity: Mapped[int | None]

    @validates("email")
    def _keep_email_key(self, _key: str, email: str) -> str:
        self.email_key = email_key(email)
        return email


def email_key(email: str) -> str:
    """The email as compared for uniqueness: lower-cased in Python, so the key is the same
    on every database (SQLite's ``lower()`` folds ASCII only)."""
    return email.lower()


class UserInbox(Base):
    __tablename__ = "user_inboxes"
    __table_args__ = (Index("ix_user_inboxes_office_id_inbox_id", "office_id", "inbox_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    inbox_id: Mapped[str] = mapped_column(
        ForeignKey("inboxes.id", ondelete="CASCADE"), primary_key=True
    )


class UserLegalArea(Base):
    """A legal area the user handles: an inbox routing ``byLegalArea`` gives them the
    conversations of that area."""

    __tablename__ = "user_legal_areas"
    __table_args__ = (
        Index("ix_user_legal_areas_office_id_legal_area_id", "office_id", "legal_area_id"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    legal_area_id: Mapped[str] = mapped_column(
        ForeignKey("legal_areas.id", ondelete="CASCADE"), primary_key=True
    )


class UserPresence(IdMixin, Base):
    """One open console connection of a signed-in user (a ``GET /stream``): ``seen_at`` is
    refreshed while it is open, ``closed_at`` set when it ends. The user is present while a
    row is open and fresh, or closed within the grace period (``users.presence``)."""

    __tablename__ = "user_presence"
    __table_args__ = (Index("ix_user_presence_office_id_user_id", "office_id", "user_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    opened_at: Mapped[datetime]
    seen_at: Mapped[datetime]
    closed_at: Mapped[datetime | None]
