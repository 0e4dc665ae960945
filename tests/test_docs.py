"""The API docs work offline: their scripts come from this server, never a CDN."""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
from fastapi import FastAPI

from tests.server_process import clean_env, running_server

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


ROOT = Path(__file__).resolve().parent.parent
WALKTHROUGH_SECTIONS = (
    "Walkthrough",
    "Directory: inboxes, channels, users, tags, legal areas, tickets, fast messages",
    "Contacts, conversations and messages",
    "CRM",
    "Webhooks",
    "Automation rules",
    "Web chat",
)


def readme_blocks() -> list[tuple[str, str]]:
    """Every ``sh`` block of the README with the heading it is under, in order."""
    blocks, heading = [], ""
    for part in re.split(r"^(#+ .*|```sh\n(?:.*\n)*?```)$", README.read_text(), flags=re.M):
        if part.startswith("#"):
            heading = part.lstrip("#").strip()
        elif part.startswith("```sh"):
            blocks.append((heading, part[len("```sh\n") : -len("```")]))
    return blocks


README = ROOT / "README.md"


async def test_readme_walkthrough_blocks_paste_in_order_into_one_shell(tmp_path: Path) -> None:
    """One set of names: pasted in order under ``set -u``, no block uses an unset variable;
    the automation rule is removed at the end and the official reply's failure is shown."""
    script = "\n".join(body for heading, body in readme_blocks() if heading in WALKTHROUGH_SECTIONS)
    assert "WEBCHAT" in script and "automation-rules" in script
    async with running_server(tmp_path) as server:
        env = clean_env(OFFICEHUB_URL=server.url, OFFICEHUB_API_KEY=server.demo_key)
        proc = await asyncio.create_subprocess_exec(
            "bash",
            "-c",
            "set -u\n" + script,
            cwd=tmp_path,
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 180)
        assert proc.returncode == 0, err.decode()
        assert "unbound variable" not in err.decode(), err.decode()
        assert '"statusCode":500' not in out.decode().replace(" ", "")
        assert '"status":"FAILED"' in out.decode().replace(" ", "")  # the reply, shown
        async with httpx.AsyncClient() as client:
            rules = await client.get(
                f"{server.url}/automation-rules",
                headers={"x-service-api-key": server.demo_key},
            )
        assert rules.status_code == 200 and rules.json()["data"] == []


def test_readme_runs_the_command_from_where_it_is_installed() -> None:
    """`officehub` is not on the PATH after `make run`: the README says `.venv/bin/`."""
    text = README.read_text()
    for heading, body in readme_blocks():
        if heading == "The command line":
            continue  # introduced by how to run them
        bare = [ln for ln in body.splitlines() if re.match(r"\s*officehub ", ln)]
        assert bare == [], (heading, bare)
    assert "`officehub office list`" not in text and "`.venv/bin/officehub office list`" in text


def test_readme_automation_rules_never_end_without_a_condition() -> None:
    automation = "\n".join(b for h, b in readme_blocks() if h == "Automation rules")
    assert '"conditions": {}' not in automation
    assert '-X DELETE "$OFFICEHUB_URL/automation-rules/$RULE_ID"' in automation


