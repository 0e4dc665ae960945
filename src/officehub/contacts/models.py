from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, false, text, true
from sqlalchemy.orm import Mapped, mapped_column, validates

from officehub.contacts.normalize import brazilian_ddd
from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin

LINK_SOURCES = ("MANUAL", "BUTTON", "CRM", "backfill")
CONSENT_PURPOSES = ("service", "marketing")


class Contact(IdMixin, TimestampMixin, Base):
    """A person the office talks to (``/people``).

    ``phone`` is E.164 and unique in the office (``PHONE_TAKEN``), a Brazilian mobile always
    with its ninth digit (``normalize.to_e164``), so both forms are one identity held by the
    unique index; ``search_name`` is the
    name lower-cased and stripped of accents, so searches are accent- and case-insensitive
    on every database.

    ``verified`` is false for a contact a web chat visitor made: what the visitor typed is
    a claim, kept in ``claimed_phone``/``claimed_email`` and never in ``phone``/``email``,
    so it is never matched to, nor blocks, the phone or email of a contact the office or a
    verified channel holds. An operator's ``POST /people/{id}/verify`` makes the claim the
    contact's own.
    """

    __tablename__ = "contacts"
    __table_args__ = (
        Index(
            "ux_contacts_office_id_phone",
            "office_id",
            "phone",
            unique=True,
            sqlite_where=text("phone IS NOT NULL"),
            postgresql_where=text("phone IS NOT NULL"),
        ),
        # A WhatsApp user's business-scoped id is one person of the office (issue 40).
        Index(
            "ux_contacts_office_id_whatsapp_user_id",
            "office_id",
            "whatsapp_user_id",
            unique=True,
            sqlite_where=text("whatsapp_user_id IS NOT NULL"),
            postgresql_where=text("whatsapp_user_id IS NOT NULL"),
        ),
        Index("ix_contacts_office_id_search_name", "office_id", "search_name"),
        Index("ix_contacts_office_id_created_at", "office_id", "created_at"),
        Index("ix_contacts_office_id_ddd", "office_id", "ddd"),
        # Substring search (``LIKE '%…%'``) on PostgreSQL: trigram GIN indexes, office first
        # (pg_trgm and btree_gin, migration 0007_trgm). SQLite has no such index.
        *(
            Index(
                f"ix_contacts_office_id_{column}_trgm",
                "office_id",
                column,
                postgresql_using="gin",
                postgresql_ops={column: "gin_trgm_ops"},
                info={"dialect": "postgresql"},
            ).ddl_if(dialect="postgresql")
            for column in ("search_name", "phone", "whatsapp_username")
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    inbox_id: Mapped[str | None] = mapped_column(ForeignKey("inboxes.id", ondelete="SET NULL"))
    name: Mapped[str] = mapped_column(String(200))
    search_name: Mapped[str] = mapped_column(String(200))
    phone: Mapped[str | None] = mapped_column(String(20))
    # The id the WhatsApp platform knows the contact by (digits, e.g. ``551188887777``, a
    # Brazilian mobile possibly without its ninth digit): where official sends go.
    whatsapp_id: Mapped[str | None] = mapped_column(String(32))
    # The WhatsApp user's business-scoped user id (BSUID, ``BR.1502576394655843``): the
    # client's WhatsApp identity first (unique in the office), known even when the
    # platform withholds the phone of a user with a username; where sends go without one.
    whatsapp_user_id: Mapped[str | None] = mapped_column(String(140))
    # The username the client chose on WhatsApp (may change any time; never an identity).
    whatsapp_username: Mapped[str | None] = mapped_column(String(100))
    email: Mapped[str | None] = mapped_column(String(320))
    document: Mapped[str | None] = mapped_column(String(64))
    description: Mapped[str | None] = mapped_column(Text)
    image_url: Mapped[str | None] = mapped_column(String(1000))
    is_blocked: Mapped[bool] = mapped_column(default=False)
    # The client stopped marketing messages on WhatsApp (user_marketing_preferences).
    marketing_opt_out: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The Brazilian area code (DDD) of ``phone``, kept with it for the clients map.
    ddd: Mapped[str | None] = mapped_column(String(2))
    verified: Mapped[bool] = mapped_column(default=True, server_default=true())
    claimed_phone: Mapped[str | None] = mapped_column(String(20))
    claimed_email: Mapped[str | None] = mapped_column(String(320))
    # Set by an admin: the contact's data must be kept (a dispute, a court order), so it
    # cannot be erased nor deleted (409 LEGAL_HOLD); ``legal_hold_reason`` says why.
    legal_hold: Mapped[bool] = mapped_column(default=False, server_default=false())
    legal_hold_reason: Mapped[str | None] = mapped_column(Text)

    @validates("phone")
    def _derive_ddd(self, _key: str, phone: str | None) -> str | None:
        self.ddd = brazilian_ddd(phone)
        return phone


class ContactTag(Base):
    __tablename__ = "contact_tags"

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    contact_id: Mapped[str] = mapped_column(
        ForeignKey("contacts.id", ondelete="CASCADE"), primary_key=True
    )
    tag_id: Mapped[str] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True)


class PartnerLink(IdMixin, Base):
    """A contact's link to its record in the partner system. Unlinking sets ``unlinked_at``."""

    __tablename__ = "partner_links"
    __table_args__ = (Index("ix_partner_links_office_id_contact_id", "office_id", "contact_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    partner: Mapped[dict[str, Any]] = mapped_column(JSONType)
    source: Mapped[str] = mapped_column(String(16))
    linked_at: Mapped[datetime]
    unlinked_at: Mapped[datetime | None]


class ConsentRecord(IdMixin, Base):
    """One consent given or withdrawn by a contact for a purpose (``service``, ``marketing``):
    append-only history; the contact's current state per purpose is its latest record (by
    ``recorded_at``, then the time-ordered id), and ``contacts.marketing_opt_out`` follows
    the latest ``marketing`` record. Written with the contact's row locked."""

    __tablename__ = "consent_records"
    __table_args__ = (
        Index(
            "ix_consent_records_office_id_contact_id_recorded_at",
            "office_id",
            "contact_id",
            "recorded_at",
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    purpose: Mapped[str] = mapped_column(String(16))
    granted: Mapped[bool]
    source: Mapped[str] = mapped_column(String(64))
    text_version: Mapped[str | None] = mapped_column(String(64))
    recorded_at: Mapped[datetime]
