"""Server-made ids: ``c`` + 24 lowercase base-36 characters, ordered by creation time.

Nine characters of milliseconds since the epoch, four of a per-process counter (so ids
made in the same millisecond still sort in creation order), eleven random ones.
"""

from __future__ import annotations

import re
import secrets
import threading
import time

ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz"
ID_PATTERN = r"^[cC][^\s-]{8,}$"
ID_RE = re.compile(ID_PATTERN)

_RANDOM = 36**11
_lock = threading.Lock()
_last_ms = 0
_counter = 0


def _base36(value: int, width: int) -> str:
    chars = []
    for _ in range(width):
        value, rem = divmod(value, 36)
        chars.append(ALPHABET[rem])
    return "".join(reversed(chars))


def new_id() -> str:
    global _last_ms, _counter
    with _lock:
        now = time.time_ns() // 1_000_000
        if now <= _last_ms:
            _counter += 1
            if _counter >= 36**4:
                _last_ms += 1
                _counter = 0
            now = _last_ms
        else:
            _last_ms = now
            _counter = secrets.randbelow(36**3)
        counter = _counter
    # One draw below 36**11 is the same as eleven uniform base-36 characters, at a tenth of
    # the cost (ids are made on every request, for its request id).
    return "c" + _base36(now, 9) + _base36(counter, 4) + _base36(secrets.randbelow(_RANDOM), 11)


def is_valid_id(value: str) -> bool:
    return bool(ID_RE.match(value))
