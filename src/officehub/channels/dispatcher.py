"""Queue jobs of the channels: sending ``QUEUED`` outbound messages, fetching inbound media.

A batch is claimed under a lease (``FOR UPDATE SKIP LOCKED`` on PostgreSQL), sent outside
any transaction, and each outcome written in its own savepoint: one message's trouble is
recorded on it and the rest go on. 429, 5xx and network errors are retried with backoff
(the platform's ``Retry-After`` honoured); anything else makes the message ``FAILED`` with
the platform's error.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
import mimetypes
import random
import secrets
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import unquote

import httpx

from officehub.channels import repository
from officehub.channels.adapter import ChannelAdapter, Outbound, SendDeferred, SendRejected
from officehub.channels.bridge import BRIDGED, BridgeAdapter, WebchatAdapter
from officehub.channels.whatsapp import WhatsAppAdapter
from officehub.conversations.models import Message
from officehub.inboxes.models import Integration
from officehub.kit.config import Settings
from officehub.kit.db import is_sqlite
from officehub.kit.errors import PayloadTooLarge
from officehub.kit.ids import new_id
from officehub.kit.storage import Storage, is_valid_key, storage_from_settings
from officehub.kit.worker import WorkerContext
from officehub.messages import service as messages
from officehub.webhooks.ssrf import AddressNotAllowed, delivery_client

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


def backoff(attempt: int, retry_after: float | None) -> timedelta:
    """The wait after failed attempt ``attempt`` (1-based): 2 s doubling to 5 min, ±20 %;
    a ``Retry-After`` is honoured when longer (up to an hour)."""
    step = min(_BACKOFF_CAP, _BACKOFF_BASE * 2 ** (attempt - 1)) * random.uniform(0.8, 1.2)  # noqa: S311
    if retry_after is not None:
        step = max(step, min(retry_after, _RETRY_AFTER_CAP))
    return timedelta(seconds=step)


def _lease(ctx: WorkerContext) -> tuple[datetime, datetime]:
    """Now and the end of a claim's lease: the setting, but never shorter than sending a
    whole batch can take (rounds of ``dispatch_concurrency`` calls, each up to the timeout;
    a media download may take a few of them)."""
    settings = ctx.settings
    rounds = math.ceil(settings.dispatch_batch_size / max(1, settings.dispatch_concurrency))
    worst = rounds * settings.whatsapp_timeout_seconds * 3 + 1
    now = ctx.now()
    return now, now + timedelta(seconds=max(settings.dispatch_lease_seconds, worst))


Outcome = str | SendDeferred | SendRejected


def _token(ctx: WorkerContext) -> str:
    return f"{ctx.worker_id}:{new_id()}"[:64]


async def send_queued(ctx: WorkerContext) -> int:
    """Claims the head message of up to a batch of conversations and sends them."""
    settings = ctx.settings
    registry = adapters(settings)
    now, lease = _lease(ctx)
    token = _token(ctx)
    skip_locked = not is_sqlite(settings.database_url)
    async with ctx.sessionmaker() as session, session.begin():
        ids = await repository.claim_outbound(
            session,
            [t for t in registry if t not in BRIDGED],
            now,
            lease,
            token,
            settings.dispatch_batch_size,
            skip_locked=skip_locked,
            bridged_types=BRIDGED,
        )
        if not ids:
            return 0
        rows = await repository.claimed(session, ids, token)
        peers = await repository.peers_of(
            session, [(m.office_id, i.id, c) for m, i, _, c in rows if i.type in BRIDGED]
        )
    storage = storage_for(settings)
    limit = asyncio.Semaphore(settings.dispatch_concurrency)

    async def one(
        message: Message, integration: Integration, phone: str | None, contact_id: str
    ) -> Outcome:
        async with limit:
            if not phone and integration.type == OFFICIAL:
                return SendRejected("the contact has no phone number")
            payload = dict(message.payload or {})
            path = payload.get("headerMediaPath")
            try:
                media_id = (
                    await _uploaded(settings, storage, client, integration, message, payload)
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
                media_url=message.media_url,
                payload=payload,
                to_phone=phone or "",
                header_media_link=storage.url(str(path)) if path else None,
                to_peer=peers.get((integration.id, contact_id)),
                media_id=media_id,
            )
            adapter = registry[integration.type]
            try:
                return await adapter.send(
                    guarded if getattr(adapter, "guarded", False) else client,
                    integration,
                    outbound,
                )
            except (SendDeferred, SendRejected) as outcome:
                return outcome
            except Exception as exc:
                logger.exception("send of message %s failed unexpectedly", message.id)
                return SendDeferred(f"unexpected error: {type(exc).__name__}")

    async with (
        httpx.AsyncClient(
            timeout=settings.whatsapp_timeout_seconds,
            trust_env=False,
            limits=httpx.Limits(max_connections=settings.dispatch_concurrency),
        ) as client,
        delivery_client(
            allow_private=settings.webhook_allow_private,
            timeout=settings.whatsapp_timeout_seconds,
            connections=settings.dispatch_concurrency,
        ) as guarded,
    ):
        outcomes = await asyncio.gather(*(one(m, i, p, c) for m, i, p, c in rows))
    await _record_sends(
        ctx, token, [(m.id, i.id, o) for (m, i, _, _), o in zip(rows, outcomes, strict=True)]
    )
    return len(ids)


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
    """The storage key of the file a send carries: a template's header media, or a media
    message whose URL is one of this service's ``/media`` links to a file of the office."""
    path = payload.get("headerMediaPath")
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
    ctx: WorkerContext, token: str, outcomes: list[tuple[str, str, Outcome]]
) -> None:
    """Writes every outcome of a batch in one transaction, only for messages still under
    this claim (a message whose lease ran out may belong to another worker now)."""
    now = ctx.now()
    settings = ctx.settings
    async with ctx.sessionmaker() as session, session.begin():
        held = await repository.held(
            session, [m for m, _, _ in outcomes], token, lock=not is_sqlite(settings.database_url)
        )
        changes: list[messages.StatusChange] = []
        closed: list[Message] = []
        for message_id, integration_id, outcome in outcomes:
            message = held.get(message_id)
            if message is None:
                continue
            if isinstance(outcome, str):
                changes.append(
                    messages.StatusChange(message, "SENT", integration_id, external_id=outcome)
                )
            elif isinstance(outcome, SendRejected):
                changes.append(
                    messages.StatusChange(message, "FAILED", integration_id, error=outcome.reason)
                )
                if outcome.code == messages.WINDOW_CLOSED_CODE:
                    closed.append(message)
            else:
                message.attempts += 1
                if message.attempts >= settings.dispatch_max_attempts:
                    reason = f"gave up after {message.attempts} tries: {outcome.reason}"
                    changes.append(
                        messages.StatusChange(message, "FAILED", integration_id, error=reason)
                    )
                    continue
                message.error = outcome.reason
                message.lease_until = None
                message.next_attempt_at = now + backoff(message.attempts, outcome.retry_after)
        await messages.change_statuses(session, changes)
        for message in closed:  # held under this claim: the fallback goes out once
            await messages.fall_back(session, message)


