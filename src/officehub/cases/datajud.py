"""A client of the CNJ's public DataJud API: one Elasticsearch index per court.

``POST {DATAJUD_URL}/api_publica_{alias}/_search`` with ``Authorization: APIKey <key>`` and
``{"query": {"match": {"numeroProcesso": "<20 digits>"}}}``; every hit's
``_source.movimentos[]`` (``codigo``, ``nome``, ``dataHora``, ``complementosTabelados``) is
read. The base URL is operator configuration (like the WhatsApp platform's), so it is
called with a plain client; the answer is read up to ``MAX_BODY`` bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import orjson

from officehub.kit.config import Settings
from officehub.kit.outside import Refused, read_answer

MAX_BODY = 16 * 1024 * 1024
MAX_MOVEMENTS = 5000
"""Movements read from one answer: far more than any real case holds."""
MAX_DESCRIPTION = 4000
MAX_COMPLEMENTS = 10
MAX_COMPLEMENT = 200


@dataclass(frozen=True)
class Movement:
    code: int
    description: str
    occurred_at: datetime
    complements: tuple[str, ...] = ()
    """The names of its ``complementosTabelados`` (what fills its explanation)."""


def search_url(settings: Settings, alias: str) -> str:
    return f"{settings.datajud_url.rstrip('/')}/api_publica_{alias}/_search"


async def search(
    client: httpx.AsyncClient, settings: Settings, alias: str, number: str
) -> list[Movement] | None:
    """The case's movements (every hit's), or None when DataJud has no such case."""
    body = {"query": {"match": {"numeroProcesso": number}}}
    headers = {
        "Authorization": f"APIKey {settings.datajud_api_key}",
        "Content-Type": "application/json",
    }
    raw = await read_answer(
        client,
        "POST",
        search_url(settings, alias),
        MAX_BODY,
        content=orjson.dumps(body),
        headers=headers,
    )
    try:
        answer = orjson.loads(raw)
        hits = answer["hits"]["hits"]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        raise Refused("not an Elasticsearch answer") from exc
    if not isinstance(hits, list) or not hits:
        return None
    found: dict[tuple[int, datetime], Movement] = {}
    for hit in hits:
        source = hit.get("_source") if isinstance(hit, dict) else None
        moves = source.get("movimentos") if isinstance(source, dict) else None
        for raw_move in moves if isinstance(moves, list) else []:
            movement = _movement(raw_move)
            if movement is not None and len(found) < MAX_MOVEMENTS:
                found.setdefault((movement.code, movement.occurred_at), movement)
    return sorted(found.values(), key=lambda m: (m.occurred_at, m.code))


def parse_time(value: Any) -> datetime | None:
    """``dataHora``: ISO 8601 (with or without zone; none means UTC) or ``yyyyMMddHHmmss``."""
    if not isinstance(value, str) or not value:
        return None
    try:
        if value.isdigit() and len(value) == 14:
            parsed = datetime.strptime(value, "%Y%m%d%H%M%S")
        else:
            parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _movement(raw: Any) -> Movement | None:
    if not isinstance(raw, dict):
        return None
    code, name, at = raw.get("codigo"), raw.get("nome"), parse_time(raw.get("dataHora"))
    if isinstance(code, bool) or not isinstance(code, int) or not 0 <= code < 2**31:
        return None
    if at is None:
        return None
    if not isinstance(name, str) or not name.strip():
        name = f"Movimento {code}"
    extras = [
        str(c.get("nome")).strip()
        for c in raw.get("complementosTabelados") or []
        if isinstance(c, dict) and isinstance(c.get("nome"), str) and c.get("nome", "").strip()
    ]
    extras = [_printable(e)[:MAX_COMPLEMENT] for e in extras[:MAX_COMPLEMENTS]]
    text = _printable(name.strip() + (f" - {', '.join(extras)}" if extras else ""))
    return Movement(code, text[:MAX_DESCRIPTION], at, tuple(extras))


def _printable(text: str) -> str:
    return "".join(ch for ch in text if ch.isprintable())
