"""Hostile input on every JSON route of ``/openapi.json``, bodies made by Hypothesis.

The routes are read from the document at run time: a JSON route added later is covered
without an entry here. Each generated body is hostile in one way (wrong types, missing
or extra keys, huge strings and arrays, 10,000 levels of nesting, lone surrogates and
invalid UTF-8, numbers out of range, control and bidirectional characters). Whatever the
body, the answer is never a 5xx, a refusal carries the error body
``{message, statusCode, code, details}``, and after refusals the office's data reads the
same (every list of the document, compared whole). Bodies that are invalid by
construction must be refused (4xx).

Each example sends every kind to every route. Examples are derandomized and bounded
(``OFFICEHUB_HOSTILE_EXAMPLES``, 3 unless told: the first example Hypothesis draws is
its simplest, the next ones vary the values; each costs about 4 s) so ``make test`` stays
fast; ``make fuzz`` runs 25.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import OfficeFixture, error_of
from tests.server_process import clean_env, running_server

UNKNOWN = "c00000000unknown"
# ``OFFICEHUB_FUZZ_SMOKE=1`` (the PostgreSQL leg of ``.ci/run``, the SQLite leg running the
# full count): one example, the simplest body of each kind on every route.
SMOKE = os.environ.get("OFFICEHUB_FUZZ_SMOKE") == "1"
EXAMPLES = 1 if SMOKE else int(os.environ.get("OFFICEHUB_HOSTILE_EXAMPLES", "3"))
settings.register_profile(
    "hostile",
    derandomize=True,
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,  # one office and database for all examples
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
HOSTILE = settings.get_profile("hostile")
DEPTH = 10_000
MIB = 1024 * 1024


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    url: str  # the path with every parameter an id of the spec's pattern no record has
    properties: dict[str, dict[str, Any]]
    required: frozenset[str]

    def types_of(self, name: str) -> set[str]:
        """The JSON types the document allows for property ``name`` (empty: any)."""
        schema = self.properties[name]
        options = schema.get("anyOf") or schema.get("oneOf") or [schema]
        return {o["type"] for o in options if "type" in o}

    def typed(self, *kinds: str) -> list[str]:
        return [n for n in self.properties if self.types_of(n) & set(kinds)]


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def json_operations(doc: dict[str, Any]) -> list[Operation]:
    found = []
    for path, operations in doc["paths"].items():
        for method, operation in operations.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            schema = _resolve(doc, content["application/json"]["schema"])
            properties = {
                name: _resolve(doc, prop) for name, prop in schema.get("properties", {}).items()
            }
            url = re.sub(r"\{[^}]+\}", UNKNOWN, path)
            found.append(
                Operation(
                    method.upper(),
                    path,
                    url,
                    properties,
                    frozenset(schema["required"]) if "required" in schema else frozenset(),
                )
            )
    return found


def list_paths(doc: dict[str, Any]) -> list[str]:
    """Every keyed GET without a path parameter that answers JSON: what the office's data
    reads as (a live event stream, GET /stream, answers for as long as it is open)."""
    return sorted(
        path
        for path, operations in doc["paths"].items()
        if "get" in operations
        and "{" not in path
        and operations["get"].get("security")
        and path != "/metrics"
        and "application/json" in operations["get"]["responses"].get("200", {}).get("content", {})
    )


VOLATILE = frozenset({"cacheAt"})
"""Fields that tell when an answer was computed, not what the office holds."""


def _steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _changes_only(trail: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The audit trail's record of changes: it also records every read of a client's records,
    the snapshot's own reads among them (tests/test_audit.py holds that refusals are not)."""
    return [
        (entry["action"], entry["recordId"])
        for entry in trail["data"]
        if not entry["action"].startswith(("get", "list"))
    ]


async def snapshot(client: httpx.AsyncClient, office: OfficeFixture, paths: list[str]) -> Any:
    answers: dict[str, Any] = {}
    for path in paths:
        params = {"limit": 100} if path == "/audit-log" else None
        r = await client.get(path, params=params, headers=office.headers)
        if r.status_code != 200:
            answers[path] = (r.status_code, None)
        elif path == "/audit-log":
            answers[path] = (200, _changes_only(r.json()))
        else:
            answers[path] = (200, _steady(r.json()))
    return answers


