"""``GET /people/{id}/export``: everything the office holds about one client, as a zip.

The zip (see ``texts`` for the ``README.txt`` that describes it): ``contact.json``,
``tags.json``, ``partner-links.json``, ``consents.json``,
``conversations/<id>/conversation.json``,
``messages.json`` (every message with its status history) and ``notes.json``,
``cards.json``, ``cases.json``, ``case-movements.json``, and ``media/``: the files the
messages reference that this office stores (a key under ``<area>/<office id>/``, behind a
link this service made); a link elsewhere is named in ``messages.json``, never fetched.

Streamed in bounded memory: the stdlib ``zipfile`` writes into a sink the response drains
after every write (no seeking: sizes and CRCs go in data descriptors, zip64 throughout);
rows are read in keyset pages of ``PAGE`` rows, each page in its own short session, so no
transaction stays open while the client downloads (SQLite's WAL can be checkpointed);
files are copied chunk by chunk. What grows with the client is the zip's central
directory: one entry per file (about 100 bytes each).

JSON files keep the exact text (UTF-8, nothing escaped); ``README.txt`` shows Unicode
bidirectional controls and other control characters as ``[U+XXXX]`` (as evidence
transcripts do) so no name reorders what a reader sees.
"""

from __future__ import annotations

import json
import posixpath
import time
import zipfile
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from officehub.cases import repository as cases
from officehub.client_export import texts
from officehub.contacts import repository as contacts
from officehub.conversations import repository as conversations
from officehub.crm import repository as crm
from officehub.inboxes import repository as inboxes
from officehub.kit.config import Settings
from officehub.kit.db import Base
from officehub.kit.errors import NotFound
from officehub.kit.repository import Keyset
from officehub.kit.storage import Storage, own_media_key
from officehub.kit.timeutil import as_utc, isoformat, utcnow
from officehub.messages import repository as messages
from officehub.offices import repository as offices
from officehub.offices.settings import office_zone_name

if TYPE_CHECKING:
    from officehub.conversations.models import Conversation, ConversationNote
    from officehub.messages.models import Message

PAGE = 500
"""Rows read per query (and per short session)."""
_FLUSH = 64 * 1024
"""The sink is drained once it holds this much (and after every file chunk)."""

BIDI_CONTROLS = frozenset("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")

_HIDDEN = frozenset(
    {
        "office_id",
        "search_name",
        "claim_token",
        "lease_until",
        "next_attempt_at",
        "attempts",
        "overdue_emitted_at",
        "next_check_at",
    }
)
"""Columns of the service's own machinery (queues, leases, search keys), not the client's."""


def legible(text: str) -> str:
    """``text`` with every bidirectional control and other control character (but the line
    break) shown as ``[U+XXXX]``: for the human-readable files."""
    return "".join(
        f"[U+{ord(c):04X}]" if c != "\n" and (c in BIDI_CONTROLS or not c.isprintable()) else c
        for c in text
    )


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _value(value: Any) -> Any:
    return isoformat(value) if isinstance(value, datetime) else value


def record(row: Base, **extra: Any) -> dict[str, Any]:
    """A row as JSON: every column but the machinery's, camelCase, times as ISO text."""
    out = {
        _camel(column.key): _value(getattr(row, column.key))
        for column in row.__table__.columns
        if column.key not in _HIDDEN
    }
    out.update(extra)
    return out


def _dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, indent=2).encode()


def office_file_key(media_url: str | None, settings: Settings, office_id: str) -> str | None:
    """The storage key behind a link this service made to a file of this office
    (``<area>/<office id>/…``), else None: a link elsewhere is named, never fetched, and a
    link to another office's file is never followed."""
    key = own_media_key(media_url, settings)
    if key is None:
        return None
    parts = key.split("/")
    return key if len(parts) >= 3 and parts[1] == office_id else None


class _Sink:
    """Where ``zipfile`` writes: bytes kept until the response takes them."""

    def __init__(self) -> None:
        self.buffer = bytearray()

    def write(self, data: bytes) -> int:
        self.buffer += data
        return len(data)

    def flush(self) -> None:
        return None

    def close(self) -> None:
        return None

    def take(self) -> bytes:
        out = bytes(self.buffer)
        self.buffer.clear()
        return out


@dataclass
class _Counts:
    messages: int = 0
    notes: int = 0
    files: int = 0
    external: int = 0


@dataclass(frozen=True)
class ExportTarget:
    """What the route checked before the first byte: the contact exists in the office."""

    office_id: str
    contact_id: str


