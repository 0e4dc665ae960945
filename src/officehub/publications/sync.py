"""The DJEN sync: asks DJEN for the communications naming each lawyer of the office, and
stores the new ones.

A run claims the lawyers due (every one of an office or a lawyer, by hand), moving their
next sync past a lease so another worker's run leaves them alone, then asks DJEN for them
one call at a time, at most ``djen_requests_per_second`` calls a second (DJEN asks for no
more than that and for a minute's pause after a 429, which ``Retry-After`` or
``RATE_LIMITED_WAIT`` gives), each lawyer's range from the day before its last synced day
(``djen_lookback_days`` back on its first sync) to today, page by page. A 429, a 5xx or a
network failure is tried again ``MAX_TRIES`` times with a growing wait; a lawyer that still
fails is tried again ``ERROR_RETRY`` later. No HTTP call happens inside a transaction.

Each lawyer's answer is recorded in its own transaction: the communications are inserted
with ``ON CONFLICT DO NOTHING`` on the office's unique DJEN id and hash, so one seen before,
seen through another lawyer of the office, or stored at the same moment by another run is
stored once; only the inserted ones are linked to the case of their number, open a ticket
and emit ``case.publication.created``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.numbers import CaseNumber
from officehub.events.service import emit
from officehub.kit import outside
from officehub.kit.ids import new_id
from officehub.kit.pagination import PageParams
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import PeriodicJob, WorkerContext
from officehub.publications import deadlines, djen, events, repository, service
from officehub.publications.models import Lawyer, Publication
from officehub.tickets import service as tickets
from officehub.tickets.schemas import TicketCreate, TicketStatusCreate

logger = logging.getLogger("officehub.publications")

Sleep = Callable[[float], Awaitable[None]]

MAX_TRIES = 4
RATE_LIMITED_WAIT = 60.0
"""DJEN's documented pause after a 429 when it sends no ``Retry-After``."""
MAX_WAIT = 120.0
LEASE = timedelta(hours=1)
ERROR_RETRY = timedelta(hours=1)
RUN_EVERY = timedelta(minutes=15)
BATCH = 500
BY_HAND_LIMIT = 100_000
TICKET_STATUS = "Aberto"
"""The status a publication's ticket takes when the office has none yet."""


