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
WHITESPACE_CLASS = r"\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""Unicode's White_Space characters, spelled out: ``\\s`` differs between regex engines
(Python's adds U+001C-U+001F, ECMAScript's drops U+0085 and adds U+FEFF), and the
document's readers (schemathesis, JavaScript clients) must read the pattern as we do."""
ID_PATTERN = rf"^[cC][^{WHITESPACE_CLASS}\u0000-]{{8,}}$"
"""The spec's ``^[cC][^\\s-]{8,}$`` with ``\\s`` as Unicode's White_Space, the same in
every engine; NUL is refused in every path, query and body anyway (PostgreSQL cannot
store it), and the pattern says so."""
ID_RE = re.compile(ID_PATTERN)
ID_MISMATCH = (
    "must match the id pattern ^[cC][^\\s-]{8,}$ (c or C, then 8+ characters, no space nor -)"
)

_RANDOM = 36**11
_lock = threading.Lock()
_last_ms = 0
_counter = 0


_PAIRS = tuple(a + b for a in ALPHABET for b in ALPHABET)
"""Every two base-36 digits, by their value (0 to 36**2 - 1)."""
_TIME_SHIFT = 36**15
_COUNTER_SHIFT = 36**11


def _base36(value: int, width: int) -> str:
    """The ``width`` low base-36 digits of ``value``, two a step."""
    pairs = []
    for _ in range(width // 2):
        value, rem = divmod(value, 1296)
        pairs.append(_PAIRS[rem])
    if width % 2:
        pairs.append(ALPHABET[value % 36])
    return "".join(reversed(pairs))


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
    # The three fields (9, 4 and 11 digits) written as one 24-digit number: the same digits.
    value = now * _TIME_SHIFT + counter * _COUNTER_SHIFT + secrets.randbelow(_RANDOM)
    return "c" + _base36(value, 24)


def is_valid_id(value: str) -> bool:
    return bool(ID_RE.match(value))
