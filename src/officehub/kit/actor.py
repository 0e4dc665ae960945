"""Who is acting: read from the request in one place (``actor_of``).

It reads who the API key layer found calling (``request.state.actor``, an
``officehub.kit.auth.Actor``: an API key or a signed-in user's session) and adds the client's
address; its ``label`` is ``apikey:<id>`` or ``user:<id>``. The request layer
sets ``current_actor`` for the request's task, so a service that records who did something
(the operator who sent a message, the audit trail) asks it instead of taking a parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import replace
from functools import lru_cache
from typing import Any

from officehub.kit.auth import Actor

__all__ = [
    "Actor",
    "acting",
    "actor_of",
    "client_address",
    "current_actor",
    "system_actor",
]


def system_actor(name: str) -> Actor:
    """The service itself acting, not a person: the worker (``worker:retention``) or an
    operator's command (``cli:keys-create``). No address: no request came in."""
    return Actor("system", name)


current_actor: ContextVar[Actor | None] = ContextVar("officehub_actor", default=None)


def client_address(scope: Mapping[str, Any]) -> str:
    """The peer's address as the server saw it (uvicorn's ``--forwarded-allow-ips`` makes
    it the client's behind a trusted proxy)."""
    client = scope.get("client")
    return str(client[0]) if client else ""


def actor_of(scope: Mapping[str, Any]) -> Actor | None:
    """The actor of a request whose key or session the API key middleware resolved (its
    ``request.state.actor``), else None."""
    caller = scope.get("state", {}).get("actor")
    if isinstance(caller, Actor):
        return _at_address(caller, client_address(scope))
    return None


@lru_cache(maxsize=4096)
def _at_address(caller: Actor, address: str) -> Actor:
    """``caller`` with ``address``: one frozen actor for the requests of one key (or
    session) from one address, instead of a ``dataclasses.replace`` per request."""
    return replace(caller, address=address)


def acting() -> str | None:
    """The current actor's label, for a record that keeps who made it."""
    actor = current_actor.get()
    return None if actor is None else actor.label