@dataclass
class Report:
    lawyers: int = 0
    calls: int = 0
    new: int = 0
    duplicates: int = 0
    skipped: int = 0
    """Items DJEN answered that lacked an id or a date."""
    failed: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "lawyers": self.lawyers,
            "calls": self.calls,
            "new": self.new,
            "duplicates": self.duplicates,
            "skipped": self.skipped,
            "failed": self.failed,
        }

    def add(self, other: Report) -> None:
        for name in ("lawyers", "calls", "new", "duplicates", "skipped", "failed"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def idle(self) -> bool:
        """No lawyer was due."""
        return self.lawyers == 0


@dataclass
class Pacer:
    """At most ``rate`` calls a second: each waits for its turn."""

    rate: float
    sleep: Sleep
    clock: Callable[[], float] = time.monotonic
    _next: float = 0.0

    async def turn(self) -> None:
        now = self.clock()
        if self._next > now:
            await self.sleep(self._next - now)
            now = self._next
        self._next = now + 1.0 / self.rate


@dataclass(frozen=True)
class _Claimed:
    id: str
    office_id: str
    name: str
    number: str
    uf: str
    synced_through: date | None


@dataclass
class Syncer:
    sleep: Sleep = asyncio.sleep
    pacer: Pacer | None = field(default=None, repr=False)

    async def run(
        self,
        ctx: WorkerContext,
        *,
        only_office: str | None = None,
        only_lawyer: str | None = None,
    ) -> Report:
        now = ctx.now()
        by_hand = only_office is not None or only_lawyer is not None
        async with ctx.sessionmaker() as session, session.begin():
            lawyers = await repository.claim_lawyers(
                session,
                now,
                LEASE,
                BY_HAND_LIMIT if by_hand else BATCH,
                only_office=only_office,
                only_lawyer=only_lawyer,
            )
            claimed = [_claimed(lawyer) for lawyer in lawyers]
        report = Report()
        if not claimed:
            return report
        settings = ctx.settings
        today = now.astimezone(ZoneInfo(settings.time_zone)).date()
        pacer = self.pacer or Pacer(settings.djen_requests_per_second, self.sleep)
        async with httpx.AsyncClient(
            timeout=settings.djen_timeout_seconds, trust_env=False
        ) as client:
            for lawyer in claimed:
                report.lawyers += 1
                start = (
                    lawyer.synced_through - timedelta(days=1)
                    if lawyer.synced_through is not None
                    else today - timedelta(days=settings.djen_lookback_days)
                )
                start = min(start, today)
                try:
                    found = await self._fetch(ctx, client, pacer, lawyer, start, today, report)
                except (outside.Unavailable, outside.Refused) as exc:
                    report.failed += 1
                    logger.warning("lawyer %s: DJEN sync failed: %s", lawyer.id, exc.reason)
                    await self._put_off(ctx, lawyer.id, now + ERROR_RETRY)
                    continue
                try:
                    await self._record(ctx, lawyer, found, today, report)
                except Exception:
                    report.failed += 1
                    logger.exception("lawyer %s: recording the DJEN sync failed", lawyer.id)
        return report

    async def _fetch(
        self,
        ctx: WorkerContext,
        client: httpx.AsyncClient,
        pacer: Pacer,
        lawyer: _Claimed,
        start: date,
        end: date,
        report: Report,
    ) -> list[djen.Communication]:
        found: dict[int, djen.Communication] = {}
        received = 0
        for number in range(1, djen.MAX_PAGES + 1):
            page = await self._ask(ctx, client, pacer, lawyer, start, end, number, report)
            report.skipped += page.skipped
            received += page.received
            for item in page.items:
                found.setdefault(item.djen_id, item)
            if page.received < djen.PAGE_SIZE:
                break
            if page.count is not None and received >= page.count:
                break
        return list(found.values())

    async def _ask(
        self,
        ctx: WorkerContext,
        client: httpx.AsyncClient,
        pacer: Pacer,
        lawyer: _Claimed,
        start: date,
        end: date,
        number: int,
        report: Report,
    ) -> djen.Page:
        for attempt in range(1, MAX_TRIES + 1):
            await pacer.turn()
            report.calls += 1
            try:
                return await djen.fetch_page(
                    client, ctx.settings, lawyer.number, lawyer.uf, start, end, number
                )
            except outside.Unavailable as exc:
                wait = exc.retry_after
                if wait is None:
                    base = RATE_LIMITED_WAIT if exc.reason == "HTTP 429" else 2.0 * 2**attempt
                    wait = base * (0.8 + 0.4 * random.random())  # noqa: S311 - spread
                if attempt == MAX_TRIES or wait > MAX_WAIT:
                    raise
                await self.sleep(wait)
        raise AssertionError("unreachable")

    async def _put_off(self, ctx: WorkerContext, lawyer_id: str, until: datetime) -> None:
        async with ctx.sessionmaker() as session, session.begin():
            lawyer = await session.get(Lawyer, lawyer_id)
            if lawyer is not None:
                lawyer.next_sync_at = until

    async def _record(
        self,
        ctx: WorkerContext,
        lawyer: _Claimed,
        found: list[djen.Communication],
        today: date,
        report: Report,
    ) -> None:
        interval = timedelta(seconds=ctx.settings.djen_interval_seconds)
        async with ctx.sessionmaker() as session, session.begin():
            row = await session.get(Lawyer, lawyer.id)
            if row is None:  # deleted since its claim: its publications are not wanted
                return
            row.synced_through = today
            row.next_sync_at = ctx.now() + interval * (0.9 + 0.2 * random.random())  # noqa: S311
            added = await store(session, lawyer.office_id, lawyer.id, found)
            report.new += len(added)
            report.duplicates += len(found) - len(added)
            status_id = await _status_id(session, lawyer.office_id) if added else ""
            assignees = await service.assignee_of(session, lawyer.office_id, row) if added else []
            for publication in added:
                await _announce(session, ctx, publication, lawyer, status_id, assignees)


def _claimed(lawyer: Lawyer) -> _Claimed:
    return _Claimed(
        lawyer.id,
        lawyer.office_id,
        lawyer.name,
        lawyer.oab_number,
        lawyer.oab_uf,
        lawyer.synced_through,
    )


async def store(
    session: AsyncSession, office_id: str, lawyer_id: str, found: list[djen.Communication]
) -> list[Publication]:
    """Inserts the communications the office has not stored yet; the ones inserted, each
    with its publication date and, for an intimation, its default deadline."""
    if not found:
        return []
    first = min(c.made_available for c in found)
    local = await repository.holiday_days(
        session, office_id, first, first + timedelta(days=2 * 366 + deadlines.MAX_DAYS)
    )
    cases = await repository.cases_by_number(
        session, office_id, [c.case_number for c in found if c.case_number]
    )
    now = utcnow()
    rows = []
    for c in sorted(found, key=lambda c: (c.made_available, c.djen_id)):
        category = service.category_of(c.kind)
        published = deadlines.publication_date(c.made_available, local)
        days = service.INTIMATION_DAYS if category == "INTIMATION" else None
        rows.append(
            {
                "id": new_id(),
                "office_id": office_id,
                "lawyer_id": lawyer_id,
                "case_id": cases.get(c.case_number) if c.case_number else None,
                "ticket_id": None,
                "djen_id": c.djen_id,
                "hash": c.hash,
                "made_available": c.made_available,
                "published_on": published,
                "court": c.court,
                "kind": c.kind,
                "category": category,
                "organ": c.organ,
                "text": c.text,
                "case_number": c.case_number,
                "link": c.link,
                "read_at": None,
                "deadline_days": days,
                "deadline_days_source": "KIND" if days else None,
                "deadline_at": deadlines.deadline(published, days, local) if days else None,
                "deadline_calendar": service.CALENDAR if days else None,
                "created_at": now,
                "updated_at": now,
            }
        )
    added: list[Publication] = []
    for begin in range(0, len(rows), 200):
        added += await repository.insert_publications(session, rows[begin : begin + 200])
    return sorted(added, key=lambda p: (p.made_available, p.djen_id))


async def _status_id(session: AsyncSession, office_id: str) -> str:
    statuses, _ = await tickets.list_ticket_statuses(session, office_id, PageParams(1, 1))
    if statuses:
        return statuses[0].id
    made = await tickets.create_ticket_status(
        session, office_id, TicketStatusCreate(name=TICKET_STATUS)
    )
    return made.id


def ticket_text(
    publication: Publication, lawyer: _Claimed, certificate: str | None
) -> tuple[str, str]:
    """The ticket's title and description (Portuguese: the office's people read them)."""
    number = (
        CaseNumber(publication.case_number).formatted if publication.case_number else "sem número"
    )
    kind = publication.kind or "Publicação"
    if publication.deadline_at is not None:
        title = f"Prazo até {publication.deadline_at:%d/%m/%Y}: {kind} no processo {number}"
    else:
        title = f"{kind} no processo {number}"
    lines = [
        f"Publicação no DJEN para {lawyer.name} (OAB/{lawyer.uf} {lawyer.number}).",
        f"Tribunal: {publication.court} - {publication.organ}",
        f"Disponibilizada em {publication.made_available:%d/%m/%Y}; "
        f"publicada em {publication.published_on:%d/%m/%Y}.",
    ]
    if publication.deadline_at is not None:
        lines.append(
            f"Prazo: {publication.deadline_days} dias úteis, até "
            f"{publication.deadline_at:%d/%m/%Y} (CPC arts. 219 e 224, feriados nacionais e "
            "do escritório; confira o prazo e ajuste-o na publicação)."
        )
    if publication.link:
        lines.append(f"Documento: {publication.link}")
    if certificate:
        lines.append(f"Certidão: {certificate}")
    return title[:200], "\n".join(lines)


async def _announce(
    session: AsyncSession,
    ctx: WorkerContext,
    publication: Publication,
    lawyer: _Claimed,
    status_id: str,
    assignees: list[str],
) -> None:
    """The lawyer's ticket (assigned to the lawyer's user, when linked), then
    ``case.publication.created``."""
    base_url = ctx.settings.djen_url
    title, description = ticket_text(
        publication, lawyer, service.certificate_url(base_url, publication.hash)
    )
    ticket = await tickets.create_ticket(
        session,
        publication.office_id,
        TicketCreate(
            title=title,
            description=description,
            status_id=status_id,
            priority="HIGH" if publication.deadline_at is not None else "MEDIUM",
            assignee_ids=assignees,
        ),
    )
    stored = await session.get_one(Publication, publication.id)
    stored.ticket_id = ticket.id
    await session.flush()
    await emit(
        session,
        publication.office_id,
        events.PUBLICATION_CREATED,
        service.publication_out(stored, ctx.settings),
    )


SYNCER = Syncer()
BLOCK_AT_MOST = 2.0
_running: dict[str, asyncio.Task[Report]] = {}


def _log_failure(task: asyncio.Task[Report]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("DJEN sync failed", exc_info=error)


async def _sync_due(ctx: WorkerContext) -> None:
    """The due lawyers of every office (each daily, spread by ±10 %); a long run goes on in
    the background while the worker's other jobs run, and no second one starts meanwhile."""
    task = _running.get("batch")
    if task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop():
        return
    task = asyncio.create_task(SYNCER.run(ctx))
    task.add_done_callback(_log_failure)
    _running["batch"] = task
    await asyncio.wait({task}, timeout=BLOCK_AT_MOST)


SYNC_JOB = PeriodicJob("publications.sync", RUN_EVERY, _sync_due)
