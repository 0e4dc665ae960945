"""``examples/verify_webhook.py`` (standard library only) checks a real signed delivery."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import httpx
import pytest
from fastapi import FastAPI

from officehub.kit.config import Settings
from tests.helpers import OfficeFixture
from tests.receiver import running_receiver
from tests.webhook_helpers import create_webhook, delivery_worker, emit_event

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "verify_webhook.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("verify_webhook_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_example_imports_only_the_standard_library() -> None:
    source = EXAMPLE.read_text()
    imports = {
        line.split()[1].split(".")[0]
        for line in source.splitlines()
        if line.startswith(("import ", "from "))
    }
    assert imports <= {
        "__future__",
        "hashlib",
        "hmac",
        "json",
        "os",
        "sys",
        "time",
        "collections",
        "http",
        "typing",
    }


async def test_example_verifies_a_real_delivery_and_refuses_a_forged_one(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    verify = _example().verify
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, receiver.url, secret="receiver-secret-1")
        event_id = await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    event = verify("receiver-secret-1", got.headers, got.body)
    assert event["id"] == event_id and event["event"] == "contact.created"
    with pytest.raises(ValueError, match="no signature"):
        verify("another-secret", got.headers, got.body)
    with pytest.raises(ValueError, match="no signature"):
        verify("receiver-secret-1", got.headers, got.body.replace(b"Maria", b"Mario"))
    with pytest.raises(ValueError, match="tolerance"):
        verify("receiver-secret-1", got.headers, got.body, tolerance=-1)
    with pytest.raises(ValueError, match="missing"):
        verify("receiver-secret-1", {}, got.body)
