"""The storage interface and the signed links of ``GET /media/{key}``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx
import pytest

from officehub.kit.config import Settings
from officehub.kit.errors import PayloadTooLarge
from officehub.kit.storage import LocalStorage, Signer, signing_secret


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


def local(tmp_path: Path, clock: Clock) -> LocalStorage:
    return LocalStorage(tmp_path / "files", Signer(b"k", clock), "http://files.test", 60)


async def test_local_storage_saves_reads_and_deletes(tmp_path: Path) -> None:
    storage = local(tmp_path, Clock(1_000))
    size = await storage.save("docs/a.txt", chunks(b"hello ", b"world"), max_bytes=100)
    assert size == 11
    assert (tmp_path / "files" / "docs" / "a.txt").read_bytes() == b"hello world"
    assert await storage.exists("docs/a.txt")
    assert b"".join([c async for c in storage.read("docs/a.txt")]) == b"hello world"
    assert await storage.delete("docs/a.txt") is True
    assert await storage.delete("docs/a.txt") is False
    assert not await storage.exists("docs/a.txt")


async def test_local_storage_keeps_nothing_over_the_cap(tmp_path: Path) -> None:
    storage = local(tmp_path, Clock(1_000))
    with pytest.raises(PayloadTooLarge):
        await storage.save("big.bin", chunks(b"12345", b"67890", b"x"), max_bytes=10)
    assert [p for p in (tmp_path / "files").rglob("*") if p.is_file()] == []
    assert await storage.save("ok.bin", chunks(b"12345", b"67890"), max_bytes=10) == 10


@pytest.mark.parametrize("key", ["../x", "a/../../x", "/etc/passwd", "a//b", ".hidden", "a b"])
async def test_local_storage_refuses_keys_outside_its_folder(tmp_path: Path, key: str) -> None:
    storage = local(tmp_path, Clock(1_000))
    with pytest.raises(ValueError, match="invalid storage key"):
        await storage.save(key, chunks(b"x"), max_bytes=10)


async def test_signed_links_expire(tmp_path: Path) -> None:
    clock = Clock(1_000)
    storage = local(tmp_path, clock)
    url = httpx.URL(storage.url("a.png", ttl_seconds=30))
    assert url.host == "files.test" and url.path == "/media/a.png"
    expires = int(url.params["expires"])
    signature = url.params["signature"]
    assert expires == 1_030
    assert storage.verify_link("a.png", expires, signature)
    assert not storage.verify_link("b.png", expires, signature)
    assert not storage.verify_link("a.png", expires + 1, signature)
    clock.now = 1_031
    assert not storage.verify_link("a.png", expires, signature)


def test_signing_key_is_generated_once_under_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data", signing_key="")
    first = signing_secret(settings)
    assert len(first) >= 32
    assert (tmp_path / "data" / "signing.key").read_bytes().strip() == first
    assert signing_secret(settings) == first
    assert signing_secret(Settings(data_dir=tmp_path / "data", signing_key="set")) == b"set"


async def test_media_route_serves_a_signed_file_without_a_key(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    storage = LocalStorage.from_settings(settings)
    await storage.save("avatars/x/a.png", chunks(b"\x89PNG\r\n\x1a\n data"), max_bytes=100)
    url = httpx.URL(storage.url("avatars/x/a.png"))
    r = await client.get(url.raw_path.decode())
    assert r.status_code == 200
    assert r.content == b"\x89PNG\r\n\x1a\n data" and r.headers["content-type"] == "image/png"


async def test_media_route_refuses_bad_or_expired_signatures(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    storage = LocalStorage.from_settings(settings)
    await storage.save("a.png", chunks(b"data"), max_bytes=100)
    good = httpx.URL(storage.url("a.png"))
    expires, signature = good.params["expires"], good.params["signature"]
    expired = storage.signer.sign("a.png", 1_000)
    for query in (
        "",
        f"?expires={expires}",
        f"?expires={expires}&signature={'0' * 64}",
        f"?expires={int(expires) + 1}&signature={signature}",
        f"?expires=1000&signature={expired}",
    ):
        r = await client.get(f"/media/a.png{query}")
        assert r.status_code == 403, query
        assert r.json()["code"] == "FORBIDDEN"


async def test_media_route_answers_404_for_missing_files_and_bad_names(
    client: httpx.AsyncClient, settings: Settings
) -> None:
    storage = LocalStorage.from_settings(settings)
    await anyio.Path(settings.data_dir).mkdir(parents=True, exist_ok=True)
    await anyio.Path(settings.data_dir, "secret.txt").write_text("not for you")
    missing = httpx.URL(storage.url("nothing.png"))
    assert (await client.get(missing.raw_path.decode())).status_code == 404
    for key in ("../secret.txt", "..%2Fsecret.txt", "%2E%2E/secret.txt"):
        r = await client.get(f"/media/{key}?expires=9999999999&signature=x")
        assert r.status_code == 404, key
