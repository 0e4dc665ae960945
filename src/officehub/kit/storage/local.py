"""``LocalStorage``, the default: files under ``DATA_DIR/files``, links to ``GET /media/{key}``
signed with an expiring HMAC."""

from __future__ import annotations

import errno
import secrets
from collections.abc import AsyncIterable, AsyncIterator
from pathlib import Path
from urllib.parse import quote, urlencode

import anyio
import anyio.to_thread

from officehub.kit.config import Settings
from officehub.kit.errors import InsufficientStorage, PayloadTooLarge
from officehub.kit.storage.base import Signer, is_valid_key, signing_secret

_CHUNK = 64 * 1024

_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
"""A full disk, a spent quota, a file-size limit: the upload cannot be kept."""


class LocalStorage:
    def __init__(
        self, root: Path, signer: Signer, public_url: str, default_ttl_seconds: int
    ) -> None:
        self.root = root.resolve()
        self.signer = signer
        self.public_url = public_url.rstrip("/")
        self.default_ttl_seconds = default_ttl_seconds

    @classmethod
    def from_settings(cls, settings: Settings) -> LocalStorage:
        return cls(
            Path(settings.data_dir) / "files",
            Signer(signing_secret(settings)),
            settings.public_url,
            settings.media_url_ttl_seconds,
        )

    def path_of(self, key: str) -> Path:
        if not is_valid_key(key):
            raise ValueError(f"invalid storage key {key!r}")
        path = (self.root / key).resolve()
        if not path.is_relative_to(self.root):
            raise ValueError(f"invalid storage key {key!r}")
        return path

    async def save(self, key: str, chunks: AsyncIterable[bytes], max_bytes: int) -> int:
        path = self.path_of(key)
        await anyio.Path(path.parent).mkdir(parents=True, exist_ok=True)
        partial = anyio.Path(path.with_name(f".{path.name}.{secrets.token_hex(6)}.part"))
        size = 0
        try:
            async with await anyio.open_file(partial, "wb") as f:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > max_bytes:
                        raise PayloadTooLarge(
                            "File too large", details=f"The file may be at most {max_bytes} bytes"
                        )
                    await f.write(chunk)
            await partial.rename(path)
        except BaseException as exc:
            await partial.unlink(missing_ok=True)
            if isinstance(exc, OSError) and exc.errno in _NO_ROOM:
                raise InsufficientStorage(
                    details="The server's storage is full; nothing of the file was kept"
                ) from exc
            raise
        return size

    async def delete(self, key: str) -> bool:
        path = anyio.Path(self.path_of(key))
        if not await path.exists():
            return False
        await path.unlink(missing_ok=True)
        return True

    async def delete_under(self, prefix: str) -> int:
        folder = self.path_of(prefix.rstrip("/"))
        if not prefix.endswith("/") or not await anyio.Path(folder).is_dir():
            return 0
        return await anyio.to_thread.run_sync(_remove_tree, folder)

    async def exists(self, key: str) -> bool:
        return await anyio.Path(self.path_of(key)).is_file()

    async def read(self, key: str) -> AsyncIterator[bytes]:
        async with await anyio.open_file(self.path_of(key), "rb") as f:
            while chunk := await f.read(_CHUNK):
                yield chunk

    def url(self, key: str, ttl_seconds: int | None = None) -> str:
        ttl = self.default_ttl_seconds if ttl_seconds is None else ttl_seconds
        expires = int(self.signer.clock()) + ttl
        query = urlencode({"expires": expires, "signature": self.signer.sign(key, expires)})
        return f"{self.public_url}/media/{quote(key)}?{query}"

    def verify_link(self, key: str, expires: int, signature: str) -> bool:
        return self.signer.verify(key, expires, signature)


def _remove_tree(folder: Path) -> int:
    """Deletes the files under ``folder`` (partial uploads too), then its empty folders."""
    removed = 0
    for path in sorted(folder.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        if path.is_dir():
            path.rmdir()
        else:
            path.unlink(missing_ok=True)
            removed += 1
    folder.rmdir()
    return removed
