"""Regressions of what schemathesis found (``tests/test_schemathesis.py``)."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation
from officehub.events.catalogue import EVENT_NAMES
from officehub.kit.errors import ValidationFailed
from officehub.kit.ids import ID_PATTERN
from officehub.kit.schemas import BodyModel
from officehub.media import MAX_EXPIRES
from tests import factories as f
from tests.helpers import OfficeFixture, error_of
from tests.test_schemathesis import CONFIG

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


# --- Schema-valid requests refused (schemathesis' positive_data_acceptance) -------------
# Each rule the service checks is stated in the document; each test below checks that the
# document states it AND that the server holds exactly that (accepts what the statement
# admits, refuses what it excludes).


def _resolve(document: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = document["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def _body_schema(document: dict[str, Any], path: str, method: str) -> dict[str, Any]:
    body = document["paths"][path][method]["requestBody"]["content"]["application/json"]
    return _resolve(document, body["schema"])


def _string_branch(node: dict[str, Any]) -> dict[str, Any]:
    """The string schema of a property (``X | None`` is an ``anyOf``)."""
    if node.get("type") == "string":
        return node
    return next(b for b in node["anyOf"] if b.get("type") == "string")


async def _a_conversation(session: AsyncSession, office_id: str) -> Conversation:
    inbox = await f.make_inbox(session, office_id)
    integration = await f.make_integration(session, office_id, inbox.id)
    contact = await f.make_contact(session, office_id)
    conversation = await f.make_conversation(session, office_id, contact.id, integration)
    await session.commit()
    return conversation


async def _document(client: httpx.AsyncClient) -> dict[str, Any]:
    r = await client.get("/openapi.json")
    assert r.status_code == 200
    document: dict[str, Any] = r.json()
    return document


async def test_the_document_states_the_control_character_rule(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``POST /tag`` refused ``color: "\\x13"`` though the document stated no pattern."""
    document = await _document(client)
    tag = _body_schema(document, "/tag", "post")["properties"]
    single_line = re.compile(_string_branch(tag["name"])["pattern"])
    person = _body_schema(document, "/people", "post")["properties"]
    long_text = re.compile(_string_branch(person["description"])["pattern"])
    assert not single_line.match("a\x13b") and not single_line.match("a\u202eb")
    assert single_line.match("Conceição é 日本")
    assert long_text.match("line one\r\nline\ttwo") and not long_text.match("a\x07b")

    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    h = office_a.headers
    refused = await client.post(
        "/tag",
        json={"name": "x", "color": "a\x13", "inboxId": inbox.id, "modules": ["crm"]},
        headers=h,
    )
    assert refused.status_code == 400 and "body.color" in error_of(refused)["message"]
    accepted = await client.post(
        "/tag",
        json={"name": "Conceição", "color": "#E53935", "inboxId": inbox.id, "modules": ["crm"]},
        headers=h,
    )
    assert accepted.status_code == 201, accepted.text


