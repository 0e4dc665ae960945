"""Webhook fan-out as the outbox's ``webhooks`` consumer, and consumers choosing their
events: a progress row only when the office has, when the event is recorded, an active
webhook subscribed / an enabled rule on the trigger; flows only for what it reacts to.
Also migration 0007_fanout: an event recorded before it is delivered after it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import Connection, event, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.models import ConsumerEvent, OutboxEvent
from officehub.events.service import PendingEvent, emit, emit_many
from officehub.kit.config import Settings
from officehub.kit.db import create_engine
from officehub.kit.worker import WorkerContext
from officehub.migrate import alembic_config
from officehub.webhooks.delivery import fan_out
from tests import factories as f
from tests.automation_helpers import create_rule
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, app_writers_paused
from tests.receiver import running_receiver
from tests.webhook_helpers import create_webhook, deliveries, delivery_worker, emit_event


async def _rows(app: FastAPI, event_id: str) -> list[str]:
    async with app.state.sessionmaker() as s:
        return sorted(
            await s.scalars(
                select(ConsumerEvent.consumer).where(ConsumerEvent.event_id == event_id)
            )
        )


async def _emit(
    app: FastAPI, office_id: str, name: str, data: dict[str, Any] | None = None, **kw: Any
) -> str:
    async with app.state.sessionmaker() as s:
        event = await emit(s, office_id, name, data or {"id": "c0000000000subject"}, **kw)
        await s.commit()
        return event.id


async def test_an_event_nobody_wants_gets_no_progress_row(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    assert await _rows(app, await _emit(app, office_a.id, "contact.created")) == []


async def test_webhooks_row_only_for_an_active_webhook_subscribed_to_the_event(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    await create_webhook(client, office_a, "https://hooks.example.com/a")
    updated = ["contact.updated"]
    await create_webhook(client, office_b, "https://hooks.example.com/b", events=updated)
    await create_webhook(
        client, office_a, "https://hooks.example.com/off", events=updated, isActive=False
    )
    assert await _rows(app, await _emit(app, office_a.id, "contact.created")) == ["webhooks"]
    assert await _rows(app, await _emit(app, office_a.id, "contact.deleted")) == []
    assert await _rows(app, await _emit(app, office_a.id, "contact.updated")) == []  # inactive
    assert await _rows(app, await _emit(app, office_b.id, "contact.created")) == []


async def test_automation_row_only_for_an_enabled_rule_on_the_trigger_and_integration(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await create_rule(client, office_a, triggerEvent="contact.created")
    await create_rule(client, office_a, triggerEvent="contact.updated", enabled=False)
    assert await _rows(app, await _emit(app, office_a.id, "contact.created")) == ["automation"]
    assert await _rows(app, await _emit(app, office_a.id, "contact.updated")) == []
    # Column entries are recorded whatever the rules (restartOnReturn of later rules)
    assert await _rows(app, await _emit(app, office_a.id, "crm.lead.moved")) == ["automation"]
    # A template sent into a conversation may lift a resumeOnTemplateSent pause
    sent = await _emit(
        app,
        office_a.id,
        "chat.message.sent",
        {"id": "c0000000000message", "templateName": "boas_vindas"},
        conversation_id="c0000000000conversation",
    )
    assert await _rows(app, sent) == ["automation"]
    plain = await _emit(
        app,
        office_a.id,
        "chat.message.sent",
        {"id": "c0000000000message", "text": "Oi"},
        conversation_id="c0000000000conversation",
    )
    assert await _rows(app, plain) == []  # flows only marked these done


async def test_a_rule_on_one_integration_wants_only_that_integrations_events(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    other = await f.make_integration(session, office_a.id, world.inbox.id, device_id="other")
    await session.commit()
    await create_rule(
        client, office_a, triggerEvent="chat.message.status", integrationId=world.integration.id
    )
    await create_rule(client, office_a, triggerEvent="contact.updated")  # every integration
    mine = world.integration.id
    scoped = "chat.message.status"
    assert await _rows(app, await _emit(app, office_a.id, scoped, integration_id=mine)) == [
        "automation"
    ]
    assert await _rows(app, await _emit(app, office_a.id, scoped, integration_id=other.id)) == []
    assert await _rows(app, await _emit(app, office_a.id, scoped)) == []
    for integration in (mine, other.id, None):
        updated = await _emit(app, office_a.id, "contact.updated", integration_id=integration)
        assert await _rows(app, updated) == ["automation"]


async def test_a_webhook_test_event_gets_the_webhooks_row_alone(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    received = ["chat.message.received"]
    hook = await create_webhook(client, office_a, "https://hooks.example.com/a", events=received)
    await create_rule(client, office_a, triggerEvent="chat.message.received")
    conversation = "c0000000000conversation"
    targeted = await _emit(
        app,
        office_a.id,
        "chat.message.received",
        conversation_id=conversation,
        target_webhook_id=hook["id"],
    )
    assert await _rows(app, targeted) == ["webhooks"]
    plain = await _emit(app, office_a.id, "chat.message.received", conversation_id=conversation)
    assert await _rows(app, plain) == ["automation", "flows", "webhooks"]


async def test_emit_is_one_statement_with_its_progress_rows_and_wakeup_on_postgresql(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    if app.state.engine.dialect.name != "postgresql":
        pytest.skip("SQLite writes the event and its rows in three statements (no data CTEs)")
    events = ["contact.created", "contact.updated"]
    await create_webhook(client, office_a, "https://hooks.example.com/a", events=events)
    statements: list[str] = []

    def record(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        statements.append(statement)

    async with app.state.sessionmaker() as s:
        sync_engine = app.state.engine.sync_engine
        event.listen(sync_engine, "before_cursor_execute", record)
        try:
            first = await emit(s, office_a.id, "contact.created", {"id": "c0000000000subject"})
            second = await emit(s, office_a.id, "contact.updated", {"id": "c0000000000subject"})
        finally:
            event.remove(sync_engine, "before_cursor_execute", record)
        await s.commit()
    emitted = [x for x in statements if "outbox_events" in x]
    assert len(emitted) == 2, statements
    assert all("outbox_consumer_events" in x and "pg_notify" in x for x in emitted)
    assert len(statements) == 2, statements  # nothing else: no select, no separate notify
    assert await _rows(app, first.id) == ["webhooks"]
    assert await _rows(app, second.id) == ["webhooks"]


async def test_flows_row_only_for_inbound_messages_and_assignments_in_a_conversation(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    conversation = "c0000000000conversation"
    received = await _emit(app, office_a.id, "chat.message.received", conversation_id=conversation)
    assigned = await _emit(
        app, office_a.id, "chat.conversation.assigned", conversation_id=conversation
    )
    updated = await _emit(
        app, office_a.id, "chat.conversation.updated", conversation_id=conversation
    )
    assert await _rows(app, received) == ["flows"]
    assert await _rows(app, assigned) == ["flows"]
    assert await _rows(app, updated) == []
    assert await _rows(app, await _emit(app, office_a.id, "chat.message.received")) == []


async def test_emit_many_chooses_per_event_and_office(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    await create_webhook(client, office_a, "https://hooks.example.com/a")
    await create_rule(client, office_b, triggerEvent="chat.message.status")
    async with app.state.sessionmaker() as s:
        await emit_many(
            s,
            [
                PendingEvent(office_a.id, "contact.created", {"id": "c1"}),
                PendingEvent(office_a.id, "chat.message.status", {"id": "c2"}),
                PendingEvent(office_b.id, "chat.message.status", {"id": "c3"}),
                PendingEvent(office_b.id, "contact.created", {"id": "c4"}),
            ],
        )
        await s.commit()
        events = {e.data["id"]: e.id for e in await s.scalars(select(OutboxEvent))}
    assert await _rows(app, events["c1"]) == ["webhooks"]
    assert await _rows(app, events["c2"]) == []
    assert await _rows(app, events["c3"]) == ["automation"]
    assert await _rows(app, events["c4"]) == []


async def test_a_webhook_created_after_an_event_does_not_receive_it(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        early = await create_webhook(client, office_a, receiver.url)
        event_id = await emit_event(app, office_a.id)
        late = await create_webhook(client, office_a, receiver.url)  # before the fan-out
        await delivery_worker(app, settings).run_until_idle()
    assert [d.event_id for d in await deliveries(app, early["id"])] == [event_id]
    assert await deliveries(app, late["id"]) == []
    assert receiver.event_ids() == [event_id]


async def test_a_webhook_test_event_goes_to_its_target_alone(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        target = await create_webhook(client, office_a, receiver.url, events=["contact.updated"])
        other = await create_webhook(client, office_a, receiver.url, events=["webhook.test"])
        r = await client.post(f"/webhooks/{target['id']}/test", headers=office_a.headers)
        assert r.status_code in (200, 201, 202), r.text
        await delivery_worker(app, settings).run_until_idle()
    assert [d.event for d in await deliveries(app, target["id"])] == ["webhook.test"]
    assert await deliveries(app, other["id"]) == []


async def test_a_second_fan_out_of_the_same_event_adds_nothing(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await create_webhook(client, office_a, "https://hooks.example.com/x")
    event_id = await emit_event(app, office_a.id)
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    for _ in range(2):
        async with app.state.sessionmaker() as s, s.begin():
            event = await s.get(OutboxEvent, event_id)
            assert event is not None
            await fan_out(s, event, ctx)
    assert [d.event_id for d in await deliveries(app, hook["id"])] == [event_id]


async def test_fan_out_marks_the_webhooks_row_done_with_its_deliveries(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    hook = await create_webhook(client, office_a, "https://hooks.example.com/x")
    event_id = await emit_event(app, office_a.id)
    from officehub.webhooks.delivery import fan_out_events

    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    assert await fan_out_events(ctx) == 1
    assert await fan_out_events(ctx) == 0
    async with app.state.sessionmaker() as s:
        row = await s.scalar(select(ConsumerEvent).where(ConsumerEvent.event_id == event_id))
    assert row is not None and row.consumer == "webhooks" and row.done_at is not None
    assert len(await deliveries(app, hook["id"])) == 1


# Migration 0007_fanout


def _migrate(connection: Connection, revision: str, *, down: bool = False) -> None:
    from alembic import command

    config = alembic_config()
    config.attributes["connection"] = connection
    (command.downgrade if down else command.upgrade)(config, revision)


async def test_an_event_recorded_before_the_migration_is_delivered_after_it(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    database_url: str,
    office_a: OfficeFixture,
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        engine = create_engine(database_url)
        try:
            async with app_writers_paused(app), engine.begin() as conn:
                await conn.run_sync(_migrate, "0006_flows", down=True)
                now = datetime.now(UTC)
                for ident, dispatched in (("cbeforemigration01", None), ("cdonebefore000001", now)):
                    await conn.execute(
                        text(
                            "INSERT INTO outbox_events (id, office_id, name, data, created_at,"
                            " depth, dispatched_at) VALUES (:id, :o, 'contact.created',"
                            " :data, :t, 0, :d)"
                        ),
                        {
                            "id": ident,
                            "o": office_a.id,
                            "data": '{"id": "c0000000000old"}',
                            "t": now,
                            "d": dispatched,
                        },
                    )
            async with app_writers_paused(app), engine.begin() as conn:
                await conn.run_sync(_migrate, "head")
                rows = (
                    await conn.execute(
                        text("SELECT consumer, event_id FROM outbox_consumer_events")
                    )
                ).all()
        finally:
            await engine.dispose()
        assert [tuple(r) for r in rows] == [("webhooks", "cbeforemigration01")]
        await delivery_worker(app, settings).run_until_idle()
    assert receiver.event_ids() == ["cbeforemigration01"]
    assert [d.event_id for d in await deliveries(app, hook["id"])] == ["cbeforemigration01"]


async def test_the_fanout_migration_downgrades_with_undelivered_events_undispatched(
    app: FastAPI, client: httpx.AsyncClient, database_url: str, office_a: OfficeFixture
) -> None:
    await create_webhook(client, office_a, "https://hooks.example.com/x")
    pending = await emit_event(app, office_a.id)
    nobody = await _emit(app, office_a.id, "contact.deleted")
    engine = create_engine(database_url)
    try:
        async with app_writers_paused(app), engine.begin() as conn:
            await conn.run_sync(_migrate, "0006_flows", down=True)
            result = await conn.execute(text("SELECT id, dispatched_at FROM outbox_events"))
            flags: dict[str, Any] = {row[0]: row[1] for row in result}
            left = await conn.scalar(
                text("SELECT count(*) FROM outbox_consumer_events WHERE consumer = 'webhooks'")
            )
        async with app_writers_paused(app), engine.begin() as conn:
            await conn.run_sync(_migrate, "head")
            again = (
                await conn.execute(text("SELECT consumer, event_id FROM outbox_consumer_events"))
            ).all()
    finally:
        await engine.dispose()
    assert flags[pending] is None and flags[nobody] is not None
    assert left == 0
    assert [tuple(r) for r in again] == [("webhooks", pending)]


async def test_consumer_rows_are_written_in_the_events_transaction(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    await create_webhook(client, office_a, "https://hooks.example.com/x")
    async with app.state.sessionmaker() as s:
        await emit(s, office_a.id, "contact.created", {"id": "c0000000000gone"})
        await s.rollback()
    assert list(await session.scalars(select(ConsumerEvent))) == []
