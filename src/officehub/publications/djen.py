"""A client of the CNJ's public communications API (DJEN, "Comunica PJe").

``GET {DJEN_URL}/api/v1/comunicacao?numeroOab=&ufOab=&dataDisponibilizacaoInicio=
&dataDisponibilizacaoFim=&pagina=&itensPorPagina=`` (no key). The answer is
``{"status", "message", "count", "items": [...]}``; each item has ``id``,
``data_disponibilizacao`` (aaaa-mm-dd), ``siglaTribunal``, ``tipoComunicacao``,
``nomeOrgao``, ``texto``, ``numero_processo`` (20 digits), ``link``, ``hash``,
``destinatarios`` and ``destinatarioadvogados``. Pages of ``PAGE_SIZE`` are read until a
short page or ``count`` items. An item without a usable ``id`` or date is skipped and
counted (``Page.skipped``); unknown fields are ignored. The base URL is operator
configuration (like DataJud's); the answer is read up to ``MAX_BODY`` bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx
import orjson

from officehub.kit.config import Settings
from officehub.kit.outside import Refused, read_answer

PATH = "/api/v1/comunicacao"
PAGE_SIZE = 100
MAX_PAGES = 100
"""DJEN answers at most 10,000 items to one query (100 pages of 100)."""
MAX_BODY = 32 * 1024 * 1024
MAX_TEXT = 100_000
MAX_FIELD = 500


@dataclass(frozen=True)
class Communication:
    djen_id: int
    hash: str | None
    made_available: date
    court: str
    kind: str
    organ: str
    text: str
    case_number: str | None
    """The 20 digits, when the item carries them."""
    link: str | None


@dataclass
class Page:
    items: list[Communication]
    count: int | None
    """DJEN's ``count`` (all the query's items), when it gives one."""
    received: int
    """Items on the page, skipped ones included (a short page is the last)."""
    skipped: int = 0


def query(number: str, uf: str, start: date, end: date, page: int) -> dict[str, str]:
    return {
        "numeroOab": number,
        "ufOab": uf,
        "dataDisponibilizacaoInicio": start.isoformat(),
        "dataDisponibilizacaoFim": end.isoformat(),
        "pagina": str(page),
        "itensPorPagina": str(PAGE_SIZE),
    }


async def fetch_page(
    client: httpx.AsyncClient,
    settings: Settings,
    number: str,
    uf: str,
    start: date,
    end: date,
    page: int,
) -> Page:
    """One page of the lawyer's communications made available from ``start`` to ``end``."""
    url = settings.djen_url.rstrip("/") + PATH
    params = query(number, uf, start, end, page)
    raw = await read_answer(
        client, "GET", url, MAX_BODY, params=params, headers={"Accept": "application/json"}
    )
    try:
        answer = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise Refused("not JSON") from exc
    items = answer.get("items") if isinstance(answer, dict) else None
    if not isinstance(items, list):
        raise Refused("not a DJEN answer (no items)")
    count = answer.get("count")
    found = Page([], count if isinstance(count, int) and not isinstance(count, bool) else None, 0)
    found.received = len(items)
    for item in items:
        communication = parse_item(item)
        if communication is None:
            found.skipped += 1
        else:
            found.items.append(communication)
    return found


def _text(value: Any, limit: int = MAX_FIELD, *, lines: bool = False) -> str:
    """Printable characters only (line breaks and tabs too with ``lines``)."""
    if not isinstance(value, str):
        return ""
    keep = "\n\t" if lines else ""
    return "".join(ch for ch in value if ch.isprintable() or ch in keep).strip()[:limit]


def parse_item(raw: Any) -> Communication | None:
    """The communication, or None when the item lacks what identifies it."""
    if not isinstance(raw, dict):
        return None
    ident = raw.get("id")
    if isinstance(ident, bool) or not isinstance(ident, int) or not 0 < ident < 2**63:
        return None
    when = raw.get("data_disponibilizacao")
    try:
        made_available = date.fromisoformat(when) if isinstance(when, str) else None
    except ValueError:
        made_available = None
    if made_available is None:
        return None
    number = raw.get("numero_processo")
    digits = "".join(ch for ch in number if ch.isdigit()) if isinstance(number, str) else ""
    link = _text(raw.get("link"), 2000)
    hash_ = _text(raw.get("hash"), 100)
    return Communication(
        djen_id=ident,
        hash=hash_ or None,
        made_available=made_available,
        court=_text(raw.get("siglaTribunal"), 30),
        kind=_text(raw.get("tipoComunicacao"), 100),
        organ=_text(raw.get("nomeOrgao"), 300),
        text=_text(raw.get("texto"), MAX_TEXT, lines=True),
        case_number=digits if len(digits) == 20 else None,
        link=link if link.startswith(("https://", "http://")) else None,
    )
