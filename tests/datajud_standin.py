"""A local stand-in for the CNJ's public DataJud API, served by uvicorn on 127.0.0.1.

It answers as DataJud does: ``POST /api_publica_{alias}/_search`` with an Elasticsearch
``match`` on ``numeroProcesso``, ``Authorization: APIKey <key>`` required; a known number
answers one hit whose ``_source.movimentos[]`` carry ``codigo``, ``nome``, ``dataHora`` and
``complementosTabelados``; an unknown number answers zero hits. ``script`` holds replies
to give first (a 429, a 503), per court, first in first out; a court in ``down`` answers
503 to everything. Every request is logged in ``requests``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from officehub.kit.config import Settings
from tests.server import serving

API_KEY = "test-datajud-key"


@dataclass
class Reply:
    status: int
    headers: dict[str, str] = field(default_factory=dict)


def movement(code: int, name: str, at: str, *complements: str) -> dict[str, Any]:
    return {
        "codigo": code,
        "nome": name,
        "dataHora": at,
        "complementosTabelados": [
            {"codigo": 4, "valor": 57, "nome": c, "descricao": "tipo_de_peticao"}
            for c in complements
        ],
    }


@dataclass
class DataJud:
    port: int = 0
    cases: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    script: dict[str, list[Reply]] = field(default_factory=dict)
    down: set[str] = field(default_factory=set)
    requests: list[tuple[str, str]] = field(default_factory=list)
    delay: float = 0.0
    every: list[dict[str, Any]] | None = None
    """Movements of every number not in ``cases`` (benchmarks); None: unknown, zero hits."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def settings(self, base: Settings, **changes: Any) -> Settings:
        return base.model_copy(
            update={"datajud_url": self.url, "datajud_api_key": API_KEY, **changes}
        )

    def add(self, court: str, number: str, *movements: dict[str, Any]) -> None:
        self.cases.setdefault((court, number), []).extend(movements)

    def asked(self, court: str) -> int:
        return sum(1 for c, _ in self.requests if c == court)

    async def _search(self, request: Request) -> Response:
        index = request.path_params["index"]
        if not index.startswith("api_publica_"):
            return JSONResponse({"error": "no such index"}, status_code=404)
        court = index.removeprefix("api_publica_")
        if request.headers.get("authorization") != f"APIKey {API_KEY}":
            return JSONResponse({"error": "unauthorized"}, status_code=401)
        body = await request.json()
        number = body["query"]["match"]["numeroProcesso"]
        self.requests.append((court, number))
        if self.delay:
            await asyncio.sleep(self.delay)
        if court in self.down:
            return JSONResponse({"error": "unavailable"}, status_code=503)
        queued = self.script.get(court)
        if queued:
            reply = queued.pop(0)
            return JSONResponse({"error": "scripted"}, reply.status, headers=reply.headers)
        movements = self.cases.get((court, number), self.every)
        hits = []
        if movements is not None:
            source = {
                "numeroProcesso": number,
                "tribunal": court.upper(),
                "grau": "G1",
                "movimentos": list(movements),
            }
            hits.append({"_index": index, "_id": f"{court}_{number}", "_source": source})
        return JSONResponse(
            {
                "took": 3,
                "timed_out": False,
                "hits": {"total": {"value": len(hits), "relation": "eq"}, "hits": hits},
            }
        )

    def app(self) -> Starlette:
        return Starlette(routes=[Route("/{index}/_search", self._search, methods=["POST"])])


@asynccontextmanager
async def running_datajud() -> AsyncIterator[DataJud]:
    datajud = DataJud()
    async with serving(datajud.app()) as port:
        datajud.port = port
        yield datajud
