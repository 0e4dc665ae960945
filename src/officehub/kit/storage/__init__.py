"""Where uploaded files live, and the signed links that fetch them.

``Storage`` is what the domains use (avatars, template header media). ``LocalStorage``,
the default, writes under ``DATA_DIR/files``; its links point at ``GET /media/{key}`` with
an expiring HMAC signature, so a messaging platform can fetch a file without an API key.
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable
from pathlib import Path
from typing import Annotated, Protocol
from urllib.parse import quote, urlencode

import anyio
from fastapi import Depends, Request

from officehub.kit.config import Settings
from officehub.kit.errors import InsufficientStorage, PayloadTooLarge

KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,7}$")
_CHUNK = 64 * 1024


def is_valid_key(key: str) -> bool:
    """Relative, slash-separated names of letters, digits, ``.``, ``_``, ``-``; no ``..``."""
    return bool(KEY_RE.match(key)) and ".." not in key


class Storage(Protocol):
    async def save(self, key: str, chunks: AsyncIterable[bytes], max_bytes: int) -> int:
        """Stores the stream under ``key`` and answers its size.

        More than ``max_bytes`` raises ``PayloadTooLarge`` and keeps nothing.
        """
        ...

    async def delete(self, key: str) -> bool:
        """Removes the file; false when there was none."""
        ...

    async def exists(self, key: str) -> bool: ...

    def read(self, key: str) -> AsyncIterator[bytes]: ...

    def url(self, key: str, ttl_seconds: int | None = None) -> str:
        """A link that fetches the file until it expires."""
        ...

    def verify_link(self, key: str, expires: int, signature: str) -> bool:
        """Whether a link made by ``url`` is genuine and not expired."""
        ...


class Signer:
    """HMAC-SHA256 over ``"<key>:<expires>"``; ``expires`` is a unix time in seconds."""

    def __init__(self, secret: bytes, clock: Callable[[], float] = time.time) -> None:
        self._secret = secret
        self.clock = clock

    def sign(self, key: str, expires: int) -> str:
        return hmac.new(self._secret, f"{key}:{expires}".encode(), hashlib.sha256).hexdigest()

    def verify(self, key: str, expires: int, signature: str) -> bool:
        if expires < self.clock():
            return False
        return hmac.compare_digest(self.sign(key, expires).encode(), signature.encode())


def signing_secret(settings: Settings) -> bytes:
    """``SIGNING_KEY``, or a key generated once and kept in ``DATA_DIR/signing.key``."""
    if settings.signing_key:
        return settings.signing_key.encode()
    path = Path(settings.data_dir) / "signing.key"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        _publish_new_key(path)
    return path.read_bytes().strip()


def _publish_new_key(path: Path) -> None:
    """Writes a key to a temporary file, then links it into place if none is there yet.

    The name appears only with its whole content (a concurrent process never reads an
    empty key), and the first process to link wins: every process then reads its key.
    """
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_urlsafe(32))
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process published its key first; it is the one to use
    finally:
        temporary.unlink(missing_ok=True)


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


def storage_from_settings(settings: Settings) -> Storage:
    """The local folder, or the S3-compatible bucket when ``STORAGE_BACKEND`` is ``s3``."""
    if settings.storage_backend == "s3":
        from officehub.kit.storage.s3 import S3Storage  # only needed, and imported, for S3

        return S3Storage.from_settings(settings)
    return LocalStorage.from_settings(settings)


async def get_storage(request: Request) -> Storage:
    """The application's storage, made on first use from its settings."""
    storage: Storage | None = getattr(request.app.state, "storage", None)
    if storage is None:
        storage = storage_from_settings(request.app.state.settings)
        request.app.state.storage = storage
    return storage


StorageDep = Annotated[Storage, Depends(get_storage)]
