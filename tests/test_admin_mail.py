"""A webhook paused after its retry window is written to the office's administrators by
e-mail (issue 44, item 4), through a real SMTP server on 127.0.0.1 (aiosmtpd): in
Portuguese, with the office's dates, to each active ADMIN only; without a mail server the
job ends and sends nothing; a server that refuses fails the job, which is retried."""

from __future__ import annotations

import email
import email.policy
import re
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import EmailMessage
from typing import Any

import httpx
import pytest
from aiosmtpd.controller import Controller
from fastapi import FastAPI
from sqlalchemy import select

from officehub.kit.config import Settings
from officehub.kit.scheduled_jobs import ScheduledJob, scheduled_runner
from officehub.kit.worker import Worker, WorkerContext
from officehub.users.jobs import JOBS
from officehub.webhooks.events import PAUSED_MAIL_JOB
from tests import factories as f
from tests.helpers import OfficeFixture
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import Clock, create_webhook, delivery_worker, pause_by_failures


@dataclass
class Inbox:
    """What the SMTP server accepted; ``refuse`` answers every message with a 554."""

    mails: list[tuple[list[str], EmailMessage]] = field(default_factory=list)
    refuse: bool = False

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        if self.refuse:
            return "554 refused"
        parsed = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(parsed, EmailMessage)
        self.mails.append((list(envelope.rcpt_tos), parsed))
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    with socket.socket() as probe:  # a free port (aiosmtpd's start needs a known one)
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield inbox, port
    finally:
        controller.stop()


def _mail_worker(app: FastAPI, settings: Settings, clock: Clock) -> Worker:
    ctx = WorkerContext(
        settings, app.state.engine, app.state.sessionmaker, clock=clock, database_clock=False
    )
    return Worker(ctx, [scheduled_runner(JOBS.scheduled)], [])


async def _pause_a_webhook(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office: OfficeFixture
) -> tuple[dict[str, Any], Clock]:
    """A webhook paused by the delivery worker on a clock 5 days ahead (returned: the
    pause's job is due on it)."""
    async with running_receiver(lambda _n: Reply(410, "gone")) as gone:
        hook = await create_webhook(client, office, gone.url, name="ERP do escritório")
        clock = Clock()
        await pause_by_failures(app, settings, office, delivery_worker(app, settings, clock), clock)
    read = (await client.get(f"/webhooks/{hook['id']}", headers=office.headers)).json()
    assert read["isActive"] is False
    return hook, clock


async def _jobs(app: FastAPI) -> list[ScheduledJob]:
    async with app.state.sessionmaker() as s:
        stmt = select(ScheduledJob).where(ScheduledJob.kind == PAUSED_MAIL_JOB)
        return list(await s.scalars(stmt))


async def _people(app: FastAPI, office_id: str) -> None:
    async with app.state.sessionmaker() as s:
        admin = await f.make_user(s, office_id, "Beatriz Sócia", "beatriz@escritorio.example")
        admin.role = "ADMIN"
        gone = await f.make_user(s, office_id, "Carlos Antigo", "carlos@escritorio.example")
        gone.role, gone.is_active = "ADMIN", False
        await f.make_user(s, office_id, "Davi Atendente", "davi@escritorio.example")
        await s.commit()


async def test_a_paused_webhook_is_written_to_each_active_admin_in_portuguese(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    settings = settings.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{port}"})
    await _people(app, office_a.id)
    hook, clock = await _pause_a_webhook(app, settings, client, office_a)
    await _mail_worker(app, settings, clock).run_until_idle()
    assert [to for to, _mail in inbox.mails] == [["beatriz@escritorio.example"]]
    [(_, mail)] = inbox.mails
    assert mail["Subject"] == "officehub: o webhook ERP do escritório foi pausado"
    text = mail.get_content()
    assert text.startswith("Olá, Beatriz Sócia.")
    assert f"PATCH /webhooks/{hook['id']}" in text
    assert re.search(r"pausado em \d{2}/\d{2}/\d{4} \d{2}:\d{2}", text), text
    assert "gone" not in text and "127.0.0.1" not in text  # never the URL
    [job] = await _jobs(app)
    assert job.done_at is not None and job.payload["mailed"] == 1


async def test_without_a_mail_server_the_job_ends_and_nothing_is_sent(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, _port = smtp
    assert settings.smtp_url == ""
    await _people(app, office_a.id)
    _hook, clock = await _pause_a_webhook(app, settings, client, office_a)
    await _mail_worker(app, settings, clock).run_until_idle()
    [job] = await _jobs(app)
    assert job.done_at is not None and job.payload["mailed"] == 0
    assert inbox.mails == []


async def test_a_mail_server_that_refuses_leaves_the_job_to_be_retried(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    inbox.refuse = True
    settings = settings.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{port}"})
    await _people(app, office_a.id)
    _hook, clock = await _pause_a_webhook(app, settings, client, office_a)
    await _mail_worker(app, settings, clock).run_until_idle()
    [job] = await _jobs(app)
    assert job.done_at is None and job.attempts == 1 and job.error
    inbox.refuse = False


async def test_credentials_are_never_sent_to_a_mail_server_without_tls(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    smtp: tuple[Inbox, int],
) -> None:
    """The test server offers no STARTTLS: with a user in the URL the job fails before
    logging in (the error says why) and sends nothing."""
    inbox, port = smtp
    settings = settings.model_copy(update={"smtp_url": f"smtp://ops:s3nha@127.0.0.1:{port}"})
    await _people(app, office_a.id)
    _hook, clock = await _pause_a_webhook(app, settings, client, office_a)
    await _mail_worker(app, settings, clock).run_until_idle()
    [job] = await _jobs(app)
    assert job.done_at is None and job.error and "TLS" in job.error
    assert "s3nha" not in job.error
    assert inbox.mails == []
