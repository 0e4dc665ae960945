"""The one place a database refusal (``IntegrityError``) becomes an answer.

Every uniqueness rule the service promises is a unique index; the rule's 409 code is looked
up here from the index the database names. PostgreSQL names it (asyncpg's
``constraint_name``); SQLite names the columns (``UNIQUE constraint failed: t.a, t.b``), so
the columns are mapped back to the index through the models' metadata. A foreign-key
failure is never reported as a duplicate: it is 409 ``REFERENCE_CONFLICT`` (a record the
request names was removed, or is still referred to, by a concurrent request).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from sqlalchemy import Index, UniqueConstraint
from sqlalchemy.exc import IntegrityError

from officehub.kit.errors import Conflict


@dataclass(frozen=True)
class Rule:
    code: str
    message: str
    details: str


RULES: dict[str, Rule] = {
    "ux_contacts_office_id_phone": Rule(
        "PHONE_TAKEN",
        "A contact with this phone already exists",
        "One phone per office: another contact of the office has this phone",
    ),
    "ux_contacts_office_id_whatsapp_user_id": Rule(
        "WHATSAPP_USER_TAKEN",
        "A contact with this WhatsApp user id already exists",
        "One WhatsApp user id (BSUID) per office: another contact of the office has it",
    ),
    "ix_crm_cards_office_id_person_id_conversation_id": Rule(
        "CARD_EXISTS",
        "The card already exists",
        "A contact has one card per conversation",
    ),
    "ux_crm_cards_office_id_person_id_without_conversation": Rule(
        "CARD_EXISTS",
        "The card already exists",
        "A contact has one card without conversation",
    ),
    "ux_users_office_id_email_key": Rule(
        "EMAIL_TAKEN",
        "Email already used",
        "Another user of the office has this email (ignoring case)",
    ),
    "ux_users_sign_in_email": Rule(
        "EMAIL_TAKEN",
        "Email already used",
        "An account (of this or another office) already signs in with this email",
    ),
    "ux_conversations_office_id_person_id_integration_id_open": Rule(
        "CONVERSATION_ALREADY_OPEN",
        "The contact already has an open conversation on this integration",
        "One open conversation per contact and integration: close the open one first",
    ),
    "ux_crm_columns_office_id_funnel_id_position": Rule(
        "COLUMN_POSITION_TAKEN",
        "Column position already used",
        "Two columns of a funnel cannot share an index; retry the request",
    ),
    "ix_tags_office_id_inbox_id_name_key": Rule(
        "TAG_NAME_TAKEN", "Tag name already used", "The inbox already has a tag of this name"
    ),
    "ix_integrations_office_id_device_id": Rule(
        "DEVICE_ID_TAKEN", "Device id already used", "Another channel has this deviceId"
    ),
    "ix_cases_office_id_number": Rule(
        "CASE_EXISTS",
        "Case already registered",
        "One case per number and office: the office already has this case",
    ),
    "ix_case_notice_settings_office_id": Rule(
        "SETTINGS_CHANGED",
        "Settings changed meanwhile",
        "Another request saved the case notice settings at the same time",
    ),
    "ix_lawyers_office_id_oab_number_oab_uf": Rule(
        "LAWYER_EXISTS",
        "Lawyer already registered",
        "One lawyer per OAB registration and office: the office already has this one",
    ),
    "ix_court_holidays_office_id_day": Rule(
        "COURT_HOLIDAY_EXISTS",
        "Court holiday already registered",
        "One court holiday per day and office: the office already has this day",
    ),
}

REFERENCE = Rule(
    "REFERENCE_CONFLICT",
    "A referenced record changed meanwhile",
    "A record this request refers to was removed, or is still referred to, by a concurrent "
    "request; read it again and retry",
)
UNKNOWN = Rule("CONFLICT", "Conflict", "The change conflicts with the stored data")

_SQLITE_UNIQUE = re.compile(r"UNIQUE constraint failed: (.+)$")
_SQLITE_INDEX = re.compile(r"index '([^']+)'")


@cache
def _indexes_by_columns() -> dict[str, str]:
    """``"table.a, table.b"`` → index name, for every unique index and constraint."""
    from officehub.kit.db import Base

    found: dict[str, str] = {}
    for table in Base.metadata.sorted_tables:
        uniques: list[Index | UniqueConstraint] = [i for i in table.indexes if i.unique]
        uniques += [c for c in table.constraints if isinstance(c, UniqueConstraint)]
        for item in uniques:
            key = ", ".join(f"{table.name}.{c.name}" for c in item.columns)
            found[key] = str(item.name)
    return found


def constraint_name(exc: IntegrityError) -> str | None:
    """The index or constraint the database refused the change for, when it says."""
    cause = exc.orig.__cause__ if exc.orig is not None else None
    name = getattr(cause, "constraint_name", None)
    if isinstance(name, str):
        return name
    text = str(exc.orig)
    if (match := _SQLITE_UNIQUE.search(text)) is not None:
        columns = match.group(1).strip()
        if (index := _SQLITE_INDEX.fullmatch(columns)) is not None:
            return index.group(1)
        return _indexes_by_columns().get(columns)
    return None


def is_foreign_key_failure(exc: IntegrityError) -> bool:
    code = getattr(exc.orig, "sqlstate", None) or getattr(exc.orig, "pgcode", None)
    return code == "23503" or "FOREIGN KEY constraint failed" in str(exc.orig)


def rule_of(exc: IntegrityError) -> Rule:
    if is_foreign_key_failure(exc):
        return REFERENCE
    name = constraint_name(exc)
    return RULES.get(name, UNKNOWN) if name is not None else UNKNOWN


def violates(exc: IntegrityError, index_name: str) -> bool:
    """Whether ``exc`` is the refusal of the unique index ``index_name``."""
    return not is_foreign_key_failure(exc) and constraint_name(exc) == index_name


def conflict_for(exc: IntegrityError) -> Conflict:
    rule = rule_of(exc)
    return Conflict(rule.message, details=rule.details, code=rule.code)
