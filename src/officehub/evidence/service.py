"""``GET /conversation/{id}/evidence``: the conversation as a signed, hash-chained bundle.

The bundle (a zip): ``transcript.pdf``; ``manifest.json`` (the conversation, then one entry
per message and per attachment, oldest first, each hashing the one before:
``officehub.evidence.chain``; the transcript's SHA-256); ``attachments/``, the files the
office holds; ``manifest.sig``, the Ed25519 signature of ``manifest.json``'s bytes by the
office's evidence key; and ``evidence-key.pem``, its public half (compare its fingerprint
with ``GET /office/evidence-key``).
"""

from __future__ import annotations

import base64
import hashlib
import posixpath
import tempfile
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.evidence import texts
from officehub.evidence.chain import (
    FORMAT,
    MANIFEST,
    PUBLIC_KEY,
    SIGNATURE,
    TRANSCRIPT,
    canonical,
    chain,
    sha256,
)
from officehub.evidence.keys import OfficeKey, office_key
from officehub.evidence.transcript import Line, MessageBlock, Transcript, brazilian_time, render
from officehub.inboxes import service as inboxes
from officehub.kit.config import Settings
from officehub.kit.errors import NotFound
from officehub.kit.storage import Storage, own_media_key
from officehub.kit.timeutil import isoformat, utcnow
from officehub.messages import transcripts as message_transcripts
from officehub.offices import service as offices
from officehub.offices.settings import office_zone_name
from officehub.users import service as users

if TYPE_CHECKING:
    from officehub.messages.models import Message

_SPOOL = 8 * 1024 * 1024
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class Attachment:
    file: str
    sha256: str
    size: int


async def published_key(
    sessionmaker: async_sessionmaker[AsyncSession], office_id: str
) -> OfficeKey:
    return await office_key(sessionmaker, office_id, with_private=False)


def _without_query(url: str | None) -> str | None:
    """A link as recorded, without its signature (the bundle holds the file itself)."""
    return None if url is None else urlsplit(url)._replace(query="", fragment="").geturl()


async def _copy(storage: Storage, key: str, archive: zipfile.ZipFile, name: str) -> Attachment:
    digest = hashlib.sha256()
    size = 0
    with archive.open(name, "w", force_zip64=True) as target:
        async for chunk in storage.read(key):
            digest.update(chunk)
            size += len(chunk)
            target.write(chunk)
    return Attachment(name, digest.hexdigest(), size)


async def _operators(session: AsyncSession, office_id: str, labels: set[str]) -> dict[str, str]:
    """How the transcript names each ``sent_by``: an API key by its name, a user by name."""
    names: dict[str, str] = {}
    if any(label.startswith("apikey:") for label in labels):
        for key in await offices.list_api_keys(session, office_id):
            names[f"apikey:{key.id}"] = texts.API_KEY.format(name=key.name, id=key.id)
    for label in labels:
        kind, _, ident = label.partition(":")
        if kind == "user":
            try:
                user = await users.get_user(session, office_id, ident)
            except NotFound:
                continue
            names[label] = texts.USER.format(name=user.name, id=user.id)
    return {label: names.get(label, texts.UNKNOWN_ACTOR.format(label=label)) for label in labels}


def _message_entry(message: Message, attachments: list[Attachment]) -> dict[str, Any]:
    return {
        "kind": "message",
        "id": message.id,
        "createdAt": isoformat(message.created_at),
        "direction": message.direction,
        "type": message.type,
        "status": message.status,
        "statusHistory": message.status_history or [],
        "externalId": message.external_id,
        "sentBy": message.sent_by,
        "text": message.text,
        "originalText": message.original_text,
        "editedAt": None if message.edited_at is None else isoformat(message.edited_at),
        "deletedAt": None if message.deleted_at is None else isoformat(message.deleted_at),
        "templateName": message.template_name,
        "mediaUrl": _without_query(message.media_url),
        "content": message.content,
        "replyToId": message.reply_to_id,
        "forwarded": message.forwarded,
        "reactions": message.reactions,
        "attachments": [{"file": a.file, "sha256": a.sha256, "size": a.size} for a in attachments],
    }


def _history(message: Message, zone: ZoneInfo) -> str:
    steps = []
    for step in message.status_history or []:
        status = str(step.get("status", ""))
        name = texts.STATUS_NAMES.get(status, status)
        try:
            at = brazilian_time(datetime.fromisoformat(str(step.get("at", ""))), zone)
        except ValueError:
            at = texts.NONE
        steps.append(f"{name} ({at})")
    return " » ".join(steps) or texts.STATUS_NAMES.get(message.status, message.status)


