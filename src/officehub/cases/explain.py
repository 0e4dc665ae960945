"""Court movements a client understands: the CNJ's TPU movement codes explained.

``tpu_movements.json`` (package data) holds, per movement code of the CNJ's unified
procedural tables (TPU), its name in the table, a plain-Portuguese explanation for a
layperson, a category and whether it is worth telling the client. An entry may carry
``withComplements`` (the explanation when DataJud sent ``complementosTabelados``: their
names fill ``{complementos}``) and ``byComplement`` (a complement that changes what the
movement means, e.g. a document issued that is an *alvará*, a hearing *designada* or
*cancelada*: its own category and text).

Every entry says where its code was checked (``sources``); an entry with none is not
confirmed and is applied only when DataJud names the movement exactly as the entry does
(accents and case aside), so a wrong code can never put a wrong explanation on a
movement.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Literal, cast

Category = Literal["hearing", "decision", "deadline", "filing", "archive", "internal"]
CATEGORIES: tuple[Category, ...] = (
    "hearing",
    "decision",
    "deadline",
    "filing",
    "archive",
    "internal",
)
PLACEHOLDER = "{complementos}"


@dataclass(frozen=True)
class Explanation:
    category: Category
    text: str
    tell: bool
    """Worth telling the client (internal moves are not)."""


@dataclass(frozen=True)
class Entry:
    code: int
    name: str
    category: Category
    tell: bool
    explanation: str
    with_complements: str | None
    by_complement: dict[str, dict[str, Any]]
    confirmed: bool
    sources: tuple[str, ...]


def normalized(text: str) -> str:
    """Lower case, no accents, words joined by ``-``: how names are compared."""
    plain = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", plain.lower()).strip("-")


def raw_table() -> dict[str, Any]:
    text = resources.files("officehub.cases").joinpath("tpu_movements.json").read_text("utf-8")
    return cast(dict[str, Any], json.loads(text))


@cache
def table() -> dict[int, Entry]:
    found: dict[int, Entry] = {}
    for item in raw_table()["movements"]:
        found[int(item["code"])] = Entry(
            code=int(item["code"]),
            name=item["name"],
            category=item["category"],
            tell=bool(item["tell"]),
            explanation=item["explanation"],
            with_complements=item.get("withComplements"),
            by_complement={normalized(k): v for k, v in (item.get("byComplement") or {}).items()},
            confirmed=bool(item["confirmed"]),
            sources=tuple(item.get("sources") or ()),
        )
    return found


def movement_name(description: str) -> str:
    """DataJud's name of the movement, from the stored description (``name - complements``)."""
    return description.split(" - ", 1)[0]


def explain(
    code: int | None, description: str, complements: list[str] | None
) -> Explanation | None:
    """The movement explained, or None when its code is not in the table (or is an
    unconfirmed entry whose name DataJud does not give the movement)."""
    if code is None:
        return None
    entry = table().get(code)
    if entry is None:
        return None
    if not entry.confirmed and normalized(movement_name(description)) != normalized(entry.name):
        return None
    names = [c for c in complements or [] if c.strip()]
    joined = ", ".join(names)
    for name in names:
        special = entry.by_complement.get(normalized(name))
        if special is not None:
            category = cast(Category, special.get("category", entry.category))
            tell = bool(special.get("tell", entry.tell if category == entry.category else True))
            text = str(special["explanation"]).replace(PLACEHOLDER, joined)
            return Explanation(category, text, tell and category != "internal")
    if names and entry.with_complements:
        return Explanation(
            entry.category, entry.with_complements.replace(PLACEHOLDER, joined), entry.tell
        )
    return Explanation(entry.category, entry.explanation, entry.tell)
