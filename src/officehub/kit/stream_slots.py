"""Open server-sent event streams per holder (a visitor, a key, a client address), in this
process: a stream takes a slot of each of its holders before it starts and gives them back
however it ends. The office's event stream and the web chat visitors' streams share it."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator


class StreamSlots:
    def __init__(self) -> None:
        self.open: Counter[str] = Counter()

    def take(self, keys_and_caps: list[tuple[str, int]]) -> bool:
        if any(self.open[key] >= cap for key, cap in keys_and_caps):
            return False
        for key, _cap in keys_and_caps:
            self.open[key] += 1
        return True

    def give_back(self, keys: list[str]) -> None:
        for key in keys:
            self.open[key] -= 1
            if self.open[key] <= 0:
                del self.open[key]


async def held(slots: StreamSlots, keys: list[str], body: AsyncIterator[str]) -> AsyncIterator[str]:
    """``body``, giving the slots back however it ends (finished, cancelled, disconnected)."""
    try:
        async for part in body:
            yield part
    finally:
        slots.give_back(keys)
