"""``PATCH /conversation/{id}``'s locked read on PostgreSQL (issue 45, item 1): the
conversation's row locked with its tags in one statement, the inbox's SLA policies in one
more, and what a transaction that held the row wrote still seen by the change queued
behind it (``conversations.repository.locked_for_change``).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import ConversationTag
from officehub.sla.models import SlaPolicy
from tests import factories as f
from tests.conftest import PG_URL
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, outbox
from tests.test_performance import statements_of

pytestmark = pytest.mark.skipif(not PG_URL, reason="PostgreSQL only: its snapshots and locks")


async def test_the_lock_its_tags_and_the_policies_are_two_statements_before_the_update(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    url = f"/conversation/{world.conversation.id}"
    await client.get(url, headers=office_a.headers)
    sent = await statements_of(
        app, client, "PATCH", url, json={"priority": "HIGH"}, headers=office_a.headers
    )
    written = [" ".join(s.split()) for s in sent]
    update = next(i for i, s in enumerate(written) if s.startswith("UPDATE conversations"))
    locked, policies = written[:update]
    assert "FOR UPDATE OF conversations" in locked and "FROM conversation_tags" in locked
    assert "FROM sla_policies" in policies and "FOR UPDATE" not in policies


async def _waiting_for_a_lock(app: FastAPI) -> None:
    """Until a statement of the app's database waits for a row lock (the request's)."""
    async with app.state.sessionmaker() as s:
        for _ in range(200):
            waiting = await s.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND wait_event_type = 'Lock'"
                )
            )
            if waiting:
                return
            await s.rollback()
            await asyncio.sleep(0.025)
    raise AssertionError("the request never waited for the conversation's lock")


async def _patch_behind(
    app: FastAPI, client: httpx.AsyncClient, url: str, body: dict[str, Any], headers: Any
) -> asyncio.Task[httpx.Response]:
    request = asyncio.create_task(client.patch(url, json=body, headers=headers))
    await _waiting_for_a_lock(app)
    assert not request.done()
    return request


async def test_tags_written_by_the_rows_holder_are_seen_by_the_patch_queued_behind_it(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The holder commits after the queued PATCH's statement began: its snapshot misses
    the new tag, the row it then locks is newer than that snapshot, and its tags are read
    again after the lock (the answer and the event carry both tags)."""
    world = await make_world(session, office_a.id)
    added = await f.make_tag(session, office_a.id, world.inbox.id, "zz added")
    await session.commit()
    cid = world.conversation.id
    async with app.state.sessionmaker() as holder:
        await holder.execute(
            text("SELECT 1 FROM conversations WHERE id = :id FOR UPDATE"), {"id": cid}
        )
        holder.add(ConversationTag(office_id=office_a.id, conversation_id=cid, tag_id=added.id))
        await holder.execute(
            text("UPDATE conversations SET updated_at = now() WHERE id = :id"), {"id": cid}
        )
        await holder.flush()
        request = await _patch_behind(
            app, client, f"/conversation/{cid}", {"priority": "HIGH"}, office_a.headers
        )
        await holder.commit()
    answer = await request
    assert answer.status_code == 200, answer.text
    both = [world.tag.id, added.id]
    assert [t["id"] for t in answer.json()["tags"]] == both
    [event] = await outbox(app, office_a.id, "chat.conversation.updated")
    assert [t["id"] for t in event.data["tags"]] == both


async def test_a_policy_added_while_the_row_was_held_applies_to_the_patch_queued_behind_it(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The holder locks the row without writing it (as a policy's change does when the
    conversation's due times do not move): the policies are read after the lock."""
    world = await make_world(session, office_a.id)
    cid = world.conversation.id
    async with app.state.sessionmaker() as holder:
        await holder.execute(
            text("SELECT 1 FROM conversations WHERE id = :id FOR UPDATE"), {"id": cid}
        )
        policy = SlaPolicy(
            office_id=office_a.id,
            inbox_id=world.inbox.id,
            priority="HIGH",
            first_response_minutes=5,
            next_response_minutes=30,
            resolution_business_days=2,
        )
        holder.add(policy)
        await holder.flush()
        request = await _patch_behind(
            app, client, f"/conversation/{cid}", {"priority": "HIGH"}, office_a.headers
        )
        await holder.commit()
    answer = await request
    assert answer.status_code == 200, answer.text
    assert answer.json()["sla"]["policyId"] == policy.id
