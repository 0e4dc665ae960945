"""Users: the office's operators, the inboxes they work in, and their pictures."""

from __future__ import annotations

import struct
import zlib
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.users.models import User
from officehub.users.service import AVATAR_MAX_BYTES
from tests import factories as f
from tests.helpers import OfficeFixture, error_of

ROUTES = [
    ("POST", "/user"),
    ("GET", "/user"),
    ("GET", "/user/cxxxxxxxxxxxx"),
    ("PATCH", "/user/cxxxxxxxxxxxx"),
    ("PUT", "/user/cxxxxxxxxxxxx/avatar"),
    ("DELETE", "/user/cxxxxxxxxxxxx/avatar"),
]


def png_bytes() -> bytes:
    """A real 1x1 PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + b"\x00" * 64
WEBP = b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 40


def stored_files(settings: Settings) -> list[Path]:
    root = Path(settings.data_dir) / "files"
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def media_path(url: str) -> str:
    parsed = httpx.URL(url)
    return parsed.raw_path.decode()


async def upload(
    client: httpx.AsyncClient, office: OfficeFixture, user_id: str, name: str, data: bytes
) -> httpx.Response:
    return await client.put(
        f"/user/{user_id}/avatar",
        files={"file": (name, data, "application/octet-stream")},
        headers=office.headers,
    )


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_create_read_update_user(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    other = await f.make_inbox(session, office_a.id, "Outra")
    await session.commit()
    h = office_a.headers
    body = {"name": "Ana Lima", "email": "ana@example.com", "role": "ADMIN", "inboxIds": [inbox.id]}
    r = await client.post("/user", json=body, headers=h)
    assert r.status_code == 201
    user = r.json()
    assert user["name"] == "Ana Lima" and user["role"] == "ADMIN"
    assert user["inboxIds"] == [inbox.id] and user["imageUrl"] is None
    assert user["officeId"] == office_a.id and user["document"] is None
    assert (await client.get(f"/user/{user['id']}", headers=h)).json() == user
    r = await client.patch(
        f"/user/{user['id']}", json={"inboxIds": [other.id, inbox.id], "role": "AGENT"}, headers=h
    )
    assert r.status_code == 200
    assert sorted(r.json()["inboxIds"]) == sorted([other.id, inbox.id])
    assert r.json()["role"] == "AGENT" and r.json()["email"] == "ana@example.com"


async def test_list_users_filters_by_inbox_and_search(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    h = office_a.headers
    await client.post(
        "/user", json={"name": "Ana Lima", "email": "ana@x.com", "inboxIds": [inbox.id]}, headers=h
    )
    await client.post("/user", json={"name": "Bruno Reis", "email": "bruno@x.com"}, headers=h)
    await client.post("/user", json={"name": "Carla", "email": "c@lima.com"}, headers=h)
    await client.post("/user", json={"name": "Ana B", "email": "b@x.com"}, headers=office_b.headers)

    async def names(query: str) -> list[str]:
        r = await client.get(f"/user{query}", headers=h)
        assert r.status_code == 200
        return [u["name"] for u in r.json()["data"]]

    assert await names("") == ["Ana Lima", "Bruno Reis", "Carla"]
    assert await names(f"?inboxId={inbox.id}") == ["Ana Lima"]
    assert await names("?search=LIMA") == ["Ana Lima", "Carla"]
    assert await names("?search=100%") == []
    listed = (await client.get("/user?limit=2", headers=h)).json()
    assert listed["totalResults"] == 3 and listed["totalPages"] == 2
    assert listed["data"][0]["inboxIds"] == [inbox.id] and listed["data"][1]["inboxIds"] == []


async def test_a_users_email_is_unique_in_the_office(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    body = {"name": "Ana", "email": "ana@example.com"}
    assert (await client.post("/user", json=body, headers=office_a.headers)).status_code == 201
    r = await client.post(
        "/user", json={**body, "email": "ANA@example.com"}, headers=office_a.headers
    )
    assert r.status_code == 409 and error_of(r)["code"] == "EMAIL_TAKEN"
    assert (await client.post("/user", json=body, headers=office_b.headers)).status_code == 201


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/user", {"name": "", "email": "a@b.co"}, "body.name"),
        ("POST", "/user", {"name": "A", "email": "not-an-email"}, "body.email"),
        ("POST", "/user", {"name": "A", "email": "a@b.co", "role": "GOD"}, "body.role"),
        ("POST", "/user", {"name": "A", "email": "a@b.co", "inboxIds": ["bad"]}, "body.inboxIds.0"),
        ("GET", "/user?inboxId=bad", None, "query.inboxId"),
        ("GET", "/user/bad-id", None, "path.id"),
        ("PATCH", "/user/bad-id", {"name": "x"}, "path.id"),
        ("PATCH", "/user/cxxxxxxxxxxxx", {"email": "x"}, "body.email"),
        ("DELETE", "/user/bad-id/avatar", None, "path.id"),
    ],
)
async def test_bad_input_names_the_field(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    method: str,
    path: str,
    body: object,
    field: str,
) -> None:
    r = await client.request(method, path, json=body, headers=office_a.headers)
    assert r.status_code == 400
    assert field in error_of(r)["details"]


async def test_bad_avatar_uploads_name_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    await session.commit()
    r = await upload(client, office_a, "bad-id", "a.png", png_bytes())
    assert r.status_code == 400 and "path.id" in error_of(r)["details"]
    r = await client.put(
        f"/user/{user.id}/avatar",
        files={"picture": ("a.png", png_bytes())},
        headers=office_a.headers,
    )
    assert r.status_code == 400 and "body.file" in error_of(r)["details"]
    r = await client.put(
        f"/user/{user.id}/avatar",
        data={"file": "not a file"},
        files={"other": ("x", b"x")},
        headers=office_a.headers,
    )
    assert r.status_code == 400 and "body.file" in error_of(r)["details"]
    r = await client.put(f"/user/{user.id}/avatar", json={"file": "x"}, headers=office_a.headers)
    assert r.status_code == 415 and error_of(r)["code"] == "UNSUPPORTED_MEDIA_TYPE"


async def test_another_offices_user_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    user = await f.make_user(session, office_b.id)
    inbox_b = await f.make_inbox(session, office_b.id)
    await session.commit()
    h = office_a.headers
    for method, path, body in (
        ("GET", f"/user/{user.id}", None),
        ("PATCH", f"/user/{user.id}", {"name": "mine"}),
        ("DELETE", f"/user/{user.id}/avatar", None),
        ("POST", "/user", {"name": "A", "email": "a@b.co", "inboxIds": [inbox_b.id]}),
    ):
        r = await client.request(method, path, json=body, headers=h)
        assert r.status_code == 404, (method, path)
        assert error_of(r)["code"] == "NOT_FOUND"
    r = await upload(client, office_a, user.id, "a.png", png_bytes())
    assert r.status_code == 404
    assert stored_files(settings) == []
    assert (await client.get("/user", headers=h)).json()["totalResults"] == 0


async def test_avatar_type_is_read_from_the_bytes(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    await session.commit()
    image = png_bytes()
    r = await upload(client, office_a, user.id, "photo.jpg", image)
    assert r.status_code == 200
    url = r.json()["imageUrl"]
    assert url.startswith(settings.public_url) and ".png?" in url
    fetched = await client.get(media_path(url))
    assert fetched.status_code == 200
    assert fetched.content == image and fetched.headers["content-type"] == "image/png"
    for name, data in (("a.jpeg", JPEG), ("b.webp", WEBP)):
        r = await upload(client, office_a, user.id, name, data)
        assert r.status_code == 200
    assert [p.suffix for p in stored_files(settings)] == [".webp"]

    r = await upload(client, office_a, user.id, "notes.png", b"just some text, not a picture\n")
    assert r.status_code == 415 and error_of(r)["code"] == "UNSUPPORTED_MEDIA_TYPE"
    r = await upload(client, office_a, user.id, "empty.png", b"")
    assert r.status_code == 415
    assert [p.suffix for p in stored_files(settings)] == [".webp"]
    assert (await client.get(f"/user/{user.id}", headers=office_a.headers)).json()["imageUrl"]


async def test_avatar_over_5_mb_is_413(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    await session.commit()
    limit = 5 * 1024 * 1024
    image = png_bytes()
    at_limit = image + b"\x00" * (limit - len(image))
    r = await upload(client, office_a, user.id, "big.png", at_limit)
    assert r.status_code == 200
    before = stored_files(settings)
    r = await upload(client, office_a, user.id, "bigger.png", at_limit + b"\x00")
    assert r.status_code == 413 and error_of(r)["code"] == "PAYLOAD_TOO_LARGE"
    assert stored_files(settings) == before
    got = (await client.get(f"/user/{user.id}", headers=office_a.headers)).json()
    assert (await client.get(media_path(got["imageUrl"]))).content == at_limit


async def test_avatar_upload_is_streamed_and_stops_at_the_limit(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    await session.commit()
    boundary = "officehubtestboundary"
    sent = 0
    total = 64 * 1024 * 1024

    async def body() -> AsyncIterator[bytes]:
        nonlocal sent
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
            f'filename="huge.png"\r\nContent-Type: image/png\r\n\r\n'
        ).encode()
        yield head + png_bytes()
        chunk = b"\x00" * (256 * 1024)
        while sent < total:
            sent += len(chunk)
            yield chunk
        yield f"\r\n--{boundary}--\r\n".encode()

    r = await client.put(
        f"/user/{user.id}/avatar",
        content=body(),
        headers={**office_a.headers, "content-type": f"multipart/form-data; boundary={boundary}"},
    )
    assert r.status_code == 413
    # Read up to the 5 MiB limit, then at most the bounded rest that is read only to be
    # dropped (``OFFICEHUB_BODY_DISCARD_BYTES``, so the client reads the 413): never the
    # whole 64 MiB.
    assert sent < AVATAR_MAX_BYTES + settings.body_discard_bytes + 1024 * 1024
    assert stored_files(settings) == []


async def test_avatar_removal_is_idempotent(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    await session.commit()
    assert (await upload(client, office_a, user.id, "a.png", png_bytes())).status_code == 200
    for _ in range(2):
        r = await client.delete(f"/user/{user.id}/avatar", headers=office_a.headers)
        assert r.status_code == 200
        assert r.json() == {"imageUrl": None}
    got = (await client.get(f"/user/{user.id}", headers=office_a.headers)).json()
    assert got["imageUrl"] is None
    never = await f.make_user(session, office_a.id, "Sem Foto")
    await session.commit()
    r = await client.delete(f"/user/{never.id}/avatar", headers=office_a.headers)
    assert r.status_code == 200 and r.json() == {"imageUrl": None}


async def test_avatar_removal_deletes_the_stored_file(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    other = await f.make_user(session, office_a.id, "Bia")
    await session.commit()
    url = (await upload(client, office_a, user.id, "a.png", png_bytes())).json()["imageUrl"]
    await upload(client, office_a, other.id, "b.png", png_bytes())
    files = stored_files(settings)
    assert len(files) == 2
    r = await client.delete(f"/user/{user.id}/avatar", headers=office_a.headers)
    assert r.status_code == 200
    remaining = stored_files(settings)
    assert len(remaining) == 1 and other.id in str(remaining[0])
    assert (await client.get(media_path(url))).status_code == 404
    session.expunge_all()
    stored = (await session.scalars(select(User).where(User.id == user.id))).one()
    assert stored.image_url is None and stored.image_path is None


async def test_malformed_multipart_is_400(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    user = await f.make_user(session, office_a.id)
    await session.commit()
    r = await client.put(
        f"/user/{user.id}/avatar",
        content=b'--b\r\nContent-Disposition: form-data; name="file"\r\n\r\nno file name\r\n--c',
        headers={**office_a.headers, "content-type": "multipart/form-data; boundary=b"},
    )
    assert r.status_code == 400
    r = await client.put(
        f"/user/{user.id}/avatar",
        content=b"this is not multipart at all",
        headers={**office_a.headers, "content-type": "multipart/form-data; boundary=b"},
    )
    assert r.status_code == 400
    assert error_of(r)["statusCode"] == 400
    assert stored_files(settings) == []


async def test_openapi_describes_the_directory_routes(client: httpx.AsyncClient) -> None:
    doc = (await client.get("/openapi.json")).json()
    paths = doc["paths"]
    avatar = paths["/user/{id}/avatar"]
    body = avatar["put"]["requestBody"]["content"]["multipart/form-data"]["schema"]
    assert body["required"] == ["file"]
    assert {"404", "413", "415"} <= set(avatar["put"]["responses"])
    assert {"404"} <= set(avatar["delete"]["responses"])
    assert "401" not in paths["/media/{key}"]["get"]["responses"]
    assert {"403", "404"} <= set(paths["/legal-areas/{id}"]["patch"]["responses"])
    assert "409" in paths["/tag"]["post"]["responses"]
    for path in (
        "/inbox",
        "/integration",
        "/department",
        "/user",
        "/tag",
        "/legal-areas",
        "/ticket-statuses",
        "/ticket",
        "/fast-message",
    ):
        assert "get" in paths[path], path
