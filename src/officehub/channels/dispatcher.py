"""Queue jobs of the channels: sending ``QUEUED`` outbound messages, fetching inbound media,
telling the platform what the operators read.

Each claims through the one queue (``kit.queue``: a short lease renewed by a heartbeat
while the call runs, ``SKIP LOCKED`` on PostgreSQL) and runs each piece on its own in the
worker's pool (a few slots per integration, a breaker for one that times out); each
outcome is recorded as it arrives (``kit.queue.Recorder``: those ready together in one
transaction, one by one if that fails), only while still held. 429,
5xx and network errors are retried with backoff (the platform's ``Retry-After``
honoured); anything else makes the message ``FAILED`` with the platform's error.
"""

from __future__ import annotations

import ipaddress
import logging
import mimetypes
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Hashable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import unquote

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels import repository
from officehub.channels.adapter import ChannelAdapter, Outbound, SendDeferred, SendRejected
from officehub.channels.bridge import BRIDGED, BridgeAdapter, WebchatAdapter
from officehub.channels.whatsapp import WhatsAppAdapter
from officehub.kit.config import Settings
from officehub.kit.errors import PayloadTooLarge
from officehub.kit.outbound import delivery_client, refused_by_guard
from officehub.kit.queue import Backoff, Claimed, Pool, Recorder, WorkQueue, drain, pool_of
from officehub.kit.storage import Storage, is_valid_key, storage_from_settings
from officehub.kit.worker import WorkerContext
from officehub.messages import outbound as outbound_messages
from officehub.messages import statuses as message_statuses

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration
    from officehub.messages.models import Message

logger = logging.getLogger("officehub.channels")

OFFICIAL = "WHATSAPP_OFFICIAL"
WEBCHAT = "WEBCHAT"
MEDIA_MAX_BYTES = 100 * 1024 * 1024
_BACKOFF_BASE = 2.0
_BACKOFF_CAP = 300.0
_RETRY_AFTER_CAP = 3600.0


def adapters(settings: Settings) -> dict[str, ChannelAdapter]:
    """The channel types the dispatcher sends through (bridged ones once configured)."""
    bridge = BridgeAdapter()
    return {
        OFFICIAL: WhatsAppAdapter(settings.whatsapp_api_url),
        WEBCHAT: WebchatAdapter(),
        **dict.fromkeys(BRIDGED, bridge),
    }


def storage_for(settings: Settings) -> Storage:
    return storage_from_settings(settings)


def backoff(settings: Settings) -> Backoff:
    """The waits after failed tries: 2 s doubling to 5 min, ±20 %, ``dispatch_max_attempts``
    tries in all; a ``Retry-After`` is honoured when longer (up to an hour)."""
    steps = [
        min(_BACKOFF_CAP, _BACKOFF_BASE * 2**n) for n in range(settings.dispatch_max_attempts - 1)
    ]
    return replace(Backoff.seconds(*steps, jitter=0.2), retry_after_limit=_RETRY_AFTER_CAP)


def _lease(settings: Settings) -> timedelta:
    """A claim's lease: short, renewed by the pool's heartbeat while the call runs."""
    return timedelta(seconds=settings.dispatch_lease_seconds)


Outcome = str | SendDeferred | SendRejected


def _timed_out(outcome: Outcome) -> bool:
    """Whether the other side did not answer in time (trips its integration's breaker)."""
    return isinstance(outcome, SendDeferred) and isinstance(
        outcome.__cause__, httpx.TimeoutException
    )


