"""The outbox's consumers, as each registers itself at start-up.

``events`` knows no consumer by name: each consumer package (webhooks, automation, flows…)
registers a ``Registration`` from the one wiring place
(``officehub.hook_subscriptions.install``): its ``Consumer`` (name and handler, run by
``consumer_job``) and which events it wants. ``emit`` asks every registered consumer, in
the caller's transaction, whether it wants the event being recorded, and writes a progress
row for each that does; the worker runs one ``consumer_job`` per registration.

A consumer's choice is stated twice, once per database, and
``tests/test_event_interest.py`` holds the two to the same answers:

- ``wants``: in Python, for a batch of events (SQLite's ``emit`` and every ``emit_many``);
  it may read the database through the session it is given;
- ``wants_sql``: on PostgreSQL, a boolean SQL condition that ``emit``'s one-round-trip
  statement evaluates (see ``service._EMIT_PG``). It may use the event's own parameters
  (``EVENT_PARAMS``) and its own, which ``sql_params`` gives and whose names start with the
  consumer's name and an underscore.

An event addressed to one target (``OutboxEvent.target_webhook_id``) goes to the consumers
registered ``targeted=True`` only, and always to them; ``wants`` never sees one.

A process that forgot ``officehub.hook_subscriptions.install()`` has no consumer: ``emit`` refuses
(``ConsumersNotWired``) instead of recording events nobody will ever handle.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.consumers import Consumer
from officehub.events.models import OutboxEvent

Wants = Callable[[AsyncSession, Sequence[OutboxEvent]], Awaitable[Sequence[bool]]]
"""For each event of the batch (none addressed to a target), whether the consumer wants it."""

EVENT_PARAMS = frozenset(
    {
        "id",
        "office_id",
        "name",
        "data",
        "created_at",
        "causation_id",
        "depth",
        "conversation_id",
        "integration_id",
        "target_webhook_id",
        "targeted",
    }
)
"""The event's bind parameters a ``wants_sql`` condition may read (``targeted``: whether the
event is addressed to one target)."""

_NAME = re.compile(r"[a-z][a-z_]{0,31}")
_BIND = re.compile(r"(?<![:\w]):(\w+)")


def _no_params(_event: OutboxEvent) -> dict[str, Any]:
    return {}


class ConsumersNotWired(RuntimeError):
    """An event was emitted with no consumer registered: ``officehub.hook_subscriptions.install()``
    never ran in this process."""


@dataclass(frozen=True)
class Registration:
    consumer: Consumer
    wants: Wants
    wants_sql: str
    sql_params: Callable[[OutboxEvent], dict[str, Any]] = field(default=_no_params)
    targeted: bool = False
    """Whether the events addressed to one target (``target_webhook_id``) are this
    consumer's (always, and only its)."""

    @property
    def name(self) -> str:
        return self.consumer.name


_registered: dict[str, Registration] = {}
_version = 0


def register(registration: Registration) -> None:
    """Adds a consumer after the others; registering the same one again changes nothing.
    Another registration under a taken name is refused."""
    global _version
    name = registration.name
    if not _NAME.fullmatch(name):
        raise ValueError(f"consumer name {name!r}: lower-case letters and _, at most 32")
    foreign = {b for b in _BIND.findall(registration.wants_sql) if b not in EVENT_PARAMS}
    if any(not b.startswith(f"{name}_") for b in foreign):
        raise ValueError(f"consumer {name!r}: its own SQL parameters must start with {name}_")
    known = _registered.get(name)
    if known is not None:
        if known != registration:
            raise ValueError(f"another consumer is registered as {name!r}")
        return
    _registered[name] = registration
    _version += 1


def unregister(name: str) -> None:
    """Takes a consumer out (a test's own consumer, when the test ends)."""
    global _version
    if _registered.pop(name, None) is not None:
        _version += 1


def registered() -> tuple[Registration, ...]:
    """Every registered consumer, in registration order."""
    return tuple(_registered.values())


def version() -> int:
    """Changes whenever the registrations do (``emit`` rebuilds its statement then)."""
    return _version


def consumers() -> tuple[Consumer, ...]:
    return tuple(r.consumer for r in _registered.values())
