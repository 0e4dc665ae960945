"""The conversation list's totals kept by the database (``conversation_counts``, migration
0038, issue 45): after any mix of writes, through the API, the services, bulk statements
and the database's cascades, every total of the kept filters equals a count of the rows."""

from __future__ import annotations

import itertools
import random
from datetime import timedelta
from functools import partial
from typing import Any

import httpx
import pytest
from alembic import command
from fastapi import FastAPI
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import retention
from officehub.kit.db import create_engine
from officehub.kit.timeutil import utcnow
from officehub.migrate import alembic_config
from tests import factories as f
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, make_office
from tests.server import concurrent_client, fire, running_server

# Every total the list keeps: office alone, or with an inbox, a status, an assignee (or
# nobody) and the archived flag, each present or not.
_KEPT = (
    "SELECT office_id, inbox_id, status, assignee_key, is_archived, sum(conversations)"
    " FROM conversation_counts GROUP BY office_id, inbox_id, status, assignee_key, is_archived"
    " HAVING sum(conversations) <> 0"
)
_COUNTED = (
    "SELECT office_id, inbox_id, status, COALESCE(assigned_user_id, ''), is_archived, count(*)"
    " FROM conversations"
    " GROUP BY office_id, inbox_id, status, COALESCE(assigned_user_id, ''), is_archived"
)


async def _kept_equals_counted(session: AsyncSession) -> None:
    """Every key's kept count is the number of its conversations (no key left over)."""
    kept = {(*r[:4], bool(r[4])): r[5] for r in await session.execute(text(_KEPT))}
    counted = {(*r[:4], bool(r[4])): r[5] for r in await session.execute(text(_COUNTED))}
    assert kept == counted
    negative = await session.scalar(
        text("SELECT count(*) FROM conversation_counts WHERE conversations < 0")
    )
    assert negative == 0