class _Clients:
    """The HTTP clients of one pool, opened on first use and closed with it."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._platform: httpx.AsyncClient | None = None
        self._guarded: httpx.AsyncClient | None = None

    @property
    def platform(self) -> httpx.AsyncClient:
        if self._platform is None:
            self._platform = httpx.AsyncClient(
                timeout=self.settings.whatsapp_timeout_seconds,
                trust_env=False,
                limits=httpx.Limits(max_connections=self.settings.dispatch_concurrency),
            )
        return self._platform

    @property
    def guarded(self) -> httpx.AsyncClient:
        """SSRF-guarded: for addresses an office configured (bridges, media links)."""
        if self._guarded is None:
            self._guarded = delivery_client(
                allow_private=self.settings.webhook_allow_private,
                timeout=self.settings.whatsapp_timeout_seconds,
                connections=self.settings.dispatch_concurrency,
            )
        return self._guarded

    async def aclose(self) -> None:
        clients = [c for c in (self._platform, self._guarded) if c is not None]
        self._platform = self._guarded = None
        for client in clients:
            await client.aclose()


class _Pool(Pool[Any]):
    """The queue's pool, with the HTTP clients its work shares."""

    def __init__(self, clients: _Clients, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.clients = clients

    async def shutdown(self, ctx: Any, grace: float = 0.0) -> int:
        try:
            return await super().shutdown(ctx, grace)
        finally:
            await self.clients.aclose()


Claim = Callable[
    [AsyncSession, datetime, str, int, Collection[Hashable]], Awaitable[list[Claimed[Any]]]
]


def _pool(
    ctx: WorkerContext,
    queue: WorkQueue,
    clients: _Clients,
    claim: Claim,
    work: Callable[[Any, str], Awaitable[bool]],
) -> _Pool:
    settings = ctx.settings
    slots = max(1, settings.dispatch_concurrency)

    async def clock(_session: AsyncSession) -> datetime:
        return ctx.now()  # the dispatcher's leases and due times are the workers' clock

    return _Pool(
        clients,
        queue,
        claim,
        work,
        slots=slots,
        per_group=min(settings.dispatch_integration_concurrency, max(1, slots // 2)),
        batch=settings.dispatch_batch_size,
        lease=_lease(settings),
        on_free=lambda: ctx.nudge(),
        clock=clock,
    )


async def _drain(ctx: WorkerContext, name: str, make: Callable[[], _Pool]) -> int:
    """One pass of a queue job (``kit.queue.drain``); a single pass closes its clients."""
    pool = cast(_Pool, pool_of(ctx, name, make))
    try:
        return await drain(ctx, pool)
    finally:
        if not ctx.overlap:
            await pool.clients.aclose()


@dataclass(frozen=True)
class _Send:
    message: Message
    integration: Integration
    phone: str | None
    contact_id: str
    peer: str | None
    user_id: str | None = None


async def send_queued(ctx: WorkerContext) -> int:
    """Claims the head message of conversations, each sent on its own."""
    return await _drain(ctx, "channels.send", lambda: _send_pool(ctx))


def _send_pool(ctx: WorkerContext) -> _Pool:
    settings = ctx.settings
    registry = adapters(settings)
    sendable = [t for t in registry if t not in BRIDGED]
    queue = replace(repository.OUTBOUND, backoff=backoff(settings))
    storage = storage_for(settings)
    clients = _Clients(settings)

    async def claim(
        session: AsyncSession, now: datetime, token: str, limit: int, full: Collection[Hashable]
    ) -> list[Claimed[Any]]:
        ids = await repository.claim_outbound(
            session,
            queue,
            sendable,
            now,
            _lease(settings),
            token,
            limit,
            bridged_types=BRIDGED,
            skip_integrations=[str(g) for g in full],
        )
        if not ids:
            return []
        rows = await repository.claimed(session, ids, token)
        peers = await repository.peers_of(
            session, [(m.office_id, i.id, c) for m, i, _, c, _ in rows if i.type in BRIDGED]
        )
        return [
            Claimed(_Send(m, i, p, c, peers.get((i.id, c)), u), m.id, i.id)
            for m, i, p, c, u in rows
        ]

    async def write(session: AsyncSession, outcomes: list[tuple[_Send, str, Outcome]]) -> None:
        await _record_sends(session, queue, ctx.now(), outcomes)

    recorder = Recorder(ctx.sessionmaker, write, queue.name)

    async def work(item: _Send, token: str) -> bool:
        outcome = await _send(settings, registry, storage, clients, item)
        await recorder.record((item, token, outcome))
        return _timed_out(outcome)

    return _pool(ctx, queue, clients, claim, work)


async def _send(
    settings: Settings,
    registry: dict[str, ChannelAdapter],
    storage: Storage,
    clients: _Clients,
    item: _Send,
) -> Outcome:
    message, integration, phone = item.message, item.integration, item.phone
    if not phone and integration.type == OFFICIAL and not item.user_id:
        return SendRejected("the contact has neither a phone number nor a WhatsApp user id")
    payload = dict(message.payload or {})
    path = payload.get("headerMediaPath")
    try:
        media_id = (
            await _uploaded(settings, storage, clients.platform, integration, message, payload)
            if integration.type == OFFICIAL
            else None
        )
    except (SendDeferred, SendRejected) as outcome:
        return outcome
    except Exception as exc:
        logger.exception("media upload of message %s failed unexpectedly", message.id)
        return SendDeferred(f"unexpected error: {type(exc).__name__}")
    outbound = Outbound(
        message_id=message.id,
        type=message.type,
        text=message.text,
        template_name=message.template_name,
        # a file the office uploaded: a fresh link (the stored one may have expired)
        media_url=storage.url(str(payload["mediaPath"]))
        if payload.get("mediaPath")
        else message.media_url,
        payload=payload,
        to_phone=phone or "",
        header_media_link=storage.url(str(path)) if path else None,
        to_peer=item.peer,
        media_id=media_id,
        to_user_id=item.user_id,
    )
    adapter = registry[integration.type]
    try:
        return await adapter.send(
            clients.guarded if getattr(adapter, "guarded", False) else clients.platform,
            integration,
            outbound,
        )
    except (SendDeferred, SendRejected) as outcome:
        return outcome
    except Exception as exc:
        logger.exception("send of message %s failed unexpectedly", message.id)
        return SendDeferred(f"unexpected error: {type(exc).__name__}")


def publicly_reachable(link: str) -> bool:
    """Whether the platform could fetch ``link``: not a loopback, private, link-local or
    reserved address, nor a single-label or local name (``localhost``, ``minio``,
    ``*.local``, ``*.internal``)."""
    host = httpx.URL(link).host.rstrip(".").lower()
    try:
        return ipaddress.ip_address(host).is_global
    except ValueError:
        pass
    return "." in host and not host.endswith((".localhost", ".local", ".internal", ".lan"))


def stored_key(settings: Settings, message: Message, payload: dict[str, Any]) -> str | None:
    """The storage key of the file a send carries: a template's header media, a file the
    office uploaded to the conversation (``mediaPath``), or a media message whose URL is
    one of this service's ``/media`` links to a file of the office."""
    path = payload.get("headerMediaPath") or payload.get("mediaPath")
    if path:
        return str(path)
    prefix = f"{settings.public_url}/media/"
    if message.type != "MEDIA" or not message.media_url or not message.media_url.startswith(prefix):
        return None
    key = unquote(message.media_url.removeprefix(prefix).split("?", 1)[0])
    parts = key.split("/")
    if not is_valid_key(key) or len(parts) < 3 or parts[1] != message.office_id:
        return None
    return key


async def _uploaded(
    settings: Settings,
    storage: Storage,
    client: httpx.AsyncClient,
    integration: Integration,
    message: Message,
    payload: dict[str, Any],
) -> str | None:
    """The platform's media id of the stored file the send carries, uploaded through the
    media API when the storage's links are not publicly reachable (the setting
    ``whatsapp_media_upload``); None to send a link."""
    key = stored_key(settings, message, payload)
    if key is None or settings.whatsapp_media_upload == "never":
        return None
    if settings.whatsapp_media_upload == "auto" and publicly_reachable(storage.url(key)):
        return None
    name = key.rsplit("/", 1)[-1]
    mime = (
        mimetypes.guess_type(name)[0]
        or str(payload.get("mimeType") or "")
        or "application/octet-stream"
    )
    content = bytearray()
    try:
        async for chunk in storage.read(key):
            content += chunk
            if len(content) > MEDIA_MAX_BYTES:
                raise SendRejected(f"the media is larger than {MEDIA_MAX_BYTES} bytes")
    except (FileNotFoundError, KeyError) as exc:
        raise SendRejected("the stored media file is gone") from exc
    return await WhatsAppAdapter(settings.whatsapp_api_url).upload_media(
        client, integration, bytes(content), name, mime
    )


async def _record_sends(
    session: AsyncSession,
    queue: WorkQueue,
    now: datetime,
    outcomes: list[tuple[_Send, str, Outcome]],
) -> None:
    """Writes sends' outcomes (each with the claim token it was sent under), only for the
    messages still held under it: one whose lease ran out may belong to another worker
    now, one deleted is gone; either is dropped quietly. The status changes (and their
    events) of all in one go."""
    held = await queue.holding_each(session, [(i.message.id, t) for i, t, _ in outcomes])
    rows = await repository.messages_by_id(session, held)
    changes: list[message_statuses.StatusChange] = []
    closed: list[Message] = []
    for item, token, outcome in outcomes:
        message = rows.get(item.message.id)
        if message is None:
            continue
        attempt = item.message.attempts + 1
        if isinstance(outcome, SendDeferred):
            values, at = queue.failure(now, attempt, outcome.reason, outcome.retry_after)
            if at is not None:
                await queue.finish(session, message.id, token, values)
                continue
            outcome = SendRejected(f"gave up after {attempt} tries: {outcome.reason}")
        else:
            attempt -= 1
        message.claim_token = None
        message.attempts = attempt
        integration_id = item.integration.id
        if isinstance(outcome, str):
            changes.append(
                message_statuses.StatusChange(message, "SENT", integration_id, external_id=outcome)
            )
        else:
            changes.append(
                message_statuses.StatusChange(
                    message, "FAILED", integration_id, error=outcome.reason
                )
            )
            if outcome.code == outbound_messages.WINDOW_CLOSED_CODE:
                closed.append(message)
    await message_statuses.change_statuses(session, changes)
    for message in closed:  # held under this claim: the fallback goes out once
        await outbound_messages.fall_back(session, message)


async def send_read_receipts(ctx: WorkerContext) -> int:
    """Tells the platform which client messages the operators read (``PENDING`` read marks)."""
    return await _drain(ctx, "channels.read_receipts", lambda: _receipts_pool(ctx))


@dataclass(frozen=True)
class _Receipt:
    ident: str
    external_id: str | None
    integration: Integration | None
    attempts: int


def _receipts_pool(ctx: WorkerContext) -> _Pool:
    settings = ctx.settings
    queue = replace(repository.RECEIPTS, backoff=backoff(settings))
    adapter = WhatsAppAdapter(settings.whatsapp_api_url)
    clients = _Clients(settings)

    async def claim(
        session: AsyncSession, now: datetime, token: str, limit: int, full: Collection[Hashable]
    ) -> list[Claimed[Any]]:
        receipts = await repository.claim_receipts(
            session,
            queue,
            now,
            _lease(settings),
            token,
            limit,
            skip_integrations=[str(g) for g in full],
        )
        integrations = await repository.integrations_by_id(
            session, list({r.integration_id for r in receipts})
        )
        return [
            Claimed(
                _Receipt(r.id, r.external_id, integrations.get(r.integration_id), r.attempts),
                r.id,
                r.integration_id,
            )
            for r in receipts
        ]

    async def write(session: AsyncSession, outcomes: list[tuple[_Receipt, str, Outcome]]) -> None:
        now = ctx.now()
        for item, token, outcome in outcomes:
            if isinstance(outcome, str):
                await queue.finish(
                    session, item.ident, token, {"status": "SENT", "sent_at": now, "error": None}
                )
            elif isinstance(outcome, SendRejected):
                values = {"status": "FAILED", "attempts": item.attempts + 1}
                error = outcome.reason[: queue.error_length]
                await queue.finish(session, item.ident, token, {**values, "error": error})
            else:
                await queue.fail(
                    session,
                    item.ident,
                    token,
                    now,
                    item.attempts + 1,
                    outcome.reason,
                    retry_after=outcome.retry_after,
                )

    recorder = Recorder(ctx.sessionmaker, write, queue.name)

    async def work(item: _Receipt, token: str) -> bool:
        outcome = await _mark_read(adapter, clients, item)
        await recorder.record((item, token, outcome))
        return _timed_out(outcome)

    return _pool(ctx, queue, clients, claim, work)


async def _mark_read(adapter: WhatsAppAdapter, clients: _Clients, item: _Receipt) -> Outcome:
    if item.integration is None or item.external_id is None:
        return SendRejected("nothing to mark read")
    try:
        await adapter.mark_read(clients.platform, item.integration, item.external_id)
    except (SendDeferred, SendRejected) as outcome:
        return outcome
    except Exception as exc:
        logger.exception("read receipt of %s failed unexpectedly", item.integration.id)
        return SendDeferred(f"unexpected error: {type(exc).__name__}")
    return item.external_id


async def download_media(ctx: WorkerContext) -> int:
    """Fetches inbound media through the platform's media API into storage."""
    return await _drain(ctx, "channels.media", lambda: _media_pool(ctx))


def _media_pool(ctx: WorkerContext) -> _Pool:
    settings = ctx.settings
    queue = replace(repository.MEDIA, backoff=backoff(settings))
    storage = storage_for(settings)
    adapter = WhatsAppAdapter(settings.whatsapp_api_url)
    clients = _Clients(settings)

    async def claim(
        session: AsyncSession, now: datetime, token: str, limit: int, full: Collection[Hashable]
    ) -> list[Claimed[Any]]:
        ids = await repository.claim_media(
            session,
            queue,
            [OFFICIAL],
            now,
            _lease(settings),
            token,
            limit,
            settings.dispatch_max_attempts,
            skip_integrations=[str(g) for g in full],
        )
        if not ids:
            return []
        rows = await repository.claimed(session, ids, token)
        return [Claimed((m, i), m.id, i.id) for m, i, _, _, _ in rows]

    async def write(session: AsyncSession, outcomes: list[tuple[Message, str, Outcome]]) -> None:
        now = ctx.now()
        for message, token, outcome in outcomes:
            if isinstance(outcome, str):
                values = {"media_url": storage.url(outcome), "error": None, "next_attempt_at": None}
                if not await queue.finish(session, message.id, token, values):
                    # The message was erased meanwhile (or taken over): no row names the
                    # file, so the client's file goes.
                    await storage.delete(outcome)
            elif isinstance(outcome, SendRejected):
                error = f"media download failed: {outcome.reason}"
                gave_up = {"attempts": settings.dispatch_max_attempts, "error": error}
                await queue.finish(session, message.id, token, gave_up)
            else:
                await queue.fail(
                    session,
                    message.id,
                    token,
                    now,
                    message.attempts + 1,
                    f"media download failed: {outcome.reason}",
                    retry_after=outcome.retry_after,
                )

    recorder = Recorder(ctx.sessionmaker, write, queue.name)

    async def work(item: tuple[Message, Integration], token: str) -> bool:
        message, integration = item
        try:
            outcome: Outcome = await _fetch_media(
                adapter, clients.platform, clients.guarded, storage, message, integration
            )
        except (SendDeferred, SendRejected) as failed:
            outcome = failed
        except Exception as exc:
            logger.exception("media download of message %s failed unexpectedly", message.id)
            outcome = SendDeferred(f"unexpected error: {type(exc).__name__}")
        await recorder.record((message, token, outcome))
        return _timed_out(outcome)

    return _pool(ctx, queue, clients, claim, work)


async def _fetch_media(
    adapter: WhatsAppAdapter,
    platform: httpx.AsyncClient,
    guarded: httpx.AsyncClient,
    storage: Storage,
    message: Message,
    integration: Integration,
) -> str:
    """Stores the media under an unguessable key and answers the key."""
    assert message.media_external_id is not None  # noqa: S101 (claimed on it)
    link, mime = await adapter.media_link(platform, integration, message.media_external_id)
    if not link.startswith(("https://", "http://")):
        raise SendRejected("the platform's media link is not http(s)")
    extension = mimetypes.guess_extension((mime or "").split(";")[0].strip()) or ".bin"
    key = f"inbound-media/{message.office_id}/{message.id}/{secrets.token_hex(16)}{extension}"
    token = (integration.whatsapp or {}).get("accessToken", "")
    try:
        async with guarded.stream(
            "GET", link, headers={"Authorization": f"Bearer {token}"}
        ) as response:
            if response.status_code == 429 or response.status_code >= 500:
                raise SendDeferred(f"media download answered {response.status_code}")
            if not response.is_success:
                raise SendRejected(f"media download answered {response.status_code}")
            await storage.save(key, _chunks(response), MEDIA_MAX_BYTES)
    except PayloadTooLarge as exc:
        raise SendRejected(f"the media is larger than {MEDIA_MAX_BYTES} bytes") from exc
    except httpx.HTTPError as exc:
        if refused_by_guard(exc):
            raise SendRejected("the media link points at a private or reserved address") from exc
        raise SendDeferred(f"media download failed: {type(exc).__name__}") from exc
    return key


async def _chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    async for chunk in response.aiter_bytes():
        yield chunk