async def test_the_id_pattern_reads_alike_in_every_regex_engine(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """``\\s`` differs between engines: U+0085 is space to Python and Rust, not to
    ECMAScript; U+001C-U+001F to Python only. The pattern spells the set out."""
    assert "\\s" not in ID_PATTERN
    document = await _document(client)
    parameter = document["paths"]["/conversation/{id}"]["get"]["parameters"][0]
    assert parameter["schema"]["pattern"] == ID_PATTERN
    h = office_a.headers
    nel = await client.get(f"/conversation/{UNKNOWN}\u0085x", headers=h)
    assert nel.status_code == 400 and "path.id" in error_of(nel)["message"]
    assert "^[cC][^\\s-]{8,}$" in error_of(nel)["details"]  # the spec's spelling
    separator = await client.get(f"/conversation/{UNKNOWN}%1Fx", headers=h)
    assert separator.status_code == 404  # not whitespace: a well-formed id of nothing
    assert re.match(ID_PATTERN, f"{UNKNOWN}\x1fx") and not re.match(ID_PATTERN, "c12345 678")


async def test_the_event_catalogue_is_an_enum_in_the_document(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    document = await _document(client)
    rule = _body_schema(document, "/automation-rules", "post")["properties"]
    webhook = _body_schema(document, "/webhooks", "post")["properties"]
    # One named component, EventName, that both bodies refer to.
    named = {"$ref": "#/components/schemas/EventName"}
    assert {k: v for k, v in rule["triggerEvent"].items() if k != "description"} == named
    assert webhook["events"]["items"] == named
    assert document["components"]["schemas"]["EventName"]["enum"] == sorted(EVENT_NAMES)
    query = {p["name"]: p for p in document["paths"]["/automation-rules"]["get"]["parameters"]}
    assert query["triggerEvent"]["schema"]["enum"] == sorted(EVENT_NAMES)
    r = await client.get("/automation-rules", params={"triggerEvent": ""}, headers=office_a.headers)
    assert r.status_code == 400 and "query.triggerEvent" in error_of(r)["message"]
    listed = await client.get(
        "/automation-rules", params={"triggerEvent": "contact.created"}, headers=office_a.headers
    )
    assert listed.status_code == 200


@pytest.mark.parametrize(
    ("path", "method", "field"),
    [
        ("/conversation/{id}", "patch", "status"),
        ("/conversation/{id}", "patch", "tags"),
        ("/funnel/{id}", "patch", "name"),
        ("/funnel-column/{id}", "patch", "kind"),
        ("/people/{id}", "patch", "name"),
        ("/automation-rules/{id}", "patch", "triggerEvent"),
        ("/webhooks/{webhookId}", "patch", "url"),
    ],
)
async def test_patch_fields_that_refuse_null_are_not_nullable_in_the_document(
    client: httpx.AsyncClient, path: str, method: str, field: str
) -> None:
    prop = _body_schema(await _document(client), path, method)["properties"][field]
    branches = prop.get("anyOf", [prop])
    assert all(b.get("type") != "null" for b in branches), prop
    assert prop.get("default", "absent") is not None


def _body_models(model: type[BodyModel]) -> list[type[BodyModel]]:
    return [model, *(m for sub in model.__subclasses__() for m in _body_models(sub))]


def test_every_field_that_refuses_null_is_refused_by_the_one_check() -> None:
    """``NOT_NULL`` is the one list: what the document states and what the services refuse."""
    checked = 0
    for model in _body_models(BodyModel):
        for name in model.NOT_NULL:
            alias = model.model_fields[name].alias or name
            body = model.model_construct(_fields_set={name}, **{name: None})
            with pytest.raises(ValidationFailed) as refused:
                body.refuse_sent_nulls()
            assert refused.value.details == f"body.{alias}: may not be null"
            checked += 1
    assert checked >= 20  # the seven PATCH models' fields


async def test_a_null_for_such_a_field_is_refused_and_changes_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation = await _a_conversation(session, office_a.id)
    h = office_a.headers
    r = await client.patch(f"/conversation/{conversation.id}", json={"status": None}, headers=h)
    assert r.status_code == 400 and "body.status" in error_of(r)["message"]
    after = await client.get(f"/conversation/{conversation.id}", headers=h)
    assert after.json()["status"] == "OPEN"


async def test_rules_across_fields_are_stated_as_one_of_and_any_of(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``text``, ``templateName`` or ``mediaPath`` (exactly one) to send; ``text``,
    ``mediaUrl`` or both to record an inbound message."""
    document = await _document(client)
    outbound = _body_schema(document, "/conversation/{id}/messages", "post")
    inbound = _body_schema(document, "/conversation/{id}/messages/inbound", "post")
    assert [b["required"] for b in outbound["oneOf"]] == [
        ["text"],
        ["templateName"],
        ["mediaPath"],
    ]
    assert [b["required"] for b in inbound["anyOf"]] == [["text"], ["mediaUrl"]]

    conversation = await _a_conversation(session, office_a.id)
    h = office_a.headers
    url = f"/conversation/{conversation.id}/messages"
    both = await client.post(url, json={"text": "oi", "templateName": "x"}, headers=h)
    neither = await client.post(f"{url}/inbound", json={}, headers=h)
    assert both.status_code == 400 and neither.status_code == 400
    assert (await client.get(url, headers=h)).json()["data"] == []  # nothing stored
    received = await client.post(f"{url}/inbound", json={"text": "oi"}, headers=h)
    assert received.status_code == 201, received.text


async def test_the_owner_filter_pattern_reads_the_filter_as_the_server_does(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """``userIds``: ids separated by commas; spaces around them and empty parts ignored."""
    document = await _document(client)
    parameters = document["paths"]["/funnel/{id}"]["get"]["parameters"]
    owners = next(p for p in parameters if p["name"] == "userIds")
    pattern = re.compile(owners["schema"]["items"]["pattern"])
    inbox = await f.make_inbox(session, office_a.id)
    funnel, _columns = await f.make_funnel(session, office_a.id, inbox.id, columns=1)
    ana = (await f.make_user(session, office_a.id, "Ana Lima")).id
    bia = (await f.make_user(session, office_a.id, "Bia Reis")).id
    await session.commit()
    for value, accepted in [
        (f" {ana} , {bia},", True),
        (",,", True),
        (f"{ana} {bia}", False),
        ("c1234567", False),
        (f"{ana}\u0085", True),  # stripped by the server; whitespace to the pattern
    ]:
        r = await client.get(
            f"/funnel/{funnel.id}", params={"userIds": value}, headers=office_a.headers
        )
        assert (r.status_code == 200) is accepted, (value, r.text)
        assert bool(pattern.match(value)) is accepted, value


def test_every_exemption_in_the_schemathesis_settings_names_an_operation_and_a_test() -> None:
    """``tests/schemathesis.toml`` lets a few operations answer 400 to schema-valid data
    (rules no JSON Schema states). Each entry must name real operations and the tests that
    hold its rule, and no other operation may be let off: schemathesis joins an entry's
    filters with "or", so a stray ``include-method`` would exempt every POST."""
    import schemathesis
    from schemathesis.config import SchemathesisConfig

    from officehub.app import create_app

    text = CONFIG.read_text()
    named = {n for entry in tomllib.loads(text)["operations"] for n in entry["include-name"]}
    assert all(
        set(entry) <= {"include-name", "checks"} for entry in tomllib.loads(text)["operations"]
    )
    for test_file in re.findall(r"tests/(test_\w+\.py)", text):
        assert (CONFIG.parent / test_file).exists(), test_file
    document = create_app().openapi()
    schema = schemathesis.openapi.from_dict(document, config=SchemathesisConfig.from_path(CONFIG))
    labels = set()
    for path, operations in document["paths"].items():
        for method in operations:
            operation = schema[path][method.upper()]
            labels.add(f"{method.upper()} {path}")
            allowed = schema.config.checks_config_for(operation=operation, phase="fuzzing")
            statuses = allowed.positive_data_acceptance.expected_statuses
            let_off = "400" in statuses or "415" in statuses
            assert let_off == (f"{method.upper()} {path}" in named), (method, path, statuses)
    assert named <= labels, named - labels


async def test_a_media_links_expiry_and_signature_bounds_are_in_the_document(
    client: httpx.AsyncClient,
) -> None:
    """``GET /media/{key}?expires=…`` refused an expiry past year 9999 that the document
    allowed (found by the long pass)."""
    document = await _document(client)
    parameters = {
        p["name"]: p["schema"] for p in document["paths"]["/media/{key}"]["get"]["parameters"]
    }
    assert (parameters["expires"]["minimum"], parameters["expires"]["maximum"]) == (0, MAX_EXPIRES)
    signature = re.compile(parameters["signature"]["pattern"])
    assert signature.match("a" * 64) and signature.match("") and not signature.match("A" * 64)
    past = await client.get(
        "/media/a.png", params={"expires": MAX_EXPIRES + 1, "signature": "a" * 64}
    )
    assert past.status_code == 400 and "query.expires" in error_of(past)["message"]
    inside = await client.get(
        "/media/a.png", params={"expires": MAX_EXPIRES, "signature": "a" * 64}
    )
    assert inside.status_code == 403  # well formed, not a link we signed