async def check_contact(session: AsyncSession, office_id: str, contact_id: str) -> ExportTarget:
    if not await contacts.contact_exists(session, office_id, contact_id):
        raise NotFound("Contact not found", details=f"No contact {contact_id} in this office")
    return ExportTarget(office_id, contact_id)


class _Writer:
    def __init__(self) -> None:
        self.sink = _Sink()
        self.archive = zipfile.ZipFile(self.sink, "w", allowZip64=True)
        self.stamp = time.gmtime()[:6]

    def info(self, name: str, compress: int = zipfile.ZIP_DEFLATED) -> zipfile.ZipInfo:
        info = zipfile.ZipInfo(name, self.stamp)
        info.compress_type = compress
        info.external_attr = 0o644 << 16
        return info

    def ready(self, force: bool = False) -> bytes | None:
        if self.sink.buffer and (force or len(self.sink.buffer) >= _FLUSH):
            return self.sink.take()
        return None

    def whole(self, name: str, content: bytes) -> None:
        with self.archive.open(self.info(name), "w", force_zip64=True) as entry:
            entry.write(content)


_Page = Callable[[str, str, Keyset | None, int], Select[Any]]
"""A repository's keyset page: (office id, owner id, after, limit) -> its query."""


async def _pages(
    sessionmaker: async_sessionmaker[AsyncSession],
    page: _Page,
    office_id: str,
    owner_id: str,
    order: str,
) -> AsyncIterator[list[Any]]:
    """The rows ``page`` reads for ``owner_id`` in the office, oldest first by (``order``,
    id), ``PAGE`` at a time, each page read in its own session."""
    after: Keyset | None = None
    while True:
        stmt = page(office_id, owner_id, after, PAGE)
        async with sessionmaker() as session:
            rows = list(await session.scalars(stmt))
        if not rows:
            return
        yield rows
        last = rows[-1]
        after = (getattr(last, order), last.id)
        if len(rows) < PAGE:
            return


async def _json_array(
    writer: _Writer, name: str, pages: AsyncIterator[list[Any]], shape: Any
) -> AsyncIterator[bytes]:
    """A JSON array written item by item as its pages arrive."""
    with writer.archive.open(writer.info(name), "w", force_zip64=True) as entry:
        entry.write(b"[")
        first = True
        async for rows in pages:
            for row in rows:
                entry.write((b"\n" if first else b",\n") + _dumps(shape(row)))
                first = False
            if (chunk := writer.ready()) is not None:
                yield chunk
        entry.write(b"\n]\n" if not first else b"]\n")


async def _scalars(sessionmaker: async_sessionmaker[AsyncSession], stmt: Any) -> list[Any]:
    async with sessionmaker() as session:
        return list(await session.scalars(stmt))


async def export_chunks(
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    storage: Storage,
    target: ExportTarget,
) -> AsyncIterator[bytes]:
    """The zip's bytes, as they are made."""
    office_id, contact_id = target.office_id, target.contact_id
    writer = _Writer()
    counts = _Counts()
    async with sessionmaker() as session:
        contact = await contacts.find_contact(session, office_id, contact_id)
        office = await offices.find_office(session, office_id)
        if contact is None or office is None:  # gone since the route checked
            raise NotFound("Contact not found", details=f"No contact {contact_id}")
        # Dates in the README are the office's: its time zone stands in for the server's.
        zone_name = await office_zone_name(session, office_id)
        settings = settings.model_copy(update={"time_zone": zone_name})
        tag_rows = await contacts.tags_of_contact(session, office_id, contact_id)
        links = await contacts.partner_links_of(session, office_id, contact_id)
        consents = await contacts.consents_of(session, office_id, contact_id)
        contact_name, office_name = contact.name, office.name
        writer.whole("contact.json", _dumps(record(contact)))
        writer.whole("tags.json", _dumps([record(t) for t in tag_rows]))
        writer.whole("partner-links.json", _dumps([record(link) for link in links]))
        writer.whole("consents.json", _dumps([record(c) for c in consents]))
    if (chunk := writer.ready()) is not None:
        yield chunk

    lines: list[str] = []
    async for rows in _pages(
        sessionmaker,
        conversations.conversations_of_person_page,
        office_id,
        contact_id,
        "created_at",
    ):
        for conversation in rows:
            async for chunk in _conversation(
                writer, sessionmaker, settings, storage, conversation, counts, lines
            ):
                yield chunk

    person_pages: tuple[tuple[str, _Page, str], ...] = (
        ("cards.json", crm.cards_of_person_page, "created_at"),
        ("cases.json", cases.cases_of_person_page, "created_at"),
        ("case-movements.json", cases.movements_of_person_page, "occurred_at"),
    )
    for name, page, order in person_pages:
        pages = _pages(sessionmaker, page, office_id, contact_id, order)
        async for chunk in _json_array(writer, name, pages, record):
            yield chunk

    writer.whole("README.txt", _readme(settings, contact_name, office_name, counts, lines).encode())
    writer.archive.close()
    if (chunk := writer.ready(force=True)) is not None:
        yield chunk