async def _every_total_is_exact(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office: OfficeFixture,
    inboxes: list[str],
    users: list[str],
) -> int:
    """``totalResults`` of every combination of the kept filters against ``count(*)``."""
    checked = 0
    for inbox, status, assignee, archived in itertools.product(
        [None, *inboxes], [None, "OPEN", "CLOSED"], [None, "", *users], [None, True, False]
    ):
        params: dict[str, Any] = {"limit": 1}
        where = ["office_id = :o"]
        if inbox is not None:
            params["inboxId"] = inbox
            where.append("inbox_id = :i")
        if status is not None:
            params["status"] = status
            where.append("status = :s")
        if assignee == "":
            params["unassigned"] = "true"
            where.append("assigned_user_id IS NULL")
        elif assignee is not None:
            params["assigneeId"] = assignee
            where.append("assigned_user_id = :u")
        if archived is not None:
            params["isArchived"] = str(archived).lower()
            where.append("is_archived = :a")
        expected = await session.scalar(
            text(f"SELECT count(*) FROM conversations WHERE {' AND '.join(where)}"),  # noqa: S608
            {"o": office.id, "i": inbox, "s": status, "u": assignee, "a": archived},
        )
        answer = await client.get("/conversation", params=params, headers=office.headers)
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["totalResults"] == expected, params
        assert body["totalPages"] == -(-expected // 1)
        checked += 1
    return checked


async def _office(session: AsyncSession, office_id: str) -> tuple[list[Any], list[str], list[Any]]:
    inboxes = [await f.make_inbox(session, office_id, name=f"Caixa {i}") for i in range(2)]
    integrations = [await f.make_integration(session, office_id, inbox.id) for inbox in inboxes]
    users = [
        (await f.make_user(session, office_id, name=f"Pessoa Usuária {i}")).id for i in range(3)
    ]
    contacts = [
        await f.make_contact(session, office_id, name=f"Cliente {i}", phone=f"+55119{7100 + i}0000")
        for i in range(12)
    ]
    return integrations, users, contacts


@pytest.mark.parametrize("seed", [1, 2])
async def test_every_kept_total_equals_a_count_after_random_writes(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
    seed: int,
) -> None:
    rng = random.Random(seed)
    integrations, users, contacts = await _office(session, office_a.id)
    other = await f.make_inbox(session, office_b.id)
    other_integration = await f.make_integration(session, office_b.id, other.id)
    other_contact = await f.make_contact(session, office_b.id)
    await f.make_conversation(session, office_b.id, other_contact.id, other_integration)
    await session.commit()
    h = office_a.headers
    opened: list[str] = []
    for _ in range(70):
        kind = rng.choice(
            ["open", "open", "open", "patch", "patch", "patch", "move", "bulk", "erase"]
        )
        if kind == "open" or not opened:
            integration = rng.choice(integrations)
            body = {
                "personId": rng.choice(contacts).id,
                "inboxId": integration.inbox_id,
                "integrationId": integration.id,
            }
            answer = await client.post("/conversation", json=body, headers=h)
            assert answer.status_code in (200, 201), answer.text
            opened.append(answer.json()["id"])
        elif kind == "patch":
            change = rng.choice(
                [
                    {"status": rng.choice(["OPEN", "CLOSED"])},
                    {"assignedUserId": rng.choice([None, *users])},
                    {"isArchived": rng.choice([True, False])},
                    {"status": "CLOSED", "isArchived": True, "assignedUserId": None},
                    {"priority": "HIGH"},  # no counted column
                ]
            )
            answer = await client.patch(
                f"/conversation/{rng.choice(opened)}", json=change, headers=h
            )
            # Reopening beside another open conversation of the contact is refused (409);
            # retention may have erased it (404).
            assert answer.status_code in (200, 404, 409), answer.text
        elif kind == "move":  # to the other inbox (no route moves one: the table does)
            integration = rng.choice(integrations)
            await session.execute(
                text(
                    "UPDATE conversations SET inbox_id = :i, integration_id = :n"
                    " WHERE id = :c AND status = 'CLOSED'"
                ),
                {"i": integration.inbox_id, "n": integration.id, "c": rng.choice(opened)},
            )
            await session.commit()
        elif kind == "bulk":  # several rows in one statement, several keys at once
            await session.execute(
                text(
                    "UPDATE conversations SET is_archived = NOT is_archived,"
                    " assigned_user_id = CASE WHEN assigned_user_id IS NULL THEN :u END"
                    " WHERE office_id = :o AND status = :s"
                ),
                {"o": office_a.id, "s": rng.choice(["OPEN", "CLOSED"]), "u": rng.choice(users)},
            )
            await session.commit()
        else:  # retention's erasure of the closed ones (the service)
            now = utcnow() + timedelta(days=1)
            await retention.erase_closed(session, office_a.id, now, rng.randint(1, 3), now)
            await session.commit()
    await _kept_equals_counted(session)
    assert (
        await _every_total_is_exact(
            client, session, office_a, [i.inbox_id for i in integrations], users
        )
        == 135
    )

    # Cascades: a user's deletion unassigns (SET NULL), a contact's deletion (the API)
    # takes its conversations, an inbox's deletion (the table's cascade) takes its own.
    await session.execute(text("DELETE FROM users WHERE id = :u"), {"u": users[0]})
    await session.commit()
    for contact in contacts[:3]:
        answer = await client.delete(f"/people/{contact.id}", headers=h)
        assert answer.status_code == 200, answer.text
    await session.execute(
        text("DELETE FROM inboxes WHERE id = :i"), {"i": integrations[1].inbox_id}
    )
    await session.commit()
    await _kept_equals_counted(session)
    await _every_total_is_exact(client, session, office_a, [integrations[0].inbox_id], users[1:])

    # An office's deletion takes its counts with it; the other offices' stay.
    gone = await make_office(app, "Office C")
    gone_integrations, _, gone_contacts = await _office(session, gone.id)
    for contact in gone_contacts[:4]:
        await f.make_conversation(session, gone.id, contact.id, gone_integrations[0])
    await session.commit()
    await _kept_equals_counted(session)
    await session.execute(text("DELETE FROM offices WHERE id = :o"), {"o": gone.id})
    await session.commit()
    left = await session.scalar(
        text("SELECT count(*) FROM conversation_counts WHERE office_id = :o"), {"o": gone.id}
    )
    assert left == 0
    await _kept_equals_counted(session)
    listed = await client.get("/conversation", headers=office_b.headers)
    assert listed.json()["totalResults"] == 1


async def test_concurrent_writes_of_one_inbox_keep_exact_totals(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Many conversations opened, closed, assigned and archived at once in one inbox (one
    counter row per key, split in shards on PostgreSQL): no 5xx, no lost count."""
    integrations, users, _ = await _office(session, office_a.id)
    integration = integrations[0]
    contacts = [
        await f.make_contact(
            session, office_a.id, name=f"Simultâneo {i}", phone=f"+55119{7300 + i}0000"
        )
        for i in range(48)
    ]
    await session.commit()
    h = office_a.headers

    def open_one(client: httpx.AsyncClient, i: int) -> Any:
        body = {
            "personId": contacts[i].id,
            "inboxId": integration.inbox_id,
            "integrationId": integration.id,
        }
        return client.post("/conversation", json=body, headers=h)

    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        answers = await fire(len(contacts), partial(open_one, client))
        assert [a.status_code for a in answers if a.status_code >= 300] == []
        ids = [a.json()["id"] for a in answers]

        def change(i: int) -> Any:
            body = [
                {"status": "CLOSED"},
                {"assignedUserId": users[i % len(users)]},
                {"isArchived": True},
                {"status": "CLOSED", "assignedUserId": users[0], "isArchived": True},
            ][i % 4]
            return client.patch(f"/conversation/{ids[i]}", json=body, headers=h)

        answers = await fire(len(ids), change)
        assert [a.status_code for a in answers if a.status_code != 200] == []
        await _every_total_is_exact(client, session, office_a, [integration.inbox_id], users)
    await _kept_equals_counted(session)


async def test_a_total_outside_the_kept_filters_still_counts(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """personId, a tag, a legal area and a search are no keys of the counts: their totals
    are counted from the conversations, exact as before."""
    integrations, users, contacts = await _office(session, office_a.id)
    tag = await f.make_tag(session, office_a.id, integrations[0].inbox_id)
    area = await f.make_legal_area(session, office_a.id)
    first = await f.make_conversation(
        session, office_a.id, contacts[0].id, integrations[0], tags=[tag], assigned_user_id=users[0]
    )
    first.legal_area_id = area.id
    await f.make_conversation(session, office_a.id, contacts[1].id, integrations[0])
    await f.make_conversation(session, office_a.id, contacts[0].id, integrations[1])
    await session.commit()
    for params, total in [
        ({"personId": contacts[0].id}, 2),
        ({"tagId": tag.id}, 1),
        ({"legalAreaId": area.id, "isArchived": "false"}, 1),
        ({"q": "Cliente 1"}, 1),
        ({}, 3),
        ({"inboxId": integrations[0].inbox_id, "isArchived": "false"}, 2),
    ]:
        answer = await client.get("/conversation", params=params, headers=office_a.headers)
        assert answer.json()["totalResults"] == total, params


def _migrate(connection: Connection, revision: str, *, down: bool = False) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    (command.downgrade if down else command.upgrade)(config, revision)


async def test_the_counts_migration_fills_from_the_table_and_goes_down(
    database_url: str, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """0038 down to 0037 drops the counts and their triggers (writes then count nothing);
    up again fills them from the conversations, those written meanwhile included."""
    integrations, users, contacts = await _office(session, office_a.id)
    for n, contact in enumerate(contacts[:6]):
        await f.make_conversation(
            session,
            office_a.id,
            contact.id,
            integrations[n % 2],
            assigned_user_id=users[n % 3] if n % 2 else None,
            status="CLOSED" if n % 3 == 0 else "OPEN",
        )
    await session.commit()
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_migrate, "0037_unarchived_counts", down=True)
            tables = await conn.run_sync(lambda sync: inspect(sync).get_table_names())
            assert "conversation_counts" not in tables
            # Written while there are no counts: no trigger is left to write them.
            await conn.execute(
                text(
                    "UPDATE conversations SET is_archived = true, assigned_user_id = NULL"
                    " WHERE office_id = :o AND status = 'CLOSED'"
                ),
                {"o": office_a.id},
            )
            await conn.execute(
                text("DELETE FROM conversations WHERE person_id = :p"), {"p": contacts[1].id}
            )
            await conn.run_sync(_migrate, "head")
    finally:
        await engine.dispose()
    filled = await session.scalar(
        text("SELECT sum(conversations) FROM conversation_counts WHERE office_id = :o"),
        {"o": office_a.id},
    )
    assert filled == 5
    await _kept_equals_counted(session)
    # The triggers are back: a new conversation counts.
    await f.make_conversation(session, office_a.id, contacts[7].id, integrations[0])
    await session.commit()
    await _kept_equals_counted(session)
    filled = await session.scalar(
        text("SELECT sum(conversations) FROM conversation_counts WHERE office_id = :o"),
        {"o": office_a.id},
    )
    assert filled == 6


async def test_a_supervisors_and_an_agents_totals_sum_the_counts_they_may_see(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A SUPERVISOR sees their inboxes, an AGENT with ``onlyAssignedConversations`` theirs
    and the unassigned of their inboxes: each total is the sum of those counts, exact."""
    integrations, users, contacts = await _office(session, office_a.id)
    inboxes = [i.inbox_id for i in integrations]
    for n, contact in enumerate(contacts):
        await f.make_conversation(
            session,
            office_a.id,
            contact.id,
            integrations[n % 2],
            assigned_user_id=[None, *users][n % 4],
            status="CLOSED" if n % 3 == 0 else "OPEN",
        )
    await session.commit()
    async with (
        signed_in(app, office_a, "SUPERVISOR", inbox_ids=[inboxes[0]]) as supervisor,
        signed_in(app, office_a, "AGENT", inbox_ids=inboxes) as agent,
    ):
        r = await client.patch(
            f"/user/{agent.id}", json={"onlyAssignedConversations": True}, headers=office_a.headers
        )
        assert r.status_code == 200, r.text
        for n, contact in enumerate(contacts[:3]):  # three of the agent's own
            await f.make_conversation(
                session,
                office_a.id,
                contact.id,
                integrations[n % 2],
                assigned_user_id=agent.id,
                status="CLOSED",
            )
        await session.commit()
        cases = [
            (supervisor, "inbox_id = :i0"),
            (agent, "(assigned_user_id IS NULL OR assigned_user_id = :me)"),
        ]
        for user, seen in cases:
            for params in [
                {},
                {"status": "OPEN"},
                {"unassigned": "true"},
                {"inboxId": inboxes[1], "isArchived": "false"},
                {"assigneeId": users[0]},
                {"mine": "true"},
            ]:
                where = ["office_id = :o", seen]
                if "status" in params:
                    where.append("status = 'OPEN'")
                if "unassigned" in params:
                    where.append("assigned_user_id IS NULL")
                if "inboxId" in params:
                    where.append("inbox_id = :i1 AND NOT is_archived")
                if "assigneeId" in params:
                    where.append("assigned_user_id = :u0")
                if "mine" in params:
                    where.append("assigned_user_id = :me")
                expected = await session.scalar(
                    text(f"SELECT count(*) FROM conversations WHERE {' AND '.join(where)}"),  # noqa: S608
                    {
                        "o": office_a.id,
                        "i0": inboxes[0],
                        "i1": inboxes[1],
                        "u0": users[0],
                        "me": user.id,
                    },
                )
                answer = await user.request("GET", "/conversation", params={**params, "limit": 1})
                assert answer.status_code == 200, answer.text
                assert answer.json()["totalResults"] == expected, (user.role, params)
        # The totals come from the counts (a count kept wrong would show), the page not.
        await session.execute(
            text("UPDATE conversation_counts SET conversations = conversations + 100")
        )
        await session.commit()
        answer = await supervisor.request("GET", "/conversation", params={"status": "OPEN"})
        listed = answer.json()
        assert listed["totalResults"] > 100 > len(listed["data"])
