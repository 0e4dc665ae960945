"""Each catalogue example has the shape of what the service really emits under that name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
from fastapi import FastAPI
from sqlalchemy import update as sql_update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.watch import Watcher
from officehub.conversations.sla_breaches import SLA_BREACH_JOB
from officehub.crm.overdue import OVERDUE_JOB
from officehub.events.catalogue import BY_NAME, EVENT_NAMES
from officehub.events.models import OutboxEvent
from officehub.kit.config import Settings
from officehub.kit.ratelimit import RateLimiter
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages import statuses as message_statuses
from officehub.messages.models import Message
from officehub.publications.sync import Syncer
from officehub.templates import service as templates
from officehub.templates.models import WhatsAppTemplate
from officehub.templates.service import PlatformUpdate
from officehub.webhooks.models import Webhook
from tests import factories as f
from tests.datajud_standin import movement, running_datajud
from tests.djen_standin import documented_answer, running_djen
from tests.helpers import OfficeFixture, outbox
from tests.receiver import Reply, running_receiver
from tests.webchat_world import SITE, make_webchat, start_visitor
from tests.webhook_helpers import Clock, delivery_worker


async def no_wait(_seconds: float) -> None:
    return None


async def emit_every_event(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> list[OutboxEvent]:
    """A flow of operations that makes the service emit each event of the catalogue (from
    the API, the workers and the channel's notifications); the office's outbox after it."""
    h = office_a.headers
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    user = await f.make_user(session, office_a.id)
    tag = await f.make_tag(session, office_a.id, inbox.id)
    _funnel, columns = await f.make_funnel(
        session, office_a.id, inbox.id, columns=2, time_limit_days=1
    )
    await session.commit()

    person = (await client.post("/people", json={"name": "Maria"}, headers=h)).json()
    await client.patch(f"/people/{person['id']}", json={"name": "Maria S."}, headers=h)
    policy = {
        "inboxId": inbox.id,
        "firstResponseMinutes": 60,
        "nextResponseMinutes": 60,
        "resolutionBusinessDays": 1,
    }
    assert (await client.post("/sla-policies", json=policy, headers=h)).status_code == 201
    body = {"personId": person["id"], "inboxId": inbox.id, "integrationId": integration.id}
    conversation = (await client.post("/conversation", json=body, headers=h)).json()
    cid = conversation["id"]
    await client.patch(f"/conversation/{cid}", json={"priority": "HIGH"}, headers=h)
    await client.patch(f"/conversation/{cid}", json={"assignedUserId": user.id}, headers=h)
    await client.post(f"/conversation/{cid}/tags", json={"tagId": tag.id}, headers=h)
    received = (
        await client.post(f"/conversation/{cid}/messages/inbound", json={"text": "Oi"}, headers=h)
    ).json()
    await client.post(
        f"/conversation/{cid}/messages/{received['id']}/reaction", json={"emoji": "👍"}, headers=h
    )
    sent = (
        await client.post(f"/conversation/{cid}/messages", json={"text": "Olá"}, headers=h)
    ).json()
    async with app.state.sessionmaker() as s, s.begin():
        message = await s.get(Message, sent["id"])
        assert message is not None
        await message_statuses.change_status(s, message, "SENT", external_id="wamid.catalogue")
    card_body = {"columnId": columns[0].id, "personId": person["id"], "conversationId": cid}
    card = (await client.post("/funnel-column-card", json=card_body, headers=h)).json()
    await client.patch(f"/funnel-column-card/{card['id']}", json={"userId": user.id}, headers=h)
    later = utcnow() + timedelta(days=2)
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, clock=lambda: later)
    await Worker(ctx, [], [OVERDUE_JOB, SLA_BREACH_JOB]).run_once()  # resolution: a day
    move = {"columnId": columns[1].id}
    await client.patch(f"/funnel-column-card/{card['id']}", json=move, headers=h)
    await client.request("DELETE", "/funnel-column-card", json={"ids": [card["id"]]}, headers=h)
    # a webhook failing for 5 days is paused (webhook.endpoint.disabled); the first webhook
    # of the office, so the worker sends nothing but its test delivery
    async with running_receiver(lambda _n: Reply(500)) as broken:
        body = {"name": "broken", "url": broken.url, "events": ["webhook.test"]}
        failing = (await client.post("/webhooks", json=body, headers=h)).json()
        async with app.state.sessionmaker() as s, s.begin():
            long_ago = utcnow() - timedelta(days=6)
            await s.execute(
                sql_update(Webhook)
                .where(Webhook.id == failing["id"])
                .values(failing_since=long_ago)
            )
        await client.post(f"/webhooks/{failing['id']}/test", headers=h)
        await delivery_worker(app, settings).run_until_idle()
    hook = {"name": "h", "url": "https://example.com/hook", "events": ["contact.created"]}
    webhook = (await client.post("/webhooks", json=hook, headers=h)).json()
    await client.post(f"/webhooks/{webhook['id']}/test", headers=h)
    case_body = {"number": "1009131-52.2024.8.26.0224", "personId": person["id"]}
    case = (await client.post("/cases", json=case_body, headers=h)).json()
    async with running_datajud() as datajud:
        watcher, conf = Watcher(), datajud.settings(settings)
        datajud.add("tjsp", "10091315220248260224", movement(26, "Distribuição", "2024-05-10"))
        await watcher.run(
            WorkerContext(conf, app.state.engine, app.state.sessionmaker), only_case=case["id"]
        )
        datajud.add("tjsp", "10091315220248260224", movement(85, "Petição", "2026-01-05"))
        await watcher.run(
            WorkerContext(conf, app.state.engine, app.state.sessionmaker), only_case=case["id"]
        )
        # a day of failed checks: case.source.stale; the next answer: case.source.recovered
        datajud.down.add("tjsp")
        silent, clock = Watcher(sleep=no_wait), Clock()
        ctx = WorkerContext(conf, app.state.engine, app.state.sessionmaker, clock=clock)
        for _ in range(2):
            clock.advance(hours=24)
            await silent.run(ctx, only_case=case["id"])
        datajud.down.discard("tjsp")
        await silent.run(ctx, only_case=case["id"])
    # a publication of the office's lawyer found on DJEN (case.publication.created)
    lawyer = {"name": "Dra. Ana Lima", "oab": {"number": "123456", "uf": "SP"}}
    assert (await client.post("/lawyers", json=lawyer, headers=h)).is_success
    async with running_djen() as djen:
        djen.add(*documented_answer()["items"])
        djen_ctx = WorkerContext(djen.settings(settings), app.state.engine, app.state.sessionmaker)
        djen_ctx.clock = lambda: datetime(2026, 3, 30, 12, tzinfo=UTC)
        await Syncer().run(djen_ctx, only_office=office_a.id)
    # the petition made a case notice (case.notice.created); approved, it is sent at once
    quiet_off = {"quietHours": {"enabled": False}}
    assert (await client.put("/case-notice-settings", json=quiet_off, headers=h)).is_success
    [notice] = (await client.get("/case-notices", headers=h)).json()["data"]
    assert (await client.post(f"/case-notices/{notice['id']}/approve", headers=h)).is_success
    async with app.state.sessionmaker() as s, s.begin():
        s.add(
            WhatsAppTemplate(
                office_id=office_a.id,
                integration_id=integration.id,
                name="lembrete",
                language="pt_BR",
                status="PENDING",
                category="UTILITY",
                components=[],
                external_id="594425479261596",
            )
        )
        await s.flush()
        update = PlatformUpdate("594425479261596", None, None, platform_status="REJECTED")
        await templates.apply_platform_update(s, office_a.id, integration.id, update)
    # a web chat started past its integration's cap (chat.webchat.flooded)
    app.state.webchat_integration_limiter = RateLimiter("1/minute")
    chat = await make_webchat(client, office_a)
    await start_visitor(client, chat["id"])
    flooded = await client.post(
        f"/webchat/{chat['id']}/start",
        json={"name": "Outra", "phone": "+55 11 98765-0000"},
        headers={"origin": SITE},
    )
    assert flooded.status_code == 429, flooded.text
    await client.delete(f"/people/{person['id']}", headers=h)
    return await outbox(app, office_a.id)


async def test_catalogue_examples_have_the_keys_of_emitted_events(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    events = await emit_every_event(app, settings, client, session, office_a)
    emitted = {e.name: e.data for e in events}
    assert set(emitted) == EVENT_NAMES
    mismatched = {
        name: {
            "missing": sorted(set(data) - set(BY_NAME[name].example)),
            "extra": sorted(set(BY_NAME[name].example) - set(data)),
        }
        for name, data in emitted.items()
        if set(data) != set(BY_NAME[name].example)
    }
    assert mismatched == {}, {n: emitted[n] for n in mismatched}
