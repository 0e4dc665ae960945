"""A conversation's service levels (issue 32): the policy that applies, its due times, and
the times reports count from, kept on the conversation as messages come and go.

- The clocks start with the client: the first response is due ``firstResponseMinutes`` of
  business time after the client's first inbound message; the next response
  ``nextResponseMinutes`` after the client's oldest message unanswered since a response;
  the resolution at the end of the ``resolutionBusinessDays``-th open day after the first
  inbound message (or the reopen).
- A response is an outbound message a person or an API key sent (``Message.sent_by``):
  not the away message, a keyword's answer, a flow's or an automation rule's.
- A due is pending while unmet and not yet reported for that due time
  (``*_breached_at`` older than the due, or none); ``sla_check_at`` is the earliest pending
  one of an open conversation: the breach job's queue.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation
from officehub.inboxes import service as inboxes
from officehub.inboxes.business_hours import add_business_days, add_business_minutes
from officehub.kit.timeutil import as_utc
from officehub.sla import service as policies
from officehub.sla.repository import PolicyTerms

BreachKind = Literal["FIRST_RESPONSE", "NEXT_RESPONSE", "RESOLUTION"]


def _pending(due: datetime | None, breached: datetime | None) -> bool:
    return due is not None and (breached is None or as_utc(breached) < as_utc(due))


def pending_dues(conversation: Conversation) -> list[tuple[BreachKind, datetime]]:
    """The dues still to meet and not reported, of an open conversation."""
    c = conversation
    if c.status != "OPEN" or c.sla_policy_id is None:
        return []
    found: list[tuple[BreachKind, datetime]] = []
    if (
        c.first_response_at is None
        and c.first_response_due_at is not None
        and _pending(c.first_response_due_at, c.first_response_breached_at)
    ):
        found.append(("FIRST_RESPONSE", as_utc(c.first_response_due_at)))
    if c.next_response_due_at is not None and _pending(
        c.next_response_due_at, c.next_response_breached_at
    ):
        found.append(("NEXT_RESPONSE", as_utc(c.next_response_due_at)))
    if c.resolution_due_at is not None and _pending(c.resolution_due_at, c.resolution_breached_at):
        found.append(("RESOLUTION", as_utc(c.resolution_due_at)))
    return found


def reschedule(conversation: Conversation) -> None:
    dues = [due for _kind, due in pending_dues(conversation)]
    conversation.sla_check_at = min(dues) if dues else None


async def refresh(
    session: AsyncSession,
    conversation: Conversation,
    inbox_policies: Sequence[PolicyTerms] | None = None,
) -> None:
    """The policy that applies now and the due times from the kept anchors (on every
    change of priority, legal area, status, policy, and on each message that moves one).
    ``inbox_policies``: the conversation's inbox's, when the caller read them (under the
    conversation's lock), else read here."""
    c = conversation
    policy = await policies.applicable_policy(
        session, c.office_id, c.inbox_id, c.priority, c.legal_area_id, policies=inbox_policies
    )
    if policy is None:
        # Set only when one is set (an attribute set to its own value writes nothing either).
        held = (c.sla_policy_id, c.first_response_due_at, c.next_response_due_at)
        if held != (None, None, None) or (c.resolution_due_at, c.sla_check_at) != (None, None):
            c.sla_policy_id = None
            c.first_response_due_at = c.next_response_due_at = c.resolution_due_at = None
            c.sla_check_at = None
        return
    found = await inboxes.business_hours_of(session, c.office_id, c.inbox_id)
    hours = found[0] if found is not None else None
    c.sla_policy_id = policy.id
    c.first_response_due_at = (
        add_business_minutes(hours, as_utc(c.first_inbound_at), policy.first_response_minutes)
        if c.first_inbound_at is not None
        else None
    )
    c.next_response_due_at = (
        add_business_minutes(hours, as_utc(c.awaiting_since), policy.next_response_minutes)
        if c.awaiting_since is not None
        else None
    )
    c.resolution_due_at = (
        add_business_days(hours, as_utc(c.resolution_started_at), policy.resolution_business_days)
        if c.resolution_started_at is not None
        else None
    )
    reschedule(c)


async def on_inbound(session: AsyncSession, conversation: Conversation, at: datetime) -> None:
    """The client wrote: the first inbound message starts the first-response and resolution
    clocks; one after a response starts the next-response clock."""
    c = conversation
    if c.first_inbound_at is None:
        c.first_inbound_at = at
        if c.resolution_started_at is None:
            c.resolution_started_at = at
    elif c.first_response_at is not None and c.awaiting_since is None:
        c.awaiting_since = at
    else:
        return
    await refresh(session, c)


async def on_response(session: AsyncSession, conversation: Conversation, at: datetime) -> None:
    """A person or an API key answered: the first response (after the client's first
    message), and any awaited next response, are met."""
    c = conversation
    c.last_response_at = at
    changed = False
    if c.first_inbound_at is not None and c.first_response_at is None:
        c.first_response_at = at
        changed = True
    if c.awaiting_since is not None:
        c.awaiting_since = None
        changed = True
    if changed:
        await refresh(session, c)


async def on_status(
    session: AsyncSession,
    conversation: Conversation,
    status: str,
    at: datetime,
    inbox_policies: Sequence[PolicyTerms] | None = None,
) -> None:
    """Closed: resolved now (nothing more is due). Reopened: a new resolution clock starts
    now, and a client message unanswered before the close is not awaited any more."""
    c = conversation
    if status == "CLOSED":
        c.closed_at = at
        c.awaiting_since = None
    else:
        c.closed_at = None
        if c.first_inbound_at is not None:
            c.resolution_started_at = at
    await refresh(session, c, inbox_policies)
