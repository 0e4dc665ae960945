"""Evidence bundles (issue 30): ``GET /conversation/{id}/evidence``, ``GET /office/evidence-key``
and ``officehub evidence verify``."""

from __future__ import annotations

import asyncio
import base64
import io
import itertools
import json
import zipfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from fastapi import FastAPI
from pypdf import PdfReader
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.evidence.chain import (
    MANIFEST,
    SIGNATURE,
    TRANSCRIPT,
    entry_hash,
    load_public_key,
    verify_bundle,
)
from officehub.evidence.models import EvidenceKey
from officehub.evidence.transcript import printable
from officehub.kit.config import Settings
from officehub.kit.encryption import is_sealed
from officehub.kit.storage import storage_from_settings
from officehub.messages import statuses as message_statuses
from officehub.messages.models import Message
from tests import factories as f
from tests.helpers import OfficeFixture, error_of
from tests.test_cli import officehub

pytestmark = pytest.mark.anyio
MISSING = "c" + "0" * 24
INBOUND_TEXT = "Olá, doutora! Segue a procuração assinada: ação de cobrança nº 123, São João."
SPOOFED = "contrato\u202egpj.exe"
ATTACHMENT = b"%PDF-1.4 procuracao assinada \x00\x01\x02"


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data


@dataclass(frozen=True)
class World:
    conversation_id: str
    contact_id: str
    outbound_id: str


async def _world(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office: OfficeFixture
) -> World:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id, name="João da Conceição")
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    await session.commit()
    storage = storage_from_settings(settings)
    key = f"media/{office.id}/procuracao.pdf"
    await storage.save(key, _chunks(ATTACHMENT), 1 << 20)
    headers = office.headers
    base = f"/conversation/{conversation.id}/messages"
    r = await client.post(f"{base}/inbound", json={"text": INBOUND_TEXT}, headers=headers)
    assert r.status_code == 201, r.text
    r = await client.post(
        f"{base}/inbound",
        json={"text": SPOOFED, "mediaUrl": storage.url(key)},
        headers=headers,
    )
    assert r.status_code == 201, r.text
    r = await client.post(base, json={"text": "Recebido, obrigada. Até amanhã."}, headers=headers)
    assert r.status_code == 201, r.text
    outbound_id = r.json()["id"]
    row = await session.get(Message, outbound_id)
    assert row is not None
    await message_statuses.change_status(session, row, "SENT", external_id="wamid.HBgLNTUxMTk4NzY1")
    await message_statuses.change_status(session, row, "DELIVERED")
    await session.commit()
    return World(conversation.id, contact.id, outbound_id)


