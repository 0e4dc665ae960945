"""What every action shares: the run's context, its outcome, its refusals and failures."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.kit.errors import NotFound

Status = Literal["done", "scheduled", "skipped"]


@dataclass(frozen=True)
class ActionContext:
    """The record an action acts on and why: the event's (a rule's run) or the flow's turn.

    ``webhook_event`` and ``webhook_payload``: what a ``FIRE_WEBHOOK`` sends (a rule sends
    the event's envelope, a flow step its body); ``source_rule_id``/``source_flow_id``
    name the delivery's log."""

    office_id: str
    now: datetime
    settings: Settings
    conversation_id: str | None = None
    card_id: str | None = None
    event_id: str | None = None
    event_name: str = ""
    event_data: dict[str, Any] = field(default_factory=dict)
    depth: int = 0
    source_rule_id: str | None = None
    source_flow_id: str | None = None
    webhook_event: str = ""
    webhook_payload: dict[str, Any] = field(default_factory=dict)

    @property
    def cause(self) -> dict[str, Any]:
        return {"eventId": self.event_id, "depth": self.depth}


@dataclass(frozen=True)
class Outcome:
    status: Status
    detail: str
    handed_to_person: bool = False
    """The conversation now has a person (a flow step waits for them)."""


class ActionFailed(Exception):
    """An action that cannot be done for this record; the caller logs it as failed."""


@dataclass(frozen=True)
class CheckContext:
    office_id: str
    integration_id: str | None
    allow_private: bool


class Refused(Exception):
    """A parameter the check refuses. ``key``: the parameter (camelCase); ``part``: a
    sub-key (a header's name, ``fallbackTemplate``'s ``name``); ``value`` and ``what``: an
    unknown reference (``value`` is no ``what``); ``code``: the error code, when not the
    generic one."""

    def __init__(
        self,
        key: str,
        reason: str,
        *,
        part: str | None = None,
        value: str | None = None,
        what: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason
        self.part = part
        self.value = value
        self.what = what
        self.code = code


P = TypeVar("P", bound=BaseModel)


@dataclass(frozen=True)
class ActionSpec(Generic[P]):
    """One action of the catalogue."""

    name: str
    summary: str
    params: type[P]
    check: Callable[[AsyncSession, CheckContext, P], Awaitable[None]]
    run: Callable[[AsyncSession, ActionContext, P], Awaitable[Outcome]]
    example: dict[str, Any]
    needs_conversation: bool = True
    """Done to the event's conversation (or its card): refused on a trigger without one."""


async def reference(key: str, value: str, what: str, lookup: Awaitable[object]) -> None:
    """``lookup`` raises NotFound when ``value`` is no record of the office."""
    try:
        await lookup
    except NotFound as exc:
        raise Refused(key, "not a record of this office", value=value, what=what) from exc
