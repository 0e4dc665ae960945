"""Regressions of what schemathesis found (``tests/test_schemathesis.py``)."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from tests.helpers import OfficeFixture, error_of

UNKNOWN = "c00000000unknown"


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("HEAD", "/inbox", "GET, POST"),
        ("PUT", "/inbox", "GET, POST"),
        ("OPTIONS", f"/tag/{UNKNOWN}", "DELETE, GET, PATCH"),
        ("PUT", f"/people/{UNKNOWN}", "DELETE, GET, PATCH"),
    ],
)
async def test_405_allow_lists_every_method_of_the_path(
    client: httpx.AsyncClient, office_a: OfficeFixture, method: str, path: str, allow: str
) -> None:
    r = await client.request(method, path, headers=office_a.headers)
    assert r.status_code == 405
    assert r.headers["allow"] == allow
    if method != "HEAD":
        assert error_of(r)["code"] == "METHOD_NOT_ALLOWED"


@pytest.mark.parametrize("path", ["/conversation/note", "/conversation/end-human-support"])
async def test_wrong_method_on_a_fixed_path_is_405_not_a_bad_id(
    client: httpx.AsyncClient, office_a: OfficeFixture, path: str
) -> None:
    """``PATCH /conversation/note`` is not ``PATCH /conversation/{id}`` with a bad id."""
    r = await client.patch(path, json={"conversationId": UNKNOWN}, headers=office_a.headers)
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    assert error_of(r)["code"] == "METHOD_NOT_ALLOWED"


async def test_a_bad_id_on_a_parameter_route_is_still_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.patch("/conversation/not-an-id", json={}, headers=office_a.headers)
    assert r.status_code == 400
    assert "path.id" in error_of(r)["message"]


@pytest.mark.parametrize(
    ("path", "query"),
    [
        ("/tag", "inboxId"),
        ("/ticket", "assigneeId"),
        ("/user", "inboxId"),
        ("/integration", "inboxId"),
        ("/fast-message", "inboxId"),
    ],
)
async def test_list_filter_naming_an_unknown_record_is_a_documented_404(
    client: httpx.AsyncClient, office_a: OfficeFixture, path: str, query: str
) -> None:
    r = await client.get(path, params={query: UNKNOWN}, headers=office_a.headers)
    assert r.status_code == 404
    assert error_of(r)["code"] == "NOT_FOUND"
    doc = (await client.get("/openapi.json")).json()
    assert "404" in doc["paths"][path]["get"]["responses"]


async def test_header_media_upload_documents_its_error_body_without_code(
    client: httpx.AsyncClient,
) -> None:
    doc = (await client.get("/openapi.json")).json()
    responses = doc["paths"]["/conversation/{conversationId}/template-header-media"]["post"][
        "responses"
    ]
    for status in ("400", "404", "413", "415"):
        ref = responses[status]["content"]["application/json"]["schema"]["$ref"]
        schema = doc["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert "code" not in schema["properties"], status


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/funnel", {"name": "F", "columns": [{"name": "A", "showBadgeProgress": 0}]}, "0"),
        ("/funnel-column", {"name": "A", "index": False}, "index"),
        ("/people", {"name": "Ana", "isBlocked": 0}, "isBlocked"),
        ("/people", {"name": "Ana", "isBlocked": "true"}, "isBlocked"),
    ],
)
async def test_a_typed_scalar_is_not_coerced(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    path: str,
    body: dict[str, object],
    field: str,
) -> None:
    """``0`` is no boolean and ``false`` no number: the schema's type holds (lax coercion)."""
    r = await client.post(
        path, json={"inboxId": UNKNOWN, "funnelId": UNKNOWN, **body}, headers=office_a.headers
    )
    assert r.status_code == 400, r.text
    assert field in error_of(r)["details"]


