"""The OpenAPI document as an SDK's source: a Python client generated from it (as
``make sdk`` does, with ``openapi-python-client``) talks to a running server."""

from __future__ import annotations

import asyncio
import datetime
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from fastapi import FastAPI

from tests.helpers import OfficeFixture
from tests.server import running_server

ROOT = Path(__file__).resolve().parent.parent
MISSING = "cnotatag000000000000000000"


async def generate_client(app: FastAPI, folder: Path) -> Path:
    document = folder / "openapi.json"
    document.write_text(json.dumps(app.openapi()))
    proc = await asyncio.create_subprocess_exec(
        str(Path(sys.executable).parent / "openapi-python-client"),
        "generate",
        "--path",
        str(document),
        "--output-path",
        str(folder / "python"),
        "--config",
        str(ROOT / "scripts" / "openapi-python-client.yaml"),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, out.decode()
    assert "Warning" not in out.decode(), out.decode()  # no piece of the document skipped
    return folder / "python"


def operation(tag: str, name: str) -> Any:
    return importlib.import_module(f"officehub_client.api.{tag}.{name}")


async def test_a_generated_python_client_creates_lists_reads_and_parses_a_404(
    app: FastAPI, office_a: OfficeFixture, tmp_path: Path
) -> None:
    sys.path.insert(0, str(await generate_client(app, tmp_path)))
    try:
        sdk: Any = importlib.import_module("officehub_client")
        create_inbox = operation("inboxes", "create_inbox")
        create_tag, list_tags, get_tag = (
            operation("tags", name) for name in ("create_tag", "list_tags", "get_tag")
        )
        models: Any = importlib.import_module("officehub_client.models")
        async with running_server(app) as url:
            # The three lines an integrator writes (README, "Generated clients"):
            client = sdk.AuthenticatedClient(
                base_url=url, token=office_a.key, prefix="", auth_header_name="x-service-api-key"
            )
            async with client:
                inbox = await create_inbox.asyncio(
                    client=client, body=models.InboxCreate(name="Atendimento")
                )
                assert isinstance(inbox, models.InboxOut), inbox
                body = models.TagCreate(
                    name="Urgente",
                    color="#E53935",
                    inbox_id=inbox.id,
                    modules=[models.TagModule("crm")],
                )
                tag = await create_tag.asyncio(client=client, body=body)
                assert isinstance(tag, models.TagOut), tag
                assert isinstance(tag.created_at, datetime.datetime)  # format: date-time
                page = await list_tags.asyncio(client=client, inbox_id=inbox.id)
                assert [t.id for t in page.data] == [tag.id] and page.total_results == 1
                read = await get_tag.asyncio(client=client, id=tag.id)
                assert read.name == "Urgente" and read.id == tag.id
                missing = await get_tag.asyncio_detailed(client=client, id=MISSING)
                assert missing.status_code == 404
                assert isinstance(missing.parsed, models.ErrorBody)
                assert missing.parsed.code == "NOT_FOUND" and missing.parsed.status_code == 404
    finally:
        sys.path.remove(str(tmp_path / "python"))
        for name in [n for n in sys.modules if n.split(".")[0] == "officehub_client"]:
            del sys.modules[name]


TYPESCRIPT_USE = """\
import type { components, operations, paths } from "./officehub";

type Tag = components["schemas"]["TagOut"];
type NewTag = paths["/tag"]["post"]["requestBody"]["content"]["application/json"];
type NotFound = operations["getTag"]["responses"][404]["content"]["application/json"];

const body: NewTag = { name: "Urgente", color: "#E53935", inboxId: "x", modules: ["crm"] };
const read = (tag: Tag): string => tag.createdAt;
const code = (error: NotFound): string => error.code;
export { body, read, code };
"""


async def run(*argv: str, cwd: Path) -> str:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    out, _ = await asyncio.wait_for(proc.communicate(), 240)
    text = out.decode()
    assert proc.returncode == 0, text
    return text


async def test_typescript_types_generate_without_warnings_and_compile_strict(
    app: FastAPI, tmp_path: Path
) -> None:
    """``make sdk``'s TypeScript half: openapi-typescript (from the npm registry, as the
    Makefile fetches it) reads the document without a warning, and code an integrator
    writes against the types compiles under ``tsc --strict``."""
    (tmp_path / "openapi.json").write_text(json.dumps(app.openapi()))
    out = await run(
        "npx", "--yes", "openapi-typescript@7", "openapi.json", "-o", "officehub.d.ts", cwd=tmp_path
    )
    generator = [line for line in out.splitlines() if "npm warn" not in line]
    assert not [line for line in generator if "warn" in line.lower()], out
    (tmp_path / "use.ts").write_text(TYPESCRIPT_USE)
    await run(
        "npx", "--yes", "-p", "typescript@5", "tsc", "--noEmit", "--strict", "use.ts", cwd=tmp_path
    )
