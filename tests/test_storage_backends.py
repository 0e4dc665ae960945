"""One storage suite, run against the local folder and against an S3-compatible bucket
(moto's server mode, a real HTTP server on 127.0.0.1 started here)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from aiobotocore.session import get_session
from moto.server import ThreadedMotoServer

from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.kit.errors import PayloadTooLarge
from officehub.kit.storage import LocalStorage, Signer, Storage
from officehub.kit.storage.s3 import PART_BYTES, S3Storage
from tests import factories as f
from tests.helpers import make_office

BUCKET = "officehub-test"
KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}


@pytest.fixture(scope="module")
def moto_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


async def _bucket(endpoint: str, name: str) -> None:
    async with get_session().create_client(
        "s3", region_name="us-east-1", endpoint_url=endpoint, **KEYS
    ) as client:
        await client.create_bucket(Bucket=name)


@pytest.fixture(params=["local", "s3"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    signer = Signer(b"k")
    if request.param == "local":
        yield LocalStorage(tmp_path / "files", signer, "http://files.test", 60)
        return
    yield await _s3(request.getfixturevalue("moto_endpoint"))


async def _s3(endpoint: str) -> S3Storage:
    bucket = f"{BUCKET}-{time.time_ns()}"
    await _bucket(endpoint, bucket)
    return S3Storage(
        bucket=bucket,
        endpoint_url=endpoint,
        region="us-east-1",
        access_key_id=KEYS["aws_access_key_id"],
        secret_access_key=KEYS["aws_secret_access_key"],
        default_ttl_seconds=60,
        signer=Signer(b"k"),
    )


async def chunks(*parts: bytes) -> AsyncIterator[bytes]:
    for part in parts:
        yield part


async def _read(storage: Storage, key: str) -> bytes:
    return b"".join([c async for c in storage.read(key)])


async def test_storage_saves_reads_and_deletes(storage: Storage) -> None:
    size = await storage.save("docs/a.txt", chunks(b"hello ", b"world"), max_bytes=100)
    assert size == 11
    assert await storage.exists("docs/a.txt")
    assert await _read(storage, "docs/a.txt") == b"hello world"
    assert await storage.delete("docs/a.txt") is True
    assert await storage.delete("docs/a.txt") is False
    assert not await storage.exists("docs/a.txt")


async def test_storage_deletes_a_folder_whole_and_nothing_beside_it(storage: Storage) -> None:
    for key in ("c/o1/conv1/a.pdf", "c/o1/conv1/b.jpg", "c/o1/conv10/c.pdf", "c/o1/d.txt"):
        await storage.save(key, chunks(b"x"), max_bytes=10)
    assert await storage.delete_under("c/o1/conv1/") == 2
    assert not await storage.exists("c/o1/conv1/a.pdf")
    assert not await storage.exists("c/o1/conv1/b.jpg")
    assert await storage.exists("c/o1/conv10/c.pdf") and await storage.exists("c/o1/d.txt")
    assert await storage.delete_under("c/o1/conv1/") == 0
    assert await storage.delete_under("c/o1/conv") == 0  # a folder only: ends with /
    assert await storage.exists("c/o1/conv10/c.pdf")


async def test_storage_keeps_nothing_over_the_cap(storage: Storage) -> None:
    with pytest.raises(PayloadTooLarge):
        await storage.save("big.bin", chunks(b"12345", b"67890", b"x"), max_bytes=10)
    assert not await storage.exists("big.bin")
    assert await storage.save("ok.bin", chunks(b"12345", b"67890"), max_bytes=10) == 10


async def test_storage_streams_a_file_of_several_parts(storage: Storage) -> None:
    block = bytes(range(256)) * 4096  # 1 MiB
    count = PART_BYTES // len(block) * 2 + 3
    size = await storage.save("large.bin", chunks(*([block] * count)), max_bytes=100 * 2**20)
    assert size == count * len(block)
    assert await _read(storage, "large.bin") == block * count


async def test_storage_over_the_cap_after_several_parts_keeps_nothing(storage: Storage) -> None:
    block = b"\x00" * 2**20
    count = PART_BYTES // len(block) * 2
    with pytest.raises(PayloadTooLarge):
        await storage.save(
            "big.bin", chunks(*([block] * count)), max_bytes=(count - 1) * len(block)
        )
    assert not await storage.exists("big.bin")


@pytest.mark.parametrize("key", ["../x", "a/../../x", "/etc/passwd", "a//b", ".hidden", "a b"])
async def test_storage_refuses_bad_keys(storage: Storage, key: str) -> None:
    with pytest.raises(ValueError, match="invalid storage key"):
        await storage.save(key, chunks(b"x"), max_bytes=10)


async def test_storage_links_fetch_the_file(storage: Storage, tmp_path: Path) -> None:
    await storage.save("media/a.png", chunks(b"\x89PNG data"), max_bytes=100)
    link = storage.url("media/a.png", ttl_seconds=60)
    if isinstance(storage, LocalStorage):
        url = httpx.URL(link)
        assert url.path == "/media/media/a.png"
        assert storage.verify_link(
            "media/a.png", int(url.params["expires"]), url.params["signature"]
        )
        return
    async with httpx.AsyncClient() as client:
        r = await client.get(link)
    assert r.status_code == 200 and r.content == b"\x89PNG data"


async def test_s3_links_are_presigned_for_the_ttl(moto_endpoint: str) -> None:
    """moto serves presigned links without checking them, so the expiry itself is the
    bucket's to enforce; here the link is checked to carry it, signed."""
    storage = await _s3(moto_endpoint)
    url = httpx.URL(storage.url("a.txt", ttl_seconds=90))
    assert url.params["X-Amz-Expires"] == "90"
    assert url.params["X-Amz-Algorithm"] == "AWS4-HMAC-SHA256"
    assert len(url.params["X-Amz-Signature"]) == 64
    assert url.path.endswith(f"/{storage.bucket}/a.txt")


async def test_header_media_upload_lands_in_the_bucket_with_storage_backend_s3(
    moto_endpoint: str, database_url: str, tmp_path: Path
) -> None:
    bucket = f"{BUCKET}-app-{time.time_ns()}"
    await _bucket(moto_endpoint, bucket)
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        signing_key="test-signing-key",
        storage_backend="s3",
        s3_endpoint_url=moto_endpoint,
        s3_bucket=bucket,
        s3_access_key_id="testing",
        s3_secret_access_key="testing",
    )
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        office = await make_office(application, "Office S3")
        async with application.state.sessionmaker() as session:
            inbox = await f.make_inbox(session, office.id)
            integration = await f.make_integration(
                session, office.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-s3"
            )
            contact = await f.make_contact(session, office.id)
            conversation = await f.make_conversation(session, office.id, contact.id, integration)
            await session.commit()
        transport = httpx.ASGITransport(app=application)
        async with httpx.AsyncClient(transport=transport, base_url="http://officehub.test") as c:
            pdf = b"%PDF-1.7\n" + b"x" * 1000
            r = await c.post(
                f"/conversation/{conversation.id}/template-header-media",
                files={"file": ("peticao.pdf", pdf, "application/pdf")},
                headers=office.headers,
            )
        assert r.status_code == 201, r.text
        assert r.json()["url"].startswith(f"{moto_endpoint}/{bucket}/template-header-media/")
        async with httpx.AsyncClient() as plain:
            fetched = await plain.get(r.json()["url"])
        assert fetched.status_code == 200 and fetched.content == pdf
        assert not (tmp_path / "data" / "files").exists()
