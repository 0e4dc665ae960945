"""Ordering stated (issue 44, item 6): deliveries may arrive out of order (a retry comes after
a later event), so each body names its subject (the conversation, else the record `data`
describes) and its sequence among that subject's events: 1, 2, … without gaps, in the
order the changes committed, held by the database when changes race."""

from __future__ import annotations

import asyncio
from collections import defaultdict
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from officehub.events.models import OutboxEvent
from officehub.events.service import emit
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from tests.helpers import OfficeFixture
from tests.receiver import running_receiver
from tests.server import concurrent_client, fire, running_server
from tests.webhook_helpers import create_webhook, delivery_worker, emit_event


def _by_subject(bodies: list[dict[str, Any]]) -> dict[str | None, list[tuple[str, int | None]]]:
    found: dict[str | None, list[tuple[str, int | None]]] = defaultdict(list)
    for body in bodies:
        found[body["subjectId"]].append((body["event"], body["sequence"]))
    return {subject: sorted(events, key=lambda e: e[1] or 0) for subject, events in found.items()}


async def test_each_subjects_events_are_numbered_from_one_apart_from_other_subjects(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(
            client, office_a, receiver.url, events=["contact.created", "contact.updated"]
        )
        h = office_a.headers
        maria = (await client.post("/people", json={"name": "Maria"}, headers=h)).json()
        jose = (await client.post("/people", json={"name": "José"}, headers=h)).json()
        for name in ("Maria S.", "Maria Souza"):
            r = await client.patch(f"/people/{maria['id']}", json={"name": name}, headers=h)
            assert r.status_code == 200, r.text
        await delivery_worker(app, settings).run_until_idle()
        bodies = [got.json for got in receiver.received]
    assert _by_subject(bodies) == {
        maria["id"]: [("contact.created", 1), ("contact.updated", 2), ("contact.updated", 3)],
        jose["id"]: [("contact.created", 1)],
    }


async def test_a_conversations_events_are_numbered_by_the_conversation(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """An event emitted for a conversation counts in the conversation's sequence, whatever
    record its data describes."""
    from officehub.events.service import emit

    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url)
        async with app.state.sessionmaker() as s:
            for record in ("c0message000001", "c0message000002"):
                await emit(
                    s,
                    office_a.id,
                    "contact.created",
                    {"id": record},
                    conversation_id="c0conversation01",
                )
            await s.commit()
        await delivery_worker(app, settings).run_until_idle()
        bodies = [got.json for got in receiver.received]
    assert sorted((b["subjectId"], b["sequence"], b["data"]["id"]) for b in bodies) == [
        ("c0conversation01", 1, "c0message000001"),
        ("c0conversation01", 2, "c0message000002"),
    ]


async def test_an_event_about_no_record_has_no_subject_nor_sequence(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id, data={"name": "sem id"})
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    assert got.json["subjectId"] is None and got.json["sequence"] is None


async def test_concurrent_changes_of_one_record_get_distinct_gapless_sequences(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Eight updates of one contact at once through a running server: the subject's row in
    ``event_subjects`` makes them take turns, so the sequences are 2 to 9, each once."""
    h = office_a.headers
    async with running_receiver() as receiver:
        await create_webhook(
            client, office_a, receiver.url, events=["contact.created", "contact.updated"]
        )
        person = (await client.post("/people", json={"name": "Maria"}, headers=h)).json()
        async with running_server(app) as base_url, concurrent_client(base_url) as racing:
            answers = await fire(
                8,
                lambda i: racing.patch(
                    f"/people/{person['id']}", json={"name": f"Maria {i}"}, headers=h
                ),
            )
        assert [a.status_code for a in answers] == [200] * 8, [a.text for a in answers]
        await delivery_worker(app, settings).run_until_idle()
        bodies = [got.json for got in receiver.received]
    assert sorted(b["sequence"] for b in bodies) == list(range(1, 10))
    assert {b["subjectId"] for b in bodies} == {person["id"]}


async def test_two_transactions_numbering_two_subjects_in_opposite_orders_both_commit(
    app: FastAPI, database_url: str, office_a: OfficeFixture
) -> None:
    """Each transaction emits about A then B, the other about B then A, interleaved: the
    subjects' counters are taken when each commits, in (office, subject) order, so neither
    waits on the other while holding a counter (numbered at each emit, PostgreSQL found a
    deadlock here and refused one of them), and each subject's sequences come out 1, 2."""
    if not database_url.startswith("postgresql"):
        pytest.skip("SQLite runs one writing transaction at a time: they cannot interleave")
    engine = create_engine(database_url)
    sessions = create_sessionmaker(engine)
    both_emitted_once = asyncio.Barrier(2)

    async def change(first: str, second: str) -> None:
        async with sessions() as session:
            await emit(session, office_a.id, "contact.updated", {"id": first, "name": "x"})
            await both_emitted_once.wait()
            await emit(session, office_a.id, "contact.updated", {"id": second, "name": "y"})
            await session.commit()

    a, b = "cAAAAAAAAAsubject", "cBBBBBBBBBsubject"
    try:
        async with asyncio.timeout(30):
            await asyncio.gather(change(a, b), change(b, a))
        async with sessions() as session:
            rows = (
                await session.execute(
                    select(OutboxEvent.subject, OutboxEvent.sequence).where(
                        OutboxEvent.office_id == office_a.id, OutboxEvent.subject.in_([a, b])
                    )
                )
            ).all()
    finally:
        await engine.dispose()
    numbered: dict[str | None, list[int | None]] = defaultdict(list)
    for subject, sequence in rows:
        numbered[subject].append(sequence)
    assert {s: sorted(n or 0 for n in ns) for s, ns in numbered.items()} == {a: [1, 2], b: [1, 2]}


async def test_an_event_about_a_record_its_transaction_created_is_first_and_later_ones_follow(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """``new_subject`` numbers the event 1 in its own statement (PostgreSQL) and takes the
    subject's counter there, so a later event of that transaction about it is 2."""
    async with app.state.sessionmaker() as s:
        await emit(s, office_a.id, "contact.created", {"id": "c0newrecord0001"}, new_subject=True)
        await emit(s, office_a.id, "contact.updated", {"id": "c0newrecord0001"})
        await s.commit()
    async with app.state.sessionmaker() as s:
        rows = (
            await s.execute(
                select(OutboxEvent.name, OutboxEvent.sequence)
                .where(OutboxEvent.subject == "c0newrecord0001")
                .order_by(OutboxEvent.sequence)
            )
        ).all()
    assert [tuple(r) for r in rows] == [("contact.created", 1), ("contact.updated", 2)]
