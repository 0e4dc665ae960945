"""What every storage backend shares: the ``Storage`` interface, valid keys, and the signer
of expiring links with its key (``SIGNING_KEY`` or ``DATA_DIR/signing.key``)."""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit

from officehub.kit.config import Settings

KEY_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}(/[A-Za-z0-9][A-Za-z0-9._-]{0,127}){0,7}$")


HEADER_MEDIA_FOLDER = "template-header-media"
"""Template header media uploads: ``<folder>/<office>/<conversation>/<random>.<ext>``."""
CONVERSATION_MEDIA_FOLDER = "conversation-media"
"""Files the office sends a client in a conversation (attachments):
``<folder>/<office>/<conversation>/<random>.<ext>``."""
CONVERSATION_FOLDERS = (HEADER_MEDIA_FOLDER, CONVERSATION_MEDIA_FOLDER)
"""The kinds of file stored under a conversation (``<kind>/<office>/<conversation>/…``):
an erasure of its client deletes each folder whole."""


def conversation_folders(office_id: str, conversation_id: str) -> list[str]:
    """The storage folders (keys' prefixes, ending with ``/``) of one conversation's files."""
    return [f"{kind}/{office_id}/{conversation_id}/" for kind in CONVERSATION_FOLDERS]


def is_valid_key(key: str) -> bool:
    """Relative, slash-separated names of letters, digits, ``.``, ``_``, ``-``; no ``..``."""
    return bool(KEY_RE.match(key)) and ".." not in key


def own_media_key(media_url: str | None, settings: Settings) -> str | None:
    """The storage key behind a link this service made (``{public_url}/media/{key}``), else
    None: a file elsewhere is named, never fetched (no request to an address a message
    names)."""
    if not media_url:
        return None
    link = urlsplit(media_url)
    ours = urlsplit(settings.public_url)
    if (link.scheme, link.netloc) != (ours.scheme, ours.netloc):
        return None
    prefix = ours.path.rstrip("/") + "/media/"
    if not link.path.startswith(prefix):
        return None
    key = unquote(link.path[len(prefix) :])
    return key if is_valid_key(key) else None


class Storage(Protocol):
    async def save(self, key: str, chunks: AsyncIterable[bytes], max_bytes: int) -> int:
        """Stores the stream under ``key`` and answers its size.

        More than ``max_bytes`` raises ``PayloadTooLarge`` and keeps nothing.
        """
        ...

    async def delete(self, key: str) -> bool:
        """Removes the file; false when there was none."""
        ...

    async def delete_under(self, prefix: str) -> int:
        """Removes every file whose key starts with ``prefix`` (a folder: ends with ``/``);
        answers how many."""
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
