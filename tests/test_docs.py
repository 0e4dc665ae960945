"""The API docs work offline: their scripts come from this server, never a CDN."""

from __future__ import annotations

import re
from collections import Counter

import httpx
from fastapi import FastAPI

URL_RE = re.compile(r"""(?:src|href|url)\s*[=:]\s*["']([^"']+)["']""")


async def test_docs_pages_name_no_other_host_and_their_assets_answer(
    client: httpx.AsyncClient,
) -> None:
    for page in ("/docs", "/redoc"):
        r = await client.get(page)
        assert r.status_code == 200
        assert not re.search(r"https?://", r.text), r.text
        assets = URL_RE.findall(r.text)
        assert "/openapi.json" in assets
        assert any(a.endswith(".js") for a in assets), r.text
        for asset in assets:
            assert asset.startswith("/"), asset
            fetched = await client.get(asset)
            assert fetched.status_code == 200, asset
            assert fetched.content


async def test_each_operation_is_listed_once_in_the_docs(app: FastAPI) -> None:
    """Integrations appeared twice: under Inboxes and under Integrations."""
    document = app.openapi()
    tags: Counter[str] = Counter()
    for operations in document["paths"].values():
        for operation in operations.values():
            assert len(operation["tags"]) == 1, operation["operationId"]
            tags[operation["tags"][0]] += 1
    assert tags["Integrations"] == 5
    assert all("integration" not in p for p in document["paths"] if p.startswith("/inbox"))
