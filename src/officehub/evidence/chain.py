"""The bundle's format: canonical JSON, the hash chain of its entries, and the verifier.

Pure functions of bytes: ``officehub evidence verify`` runs them with no database.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

FORMAT = "officehub-evidence/1"
MANIFEST = "manifest.json"
SIGNATURE = "manifest.sig"
PUBLIC_KEY = "evidence-key.pem"
TRANSCRIPT = "transcript.pdf"
GENESIS = "0" * 64


def canonical(value: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8: the bytes a hash covers."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def entry_hash(entry: Mapping[str, Any]) -> str:
    """The SHA-256 of the entry without its own ``hash`` (``previousHash`` included)."""
    return sha256(canonical({k: v for k, v in entry.items() if k != "hash"}))


def chain(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries, each with ``previousHash`` and ``hash``: each covers the one before."""
    previous = GENESIS
    for entry in entries:
        entry["previousHash"] = previous
        entry["hash"] = previous = entry_hash(entry)
    return entries


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    fingerprint: str = ""
    entries: int = 0

    @property
    def ok(self) -> bool:
        return not self.problems


def _entry_name(entry: Mapping[str, Any], index: int) -> str:
    kind = entry.get("kind", "entry")
    ident = entry.get("file") if kind == "attachment" else entry.get("id")
    return f"entry {index + 1} ({kind} {ident})"


def _check_chain(entries: list[Any], verdict: Verdict) -> None:
    previous = GENESIS
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            verdict.problems.append(f"manifest.json: entry {index + 1} is not an object")
            return
        name = _entry_name(entry, index)
        if entry.get("previousHash") != previous:
            verdict.problems.append(f"{name}: previousHash does not match the entry before")
        if entry.get("hash") != entry_hash(entry):
            verdict.problems.append(f"{name}: its content changed (hash does not match)")
        previous = str(entry.get("hash"))


def _check_files(archive: zipfile.ZipFile, manifest: Mapping[str, Any], verdict: Verdict) -> None:
    listed: dict[str, str] = {}
    for entry in manifest.get("entries", []):
        if isinstance(entry, dict) and entry.get("kind") == "attachment":
            listed[str(entry.get("file"))] = str(entry.get("sha256"))
    files = manifest.get("files", {})
    if isinstance(files, dict):
        listed.update({str(k): str(v) for k, v in files.items()})
    names = set(archive.namelist())
    for name, digest in sorted(listed.items()):
        if name not in names:
            verdict.problems.append(f"{name}: listed in the manifest, missing from the bundle")
        elif sha256(archive.read(name)) != digest:
            verdict.problems.append(f"{name}: its content changed (SHA-256 does not match)")
    known = {MANIFEST, SIGNATURE, PUBLIC_KEY, *listed}
    for name in sorted(names - known):
        verdict.problems.append(f"{name}: in the bundle but not in the manifest")


def _check_signature(
    manifest_bytes: bytes, signature_text: bytes, key: Ed25519PublicKey, verdict: Verdict
) -> None:
    try:
        signature = base64.b64decode(signature_text.strip(), validate=True)
        key.verify(signature, manifest_bytes)
    except (InvalidSignature, binascii.Error, ValueError):
        verdict.problems.append(
            f"{SIGNATURE}: the signature does not match {MANIFEST} under the office's key "
            f"({MANIFEST} or {SIGNATURE} changed)"
        )


def load_public_key(pem: bytes) -> Ed25519PublicKey:
    key = serialization.load_pem_public_key(pem)
    if not isinstance(key, Ed25519PublicKey):
        raise ValueError("not an Ed25519 public key")
    return key


def verify_bundle(data: bytes, trusted_key_pem: bytes | None = None) -> Verdict:
    """Every problem of the bundle: a changed entry (named), file, manifest or signature.

    ``trusted_key_pem``: the office's published key; without it the key in the bundle is
    used, and the caller shows its fingerprint to compare with the published one."""
    verdict = Verdict()
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        verdict.problems.append("the file is not a zip archive")
        return verdict
    with archive:
        names = set(archive.namelist())
        for needed in (MANIFEST, SIGNATURE):
            if needed not in names:
                verdict.problems.append(f"{needed}: missing from the bundle")
        if verdict.problems:
            return verdict
        manifest_bytes = archive.read(MANIFEST)
        try:
            manifest = json.loads(manifest_bytes)
        except ValueError:
            manifest = None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            verdict.problems.append(f"{MANIFEST}: not a manifest of format {FORMAT}")
            return verdict
        entries = manifest.get("entries")
        if not isinstance(entries, list):
            verdict.problems.append(f"{MANIFEST}: has no list of entries")
            return verdict
        verdict.entries = len(entries)
        _check_chain(entries, verdict)
        _check_files(archive, manifest, verdict)
        pem = trusted_key_pem
        if pem is None:
            pem = archive.read(PUBLIC_KEY) if PUBLIC_KEY in names else None
        if pem is None:
            verdict.problems.append(f"{PUBLIC_KEY}: missing, and no key was given")
            return verdict
        try:
            key = load_public_key(pem)
        except ValueError:
            verdict.problems.append(f"{PUBLIC_KEY}: not an Ed25519 public key")
            return verdict
        raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        verdict.fingerprint = sha256(raw)
        if manifest.get("keyFingerprint") != verdict.fingerprint:
            verdict.problems.append(
                f"{MANIFEST}: signed by key {manifest.get('keyFingerprint')}, "
                f"not by the key checked ({verdict.fingerprint})"
            )
        _check_signature(manifest_bytes, archive.read(SIGNATURE), key, verdict)
    return verdict