def _block(
    message: Message, attachments: list[Attachment], operators: dict[str, str], zone: ZoneInfo
) -> MessageBlock:
    inbound = message.direction == "INBOUND"
    heading = (
        f"{brazilian_time(message.created_at, zone)} · "
        f"{texts.INBOUND if inbound else texts.OUTBOUND} · {message.type}"
    )
    lines = [Line(texts.CHANNEL_ID, message.external_id or texts.NONE)]
    if not inbound:
        sender = texts.SENT_BY_SERVICE if message.sent_by is None else operators[message.sent_by]
        lines.append(Line(texts.SENT_BY, sender))
    lines.append(Line(texts.STATUS, _history(message, zone)))
    if message.original_text is not None:
        lines.append(Line(texts.EDITED, message.original_text))
    for attachment in attachments:
        value = f"{attachment.file} ({attachment.size} bytes) SHA-256 {attachment.sha256}"
        lines.append(Line(texts.ATTACHMENT, value))
    if message.media_url and not attachments:
        lines.append(Line(texts.ATTACHMENT_ABSENT, _without_query(message.media_url) or ""))
    text = message.text or ""
    if not text and message.template_name:
        text = f"[template {message.template_name}]"
    return MessageBlock(heading, lines, text)


async def build_bundle(
    session: AsyncSession,
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    storage: Storage,
    office_id: str,
    conversation_id: str,
) -> IO[bytes]:
    """The bundle, in a temporary file (in memory up to 8 MB) positioned at its start."""
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    rows = await message_transcripts.conversation_record(session, office_id, conversation_id)
    contact = await contacts.get_contact(session, office_id, conversation.person_id)
    integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
    office = await offices.get_office(session, office_id)
    operators = await _operators(
        session, office_id, {m.sent_by for m in rows if m.sent_by is not None}
    )
    key = await office_key(sessionmaker, office_id, with_private=True)
    zone_name = await office_zone_name(session, office_id)
    zone = ZoneInfo(zone_name)
    now = utcnow()
    spool: IO[bytes] = tempfile.SpooledTemporaryFile(max_size=_SPOOL)
    entries: list[dict[str, Any]] = []
    blocks: list[MessageBlock] = []
    with zipfile.ZipFile(spool, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for message in rows:
            attachments = []
            stored = own_media_key(message.media_url, settings)
            if stored is not None and await storage.exists(stored):
                name = f"attachments/{message.id}-{posixpath.basename(stored)}"
                attachments.append(await _copy(storage, stored, archive, name))
            entries.append(_message_entry(message, attachments))
            entries.extend(
                {
                    "kind": "attachment",
                    "messageId": message.id,
                    "file": a.file,
                    "sha256": a.sha256,
                    "size": a.size,
                }
                for a in attachments
            )
            blocks.append(_block(message, attachments, operators, zone))
        header = [
            Line(texts.OFFICE, office.name),
            Line(texts.CONTACT, contact.name or texts.NONE),
            Line(texts.PHONE, contact.phone or texts.NONE),
            Line(texts.CHANNEL, f"{integration.name} ({integration.type})"),
            Line(texts.CONVERSATION, conversation.id),
            Line(texts.GENERATED, brazilian_time(now, zone)),
            Line(texts.TIME_ZONE, zone_name),
            Line(texts.KEY, key.fingerprint),
            Line(texts.MESSAGE_COUNT, str(len(rows))),
        ]
        pdf = render(Transcript(header, blocks))
        archive.writestr(TRANSCRIPT, pdf)
        manifest = {
            "format": FORMAT,
            "generatedAt": isoformat(now),
            "timeZone": zone_name,
            "keyFingerprint": key.fingerprint,
            "office": {"id": office.id, "name": office.name},
            "conversation": {
                "id": conversation.id,
                "personId": conversation.person_id,
                "contactName": contact.name,
                "contactPhone": contact.phone,
                "channel": integration.type,
                "integrationId": integration.id,
                "createdAt": isoformat(conversation.created_at),
                "status": conversation.status,
            },
            "files": {TRANSCRIPT: sha256(pdf)},
            "entries": chain(entries),
        }
        manifest_bytes = canonical(manifest)
        archive.writestr(MANIFEST, manifest_bytes)
        assert key.private is not None  # noqa: S101 - asked for with_private
        signature = key.private.sign(manifest_bytes)
        archive.writestr(SIGNATURE, base64.b64encode(signature) + b"\n")
        archive.writestr(PUBLIC_KEY, key.public_key_pem)
    spool.seek(0)
    return spool


async def chunks_of(spool: IO[bytes]) -> AsyncIterator[bytes]:
    try:
        while chunk := spool.read(_CHUNK):
            yield chunk
    finally:
        spool.close()
