"""In-transaction hooks: the mechanism by which a lower domain lets an upper one veto or
cascade a change in the request's own transaction (subscriptions: ``hook_subscriptions``).

A lower domain (inboxes, contacts, conversations…) declares its hook points as typed
``Hook`` objects whose payload is a frozen dataclass carrying the session, the office id and
the ids concerned; an upper domain (crm) subscribes async callables to them in
``officehub.hook_subscriptions``. ``fire`` awaits the subscribers one after the other in
registration order, in the caller's session: a subscriber vetoes by raising the usual domain error
(``errors.Conflict``…), which leaves the caller's transaction to roll back whole, and a
cascade it writes commits or rolls back with the caller's change.

So the lower domain never imports the upper one (the import-linter contracts in
``pyproject.toml`` hold that). Outbox events (``events.service.emit``) stay the way to react
*after* commit; hooks are only for vetoes and cascades that must share the transaction.

A hook declared ``required`` refuses to fire with no subscriber (``HookNotWired``): a
process that forgot ``officehub.hook_subscriptions.install()`` fails loudly instead of
deleting an inbox whose funnels hold cards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

P = TypeVar("P")
Subscriber = Callable[[P], Awaitable[None]]


class HookNotWired(RuntimeError):
    """A required hook fired with no subscriber: ``hook_subscriptions.install()`` never ran."""


class Hook(Generic[P]):
    """One hook point; ``P`` is its payload, a frozen dataclass."""

    def __init__(self, name: str, *, required: bool = False) -> None:
        self.name = name
        self.required = required
        self._subscribers: list[Subscriber[P]] = []
        HOOKS.append(self)

    def __repr__(self) -> str:
        return f"Hook({self.name!r}, subscribers={len(self._subscribers)})"

    @property
    def subscribers(self) -> tuple[Subscriber[P], ...]:
        return tuple(self._subscribers)

    def subscribe(self, subscriber: Subscriber[P]) -> Subscriber[P]:
        """Adds ``subscriber`` after the others; subscribing it again changes nothing.
        Returns it, so it can decorate a function."""
        if subscriber not in self._subscribers:
            self._subscribers.append(subscriber)
        return subscriber

    def unsubscribe(self, subscriber: Subscriber[P]) -> None:
        if subscriber in self._subscribers:
            self._subscribers.remove(subscriber)

    async def fire(self, payload: P) -> None:
        """Awaits each subscriber in registration order; the first exception stops the rest
        and propagates to the caller (a veto)."""
        wire_now()
        if self.required and not self._subscribers:
            raise HookNotWired(
                f"Hook {self.name} has no subscriber: call officehub.hook_subscriptions.install() "
                "in this process before running domain services"
            )
        for subscriber in tuple(self._subscribers):
            await subscriber(payload)


HOOKS: list[Hook[Any]] = []
"""Every hook declared so far (each declaring module adds its own at import)."""


_on_demand: list[Callable[[], None]] = []


def wire_on_demand(install: Callable[[], None]) -> None:
    """Defers the wiring (``hook_subscriptions.install``) to the first moment it is needed:
    the first hook fired (required or not), the first event emitted, the first audit entry
    that looks up its contact (each calls ``wire_now``). The CLI registers it this way: a
    command that fires nothing never imports the domains that subscribe (about a second)."""
    _on_demand[:] = [install]


def wire_now() -> None:
    """Runs the wiring deferred by ``wire_on_demand``, once; nothing when none is pending."""
    if _on_demand:
        install = _on_demand.pop()
        install()


def unwired() -> list[str]:
    """The names of the required hooks that have no subscriber yet."""
    return [hook.name for hook in HOOKS if hook.required and not hook.subscribers]