async def _conversation(
    writer: _Writer,
    sessionmaker: async_sessionmaker[AsyncSession],
    settings: Settings,
    storage: Storage,
    conversation: Conversation,
    counts: _Counts,
    lines: list[str],
) -> AsyncIterator[bytes]:
    office_id, base = conversation.office_id, f"conversations/{conversation.id}"
    tag_names = await _scalars(
        sessionmaker, conversations.tag_names_query(office_id, conversation.id)
    )
    [channel] = await _scalars(
        sessionmaker, inboxes.integration_type_query(office_id, conversation.integration_id)
    ) or ["?"]
    writer.whole(
        f"{base}/conversation.json",
        _dumps(record(conversation, channel=channel, tags=tag_names)),
    )
    files: list[tuple[str, str]] = []
    before = counts.messages

    def shape(message: Message) -> dict[str, Any]:
        counts.messages += 1
        key = office_file_key(message.media_url, settings, office_id)
        file = None
        if key is not None:
            file = f"media/{message.id}-{posixpath.basename(key)}"
            files.append((key, file))
        elif message.media_url:
            counts.external += 1
        media_url = message.media_url
        if media_url is not None:  # without its signature: the zip holds the file itself
            media_url = urlsplit(media_url)._replace(query="", fragment="").geturl()
        return record(message, mediaUrl=media_url, file=file)

    pages = _pages(sessionmaker, messages.messages_page, office_id, conversation.id, "created_at")
    async for chunk in _json_array(writer, f"{base}/messages.json", pages, shape):
        yield chunk

    def note(row: ConversationNote) -> dict[str, Any]:
        counts.notes += 1
        return record(row)

    pages = _pages(sessionmaker, conversations.notes_page, office_id, conversation.id, "created_at")
    async for chunk in _json_array(writer, f"{base}/notes.json", pages, note):
        yield chunk

    for key, name in files:
        if not await storage.exists(key):
            continue
        with writer.archive.open(
            writer.info(name, zipfile.ZIP_STORED), "w", force_zip64=True
        ) as entry:
            async for piece in storage.read(key):
                entry.write(piece)
                if (out := writer.ready(force=True)) is not None:
                    yield out
        counts.files += 1
    zone = ZoneInfo(settings.time_zone)
    lines.append(
        texts.CONVERSATION_LINE.format(
            id=conversation.id,
            channel=channel,
            at=_brazilian(conversation.created_at, zone),
            messages=counts.messages - before,
        )
    )


def _brazilian(value: datetime, zone: ZoneInfo) -> str:
    return as_utc(value).astimezone(zone).strftime("%d/%m/%Y %H:%M")


def _readme(
    settings: Settings, name: str, office: str, counts: _Counts, lines: Iterable[str]
) -> str:
    zone = ZoneInfo(settings.time_zone)
    conversations = list(lines) or [texts.NO_CONVERSATIONS]
    parts = [
        texts.TITLE.format(name=name, office=office),
        texts.GENERATED.format(at=_brazilian(utcnow(), zone), zone=settings.time_zone),
        "",
        texts.PURPOSE,
        "",
        texts.FILES,
        *(
            f"- {line}"
            for line in (
                texts.CONTACT,
                texts.TAGS,
                texts.PARTNER_LINKS,
                texts.CONSENTS,
                texts.CONVERSATION,
                texts.MESSAGES,
                texts.NOTES,
                texts.CARDS,
                texts.CASES,
                texts.MOVEMENTS,
                texts.MEDIA,
            )
        ),
        "",
        texts.CONVERSATIONS,
        *(f"- {line}" for line in conversations),
        "",
        texts.TOTALS.format(messages=counts.messages, notes=counts.notes, files=counts.files),
    ]
    if counts.external:
        parts.append(texts.EXTERNAL.format(count=counts.external))
    return legible("\n".join(parts)) + "\n"