@dataclass(frozen=True)
class Hostile:
    kind: str
    body: bytes
    must_refuse: bool


def _dump(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass")


WRONG = {
    "string": [1, [], {"a": 1}, True],
    "integer": ["1", True, [1], {}],
    "number": ["1.5", False, [], {}],
    "boolean": [0, "true", [], None],
    "array": [{"a": 1}, "x", 1],
    "object": [[], "x", 1],
}
OUT_OF_RANGE = [b"1e309", b"-1e309", b"-0", b"9" * 400, b"-" + b"9" * 400, b"NaN", b"Infinity"]
CONTROLS = ["\x00", "\x07", "\x1b", "\x7f", "\x85", "\u2028"]
BIDI = ["\u202e", "\u202a", "\u2066", "\u2069"]
KINDS = [
    "not_an_object",
    "missing_required",
    "wrong_types",
    "extra_keys_only",
    "deep_nesting",
    "lone_surrogate",
    "invalid_utf8",
    "control_characters",
    "bidi_characters",
    "numbers_out_of_range",
    "huge_strings",
    "huge_arrays",
]


def _with_raw(base: dict[str, Any], raw: dict[str, bytes]) -> bytes:
    """``base`` as JSON with the values of ``raw`` spliced in as they are (not JSON-valid
    Python values: 1e309, 10,000 levels, a lone surrogate's escape)."""
    marks = {name: f"@@raw{i}@@" for i, name in enumerate(raw)}
    text = _dump({**base, **marks})
    for name, mark in marks.items():
        text = text.replace(_dump(mark), raw[name])
    return text


@st.composite
def hostile_body(draw: st.DrawFn, op: Operation, kind: str) -> Hostile:
    props = op.properties
    strings = op.typed("string")
    if kind == "not_an_object":
        top: Any = draw(
            st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=8), st.just([{}]))
        )
        return Hostile(kind, _dump(top), must_refuse=True)
    if kind == "missing_required":
        return Hostile(kind, b"{}", must_refuse=bool(op.required))
    if kind == "wrong_types":
        typed = [n for n in props if op.types_of(n) and "null" not in op.types_of(n)]
        body = {}
        for name in typed:
            wrong = [w for t in op.types_of(name) for w in WRONG.get(t, [])]
            wrong = [w for w in wrong if _json_type(w) not in op.types_of(name)]
            if wrong:
                body[name] = draw(st.sampled_from(wrong))
        return Hostile(kind, _dump(body), must_refuse=bool(body) or bool(op.required))
    if kind == "extra_keys_only":
        extra = draw(st.dictionaries(st.text(min_size=1, max_size=6), st.integers(), max_size=3))
        extra = {f"zz{k}": v for k, v in extra.items() if f"zz{k}" not in props}
        return Hostile(kind, _dump(extra), must_refuse=bool(op.required))
    if kind == "deep_nesting":
        nested = b"[" * DEPTH + b"]" * DEPTH
        target = draw(st.sampled_from([None, *props])) if props else None
        raw_body = nested if target is None else _with_raw({}, {target: nested})
        return Hostile(kind, raw_body, must_refuse=True)
    if kind == "lone_surrogate":
        surrogate = draw(st.sampled_from(["\\ud800", "\\udfff", "\\udc00x"]))
        raw = {n: f'"a{surrogate}"'.encode() for n in strings}
        return Hostile(kind, _with_raw({}, raw), must_refuse=bool(raw or op.required))
    if kind == "invalid_utf8":
        bad = draw(st.sampled_from([b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80"]))
        raw = {n: b'"a' + bad + b'"' for n in strings} or {"zz": b'"' + bad + b'"'}
        return Hostile(kind, _with_raw({}, raw), must_refuse=True)
    if kind == "control_characters":
        char = draw(st.sampled_from(CONTROLS))
        text = draw(st.text(min_size=1, max_size=5, alphabet="abcXYZ"))
        body = {n: text + char + text for n in strings}
        return Hostile(kind, _dump(body), must_refuse=bool(body or op.required))
    if kind == "bidi_characters":  # refused in single-line text; long text may hold them
        char = draw(st.sampled_from(BIDI))
        return Hostile(kind, _dump({n: f"fdp{char}.exe" for n in strings}), must_refuse=False)
    if kind == "numbers_out_of_range":
        numbers = op.typed("integer", "number")
        number = draw(st.sampled_from(OUT_OF_RANGE))
        raw = {n: number for n in numbers} or {"zzNumber": number}
        return Hostile(kind, _with_raw({}, raw), must_refuse=bool(op.required))
    if kind == "huge_strings":
        size = draw(st.sampled_from([100_000, 300_000, 2 * MIB]))
        body = {n: "x" * size for n in strings} or {"zzText": "x" * size}
        big = len(_dump(body)) > MIB
        return Hostile(kind, _dump(body), must_refuse=big or bool(op.required))
    if kind == "huge_arrays":
        size = draw(st.sampled_from([10_000, 200_000]))
        arrays = op.typed("array") or ["zzList"]
        body = {n: [UNKNOWN] * size for n in arrays}
        big = len(_dump(body)) > MIB
        return Hostile(kind, _dump(body), must_refuse=big or bool(op.required))
    raise AssertionError(kind)


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "null" if value is None else "object"


async def _seed(client: httpx.AsyncClient, office: OfficeFixture) -> None:
    """A few records, so that the lists compared hold something."""
    inbox = await client.post("/inbox", json={"name": "Atendimento"}, headers=office.headers)
    assert inbox.status_code == 201, inbox.text
    for body in (
        {"name": "Ana Lima", "phone": "+5511999990000", "inboxId": inbox.json()["id"]},
        {"name": "Bia Souza"},
    ):
        r = await client.post("/people", json=body, headers=office.headers)
        assert r.status_code == 201, r.text
    tag = {"name": "VIP", "color": "#ff0000", "inboxId": inbox.json()["id"], "modules": ["crm"]}
    r = await client.post("/tag", json=tag, headers=office.headers)
    assert r.status_code == 201, r.text


def _refused(answer: httpx.Response, why: str) -> None:
    assert answer.status_code < 500, why
    if answer.status_code >= 400:
        error_of(answer)


@pytest.mark.anyio
@HOSTILE
@given(data=st.data())
async def test_every_json_route_refuses_hostile_bodies_and_changes_nothing(
    client: httpx.AsyncClient, office_a: OfficeFixture, data: st.DataObject
) -> None:
    """Each example sends every kind of hostile body to every JSON route."""
    doc = (await client.get("/openapi.json")).json()
    operations = json_operations(doc)
    assert len(operations) >= 40
    lists = list_paths(doc)
    if not (await client.get("/inbox", headers=office_a.headers)).json()["data"]:
        await _seed(client, office_a)
    before = await snapshot(client, office_a, lists)
    accepted = []
    for op in operations:
        for kind in KINDS:
            hostile = data.draw(hostile_body(op, kind), label=f"{kind} {op.method} {op.path}")
            answer = await client.request(
                op.method,
                op.url,
                content=hostile.body,
                headers={**office_a.headers, "content-type": "application/json"},
            )
            why = f"{kind}: {op.method} {op.path} -> {answer.status_code} {answer.text[:300]}"
            _refused(answer, why)
            if hostile.must_refuse:
                assert 400 <= answer.status_code < 500, why
            if answer.status_code < 400:
                accepted.append(why)
    if not accepted:
        assert await snapshot(client, office_a, lists) == before


def _operations_with_path_ids(doc: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for path, operations in doc["paths"].items():
        if "{" in path and not path.startswith("/media/"):
            for method, operation in operations.items():
                if operation.get("security"):
                    yield method.upper(), path


OFF_PATTERN = ["not-an-id", "c", "c1234567", "c123 45678", "x0000000000", "c" + "a" * 5000]


async def test_ids_off_the_pattern_are_400_or_404_on_every_route(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Every keyed route with a path id, given each id off the pattern in turn."""
    doc = (await client.get("/openapi.json")).json()
    before = await snapshot(client, office_a, list_paths(doc))
    checked = 0
    for i, (method, path) in enumerate(_operations_with_path_ids(doc)):
        bad = OFF_PATTERN[i % len(OFF_PATTERN)]
        url = re.sub(r"\{[^}]+\}", httpx.URL(bad).raw_path.decode(), path)
        answer = await client.request(method, url, json={}, headers=office_a.headers)
        why = f"{method} {path} with {bad[:20]!r} -> {answer.status_code} {answer.text[:200]}"
        assert answer.status_code in (400, 404, 405), why
        if path.endswith("/template-header-media"):  # the spec's body without ``code``
            assert set(answer.json()) == {"message", "statusCode", "details"}, why
        else:
            error_of(answer)
        checked += 1
    assert checked >= 40
    assert await snapshot(client, office_a, list_paths(doc)) == before


async def test_oversized_bodies_are_413_on_every_json_route(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Declared (Content-Length) or streamed (chunked, no length): over 1 MiB is 413."""
    doc = (await client.get("/openapi.json")).json()
    payload = _dump({"name": "x" * (MIB + 10)})

    async def chunks() -> Any:
        for i in range(0, len(payload), 65536):
            yield payload[i : i + 65536]

    for op in json_operations(doc):
        headers = {**office_a.headers, "content-type": "application/json"}
        declared = await client.request(op.method, op.url, content=payload, headers=headers)
        streamed = await client.request(op.method, op.url, content=chunks(), headers=headers)
        for answer in (declared, streamed):
            assert answer.status_code == 413, (op.method, op.path, answer.text[:200])
            assert error_of(answer)["code"] == "PAYLOAD_TOO_LARGE"


WRONG_TYPES = [
    ("text/plain", b'{"name": "x"}'),
    ("application/xml", b"<name>x</name>"),
    ("application/x-www-form-urlencoded", b"name=x"),
    (
        "multipart/form-data; boundary=zz",
        b'--zz\r\nContent-Disposition: form-data; name="name"\r\n\r\nx\r\n--zz--\r\n',
    ),
]


async def test_a_json_route_given_another_content_type_is_415_and_changes_nothing(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    doc = (await client.get("/openapi.json")).json()
    await _seed(client, office_a)
    before = await snapshot(client, office_a, list_paths(doc))
    for op in json_operations(doc):
        for content_type, body in WRONG_TYPES:
            headers = {**office_a.headers, "content-type": content_type}
            answer = await client.request(op.method, op.url, content=body, headers=headers)
            why = (op.method, op.path, content_type, answer.status_code, answer.text[:200])
            assert answer.status_code == 415, why
            assert error_of(answer)["code"] == "UNSUPPORTED_MEDIA_TYPE", why
    assert await snapshot(client, office_a, list_paths(doc)) == before


def _rss_bytes(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+) kB", status)
    assert match, status
    return int(match.group(1)) * 1024


async def test_server_memory_stays_bounded_under_hostile_bodies(tmp_path: Path) -> None:
    """A real ``officehub serve``: 200 hostile requests (near-limit strings, 10,000 levels
    of nesting, arrays of 40,000 ids and of 200,000 numbers) grow its RSS by under
    50 MB."""
    near_limit = _dump({"name": "x" * (MIB - 100), "description": "y"})
    deep = b'{"name": ' + b"[" * DEPTH + b"]" * DEPTH + b"}"
    array = _dump({"name": 1, "tags": [UNKNOWN] * 40_000})
    numbers = b'{"name": [' + b"1," * 200_000 + b"1]}"  # 200,001 items
    bodies = [near_limit, deep, array, numbers]
    async with running_server(
        tmp_path, "--no-worker", env=clean_env(OFFICEHUB_RATE_LIMITS="")
    ) as server:
        headers = {"x-service-api-key": server.demo_key, "content-type": "application/json"}
        async with httpx.AsyncClient(base_url=server.url, headers=headers, timeout=30) as c:

            async def hostile_round(rounds: int) -> None:
                for i in range(rounds):
                    for path in ("/people", "/inbox", "/fast-message", "/automation-rules"):
                        r = await c.post(path, content=bodies[i % len(bodies)])
                        assert 400 <= r.status_code < 500, (path, r.status_code, r.text[:200])

            await hostile_round(5)  # warm up: imports, caches, the allocator's arenas
            start = _rss_bytes(server.pid)
            await hostile_round(50)
            grown = _rss_bytes(server.pid) - start
    print(f"RSS {start / MIB:.1f} MiB, grew {grown / MIB:.1f} MiB over 200 hostile requests")
    assert grown < 50 * MIB, f"RSS grew {grown / MIB:.1f} MiB"
