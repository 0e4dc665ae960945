"""Backups of an embedded (SQLite) installation: the database and the files of DATA_DIR.

The copy is one consistent moment while the server keeps running. For as long as it
takes to hard-link the stored files, the backup holds SQLite's write lock (writers wait;
their busy timeout is 10 s): it opens a read transaction, which pins the database as
it is, and hard-links every stored file into a staging folder next to them. Then it
lets writers go on and copies the pinned database (SQLite's online backup API) and the
staged files at leisure.
Stored files are never changed once written and are deleted only after the change that
stops referring to them has committed, so every file the copied database refers to is
among the staged ones.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from officehub import __version__
from officehub.kit.config import DATABASE_FILE
from officehub.kit.timeutil import isoformat, utcnow

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
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])


def _stage_files(source: Path, staging: Path) -> None:
    """Hard links (a copy where linking is impossible) of every stored file."""
    for path in _stored_files(source):
        if path.is_dir():
            continue
        dest = staging / path.relative_to(source)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(path, dest)
        except FileNotFoundError:
            continue
        except OSError:
            shutil.copy2(path, dest)


def backup(
    database: Path, data_dir: Path, target: Path, progress: Progress | None = None
) -> BackupSummary:
    if not database.is_file():
        raise BackupError(f"no database at {database}; check OFFICEHUB_DATA_DIR")
    if not _is_empty_dir(target):
        raise BackupError(f"{target} is not empty; give a new folder")
    target.mkdir(parents=True, exist_ok=True)
    staging = data_dir / f".backup-{secrets.token_hex(6)}"
    copy = target / DATABASE_FILE
    writer = sqlite3.connect(database, timeout=30, isolation_level=None)
    reader = sqlite3.connect(database, timeout=30, isolation_level=None)
    try:
        writer.execute("BEGIN IMMEDIATE")  # no commit can happen until the files are staged
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM sqlite_master").fetchone()  # pins this moment
        try:
            _stage_files(data_dir / FILES, staging)
        finally:
            writer.execute("ROLLBACK")
        if progress:
            progress("database", 0, 1)
        with contextlib.closing(sqlite3.connect(copy)) as dest:
            reader.backup(dest)  # copies the pinned moment, whatever was written since
        reader.execute("COMMIT")
        if progress:
            progress("database", 1, 1)
        if (check := _integrity(copy)) != "ok":
            raise BackupError(f"the copied database failed its integrity check: {check}")
        files = _copy_files(staging, target / FILES, progress)
    finally:
        writer.close()
        reader.close()
        shutil.rmtree(staging, ignore_errors=True)
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
    with (
        contextlib.closing(sqlite3.connect(source / DATABASE_FILE)) as src,
        contextlib.closing(sqlite3.connect(database)) as dest,
    ):
        src.backup(dest)
    if progress:
        progress("database", 1, 1)
    files = _copy_files(source / FILES, data_dir / FILES, progress)
    if (source / SIGNING_KEY).is_file():
        shutil.copy2(source / SIGNING_KEY, data_dir / SIGNING_KEY)
    return BackupSummary(data_dir, database.stat().st_size, files)
