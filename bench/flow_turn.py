"""Conversation flows: the time from an inbound message to the flow's reply being handed to
the channel, and the turns per second one worker sustains.

    .venv/bin/python -m bench.flow_turn [--messages 100] [--gap 0.05] [--conversations 200]
        [--turns 3] [--part all|latency|throughput] [--database-url URL]

Part 1 serves the app with its embedded worker and posts ``--messages`` inbound messages
one at a time, ``--gap`` seconds apart, each the first message of its own conversation:
the flow sends a greeting and a list. Latency: the inbound message's ``createdAt`` → the
flow's first reply stored ``QUEUED`` for the channel's dispatcher (both server clocks).
Part 2 records ``--turns`` inbound messages in each of ``--conversations`` conversations
(the first starts the flow, each later one answers its list, which sends a text and the
list again), then times one worker's flows consumer draining them: turns per second.
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
from sqlalchemy import func, select

from officehub.app import create_app
from officehub.events.consumers import consumer_job
from officehub.flows import service as flows
from officehub.flows.runtime import FLOWS
from officehub.flows.schemas import FlowCreate
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages import inbound as inbound_messages
from officehub.messages.models import Message
from officehub.messages.schemas import InboundIn
from officehub.migrate import migrate_async
from officehub.offices import service as offices
from tests import factories as f

STEPS: list[dict[str, Any]] = [
    {"id": "hello", "content": "Olá! Bem-vindo.", "type": "text", "nextStepId": "menu"},
    {
        "id": "menu",
        "content": "Como podemos ajudar?",
        "type": "list",
        "options": [
            {"text": "Consultar processo", "title": "Processo", "value": "p", "nextStepId": "ok"},
            {"text": "Falar com advogado", "title": "Advogado", "value": "a", "nextStepId": "ok"},
        ],
    },
    {"id": "ok", "content": "Certo, anotado.", "type": "text", "nextStepId": "menu"},
]


async def _world(settings: Settings, conversations: int) -> tuple[str, str, list[str]]:
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
        body = FlowCreate.model_validate(
            {
                "name": "Bench",
                "inboxId": inbox.id,
                "content": {"steps": STEPS, "initialStepId": "hello"},
            }
        )
        await flows.create_flow(s, office.id, body, allow_private=False)
        await s.commit()
    await engine.dispose()
    return office.id, key.key, ids


async def _fresh(tmp: Path, name: str, url: str | None) -> Settings:
    database_url = url or f"sqlite+aiosqlite:///{tmp / name}.db"
    await migrate_async(database_url)
    return Settings(database_url=database_url, data_dir=tmp / name, signing_key="bench")


async def latency(tmp: Path, url: str | None, count: int, gap: float) -> list[float]:
    settings = await _fresh(tmp, "latency", url)
    office_id, key, conversations = await _world(settings, count)
    app = create_app(settings, embedded_worker=True)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
            for conversation in conversations:
                r = await client.post(
                    f"/conversation/{conversation}/messages/inbound",
                    json={"text": "Oi"},
                    headers={"x-service-api-key": key},
                )
                assert r.status_code == 201, r.text
                await asyncio.sleep(gap)
            async with asyncio.timeout(60):
                while True:
                    async with app.state.sessionmaker() as s:
                        rows = list(
                            await s.execute(
                                select(Message.conversation_id, func.min(Message.created_at))
                                .where(
                                    Message.office_id == office_id, Message.direction == "OUTBOUND"
                                )
                                .group_by(Message.conversation_id)
                            )
                        )
                    if len(rows) >= count:
                        break
                    await asyncio.sleep(0.1)
            async with app.state.sessionmaker() as s:
                received = dict(
                    (row[0], row[1])
                    for row in await s.execute(
                        select(Message.conversation_id, Message.created_at).where(
                            Message.office_id == office_id, Message.direction == "INBOUND"
                        )
                    )
                )
    return [(at - received[c]).total_seconds() * 1000 for c, at in rows]


async def throughput(tmp: Path, url: str | None, conversations: int, turns: int) -> float:
    settings = await _fresh(tmp, "throughput", url)
    office_id, _key, ids = await _world(settings, conversations)
    engine = create_engine(settings.database_url)
    maker = create_sessionmaker(engine)
    async with maker() as s:
        for n in range(turns):
            for conversation in ids:
                text = "Oi" if n == 0 else ("1" if n % 2 else "advogado")
                await inbound_messages.receive(s, office_id, conversation, InboundIn(text=text))
        await s.commit()
    worker = Worker(WorkerContext(settings, engine, maker), [consumer_job(FLOWS)])
    started = time.perf_counter()
    await worker.run_until_idle()
    elapsed = time.perf_counter() - started
    async with maker() as s:
        sent = await s.scalar(
            select(func.count())
            .select_from(Message)
            .where(Message.office_id == office_id, Message.direction == "OUTBOUND")
        )
    await engine.dispose()
    expected = conversations * (2 + 2 * (turns - 1))
    assert sent == expected, (sent, expected)
    return conversations * turns / elapsed


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--gap", type=float, default=0.05)
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--part", choices=["all", "latency", "throughput"], default="all")
    parser.add_argument("--database-url", default=None)
    parser.add_argument("--quick", action="store_true", help="20 messages, 30 x 2 turns")
    args = parser.parse_args()
    if args.quick:
        args.messages, args.conversations, args.turns = 20, 30, 2
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        if args.part in ("all", "latency"):
            values = await latency(base, args.database_url, args.messages, args.gap)
            print(
                f"inbound -> flow reply queued for the channel ({len(values)} turns): "
                f"p50 {statistics.median(values):.1f} ms, p99 {_pct(values, 0.99):.1f} ms"
            )
        if args.part in ("all", "throughput"):
            rate = await throughput(base, args.database_url, args.conversations, args.turns)
            print(
                f"one worker, {args.conversations} conversations x {args.turns} turns: "
                f"{rate:.0f} turns/s"
            )


if __name__ == "__main__":
    asyncio.run(main())
