"""The periodic job that reports missed SLA due times (``chat.sla.breached``).

Each open conversation keeps its earliest pending due (``sla_check_at``); the partial index
over it holds only those, so a run reads just the conversations that are due. The rows
are taken ``FOR UPDATE SKIP LOCKED`` (PostgreSQL; SQLite: the write lock): however many
workers run it, each breach is stamped, and its event emitted, once per due time.
"""

from __future__ import annotations

from datetime import timedelta

from officehub.conversations import events, repository, service, sla
from officehub.events.service import emit
from officehub.kit.worker import PeriodicJob, WorkerContext

INTERVAL = timedelta(minutes=1)
BATCH = 200
STAMP = {
    "FIRST_RESPONSE": "first_response_breached_at",
    "NEXT_RESPONSE": "next_response_breached_at",
    "RESOLUTION": "resolution_breached_at",
}


async def report_breaches(ctx: WorkerContext) -> int:
    """Emits ``chat.sla.breached`` for every due time passed unmet; returns how many."""
    reported = 0
    while True:
        now = ctx.now()
        async with ctx.sessionmaker() as session, session.begin():
            due = await repository.claim_sla_due(session, now, BATCH)
            for conversation in due:
                missed = [(k, at) for k, at in sla.pending_dues(conversation) if at <= now]
                for kind, _at in missed:
                    setattr(conversation, STAMP[kind], now)
                sla.reschedule(conversation)
                if not missed:
                    continue
                await session.flush()
                [out] = await service.present(session, conversation.office_id, [conversation])
                for kind, at in missed:
                    payload = events.SlaBreachedPayload(**dict(out), breach=kind, due_at=at)
                    await emit(
                        session,
                        conversation.office_id,
                        events.SLA_BREACHED,
                        payload,
                        conversation_id=conversation.id,
                        integration_id=conversation.integration_id,
                    )
                    reported += 1
        if len(due) < BATCH:
            return reported


SLA_BREACH_JOB = PeriodicJob("chat.sla.breached", INTERVAL, report_breaches)
