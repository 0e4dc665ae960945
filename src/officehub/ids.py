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
    random_part = "".join(secrets.choice(ALPHABET) for _ in range(11))
    return "c" + _base36(now, 9) + _base36(counter, 4) + random_part


def is_valid_id(value: str) -> bool:
    return bool(ID_RE.match(value))