async def send_read_receipts(ctx: WorkerContext) -> int:
    """Tells the platform which client messages the operators read (``PENDING`` read marks)."""
    settings = ctx.settings
    now, lease = _lease(ctx)
    token = _token(ctx)
    lock = not is_sqlite(settings.database_url)
    async with ctx.sessionmaker() as session, session.begin():
        receipts = await repository.claim_receipts(
            session, now, lease, token, settings.dispatch_batch_size, skip_locked=lock
        )
        if not receipts:
            return 0
        integrations = await repository.integrations_by_id(
            session, list({r.integration_id for r in receipts})
        )
        work = [(r.id, r.external_id, integrations.get(r.integration_id)) for r in receipts]
    adapter = WhatsAppAdapter(settings.whatsapp_api_url)
    limit = asyncio.Semaphore(settings.dispatch_concurrency)

    async def one(external_id: str | None, integration: Integration | None) -> Outcome:
        async with limit:
            if integration is None or external_id is None:
                return SendRejected("nothing to mark read")
            try:
                await adapter.mark_read(client, integration, external_id)
            except (SendDeferred, SendRejected) as outcome:
                return outcome
            except Exception as exc:
                logger.exception("read receipt of %s failed unexpectedly", integration.id)
                return SendDeferred(f"unexpected error: {type(exc).__name__}")
            return external_id

    async with httpx.AsyncClient(
        timeout=settings.whatsapp_timeout_seconds, trust_env=False
    ) as client:
        outcomes = await asyncio.gather(*(one(e, i) for _, e, i in work))
    async with ctx.sessionmaker() as session, session.begin():
        held = await repository.held_receipts(session, [r for r, _, _ in work], token, lock=lock)
        for (ident, _, _), outcome in zip(work, outcomes, strict=True):
            receipt = held.get(ident)
            if receipt is None:
                continue
            receipt.lease_until = None
            receipt.claim_token = None
            if isinstance(outcome, str):
                receipt.status, receipt.sent_at, receipt.error = "SENT", ctx.now(), None
                continue
            receipt.attempts += 1
            receipt.error = outcome.reason[:2000]
            if (
                isinstance(outcome, SendRejected)
                or receipt.attempts >= settings.dispatch_max_attempts
            ):
                receipt.status = "FAILED"
            else:
                receipt.next_attempt_at = now + backoff(receipt.attempts, outcome.retry_after)
    return len(work)


