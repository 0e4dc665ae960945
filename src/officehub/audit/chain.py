"""The hash of an audit entry: the SHA-256 of its fields and the hash of the entry before."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from officehub.audit.models import AuditEntry
from officehub.kit.timeutil import isoformat

GENESIS = "0" * 64


def entry_hash(entry: AuditEntry) -> str:
    return hash_of(
        office_id=entry.office_id,
        seq=entry.seq,
        at=entry.at,
        actor_kind=entry.actor_kind,
        actor_id=entry.actor_id,
        actor_address=entry.actor_address,
        action=entry.action,
        record_type=entry.record_type,
        record_id=entry.record_id,
        person_id=entry.person_id,
        previous_hash=entry.previous_hash,
        details=entry.details,
    )


def hash_of(
    *,
    office_id: str,
    seq: int,
    at: datetime,
    actor_kind: str,
    actor_id: str,
    actor_address: str,
    action: str,
    record_type: str,
    record_id: str | None,
    person_id: str | None,
    previous_hash: str,
    details: dict[str, Any] | None = None,
) -> str:
    """``details`` (a system run's counts) is hashed only when present, so the hashes of
    the entries written before it existed still check."""
    fields = [
        office_id,
        seq,
        isoformat(at),
        actor_kind,
        actor_id,
        actor_address,
        action,
        record_type,
        record_id,
        person_id,
        previous_hash,
    ]
    if details is not None:
        fields.append(details)
    return hashlib.sha256(
        json.dumps(fields, separators=(",", ":"), sort_keys=True).encode()
    ).hexdigest()
