"""Where uploaded files live, and the signed links that fetch them.

``Storage`` is what the domains use (avatars, template header media). ``LocalStorage``,
the default, writes under ``DATA_DIR/files``; its links point at ``GET /media/{key}`` with
an expiring HMAC signature, so a messaging platform can fetch a file without an API key.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from officehub.kit.config import Settings
from officehub.kit.storage.base import (
    Signer,
    Storage,
    is_valid_key,
    own_media_key,
    signing_secret,
)
from officehub.kit.storage.local import LocalStorage

__all__ = [
    "LocalStorage",
    "Signer",
    "Storage",
    "StorageDep",
    "get_storage",
    "is_valid_key",
    "own_media_key",
    "signing_secret",
    "storage_from_settings",
]


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
