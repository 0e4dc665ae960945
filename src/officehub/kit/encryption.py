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
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from sqlalchemy import JSON, Column, Dialect, MetaData, Table, Text, and_, bindparam, select
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.types import TypeDecorator, TypeEngine

from officehub.kit.config import Settings, get_settings
from officehub.kit.errors import ServiceError

PREFIX = "enc:v1:"
KEY_FILE = "secrets.key"
_NONCE = 12


class SealedSecretError(ServiceError):
    """A sealed value that this key cannot open (another key, or changed bytes): the
    deployment lost its key (a database restored without it), not a request's fault."""

    status_code = 503
    code = "SECRETS_UNREADABLE"
    message = "A stored secret cannot be opened with this service's key"


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


# -- the process's keys and the sealed column types ----------------------------------------

NEXT_KEY_FILE = "secrets.key.next"


class Keyring:
    """The keys this process opens values with (by key id), and the one it seals with."""

    def __init__(self) -> None:
        self.keys: dict[str, SecretsKey] = {}
        self.current: SecretsKey | None = None

    def use(self, current: SecretsKey, *others: SecretsKey) -> None:
        for key in (*others, current):
            self.keys[key.ident] = key
        self.current = current

    def sealing_key(self) -> SecretsKey:
        if self.current is None:
            load_secrets_keys(get_settings())
        assert self.current is not None  # noqa: S101 - load_secrets_keys sets it
        return self.current

    def open(self, value: str, *, purpose: str) -> str:
        if not self.keys:
            load_secrets_keys(get_settings())
        ident = value[len(PREFIX) :].partition(":")[0]
        key = self.keys.get(ident)
        if key is None:
            raise SealedSecretError(
                f"a secret is sealed under key {ident}, which this process does not hold "
                "(OFFICEHUB_SECRETS_KEY or DATA_DIR/secrets.key of the database's server)"
            )
        return key.open(value, purpose=purpose)


keyring = Keyring()


def load_secrets_keys(settings: Settings) -> SecretsKey:
    """Makes the process seal with the settings' key; a rotation's next key (left by an
    interrupted ``officehub secrets rotate``) opens values too."""
    key = secrets_key(settings)
    others = []
    next_path = Path(settings.data_dir) / NEXT_KEY_FILE
    if not settings.secrets_key and next_path.exists():
        others.append(parse_key(next_path.read_text()))
    keyring.use(key, *others)
    return key


class SealedText(TypeDecorator[str]):
    """A text column stored sealed (``purpose``: the column's name, authenticated with it);
    read back in clear. A value already sealed is stored as it is."""

    impl = Text
    cache_ok = True

    def __init__(self, purpose: str) -> None:
        super().__init__()
        self.purpose = purpose

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None or is_sealed(value):
            return value
        return keyring.sealing_key().seal(value, purpose=self.purpose)

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None or not is_sealed(value):
            return value
        return keyring.open(value, purpose=self.purpose)


def carries_credentials(url: str) -> bool:
    """A URL with a user (``user:pass@``) or a query (``?token=``) may carry a credential."""
    parts = urlsplit(url)
    return bool(parts.query) or "@" in parts.netloc


class SealedURL(SealedText):
    """A URL column stored sealed when it may carry a credential (``carries_credentials``),
    in clear otherwise: a query comparing URLs (a delivery claim leaving a full endpoint's
    rows) still reads the plain ones; a sealed one is told apart once opened."""

    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        if value is None or is_sealed(value) or not carries_credentials(value):
            return value
        return keyring.sealing_key().seal(value, purpose=self.purpose)


class SealedJSON(TypeDecorator[dict[str, Any]]):
    """A JSON object column whose ``fields`` (string values) are stored sealed."""

    impl = JSON
    cache_ok = True

    def __init__(self, purpose: str, fields: tuple[str, ...]) -> None:
        super().__init__()
        self.purpose = purpose
        self.fields = fields

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())

    def process_bind_param(
        self, value: dict[str, Any] | None, dialect: Dialect
    ) -> dict[str, Any] | None:
        if value is None:
            return None
        sealed = dict(value)
        for name in self.fields:
            field = sealed.get(name)
            if isinstance(field, str) and field and not is_sealed(field):
                purpose = f"{self.purpose}.{name}"
                sealed[name] = keyring.sealing_key().seal(field, purpose=purpose)
        return sealed

    def process_result_value(
        self, value: dict[str, Any] | None, dialect: Dialect
    ) -> dict[str, Any] | None:
        if value is None:
            return None
        opened = dict(value)
        for name in self.fields:
            field = opened.get(name)
            if isinstance(field, str) and is_sealed(field):
                opened[name] = keyring.open(field, purpose=f"{self.purpose}.{name}")
        return opened


