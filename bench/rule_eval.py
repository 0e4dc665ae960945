"""Automation rule evaluation: time per event with 10 and with 1,000 enabled rules, and the
time from an inbound message to its rule's action.

    .venv/bin/python -m bench.rule_eval [--events 300] [--messages 200] [--gap 0.1]
        [--part all|eval|latency] [--database-url URL]

Part 1 records ``--events`` inbound-message events across 20 conversations, then times the
automation consumer draining them; the office has 10 enabled rules on
``chat.message.received`` (all matching), and then also 990 enabled rules on other triggers.
Part 2 serves the app with its embedded worker (default poll interval, 1 s) and posts
``--messages`` inbound messages one at a time, ``--gap`` seconds apart; a rule answers each with a
TEXT fast message. Latency: the inbound event's ``createdAt`` → the run recorded after the
message was sent (both server clocks).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from officehub.app import create_app
from officehub.automation import service as automation
from officehub.automation.consumer import AUTOMATION
from officehub.automation.models import AutomationRun
from officehub.automation.schemas import RuleCreate
from officehub.events.consumers import consumer_job
from officehub.events.models import OutboxEvent
from officehub.events.service import emit
from officehub.fast_messages.models import FastMessage
from officehub.hook_subscriptions import install
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.worker import Worker, WorkerContext
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from tests import factories as f

OTHER_TRIGGERS = [
    "crm.lead.created",
    "crm.lead.updated",
    "crm.lead.moved",
    "chat.conversation.updated",
    "chat.message.sent",
    # a conversation's trigger: a rule scheduling a message on contact.created (no
    # conversation) is refused when saved since issue 43
    "chat.conversation.created",
]


async def _world(settings: Settings, conversations: int) -> tuple[str, str, list[str], str]:
    engine = create_engine(settings.database_url)
    maker = create_sessionmaker(engine)
    async with maker() as s:
        office = await offices.create_office(s, "Bench")
        key = await offices.create_api_key(s, office.id, "bench", None)
        inbox = await f.make_inbox(s, office.id)
        integration = await f.make_integration(s, office.id, inbox.id)
        ids = []
        for n in range(conversations):
            contact = await f.make_contact(s, office.id, name=f"C{n}", phone=None)
            ids.append((await f.make_conversation(s, office.id, contact.id, integration)).id)
        fast = FastMessage(
            office_id=office.id, inbox_id=inbox.id, title="Oi", kind="TEXT", text="Olá!"
        )
        s.add(fast)
        await s.commit()
    await engine.dispose()
    return office.id, key.key, ids, fast.id


async def _add_rules(
    settings: Settings, office_id: str, trigger: str, count: int, actions: list[dict[str, Any]]
) -> None:
    engine = create_engine(settings.database_url)
    maker = create_sessionmaker(engine)
    async with maker() as s:
        for n in range(count):
            body = RuleCreate.model_validate(
                {
                    "name": f"r{n}",
                    "triggerEvent": trigger,
                    "conditions": {"messageText": "processo"},
                    "actions": actions,
                }
            )
            await automation.create_rule(s, office_id, body, settings)
        await s.commit()
    await engine.dispose()


async def _fresh(tmp: Path, name: str, url: str | None) -> Settings:
    database_url = url or f"sqlite+aiosqlite:///{tmp / name}.db"
    await migrate_async(database_url)
    return Settings(database_url=database_url, data_dir=tmp / name, signing_key="bench")


async def per_event(tmp: Path, url: str | None, events: int, extra_rules: int) -> float:
    settings = await _fresh(tmp, f"eval{extra_rules}", url)
    office_id, _key, conversations, _fast = await _world(settings, 20)
    later = [{"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "x", "delayMinutes": 600}}]
    await _add_rules(settings, office_id, "chat.message.received", 10, later)
    for n, trigger in enumerate(OTHER_TRIGGERS):
        share = extra_rules // len(OTHER_TRIGGERS) + (
            1 if n < extra_rules % len(OTHER_TRIGGERS) else 0
        )
        await _add_rules(settings, office_id, trigger, share, later)
    engine = create_engine(settings.database_url)
    maker = create_sessionmaker(engine)
    async with maker() as s:
        for n in range(events):
            conversation = conversations[n % len(conversations)]
            await emit(
                s,
                office_id,
                "chat.message.received",
                {"text": "sobre o processo"},
                conversation_id=conversation,
            )
        await s.commit()
    worker = Worker(WorkerContext(settings, engine, maker), [consumer_job(AUTOMATION)])
    started = time.perf_counter()
    await worker.run_until_idle()
    elapsed = time.perf_counter() - started
    async with maker() as s:
        ran = len(
            list(
                await s.scalars(
                    select(AutomationRun.id).where(AutomationRun.office_id == office_id)
                )
            )
        )
    await engine.dispose()
    assert ran == events * 10, ran
    return elapsed / events * 1000


async def latency(tmp: Path, url: str | None, messages: int, gap: float) -> list[float]:
    settings = await _fresh(tmp, "latency", url)
    office_id, key, conversations, fast_id = await _world(settings, 20)
    send = [{"action": "SEND_FAST_MESSAGE", "actionParams": {"fastMessageId": fast_id}}]
    await _add_rules(settings, office_id, "chat.message.received", 1, send)
    app = create_app(settings, embedded_worker=True)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for n in range(messages):
                conversation = conversations[n % len(conversations)]
                r = await client.post(
                    f"/conversation/{conversation}/messages/inbound",
                    json={"text": "sobre o processo"},
                    headers={"x-service-api-key": key},
                )
                assert r.status_code == 201, r.text
                await asyncio.sleep(gap)
            async with asyncio.timeout(60):
                while True:
                    async with app.state.sessionmaker() as s:
                        runs = list(
                            await s.execute(
                                select(AutomationRun.event_id, AutomationRun.created_at)
                            )
                        )
                    if len(runs) >= messages:
                        break
                    await asyncio.sleep(0.1)
            async with app.state.sessionmaker() as s:
                created = dict(
                    (row[0], row[1])
                    for row in await s.execute(
                        select(OutboxEvent.id, OutboxEvent.created_at).where(
                            OutboxEvent.name == "chat.message.received"
                        )
                    )
                )
    return [(at - created[event]).total_seconds() * 1000 for event, at in runs]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--gap", type=float, default=0.1)
    parser.add_argument("--part", choices=["all", "eval", "latency"], default="all")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--quick", action="store_true", help="60 events, 30 messages")
    args = parser.parse_args()
    install()  # the outbox's consumers register themselves here
    if args.quick:
        args.events, args.messages = 60, 30
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if args.part in ("all", "eval"):
            ten = await per_event(base, args.database_url, args.events, 0)
            thousand = await per_event(base, args.database_url, args.events, 990)
            print(f"per event, 10 enabled rules (10 matching):    {ten:.2f} ms")
            ratio = thousand / ten
            print(
                f"per event, 1,000 enabled rules (10 matching): {thousand:.2f} ms  ({ratio:.2f}x)"
            )
        if args.part == "eval":
            return
        values = await latency(base, args.database_url, args.messages, args.gap)
        p50, p99 = statistics.median(values), _pct(values, 0.99)
        print(f"inbound message -> action ({len(values)}): p50 {p50:.1f} ms, p99 {p99:.1f} ms")


if __name__ == "__main__":
    asyncio.run(main())