@pytest.mark.parametrize(
    ("path", "allow"),
    [
        ("/conversation/note", "POST"),
        ("/conversation/notes", "GET"),
        ("/webhooks/events", "GET"),
        ("/integration/partner/whatsapp-templates", "GET"),
    ],
)
async def test_405_on_a_fixed_path_lists_its_own_methods(
    client: httpx.AsyncClient, office_a: OfficeFixture, path: str, allow: str
) -> None:
    """Not those of a parameter route its path also fits (``/conversation/{id}``)."""
    r = await client.options(path, headers=office_a.headers)
    assert r.status_code == 405
    assert r.headers["allow"] == allow


@pytest.mark.parametrize(
    ("path", "query", "names"),
    [
        ("/people", "search=ana&search=bia", "query.search"),
        ("/people", "page=1&page=2", "query.page"),
        ("/tag", "limit=5&limit=6&module=CRM", "query.limit"),
        ("/conversation", "status=OPEN&status=CLOSED&page=1&page=1", "query.page, query.status"),
        ("/webhooks/events", "x=1", ""),
    ],
)
async def test_a_repeated_single_valued_query_parameter_is_400_naming_it(
    client: httpx.AsyncClient, office_a: OfficeFixture, path: str, query: str, names: str
) -> None:
    """``search=a&search=b`` is no search for ``b``: FastAPI would keep the last value."""
    before = (await client.get("/people", headers=office_a.headers)).json()
    r = await client.get(f"{path}?{query}", headers=office_a.headers)
    if not names:  # an undeclared parameter is not the guard's business
        assert r.status_code == 200
        return
    assert r.status_code == 400, r.text
    body = error_of(r)
    assert body["code"] == "VALIDATION_ERROR"
    assert body["message"] == f"Invalid request: {names}"
    for name in names.split(", "):
        assert f"{name}: given 2 times" in body["details"]
    assert (await client.get("/people", headers=office_a.headers)).json() == before


async def test_a_list_query_parameter_still_takes_many_values(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get(
        "/people", params=[("tagIds", UNKNOWN), ("tagIds", UNKNOWN)], headers=office_a.headers
    )
    assert r.status_code != 400, r.text
    assert "given 2 times" not in r.text


async def test_every_route_refuses_a_repeated_scalar_query_parameter(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """The guard is app-wide: every operation with a scalar query parameter refuses it
    repeated, a route added later included."""
    doc = (await client.get("/openapi.json")).json()
    checked = 0
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            scalars = [
                p["name"]
                for p in operation.get("parameters", [])
                if p["in"] == "query"
                and p.get("schema", {}).get("type") != "array"
                and not any(s.get("type") == "array" for s in p.get("schema", {}).get("anyOf", []))
            ]
            if not scalars:
                continue
            url = "/".join(UNKNOWN if "{" in seg else seg for seg in path.split("/"))
            name = scalars[0]
            r = await client.request(
                method.upper(), f"{url}?{name}=1&{name}=2", headers=office_a.headers
            )
            assert r.status_code == 400, (method, path, r.text)
            assert f"query.{name}" in error_of(r)["message"], (method, path)
            checked += 1
    assert checked >= 10


@pytest.mark.parametrize("char", ["\u202e", "\u202a", "\u2066", "\u2069"])
async def test_a_bidi_override_in_a_name_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture, char: str
) -> None:
    """``fdp\u202e.exe`` shows as ``exe.pdf``: no name may hold a bidirectional override."""
    r = await client.post("/inbox", json={"name": f"fdp{char}.exe"}, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert "body.name" in error_of(r)["details"]
    assert f"U+{ord(char):04X}" in error_of(r)["details"]
    assert (await client.get("/inbox", headers=office_a.headers)).json()["data"] == []


async def test_long_text_may_hold_bidi_characters_and_rtl_names_are_fine(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.post(
        "/people",
        json={"name": "\u05e9\u05dc\u05d5\u05dd \u200fLevi", "description": "a \u202eb\u202c c"},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert r.json()["description"] == "a \u202eb\u202c c"
