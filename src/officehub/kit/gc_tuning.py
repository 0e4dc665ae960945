"""The garbage collector's settings of a long-running process (``officehub serve``, its
``--workers`` processes, ``officehub worker``).

A request allocates thousands of objects, nearly all freed by reference counting; with
CPython's defaults (a young collection every 700 net allocations, everything the process
loaded at startup walked again by each full one) the collector took about 8 % of a busy
API process's CPU (``bench/stack_ratio`` under ``gc.callbacks``): some 40 young collections
a second, and full ones of 150 ms over the 200,000 objects of the app's code, models and
schemas. ``settle_heap`` moves what startup made out of the collector's sight
(``gc.freeze``: it lives as long as the process) and collects the young generation every
10,000 net allocations instead, so a collection no longer interrupts each request. Cycles
are still found and freed, a little later; memory stays bounded.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 10_000


def settle_heap() -> None:
    """Call once, after the app is built and before serving."""
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
