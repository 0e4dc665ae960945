"""Backups of an embedded (SQLite) installation: the database and the files of DATA_DIR.

The database is copied with SQLite's online backup API in one step: a single read
transaction, so the copy is one consistent moment even while the server writes (WAL
readers never block writers). The files (``DATA_DIR/files``, ``signing.key``) are copied
after it.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from officehub import __version__
from officehub.config import DATABASE_FILE
from officehub.timeutil import isoformat, utcnow

MANIFEST = "backup.json"
SIGNING_KEY = "signing.key"
FILES = "files"

Progress = Callable[[str, int, int], None]  # (step, done, total)


class BackupError(Exception):
    """A backup or restore that cannot be made; the message says why and what to do."""


@dataclass(frozen=True)
class BackupSummary:
    path: Path
    database_bytes: int
    files: int


def _is_empty_dir(path: Path) -> bool:
    return not path.exists() or (path.is_dir() and not any(path.iterdir()))


def _stored_files(root: Path) -> list[Path]:
    """Files under ``root``, without uploads still being written (``.name.part``)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.rglob("*") if not p.name.startswith("."))


def _copy_files(source: Path, target: Path, progress: Progress | None) -> int:
    paths = _stored_files(source)
    copied = 0
    for done, path in enumerate(paths, 1):
        dest = target / path.relative_to(source)
        try:
            if path.is_dir():
                dest.mkdir(parents=True, exist_ok=True)
            else:
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, dest)
                copied += 1
        except FileNotFoundError:
            pass  # deleted while we copied: it is gone from the service too
        if progress:
            progress("files", done, len(paths))
    return copied


def _integrity(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def backup(
    database: Path, data_dir: Path, target: Path, progress: Progress | None = None
) -> BackupSummary:
    if not database.is_file():
        raise BackupError(f"no database at {database}; check OFFICEHUB_DATA_DIR")
    if not _is_empty_dir(target):
        raise BackupError(f"{target} is not empty; give a new folder")
    target.mkdir(parents=True, exist_ok=True)
    copy = target / DATABASE_FILE
    source = sqlite3.connect(database, timeout=30)
    try:
        with sqlite3.connect(copy) as dest:
            if progress:
                progress("database", 0, 1)
            source.backup(dest)  # pages=-1: one step, one consistent snapshot
            if progress:
                progress("database", 1, 1)
        dest.close()
    finally:
        source.close()
    if (check := _integrity(copy)) != "ok":
        raise BackupError(f"the copied database failed its integrity check: {check}")
    files = _copy_files(data_dir / FILES, target / FILES, progress)
    if (data_dir / SIGNING_KEY).is_file():
        shutil.copy2(data_dir / SIGNING_KEY, target / SIGNING_KEY)
    manifest = {
        "officehubVersion": __version__,
        "createdAt": isoformat(utcnow()),
        "database": DATABASE_FILE,
        "files": files,
    }
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return BackupSummary(target, copy.stat().st_size, files)


def restore(
    source: Path, database: Path, data_dir: Path, progress: Progress | None = None
) -> BackupSummary:
    if not (source / MANIFEST).is_file() or not (source / DATABASE_FILE).is_file():
        raise BackupError(f"{source} is not an officehub backup (no {MANIFEST})")
    if database.exists():
        raise BackupError(f"a database already exists at {database}; restore into an empty folder")
    if not _is_empty_dir(data_dir):
        raise BackupError(f"{data_dir} is not empty; restore into an empty OFFICEHUB_DATA_DIR")
    database.parent.mkdir(parents=True, exist_ok=True)
    data_dir.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(source / DATABASE_FILE) as src, sqlite3.connect(database) as dest:
        src.backup(dest)
    src.close()
    dest.close()
    if progress:
        progress("database", 1, 1)
    files = _copy_files(source / FILES, data_dir / FILES, progress)
    if (source / SIGNING_KEY).is_file():
        shutil.copy2(source / SIGNING_KEY, data_dir / SIGNING_KEY)
    return BackupSummary(data_dir, database.stat().st_size, files)