def test_the_documented_postgres_password_survives_the_database_url() -> None:
    """compose.yaml pastes POSTGRES_PASSWORD raw into the URL: the guide makes a safe one."""
    import subprocess

    from sqlalchemy.engine import make_url

    guide = (ROOT / "docs" / "deployment.md").read_text()
    made = re.search(r"^POSTGRES_PASSWORD=\$\((.+)\)$", guide, re.M)
    assert made, "the guide shows how to make the password"
    password = subprocess.run(
        ["bash", "-c", made.group(1)], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert len(password) >= 32
    compose = (ROOT / "compose.yaml").read_text()
    template = re.search(r"OFFICEHUB_DATABASE_URL: (.+)$", compose, re.M)
    assert template
    url = re.sub(r"\$\{POSTGRES_PASSWORD[^}]*\}", password, template.group(1))
    assert make_url(url).password == password and make_url(url).host == "db"
    assert "letters, digits" in guide and "percent-encoded" in guide


async def test_every_operation_has_a_short_unique_camel_case_operation_id(app: FastAPI) -> None:
    ids = [
        operation["operationId"]
        for operations in app.openapi()["paths"].values()
        for operation in operations.values()
    ]
    assert len(ids) > 100
    assert [i for i, n in Counter(ids).items() if n > 1] == []
    assert [i for i in ids if not re.fullmatch(r"[a-z][a-zA-Z0-9]{2,39}", i)] == []
    for expected in ("createTag", "listTags", "getTag", "updateTag", "deleteTag", "getInbox"):
        assert expected in ids


def _at_fields(node: object, where: str = "") -> list[tuple[str, str, object]]:
    found: list[tuple[str, str, object]] = []
    if isinstance(node, dict):
        for name, prop in (node.get("properties") or {}).items():
            if name.endswith("At"):
                found.append((where, name, prop))
        for key, value in node.items():
            found += _at_fields(value, f"{where}/{key}")
    elif isinstance(node, list):
        for value in node:
            found += _at_fields(value, where)
    return found


async def test_every_timestamp_is_a_date_time(app: FastAPI) -> None:
    import json

    fields = _at_fields(app.openapi())
    assert len(fields) > 80
    assert [f for f in fields if '"date-time"' not in json.dumps(f[2])] == []


def _reachable(document: dict[str, Any], node: object, found: set[str]) -> set[str]:
    """The component schemas ``node`` refers to, directly or through others."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/components/schemas/"):
            name = ref.rsplit("/", 1)[1]
            if name not in found:
                found.add(name)
                _reachable(document, document["components"]["schemas"][name], found)
        for value in node.values():
            _reachable(document, value, found)
    elif isinstance(node, list):
        for value in node:
            _reachable(document, value, found)
    return found


def _schemas_of(document: dict[str, Any], part: str) -> set[str]:
    found: set[str] = set()
    for operations in document["paths"].values():
        for operation in operations.values():
            _reachable(document, operation.get(part, {}), found)
    return found


def _strings(prop: dict[str, Any]) -> list[dict[str, Any]]:
    strings = [prop] if prop.get("type") == "string" else []
    for key in ("anyOf", "oneOf", "allOf"):
        for alternative in prop.get(key, []):
            strings += _strings(alternative)
    if prop.get("type") == "array":
        strings += _strings(prop.get("items", {}))
    return strings


# Ids another system makes or the office chooses: WhatsApp's (a sender's wa_id, a message's
# wamid, the account's phone number and business account, a catalogue's products), a
# device's, a flow's step ids, a card's field settings and custom fields (the office names
# them), a partner system's record, a template's (the platform's id when known), a picked
# button's or list option's, WhatsApp's pricing conversation.
NOT_OUR_FIELDS = {
    "CardConfigItem.id",
    "CustomField.id",
    "Partner.id",
    "TemplateOut.id",
    "ReplyContent.id",
    "PricingConversation.id",
    "AuditActor.id",  # a key's or user's id, or a system actor's name (worker:retention)
}
NOT_OUR_IDS = {
    "whatsappId",
    "whatsappUserId",
    "replyToExternalId",
    "waId",
    "newWaId",
    "externalId",
    "phoneNumberId",
    "businessAccountId",
    "catalogId",
    "productRetailerId",
    "deviceId",
    "stepId",
    "currentStepId",
}


async def test_every_id_of_a_response_carries_the_id_pattern(app: FastAPI) -> None:
    from officehub.kit.ids import ID_PATTERN

    document = app.openapi()
    schemas = document["components"]["schemas"]
    checked, missing = 0, []
    for name in sorted(_schemas_of(document, "responses")):
        for field, prop in schemas[name].get("properties", {}).items():
            if field in NOT_OUR_IDS or f"{name}.{field}" in NOT_OUR_FIELDS:
                continue
            if not (field == "id" or re.search(r"Ids?$", field)):
                continue
            for string in _strings(prop):
                checked += 1
                if string.get("pattern") != ID_PATTERN:
                    missing.append(f"{name}.{field}")
    assert checked > 100
    assert missing == [], missing


def _inline_enums(node: object, where: str) -> list[str]:
    found: list[str] = []
    if isinstance(node, dict):
        if "enum" in node:
            found.append(where)
        for key, value in node.items():
            found += _inline_enums(value, f"{where}/{key}")
    elif isinstance(node, list):
        for value in node:
            found += _inline_enums(value, where)
    return found


async def test_every_enum_of_a_body_is_a_named_component(app: FastAPI) -> None:
    """A generated client gets one ``MessageType``, ``ConversationStatus``... rather than an
    anonymous enum per field. Query parameters keep theirs inline (no component to name)."""
    document = app.openapi()
    schemas = document["components"]["schemas"]
    bodies = _schemas_of(document, "responses") | _schemas_of(document, "requestBody")
    enums = {name for name in bodies if "enum" in schemas[name]}
    assert {"MessageType", "ConversationStatus", "EventName", "UserRole"} <= enums
    for name in sorted(bodies - enums):
        assert _inline_enums(schemas[name], name) == []
    conversation = schemas["ConversationOut"]["properties"]["status"]
    assert conversation == {"$ref": "#/components/schemas/ConversationStatus"}


async def test_a_name_the_server_strips_is_documented_as_not_blank(app: FastAPI) -> None:
    """The fuzzer sent a column named ``"\\u00a0"``: schema-valid, refused once stripped."""
    from officehub.kit.schemas import NON_BLANK_PATTERN

    schemas = app.openapi()["components"]["schemas"]
    for schema, field in (("ColumnIn", "name"), ("ContactIn", "name"), ("TagCreate", "name")):
        assert schemas[schema]["properties"][field]["pattern"] == NON_BLANK_PATTERN
    for blank in (" ", "\u00a0", "\t", "\u3000 \u2003"):
        assert not re.match(NON_BLANK_PATTERN, blank)
    for name in ("A", " Ana ", "\u00a0x"):
        assert re.match(NON_BLANK_PATTERN, name)
