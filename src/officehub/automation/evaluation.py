"""Which branch of a rule an event takes: the event's subject against the conditions."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.models import AutomationRule
from officehub.automation.schemas import ConditionCheck
from officehub.conversations import service as conversations
from officehub.crm import service as crm
from officehub.inboxes import service as inboxes
from officehub.inboxes.business_hours import is_open
from officehub.kit.errors import NotFound
from officehub.kit.timeutil import as_utc, utcnow

_CRM_ENTRY = {"crm.lead.moved": "toFunnelColumnId", "crm.lead.created": "funnelColumnId"}


@dataclass
class Subject:
    """What conditions read: the conversation, its card's column, the move, the message."""

    event: str
    conversation_id: str | None = None
    card_id: str | None = None
    column_id: str | None = None
    from_column_id: str | None = None
    to_column_id: str | None = None
    assigned_user_id: str | None = None
    department_id: str | None = None
    message_text: str | None = None
    template_name: str | None = None
    within_business_hours: bool | None = None

    def value(self, key: str) -> str | None:
        return {
            "funnelColumnId": self.column_id,
            "fromFunnelColumnId": self.from_column_id,
            "toFunnelColumnId": self.to_column_id,
            "assignedToUserId": self.assigned_user_id,
            "assignedToDepartmentId": self.department_id,
            "messageText": self.message_text,
            "templateName": self.template_name,
            "withinBusinessHours": _flag(self.within_business_hours),
        }[key]


def _flag(value: bool | None) -> str | None:
    return None if value is None else str(value).lower()


async def subject_of(
    session: AsyncSession,
    office_id: str,
    name: str,
    data: dict[str, Any],
    conversation_id: str | None,
    *,
    with_card: bool = True,
    at: datetime | None = None,
) -> Subject:
    """``with_card``: also find the conversation's card (only a ``funnelColumnId``
    condition needs it on a non-CRM event; actions find it themselves)."""
    subject = Subject(event=name, conversation_id=conversation_id)
    if name.startswith("crm.lead."):
        subject.card_id = _str(data.get("id"))
        subject.column_id = _str(data.get("columnId"))
        subject.assigned_user_id = _str(data.get("userId"))
        subject.from_column_id = _str(data.get("fromColumnId"))
        subject.to_column_id = _str(data.get("toColumnId"))
    if name.startswith("chat.message."):
        subject.message_text = _str(data.get("text"))
        subject.template_name = _str(data.get("templateName"))
    if conversation_id is not None:
        try:
            conversation = await conversations.get_conversation(session, office_id, conversation_id)
        except NotFound:
            return subject
        subject.assigned_user_id = conversation.assigned_user_id
        subject.department_id = conversation.department_id
        found = await inboxes.business_hours_of(session, office_id, conversation.inbox_id)
        subject.within_business_hours = found is None or is_open(
            found[0], as_utc(at) if at is not None else utcnow()
        )
        if with_card and subject.card_id is None:
            try:
                card = await crm.card_of_conversation(
                    session, office_id, conversation.person_id, conversation.id
                )
            except NotFound:
                card = None
            if card is not None:
                subject.card_id, subject.column_id = card.id, card.column_id
    return subject


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def fold(text: str) -> str:
    """Case- and accent-insensitive form: NFKD without combining marks, casefolded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def check_conditions(conditions: dict[str, Any], subject: Subject) -> list[ConditionCheck]:
    """One check per effective condition."""
    checks: list[ConditionCheck] = []
    for key in (
        "funnelColumnId",
        "fromFunnelColumnId",
        "toFunnelColumnId",
        "assignedToUserId",
        "assignedToDepartmentId",
        "messageText",
        "templateName",
        "withinBusinessHours",
    ):
        expected = conditions.get(key)
        if isinstance(expected, bool):
            expected = str(expected).lower()
        if not expected:
            continue
        actual = subject.value(key)
        if key == "messageText":
            holds = actual is not None and fold(str(expected)) in fold(actual)
        else:
            holds = actual == expected
        checks.append(ConditionCheck(key=key, expected=str(expected), actual=actual, holds=holds))
    return checks


def entry_column(rule: AutomationRule) -> str | None:
    """The column a card-entry rule watches (``restartOnReturn`` applies), else None."""
    key = _CRM_ENTRY.get(rule.trigger_event)
    value = rule.conditions.get(key) if key else None
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class Decision:
    branch: str
    reason: str
    checks: list[ConditionCheck]
    actions: list[dict[str, Any]]


def decide(rule: AutomationRule, subject: Subject, first_entry: bool | None) -> Decision:
    """The contract's branch rules. ``first_entry``: whether this is the card's first entry
    into the column an entry rule watches (None when not known or not relevant)."""
    checks = check_conditions(rule.conditions, subject)
    if not checks:
        return Decision("then", "no effective condition", checks, rule.actions)
    if all(c.holds for c in checks):
        if (
            entry_column(rule) is not None
            and not rule.conditions.get("restartOnReturn")
            and first_entry is False
        ):
            return Decision(
                "skipped",
                "the card entered this column before and restartOnReturn is false",
                checks,
                [],
            )
        return Decision("then", "conditions hold", checks, rule.actions)
    failing = ", ".join(c.key for c in checks if not c.holds)
    if rule.else_actions:
        return Decision("else", f"conditions do not hold ({failing})", checks, rule.else_actions)
    return Decision(
        "skipped", f"conditions do not hold ({failing}) and there is no else-branch", checks, []
    )
