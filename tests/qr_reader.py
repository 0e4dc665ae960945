"""Reads back a QR code drawn by the console (``static/qr.js``): a clean square of modules,
level M, versions 1 to 10. Written from the standard's tables, apart from the encoder: it
checks the format bits' BCH code and every block's Reed-Solomon syndromes, then answers
the byte-mode text. A wrong module position, mask, interleaving or error correction fails."""

from __future__ import annotations

# Level M: (data codewords per block, number of such blocks) groups, error correction
# codewords per block (ISO/IEC 18004, table 9).
BLOCKS_M: dict[int, tuple[list[tuple[int, int]], int]] = {
    1: ([(16, 1)], 10),
    2: ([(28, 1)], 16),
    3: ([(44, 1)], 26),
    4: ([(32, 2)], 18),
    5: ([(43, 2)], 24),
    6: ([(27, 4)], 16),
    7: ([(31, 4)], 18),
    8: ([(38, 2), (39, 2)], 22),
    9: ([(36, 3), (37, 2)], 22),
    10: ([(43, 4), (44, 1)], 26),
}
# Alignment pattern centres (table E.1).
ALIGNMENT = {
    1: [], 2: [6, 18], 3: [6, 22], 4: [6, 26], 5: [6, 30], 6: [6, 34],
    7: [6, 22, 38], 8: [6, 24, 42], 9: [6, 26, 46], 10: [6, 28, 50],
}  # fmt: skip

MASKS = {
    0: lambda i, j: (i + j) % 2 == 0,
    1: lambda i, j: i % 2 == 0,
    2: lambda i, j: j % 3 == 0,
    3: lambda i, j: (i + j) % 3 == 0,
    4: lambda i, j: (i // 2 + j // 3) % 2 == 0,
    5: lambda i, j: (i * j) % 2 + (i * j) % 3 == 0,
    6: lambda i, j: ((i * j) % 2 + (i * j) % 3) % 2 == 0,
    7: lambda i, j: ((i + j) % 2 + (i * j) % 3) % 2 == 0,
}

EXP = [0] * 512
LOG = [0] * 256
_value = 1
for _power in range(255):
    EXP[_power] = _value
    LOG[_value] = _power
    _value <<= 1
    if _value & 0x100:
        _value ^= 0x11D
for _power in range(255, 512):
    EXP[_power] = EXP[_power - 255]


def _times(a: int, b: int) -> int:
    return 0 if a == 0 or b == 0 else EXP[LOG[a] + LOG[b]]


def _format_ok(value: int) -> bool:
    """``value`` (15 bits, the 0x5412 mask removed) is a codeword of the (15, 5) BCH code."""
    rest = value
    for shift in range(14, 9, -1):
        if rest >> shift & 1:
            rest ^= 0x537 << (shift - 10)
    return rest == 0


def _reserved(size: int, version: int) -> list[list[bool]]:
    taken = [[False] * size for _ in range(size)]
    for y in range(size):
        for x in range(size):
            corner = (x < 9 and y < 9) or (x >= size - 8 and y < 9) or (x < 9 and y >= size - 8)
            timing = x == 6 or y == 6
            taken[y][x] = corner or timing
    centres = ALIGNMENT[version]
    first, last = (centres[0], centres[-1]) if centres else (0, 0)
    finders = {(first, first), (first, last), (last, first)}
    for cy in centres:
        for cx in centres:
            if (cx, cy) in finders:
                continue
            for y in range(cy - 2, cy + 3):
                for x in range(cx - 2, cx + 3):
                    taken[y][x] = True
    if version >= 7:
        for a in range(size - 11, size - 8):
            for b in range(6):
                taken[b][a] = taken[a][b] = True
    return taken


def read(modules: list[list[bool]]) -> str:
    """The text of a clean, upright QR code of level M (``modules[row][column]``)."""
    size = len(modules)
    version = (size - 17) // 4
    assert size == version * 4 + 17 and version in BLOCKS_M, size
    # Format bits 0..5 are (x=8, y=0..5), 6: (8, 7), 7: (8, 8), 8: (7, 8), 9..14: (14-i, 8).
    first = [modules[i][8] for i in range(6)] + [modules[7][8], modules[8][8], modules[8][7]]
    first += [modules[8][14 - i] for i in range(9, 15)]
    word = sum(int(b) << i for i, b in enumerate(first)) ^ 0x5412
    assert _format_ok(word), "format bits"
    level, mask = word >> 13, word >> 10 & 7
    assert level == 0, "level M"
    taken = _reserved(size, version)
    bits: list[int] = []
    right = size - 1
    while right >= 1:
        if right == 6:
            right = 5
        upward = (right + 1) & 2 == 0
        for step in range(size):
            y = size - 1 - step if upward else step
            for x in (right, right - 1):
                if not taken[y][x]:
                    bits.append(int(modules[y][x] ^ MASKS[mask](y, x)))
        right -= 2
    groups, ecc = BLOCKS_M[version]
    lengths = [length for length, count in groups for _ in range(count)]
    total = sum(lengths) + ecc * len(lengths)
    words = [int("".join(map(str, bits[8 * k : 8 * k + 8])), 2) for k in range(total)]
    blocks: list[list[int]] = [[] for _ in lengths]
    at = 0
    for k in range(max(lengths)):
        for b, length in enumerate(lengths):
            if k < length:
                blocks[b].append(words[at])
                at += 1
    for _ in range(ecc):
        for block in blocks:
            block.append(words[at])
            at += 1
    for block in blocks:
        for power in range(ecc):
            syndrome = 0
            for coefficient in block:
                syndrome = _times(syndrome, EXP[power]) ^ coefficient
            assert syndrome == 0, "Reed-Solomon syndrome"
    data = [w for block, length in zip(blocks, lengths, strict=True) for w in block[:length]]
    stream = "".join(f"{w:08b}" for w in data)
    assert stream[:4] == "0100", "byte mode"
    width = 8 if version <= 9 else 16
    count = int(stream[4 : 4 + width], 2)
    start = 4 + width
    raw = bytes(int(stream[start + 8 * k : start + 8 * k + 8], 2) for k in range(count))
    return raw.decode("utf-8")
