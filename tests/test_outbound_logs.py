"""No URL userinfo or query string of an outbound call reaches a log (issue 27, item 3).

httpx logs every request at INFO (``HTTP Request: POST http://user:pass@host/hook?token=…``);
a webhook URL may carry credentials in either place."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import FastAPI

from officehub.kit.config import Settings
from officehub.kit.logs import JsonFormatter, TextFormatter, configure_logging, redacted_urls
from tests.helpers import OfficeFixture
from tests.receiver import running_receiver
from tests.webhook_helpers import create_webhook, delivery_worker, emit_event

SECRETS = ("hookuser", "s3cretpass", "tok-abc-123", "sig=xyz")


def _credentialed(url: str) -> str:
    return url.replace("http://", "http://hookuser:s3cretpass@") + "?token=tok-abc-123&sig=xyz"


def test_a_url_loses_its_userinfo_and_query_string() -> None:
    text = 'HTTP Request: POST http://u:p@127.0.0.1:8080/hook?token=t#f "HTTP/1.1 200 OK"'
    assert redacted_urls(text) == (
        'HTTP Request: POST http://127.0.0.1:8080/hook?[withheld] "HTTP/1.1 200 OK"'
    )
    assert redacted_urls("https://example.com/path") == "https://example.com/path"
    assert redacted_urls("no url at all") == "no url at all"


async def test_no_url_userinfo_or_query_string_of_an_outbound_call_reaches_a_log(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="httpx")
    async with running_receiver() as receiver:
        await create_webhook(client, office_a, _credentialed(receiver.url))
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
        [got] = receiver.received
    assert got.headers["authorization"].startswith("Basic ")  # the call itself keeps them
    lines = [r for r in caplog.records if r.name == "httpx"]
    assert any("HTTP Request: POST http://127.0.0.1" in r.getMessage() for r in lines)
    written = [f.format(r) for r in lines for f in (JsonFormatter(), TextFormatter(False))]
    assert all(secret not in line for line in written for secret in SECRETS), written


async def test_the_served_log_output_holds_no_webhook_credentials(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The log lines a server writes on stderr (``configure_logging``, JSON)."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    configure_logging("INFO", "json")
    try:
        async with running_receiver() as receiver:
            await create_webhook(client, office_a, _credentialed(receiver.url))
            await emit_event(app, office_a.id)
            await delivery_worker(app, settings).run_until_idle()
            assert len(receiver.received) == 1
    finally:
        root.handlers[:], root.level = handlers, level
    err = capsys.readouterr().err
    assert "HTTP Request: POST http://127.0.0.1" in err
    assert "?[withheld]" in err
    assert all(secret not in err for secret in SECRETS), err