async def _bundle(client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str) -> bytes:
    r = await client.get(f"/conversation/{conversation_id}/evidence", headers=office.headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/zip"
    assert "attachment" in r.headers["content-disposition"]
    return r.content


def _rezip(data: bytes, change: Callable[[str, bytes], bytes]) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for name in source.namelist():
            target.writestr(name, change(name, source.read(name)))
    return out.getvalue()


def _manifest(data: bytes) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(zipfile.ZipFile(io.BytesIO(data)).read(MANIFEST))
    return loaded


# GET /conversation/{id}/evidence


async def test_evidence_bundle_holds_transcript_manifest_files_and_signature(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    world = await _world(client, session, settings, office_a)
    data = await _bundle(client, office_a, world.conversation_id)
    archive = zipfile.ZipFile(io.BytesIO(data))
    names = set(archive.namelist())
    assert {TRANSCRIPT, MANIFEST, SIGNATURE, "evidence-key.pem"} <= names
    [attachment] = [n for n in names if n.startswith("attachments/")]
    assert archive.read(attachment) == ATTACHMENT
    manifest = _manifest(data)
    entries = manifest["entries"]
    assert isinstance(entries, list)
    kinds = [e["kind"] for e in entries]
    assert kinds == ["message", "message", "attachment", "message"]
    assert entries[0]["text"] == INBOUND_TEXT and entries[1]["text"] == SPOOFED
    outbound = entries[3]
    assert outbound["sentBy"] == f"apikey:{office_a.key_id}"
    assert outbound["externalId"] == "wamid.HBgLNTUxMTk4NzY1"
    assert [s["status"] for s in outbound["statusHistory"]] == ["QUEUED", "SENT", "DELIVERED"]
    assert "signature=" not in str(entries[1]["mediaUrl"])
    verdict = verify_bundle(data)
    assert verdict.ok, verdict.problems
    published = (await client.get("/office/evidence-key", headers=office_a.headers)).json()
    assert manifest["keyFingerprint"] == published["fingerprint"] == verdict.fingerprint
    assert verify_bundle(data, published["publicKeyPem"].encode()).ok


async def test_evidence_entries_are_chained_each_hash_covering_the_previous(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    world = await _world(client, session, settings, office_a)
    entries = _manifest(await _bundle(client, office_a, world.conversation_id))["entries"]
    assert isinstance(entries, list)
    assert entries[0]["previousHash"] == "0" * 64
    for before, entry in itertools.pairwise(entries):
        assert entry["previousHash"] == before["hash"]
        assert entry["hash"] == entry_hash(entry)
    # Changing an earlier entry and recomputing its hash breaks the next one's link.
    entries[0]["text"] = "outro texto"
    entries[0]["hash"] = entry_hash(entries[0])
    assert entries[1]["previousHash"] != entries[0]["hash"]


def _pdf_text(pdf: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(pdf)).pages)


async def test_evidence_transcript_shows_times_operator_statuses_hashes_and_accents(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    world = await _world(client, session, settings, office_a)
    data = await _bundle(client, office_a, world.conversation_id)
    archive = zipfile.ZipFile(io.BytesIO(data))
    text = " ".join(_pdf_text(archive.read(TRANSCRIPT)).split())
    assert "João da Conceição" in text
    assert "Olá, doutora! Segue a procuração assinada: ação de cobrança nº 123" in text
    assert "contrato[U+202E]gpj.exe" in text  # neutralised, not reordering what follows
    assert f"chave de API “test” ({office_a.key_id})" in text
    assert "wamid.HBgLNTUxMTk4NzY1" in text
    assert "na fila" in text and "enviada" in text and "entregue" in text
    [entry] = [e for e in _manifest(data)["entries"] if e["kind"] == "attachment"]
    assert entry["sha256"] in text


async def test_evidence_times_are_brazilian_in_the_office_time_zone() -> None:
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    from officehub.evidence.transcript import brazilian_time

    at = datetime(2026, 3, 4, 2, 30, tzinfo=UTC)
    assert brazilian_time(at, ZoneInfo("America/Sao_Paulo")) == "03/03/2026 23:30"
    assert brazilian_time(at.replace(tzinfo=None), ZoneInfo("America/Manaus")) == "03/03/2026 22:30"


def test_evidence_transcript_neutralises_bidi_and_undrawable_characters() -> None:
    assert printable("a\u202eb\u2066c\u200fd") == "a[U+202E]b[U+2066]c[U+200F]d"
    quoted = "\u201cação\u201d \u2013 \u2713 \U0001f600"
    assert printable(quoted) == "\u201cação\u201d \u2013 [U+2713] [U+1F600]"
    assert printable("linha\nnova\tx") == "linha\nnova[U+0009]x"


async def test_evidence_of_another_office_conversation_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await _world(client, session, settings, office_a)
    r = await client.get(
        f"/conversation/{world.conversation_id}/evidence", headers=office_b.headers
    )
    assert r.status_code == 404
    assert error_of(r)["code"] == "NOT_FOUND"
    r = await client.get(f"/conversation/{MISSING}/evidence", headers=office_a.headers)
    assert r.status_code == 404


async def test_evidence_bad_id_is_400(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    r = await client.get("/conversation/not-an-id!/evidence", headers=office_a.headers)
    assert r.status_code == 400
    assert "id" in error_of(r)["details"]


async def test_evidence_without_key_is_401(client: httpx.AsyncClient) -> None:
    for path in (f"/conversation/{MISSING}/evidence", "/office/evidence-key"):
        assert (await client.get(path)).status_code == 401
        r = await client.get(path, headers={"x-service-api-key": "ohk_wrong"})
        assert r.status_code == 401


# GET /office/evidence-key


async def test_evidence_key_is_made_once_per_office_and_its_private_half_sealed(
    app: FastAPI,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    first, again, other = await asyncio.gather(
        client.get("/office/evidence-key", headers=office_a.headers),
        client.get("/office/evidence-key", headers=office_a.headers),
        client.get("/office/evidence-key", headers=office_b.headers),
    )
    assert first.status_code == again.status_code == other.status_code == 200
    assert first.json() == again.json()
    assert first.json()["fingerprint"] != other.json()["fingerprint"]
    assert first.json()["algorithm"] == "Ed25519"
    assert isinstance(load_public_key(first.json()["publicKeyPem"].encode()), Ed25519PublicKey)
    assert "PRIVATE" not in first.text
    async with app.state.sessionmaker() as s:
        stored = list(await s.scalars(text("SELECT private_key_sealed FROM evidence_keys")))
        rows = list(await s.scalars(select(EvidenceKey)))
    assert len(stored) == 2 and all(is_sealed(value) for value in stored)
    assert all(len(bytes.fromhex(row.private_key)) == 32 for row in rows)  # opened in the service


# officehub evidence verify


async def _verify(database_url: str, tmp_path: Path, data: bytes) -> tuple[int, str]:
    path = tmp_path / "bundle.zip"
    path.write_bytes(data)
    result = await officehub(database_url, "evidence", "verify", str(path))
    return result.returncode, result.stdout + result.stderr


def _flip(data: bytes, at: int = 3) -> bytes:
    return data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :]


async def test_evidence_verify_passes_an_untouched_bundle_and_names_each_change(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    database_url: str,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    world = await _world(client, session, settings, office_a)
    data = await _bundle(client, office_a, world.conversation_id)
    code, out = await _verify(database_url, tmp_path, data)
    assert code == 0, out
    assert "valid: 4 entries" in out

    def in_message(name: str, content: bytes) -> bytes:
        return (
            content.replace(b"Segue a procura", b"Segue a procurb") if name == MANIFEST else content
        )

    code, out = await _verify(database_url, tmp_path, _rezip(data, in_message))
    assert code == 1
    assert "entry 1 (message" in out and "content changed" in out

    def in_attachment(name: str, content: bytes) -> bytes:
        return _flip(content) if name.startswith("attachments/") else content

    code, out = await _verify(database_url, tmp_path, _rezip(data, in_attachment))
    assert code == 1
    assert "attachments/" in out and "SHA-256 does not match" in out

    def in_manifest(name: str, content: bytes) -> bytes:
        return (
            content.replace(b'"timeZone":"America/Sao_Paulo"', b'"timeZone":"America/Sao_Paulx"')
            if name == MANIFEST
            else content
        )

    code, out = await _verify(database_url, tmp_path, _rezip(data, in_manifest))
    assert code == 1
    assert "manifest.sig: the signature does not match manifest.json" in out
    assert "entry" not in out  # the entries themselves are intact

    def in_signature(name: str, content: bytes) -> bytes:
        if name != SIGNATURE:
            return content
        raw = bytearray(base64.b64decode(content))
        raw[10] ^= 0x01
        return base64.b64encode(bytes(raw))

    code, out = await _verify(database_url, tmp_path, _rezip(data, in_signature))
    assert code == 1
    assert "manifest.sig" in out

    def in_transcript(name: str, content: bytes) -> bytes:
        return _flip(content, 200) if name == TRANSCRIPT else content

    code, out = await _verify(database_url, tmp_path, _rezip(data, in_transcript))
    assert code == 1
    assert "transcript.pdf: its content changed" in out


async def test_evidence_verify_refuses_a_bundle_signed_by_another_key(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await _world(client, session, settings, office_a)
    data = await _bundle(client, office_a, world.conversation_id)
    other = (await client.get("/office/evidence-key", headers=office_b.headers)).json()
    verdict = verify_bundle(data, other["publicKeyPem"].encode())
    assert not verdict.ok
    assert any("signature does not match" in p for p in verdict.problems)
