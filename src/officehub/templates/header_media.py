"""Template header media: a file for the header of a template send, type read from its bytes.

``puremagic`` names the type from the first bytes; plain text (which has no magic number)
is recognised as UTF-8 without control characters. Each kind has the official channel's
own limit, enforced while the upload streams to storage (413 as soon as it is passed,
nothing kept). The key is random; the client's file name is kept only as ``fileName``.
"""

from __future__ import annotations

import secrets
import unicodedata
from dataclasses import dataclass
from pathlib import PurePosixPath, PureWindowsPath

import puremagic

from officehub.kit.errors import UnsupportedMediaType
from officehub.kit.multipart_upload import UploadedFile
from officehub.kit.storage import Storage
from officehub.kit.storage.base import HEADER_MEDIA_FOLDER

MB = 1024 * 1024
HEAD_BYTES = 8192
PREFIX = HEADER_MEDIA_FOLDER


@dataclass(frozen=True)
class Kind:
    name: str
    extension: str
    max_bytes: int


IMAGE, VIDEO, DOCUMENT = 5 * MB, 16 * MB, 100 * MB
KINDS: dict[str, Kind] = {
    "image/jpeg": Kind("image", "jpg", IMAGE),
    "image/png": Kind("image", "png", IMAGE),
    "video/mp4": Kind("video", "mp4", VIDEO),
    "video/3gpp": Kind("video", "3gp", VIDEO),
    "application/pdf": Kind("document", "pdf", DOCUMENT),
    "application/msword": Kind("document", "doc", DOCUMENT),
    "application/vnd.ms-excel": Kind("document", "xls", DOCUMENT),
    "application/vnd.ms-powerpoint": Kind("document", "ppt", DOCUMENT),
    "text/plain": Kind("document", "txt", DOCUMENT),
}
_OOXML = {b"word/": "docx", b"xl/": "xlsx", b"ppt/": "pptx"}
_TEXT_CONTROLS = {"\t", "\n", "\r", "\f"}


@dataclass(frozen=True)
class Stored:
    storage_path: str
    url: str
    file_name: str


def _is_text(head: bytes) -> bool:
    if not head:
        return False
    for cut in range(4):  # a multi-byte character may be split at the end of the head
        try:
            text = head[: len(head) - cut].decode("utf-8")
            break
        except UnicodeDecodeError:
            continue
    else:
        return False
    return all(
        c in _TEXT_CONTROLS or unicodedata.category(c) not in ("Cc", "Cs", "Co") for c in text
    )


def sniff(head: bytes) -> Kind | None:
    """The kind of file whose first bytes are ``head``, when the channel accepts it."""
    try:
        matches = puremagic.magic_string(head)
    except (puremagic.PureError, ValueError):
        matches = []
    for match in matches:
        if match.extension in (".docx", ".xlsx", ".pptx", ".xlsb") and head.startswith(b"PK"):
            if b"[Content_Types].xml" not in head:
                return None  # a plain zip archive
            for marker, extension in _OOXML.items():
                if marker in head:
                    return Kind("document", extension, DOCUMENT)
            return None
        if match.extension in (".3gp", ".3g2", ".3ga"):
            return KINDS["video/3gpp"]
        kind = KINDS.get(match.mime_type)
        if kind is not None:
            return kind
    if not matches and _is_text(head):
        return KINDS["text/plain"]
    return None


def clean_file_name(raw: str) -> str:
    """The last path segment, without control characters, at most 255 characters."""
    name = PureWindowsPath(PurePosixPath(raw).name).name
    name = "".join(c for c in name if unicodedata.category(c)[0] != "C").strip()
    return name[:255] or "file"


async def store(
    storage: Storage, office_id: str, conversation_id: str, upload: UploadedFile
) -> Stored:
    kind = sniff(await upload.peek(HEAD_BYTES))
    if kind is None:
        raise UnsupportedMediaType(
            "Unsupported file type",
            details=(
                "Send a JPEG or PNG image (at most 5 MB), an MP4 or 3GPP video (16 MB), or a "
                "PDF, Office or plain-text document (100 MB); the type is read from the bytes"
            ),
        )
    key = f"{PREFIX}/{office_id}/{conversation_id}/{secrets.token_hex(16)}.{kind.extension}"
    await storage.save(key, upload.chunks, kind.max_bytes)
    return Stored(key, storage.url(key), clean_file_name(upload.filename))