async def download_media(ctx: WorkerContext) -> int:
    """Fetches inbound media through the platform's media API into storage."""
    settings = ctx.settings
    now, lease = _lease(ctx)
    token = _token(ctx)
    skip_locked = not is_sqlite(settings.database_url)
    async with ctx.sessionmaker() as session, session.begin():
        ids = await repository.claim_media(
            session,
            [OFFICIAL],
            now,
            lease,
            token,
            settings.dispatch_batch_size,
            settings.dispatch_max_attempts,
            skip_locked=skip_locked,
        )
        if not ids:
            return 0
        rows = await repository.claimed(session, ids, token)
    storage = storage_for(settings)
    adapter = WhatsAppAdapter(settings.whatsapp_api_url)
    limit = asyncio.Semaphore(settings.dispatch_concurrency)

    async def one(message: Message, integration: Integration) -> Outcome:
        async with limit:
            try:
                return await _fetch_media(adapter, platform, guarded, storage, message, integration)
            except (SendDeferred, SendRejected) as outcome:
                return outcome
            except Exception as exc:
                logger.exception("media download of message %s failed unexpectedly", message.id)
                return SendDeferred(f"unexpected error: {type(exc).__name__}")

    timeout = settings.whatsapp_timeout_seconds
    async with (
        httpx.AsyncClient(timeout=timeout, trust_env=False) as platform,
        delivery_client(
            allow_private=settings.webhook_allow_private,
            timeout=timeout,
            connections=settings.dispatch_concurrency,
        ) as guarded,
    ):
        outcomes = await asyncio.gather(*(one(m, i) for m, i, _, _ in rows))
    lock = not is_sqlite(settings.database_url)
    async with ctx.sessionmaker() as session, session.begin():
        held = await repository.held(session, [m.id for m, _, _, _ in rows], token, lock=lock)
        for (stale, _, _, _), outcome in zip(rows, outcomes, strict=True):
            message = held.get(stale.id)
            if message is None:
                continue
            message.lease_until = None
            if isinstance(outcome, str):
                message.media_url = storage.url(outcome)
                message.error = None
            elif isinstance(outcome, SendRejected):
                message.attempts = settings.dispatch_max_attempts
                message.error = f"media download failed: {outcome.reason}"
            else:
                message.attempts += 1
                message.error = f"media download failed: {outcome.reason}"
                message.next_attempt_at = now + backoff(message.attempts, outcome.retry_after)
    return len(ids)


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
        if _blocked(exc):
            raise SendRejected("the media link points at a private or reserved address") from exc
        raise SendDeferred(f"media download failed: {type(exc).__name__}") from exc
    return key


def _blocked(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, AddressNotAllowed):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


async def _chunks(response: httpx.Response) -> AsyncIterator[bytes]:
    async for chunk in response.aiter_bytes():
        yield chunk
