"""SLA policies (issue 32): an inbox's service levels, and which applies to a conversation."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes import service as inboxes
from officehub.kit.errors import NotFound
from officehub.kit.pagination import PageParams
from officehub.legal_areas import service as legal_areas
from officehub.sla import repository, rules
from officehub.sla.hooks import SlaPoliciesChanged, sla_policies_changed
from officehub.sla.models import SlaPolicy
from officehub.sla.repository import PolicyTerms
from officehub.sla.schemas import SlaPolicyCreate, SlaPolicyUpdate


async def get_policy(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> SlaPolicy:
    record = await repository.get_policy(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("SLA policy", ident)
    return record


async def list_policies(
    session: AsyncSession, office_id: str, params: PageParams, inbox_id: str | None = None
) -> tuple[list[SlaPolicy], int]:
    if inbox_id is not None:
        await inboxes.get_inbox(session, office_id, inbox_id)
    return await repository.list_policies(session, office_id, params, inbox_id)


async def create_policy(session: AsyncSession, office_id: str, body: SlaPolicyCreate) -> SlaPolicy:
    await inboxes.get_inbox(session, office_id, body.inbox_id)
    if body.legal_area_id is not None:
        await legal_areas.get_legal_area(session, office_id, body.legal_area_id)
    policy = SlaPolicy(
        office_id=office_id,
        inbox_id=body.inbox_id,
        priority=body.priority,
        legal_area_id=body.legal_area_id,
        first_response_minutes=body.first_response_minutes,
        next_response_minutes=body.next_response_minutes,
        resolution_business_days=body.resolution_business_days,
    )
    await repository.add(session, policy)
    await _changed(session, office_id, policy.inbox_id)
    return policy


async def update_policy(
    session: AsyncSession, office_id: str, ident: str, body: SlaPolicyUpdate
) -> SlaPolicy:
    body.refuse_sent_nulls()
    sent = body.model_fields_set
    policy = await get_policy(session, office_id, ident, for_change=True)
    if "legal_area_id" in sent and body.legal_area_id is not None:
        await legal_areas.get_legal_area(session, office_id, body.legal_area_id)
    changed = False
    for field in sorted(sent):
        value = getattr(body, field)
        if getattr(policy, field) != value:
            setattr(policy, field, value)
            changed = True
    if changed:
        await session.flush()
        await _changed(session, office_id, policy.inbox_id)
    return policy


async def delete_policy(session: AsyncSession, office_id: str, ident: str) -> SlaPolicy:
    policy = await get_policy(session, office_id, ident, for_change=True)
    await repository.delete(session, policy)
    await _changed(session, office_id, policy.inbox_id)
    return policy


async def applicable_policy(
    session: AsyncSession,
    office_id: str,
    inbox_id: str,
    priority: str,
    legal_area_id: str | None,
    *,
    policies: Sequence[PolicyTerms] | None = None,
) -> SlaPolicy | PolicyTerms | None:
    """The policy a conversation of the inbox with this priority and area follows, or None;
    ``policies``: the inbox's, when the caller read them already (``PolicyTerms``)."""
    if policies is not None:
        return rules.applicable(policies, priority, legal_area_id)
    found: Sequence[SlaPolicy] = await repository.policies_of_inbox(session, office_id, inbox_id)
    return rules.applicable(found, priority, legal_area_id)


async def _changed(session: AsyncSession, office_id: str, inbox_id: str) -> None:
    await sla_policies_changed.fire(SlaPoliciesChanged(session, office_id, inbox_id))
