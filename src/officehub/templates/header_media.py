"""Uploaded media of a conversation, type read from its bytes: a template send's header
media (``template-header-media``), and attachments the office sends a client
(``conversation-media``, which also takes audio).

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
from officehub.kit.storage.base import CONVERSATION_MEDIA_FOLDER, HEADER_MEDIA_FOLDER

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
AUDIO = 16 * MB
AUDIO_KINDS: dict[str, Kind] = {
    "audio/aac": Kind("audio", "aac", AUDIO),
    "audio/amr": Kind("audio", "amr", AUDIO),
    "audio/mpeg": Kind("audio", "mp3", AUDIO),
    "audio/mp4": Kind("audio", "m4a", AUDIO),
    "audio/ogg": Kind("audio", "ogg", AUDIO),
}
"""The official channel's audio types (OGG with the Opus codec only), for attachments."""
_AUDIO_EXTENSIONS = {
    ".aac": "audio/aac",
    ".amr": "audio/amr",
    ".mp3": "audio/mpeg",
    ".mpga": "audio/mpeg",
    ".m4a": "audio/mp4",
    ".f4a": "audio/mp4",
}
_OOXML = {b"word/": "docx", b"xl/": "xlsx", b"ppt/": "pptx"}
_TEXT_CONTROLS = {"\t", "\n", "\r", "\f"}


@dataclass(frozen=True)
class Stored:
    storage_path: str
    url: str
    file_name: str
    kind: Kind | None = None


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


def _audio(head: bytes, matches: list[puremagic.PureMagicWithConfidence]) -> Kind | None:
    if head.startswith(b"OggS"):
        return AUDIO_KINDS["audio/ogg"] if b"OpusHead" in head else None
    for match in matches:
        mime = _AUDIO_EXTENSIONS.get(match.extension)
        if mime is not None:
            return AUDIO_KINDS[mime]
    return None


def sniff(head: bytes, *, audio: bool = False) -> Kind | None:
    """The kind of file whose first bytes are ``head``, when the channel accepts it
    (``audio``: audio too, which a template header cannot carry)."""
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
    if audio and (kind := _audio(head, matches)) is not None:
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
    storage: Storage,
    office_id: str,
    conversation_id: str,
    upload: UploadedFile,
    *,
    attachment: bool = False,
) -> Stored:
    """Streams the upload to storage under a random key of the conversation's folder: the
    header media folder, or (``attachment``) the conversation's media, which takes audio."""
    kind = sniff(await upload.peek(HEAD_BYTES), audio=attachment)
    if kind is None:
        audio = "an AAC, AMR, MP3, M4A or OGG (Opus) audio (16 MB), " if attachment else ""
        raise UnsupportedMediaType(
            "Unsupported file type",
            details=(
                "Send a JPEG or PNG image (at most 5 MB), an MP4 or 3GPP video (16 MB), "
                f"{audio}or a PDF, Office or plain-text document (100 MB); the type is read "
                "from the bytes"
            ),
        )
    folder = CONVERSATION_MEDIA_FOLDER if attachment else PREFIX
    key = f"{folder}/{office_id}/{conversation_id}/{secrets.token_hex(16)}.{kind.extension}"
    await storage.save(key, upload.chunks, kind.max_bytes)
    return Stored(key, storage.url(key), clean_file_name(upload.filename), kind)


_OOXML_MIME = {
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}
_BY_EXTENSION: dict[str, tuple[str, str]] = {
    **{kind.extension: (kind.name, mime) for mime, kind in {**KINDS, **AUDIO_KINDS}.items()},
    **{extension: ("document", mime) for extension, mime in _OOXML_MIME.items()},
}


def kind_of_key(key: str) -> tuple[str, str] | None:
    """The kind (``image``, ``video``, ``audio``, ``document``) and MIME type of a stored
    upload, from the extension its key was given when its bytes were read."""
    return _BY_EXTENSION.get(key.rsplit(".", 1)[-1].lower()) if "." in key else None
