"""POST /conversation/{conversationId}/template-header-media: each kind and its limit, types
read from the bytes, hostile names, signed links; errors without ``code`` as the spec says."""

from __future__ import annotations

import io
import zipfile
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from tests import factories as f
from tests.helpers import OfficeFixture

MB = 1024 * 1024
MISSING = "c" + "0" * 24
JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
MP4 = b"\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom"
GPP = b"\x00\x00\x00\x14ftyp3gp4\x00\x00\x00\x00"
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"
OLE = bytes.fromhex("D0CF11E0A1B11AE1") + b"\x00" * 600


def _docx() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("word/document.xml", "<w:document/>")
    return buf.getvalue()


def _zip() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("notas.txt", "x")
    return buf.getvalue()


async def _conversation(session: AsyncSession, office: OfficeFixture) -> str:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(
        session, office.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-media"
    )
    contact = await f.make_contact(session, office.id)
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    await session.commit()
    return conversation.id


async def _upload(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    conversation_id: str,
    content: bytes,
    name: str = "arquivo.bin",
) -> httpx.Response:
    return await client.post(
        f"/conversation/{conversation_id}/template-header-media",
        files={"file": (name, content, "application/octet-stream")},
        headers=office.headers,
    )


async def _streamed(head: bytes, size: int, boundary: str) -> AsyncIterator[bytes]:
    yield (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    yield head
    left = size - len(head)
    block = b"\x00" * MB
    while left > 0:
        yield block[: min(MB, left)]
        left -= MB
    yield f"\r\n--{boundary}--\r\n".encode()


async def _upload_streamed(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, head: bytes, size: int
) -> httpx.Response:
    boundary = "officehubtestboundary"
    return await client.post(
        f"/conversation/{conversation_id}/template-header-media",
        content=_streamed(head, size, boundary),
        headers={**office.headers, "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )


def _error(response: httpx.Response) -> dict[str, Any]:
    body: dict[str, Any] = response.json()
    assert set(body) == {"message", "statusCode", "details"}, body
    assert body["statusCode"] == response.status_code
    return body


def _stored_files(settings: Settings) -> list[Path]:
    root = Path(settings.data_dir) / "files"
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


@pytest.mark.parametrize(
    ("content", "extension"),
    [
        (JPEG + b"x" * 1000, "jpg"),
        (PNG + b"\x00" * 1000, "png"),
        (MP4 + b"\x00" * 1000, "mp4"),
        (GPP + b"\x00" * 1000, "3gp"),
        (PDF + b"x" * 1000, "pdf"),
        (OLE, "doc"),
        (_docx(), "docx"),
        ("Contrato de honorários\nCláusula 1ª…\n".encode(), "txt"),
    ],
)
async def test_each_accepted_kind_is_stored_and_served_by_a_signed_link(
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    content: bytes,
    extension: str,
) -> None:
    conversation_id = await _conversation(session, office_a)
    r = await _upload(client, office_a, conversation_id, content, name=f"anexo.{extension}")
    assert r.status_code == 201, r.text
    body = r.json()
    assert set(body) == {"storagePath", "url", "fileName"}
    assert body["fileName"] == f"anexo.{extension}"
    assert body["storagePath"].startswith(f"template-header-media/{office_a.id}/{conversation_id}/")
    assert body["storagePath"].endswith(f".{extension}")
    fetched = await client.get(body["url"].removeprefix(settings.public_url))
    assert fetched.status_code == 200
    assert fetched.content == content


@pytest.mark.parametrize(
    ("head", "limit"), [(JPEG, 5 * MB), (PNG, 5 * MB), (MP4, 16 * MB), (GPP, 16 * MB)]
)
async def test_each_kind_is_accepted_up_to_its_limit_and_413_past_it(
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    head: bytes,
    limit: int,
) -> None:
    conversation_id = await _conversation(session, office_a)
    r = await _upload_streamed(client, office_a, conversation_id, head, limit)
    assert r.status_code == 201, r.text
    r = await _upload_streamed(client, office_a, conversation_id, head, limit + 1)
    assert r.status_code == 413
    assert "at most" in _error(r)["details"]
    assert len(_stored_files(settings)) == 1  # only the first upload


async def test_a_document_past_100_mb_is_413_and_leaves_nothing(
    settings: Settings, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id = await _conversation(session, office_a)
    r = await _upload_streamed(client, office_a, conversation_id, PDF, 100 * MB + 1)
    assert r.status_code == 413
    _error(r)
    assert _stored_files(settings) == []


@pytest.mark.parametrize(
    ("content", "name"),
    [
        (b"MZ\x90\x00\x03\x00\x00\x00\x04\x00" + b"\x00" * 500, "contrato.pdf"),
        (b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 500, "foto.jpg"),
        (_zip(), "documento.docx"),
        (b"GIF89a" + b"\x00" * 100, "imagem.png"),
        (b"\x00\x01\x02\x03binary", "texto.txt"),
    ],
)
async def test_a_renamed_executable_or_other_type_is_415(
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    content: bytes,
    name: str,
) -> None:
    conversation_id = await _conversation(session, office_a)
    r = await _upload(client, office_a, conversation_id, content, name=name)
    assert r.status_code == 415
    _error(r)
    assert _stored_files(settings) == []


async def test_a_hostile_file_name_is_kept_only_as_a_clean_file_name(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id = await _conversation(session, office_a)
    for hostile, clean in (
        ("../../../etc/passwd.pdf", "passwd.pdf"),
        ("..\\..\\windows\\win.ini.pdf", "win.ini.pdf"),
        ("rel\u200fatório\u202e.pdf", "relatório.pdf"),
    ):
        r = await _upload(client, office_a, conversation_id, PDF + b"x" * 100, name=hostile)
        assert r.status_code == 201, r.text
        assert r.json()["fileName"] == clean
        assert "passwd" not in r.json()["storagePath"] and ".." not in r.json()["storagePath"]


async def test_media_links_good_tampered_and_expired(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    conversation_id = await _conversation(session, office_a)
    r = await _upload(client, office_a, conversation_id, JPEG + b"x" * 100, name="a.jpg")
    path, url = r.json()["storagePath"], r.json()["url"].removeprefix(settings.public_url)
    assert (await client.get(url)).status_code == 200
    tampered = url[:-4] + ("0000" if not url.endswith("0000") else "1111")
    assert (await client.get(tampered)).status_code == 403
    other = url.replace(path, path.rsplit("/", 1)[0] + "/other.jpg")
    assert (await client.get(other)).status_code in (403, 404)
    expired = app.state.storage.url(path, ttl_seconds=-1).removeprefix(settings.public_url)
    assert (await client.get(expired)).status_code == 403


async def test_header_media_bad_input_is_400_without_code(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id = await _conversation(session, office_a)
    r = await _upload(client, office_a, "not-an-id", PDF)
    assert r.status_code == 400
    assert "path.conversationId" in _error(r)["details"]
    r = await client.post(
        f"/conversation/{conversation_id}/template-header-media",
        files={"other": ("a.pdf", PDF, "application/pdf")},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "body.file" in _error(r)["details"]
    r = await client.post(
        f"/conversation/{conversation_id}/template-header-media",
        json={"file": "x"},
        headers=office_a.headers,
    )
    assert r.status_code == 415
    _error(r)


async def test_header_media_of_another_offices_conversation_is_404_without_code(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    conversation_id = await _conversation(session, office_a)
    for ident in (conversation_id, MISSING):
        r = await _upload(client, office_b, ident, PDF)
        assert r.status_code == 404
        _error(r)


async def test_header_media_without_a_key_is_401(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id = await _conversation(session, office_a)
    for headers in ({}, {"x-service-api-key": "ohk_wrong"}):
        r = await client.post(
            f"/conversation/{conversation_id}/template-header-media",
            files={"file": ("a.pdf", PDF, "application/pdf")},
            headers=headers,
        )
        assert r.status_code == 401