MASK = "********"
"""What a read shows in place of a write-only value (an update sending it back keeps the
stored value: ``restore_masked``)."""

SECRET_KEYS = ("secret", "url", "webhookUrl")
"""Keys of a stored document whose string value is a secret (a URL may carry credentials)."""
HEADER_KEYS = ("headers", "webhookHeaders")
"""Keys whose value is a set of HTTP headers: ``{name: value}`` or ``[{key, value}]``; the
values are secrets, the names are not."""


def map_secrets(
    document: Any,
    change: Callable[[str], str],
    *,
    secret_keys: tuple[str, ...] = SECRET_KEYS,
    header_keys: tuple[str, ...] = HEADER_KEYS,
) -> Any:
    """``document`` (JSON) with ``change`` applied to every secret string in it: the value
    of a ``secret_keys`` key and each header value of a ``header_keys`` key, at any depth."""
    if isinstance(document, list):
        return [
            map_secrets(v, change, secret_keys=secret_keys, header_keys=header_keys)
            for v in document
        ]
    if not isinstance(document, dict):
        return document
    changed: dict[str, Any] = {}
    for key, value in document.items():
        if key in secret_keys and isinstance(value, str) and value:
            changed[key] = change(value)
        elif key in header_keys:
            changed[key] = map_header_values(value, change)
        else:
            changed[key] = map_secrets(
                value, change, secret_keys=secret_keys, header_keys=header_keys
            )
    return changed


def map_header_values(headers: Any, change: Callable[[str], str]) -> Any:
    """``{name: value}`` or ``[{key, value}]`` with ``change`` applied to each value."""
    if isinstance(headers, dict):
        return {k: change(v) if isinstance(v, str) and v else v for k, v in headers.items()}
    if isinstance(headers, list):
        return [
            {**h, "value": change(h["value"])}
            if isinstance(h, dict) and isinstance(h.get("value"), str) and h["value"]
            else h
            for h in headers
        ]
    return headers


class SealedDocument(TypeDecorator[Any]):
    """A JSON column whose secrets (``map_secrets``; with ``headers``, the column itself is
    a header set) are stored sealed, the rest as it is; read back in clear."""

    impl = JSON
    cache_ok = True

    def __init__(self, purpose: str, *, headers: bool = False) -> None:
        super().__init__()
        self.purpose = purpose
        self.headers = headers

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        if dialect.name == "postgresql":
            return dialect.type_descriptor(JSONB())
        return dialect.type_descriptor(JSON())

    def _map(self, value: Any, change: Callable[[str], str]) -> Any:
        if self.headers:
            return map_header_values(value, change)
        return map_secrets(value, change)

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        return self._map(value, lambda v: seal_text(v, self.purpose))

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        if value is None:
            return None
        return self._map(value, lambda v: open_text(v, self.purpose))


def seal_text(value: str, purpose: str) -> str:
    """``value`` sealed under the current key (as it is when already sealed)."""
    return value if is_sealed(value) else keyring.sealing_key().seal(value, purpose=purpose)


def open_text(value: str, purpose: str) -> str:
    """``value`` opened (as it is when stored in clear, before the migration sealed it)."""
    return keyring.open(value, purpose=purpose) if is_sealed(value) else value


def mask_secrets(document: Any, *, headers: bool = False) -> Any:
    """``document`` as a read shows it: every secret but URLs replaced by ``MASK``."""
    if headers:
        return map_header_values(document, lambda _: MASK)
    return map_secrets(document, lambda _: MASK, secret_keys=("secret",))


def sealed_columns(metadata: MetaData) -> list[tuple[Table, Column[Any]]]:
    """Every column of ``metadata`` whose type seals (what ``secrets rotate`` rewrites)."""
    return [
        (table, column)
        for table in metadata.sorted_tables
        for column in table.columns
        if isinstance(column.type, SealedText | SealedJSON | SealedDocument)
    ]


async def reseal(session: AsyncSession, metadata: MetaData, batch: int = 500) -> int:
    """Rewrites every sealed value under the keyring's current key; returns how many rows.

    Each row is read through its column's type (opened with whichever key sealed it) and
    written back through it (sealed with the current key), keyed by its primary key."""
    rows = 0
    for table, column in sealed_columns(metadata):
        keys = list(table.primary_key.columns)
        found = await session.execute(select(*keys, column).where(column.is_not(None)))
        values = [
            {**{f"k_{k.name}": row[i] for i, k in enumerate(keys)}, "v": row[len(keys)]}
            for row in found
        ]
        condition = and_(*(k == bindparam(f"k_{k.name}") for k in keys))
        statement = table.update().where(condition).values({column.name: bindparam("v")})
        for start in range(0, len(values), batch):
            chunk = values[start : start + batch]
            await session.execute(statement, chunk)
            rows += len(chunk)
    return rows
