"""A local stand-in for the CNJ's public communications API (DJEN), served by uvicorn on
127.0.0.1.

It answers as DJEN does (``tests/fixtures/djen/comunicacao.json`` is one answer in its
documented shape): ``GET /api/v1/comunicacao`` with ``numeroOab``, ``ufOab``,
``dataDisponibilizacaoInicio``/``Fim``, ``pagina`` and ``itensPorPagina`` (no key) answers
``{"status", "message", "count", "items"}`` with the items whose ``destinatarioadvogados``
name that registration, made available in the range, a page at a time; no filter is a 422
as DJEN's. ``raw`` items (malformed ones) are answered as given for their registration.
``script`` holds replies to give first (a 429, a 503), first in first out. Every request's
query is logged in ``requests``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from officehub.kit.config import Settings
from tests.server import serving

FIXTURE = Path(__file__).parent / "fixtures" / "djen" / "comunicacao.json"


def documented_answer() -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(FIXTURE.read_text("utf-8"))
    return answer


@dataclass
class Reply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)


def communication(
    ident: int,
    day: str,
    *,
    oab: tuple[str, str] = ("123456", "SP"),
    kind: str = "Intimação",
    number: str | None = "10091315220248260224",
    hash_: str | None = None,
    text: str = "Intimem-se.",
) -> dict[str, Any]:
    """An item shaped as the documented one (the fixture's), with these values."""
    item: dict[str, Any] = json.loads(json.dumps(documented_answer()["items"][0]))
    item.update(
        id=ident,
        data_disponibilizacao=day,
        datadisponibilizacao="/".join(reversed(day.split("-"))),
        tipoComunicacao=kind,
        numero_processo=number,
        hash=hash_ if hash_ is not None else f"hash{ident}",
        texto=text,
    )
    lawyer = item["destinatarioadvogados"][0]
    lawyer["comunicacao_id"] = ident
    lawyer["advogado"].update(numero_oab=oab[0], uf_oab=oab[1])
    return item


@dataclass
class Djen:
    port: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)
    raw: dict[tuple[str, str], list[Any]] = field(default_factory=dict)
    script: list[Reply] = field(default_factory=list)
    requests: list[dict[str, str]] = field(default_factory=list)
    every: int = 0
    """Items answered for every registration not named by ``items`` (benchmarks)."""
    every_day: str = "2026-03-27"
    """The day those are made available."""
    delay: float = 0.0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def settings(self, base: Settings, **changes: Any) -> Settings:
        return base.model_copy(
            update={"djen_url": self.url, "djen_requests_per_second": 1000.0, **changes}
        )

    def add(self, *items: dict[str, Any]) -> None:
        self.items.extend(items)

    def _named(self, number: str, uf: str) -> list[Any]:
        found = [
            item
            for item in self.items
            if any(
                a["advogado"]["numero_oab"] == number and a["advogado"]["uf_oab"] == uf
                for a in item["destinatarioadvogados"]
            )
        ]
        if not found and self.every:
            base = int(number) * 1000
            found = [
                communication(base + i, self.every_day, oab=(number, uf)) for i in range(self.every)
            ]
        return found

    async def _search(self, request: Request) -> Response:
        q = dict(request.query_params)
        self.requests.append(q)
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.script:
            reply = self.script.pop(0)
            return JSONResponse({"message": "scripted"}, reply.status, headers=reply.headers)
        number, uf = q.get("numeroOab"), q.get("ufOab")
        if not number or not uf:
            return JSONResponse({"status": "error", "message": "informe um filtro"}, 422)
        start, end = q.get("dataDisponibilizacaoInicio", ""), q.get("dataDisponibilizacaoFim", "~")
        found = [
            item
            for item in self._named(number, uf)
            if start <= item["data_disponibilizacao"] <= end
        ]
        found += self.raw.get((number, uf), [])
        page, size = int(q.get("pagina", "1")), int(q.get("itensPorPagina", "100"))
        chunk = found[(page - 1) * size : page * size]
        return JSONResponse(
            {"status": "success", "message": "Sucesso", "count": len(found), "items": chunk}
        )

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/api/v1/comunicacao", self._search, methods=["GET"])])


@asynccontextmanager
async def running_djen() -> AsyncIterator[Djen]:
    djen = Djen()
    async with serving(djen.app()) as port:
        djen.port = port
        yield djen
