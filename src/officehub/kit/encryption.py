"""Secrets at rest: sealed with AES-GCM under a key that lives outside the database.

The key is ``OFFICEHUB_SECRETS_KEY`` (32 bytes, URL-safe base64), else a key generated once
in ``DATA_DIR/secrets.key``. A sealed value is ``enc:v1:<key id>:<nonce+ciphertext,
base64>``: the key id (the first 8 hex digits of the key's SHA-256) says which key sealed
it, so ``officehub secrets rotate`` can tell values already under the new key, and a value
sealed under a key this process does not hold fails loudly instead of decrypting to junk.
A backup of the database without the key cannot read the secrets.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from officehub.kit.config import Settings

PREFIX = "enc:v1:"
KEY_FILE = "secrets.key"
_NONCE = 12


class SealedSecretError(RuntimeError):
    """A sealed value that this key cannot open (another key, or changed bytes)."""


@dataclass(frozen=True)
class SecretsKey:
    key: bytes

    @property
    def ident(self) -> str:
        return hashlib.sha256(self.key).hexdigest()[:8]

    def seal(self, plaintext: str, *, purpose: str) -> str:
        """``plaintext`` encrypted; ``purpose`` (the column it goes to) is authenticated
        with it, so a value copied into another column does not open there."""
        nonce = os.urandom(_NONCE)
        sealed = AESGCM(self.key).encrypt(nonce, plaintext.encode(), purpose.encode())
        return f"{PREFIX}{self.ident}:{base64.urlsafe_b64encode(nonce + sealed).decode()}"

    def open(self, value: str, *, purpose: str) -> str:
        if not is_sealed(value):
            raise SealedSecretError("the value is not sealed")
        ident, _, body = value[len(PREFIX) :].partition(":")
        if ident != self.ident:
            raise SealedSecretError(f"sealed under key {ident}, not this key ({self.ident})")
        try:
            raw = base64.urlsafe_b64decode(body)
            opened = AESGCM(self.key).decrypt(raw[:_NONCE], raw[_NONCE:], purpose.encode())
        except (InvalidTag, binascii.Error, ValueError) as exc:
            raise SealedSecretError("the sealed value was changed or is not whole") from exc
        return opened.decode()


def is_sealed(value: str | None) -> bool:
    return value is not None and value.startswith(PREFIX)


def parse_key(text: str) -> SecretsKey:
    try:
        key = base64.urlsafe_b64decode(text.strip())
    except (binascii.Error, ValueError) as exc:
        raise ValueError("the secrets key is not URL-safe base64") from exc
    if len(key) != 32:
        raise ValueError("the secrets key must be 32 bytes (AES-256)")
    return SecretsKey(key)


def new_key_text() -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()


def key_path(settings: Settings) -> Path:
    return Path(settings.data_dir) / KEY_FILE


def secrets_key(settings: Settings) -> SecretsKey:
    """``SECRETS_KEY``, or the key in ``DATA_DIR/secrets.key`` (made on first use, 0600,
    published whole: a concurrent process never reads half a key; the first one wins)."""
    if settings.secrets_key:
        return parse_key(settings.secrets_key)
    path = key_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        publish_key(path, new_key_text(), replace=False)
    return parse_key(path.read_text())


def publish_key(path: Path, text: str, *, replace: bool) -> None:
    """Writes ``text`` to a temporary file, then links (or, with ``replace``, renames) it
    into place."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        if replace:
            os.replace(temporary, path)
            return
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass  # another process published its key first; it is the one to use
    finally:
        temporary.unlink(missing_ok=True)
