"""Schemathesis over our own ``/openapi.json``, against a real ``officehub serve``.

The server runs in a folder of the test's own and seeds its demo office on first start;
its key goes with every request. Every operation is generated for, with every check: no
5xx, status codes, content types, headers and bodies as documented, schema-violating data
refused, schema-valid data accepted, a missing key refused, 405 ``Allow`` headers true.

Schema-valid data accepted (``positive_data_acceptance``): the document states every rule
a JSON Schema can state (control characters, ids, the event catalogue, PATCH fields that
take no null, rules across fields); ``tests/schemathesis.toml`` lists the few operations
that also answer 400 for a rule no schema states (a flow's graph, a phone number, an
outbound URL's host, a case number's check digits, ...), each with its rule. Left out:
the template sync, which calls the messaging platform (a 502 when it is unreachable, as
here).

A short pass runs in ``make test`` (``OFFICEHUB_FUZZ_EXAMPLES`` examples per operation,
3 unless told); ``make fuzz`` runs 100 with every phase; ``OFFICEHUB_FUZZ_SMOKE=1`` (the
PostgreSQL leg of ``.ci/run``) one, without the coverage phase. Each failure found is kept as a
regression test in ``tests/test_fuzz_findings.py``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import httpx

from tests.server_process import clean_env, running_server

# A smoke (``OFFICEHUB_FUZZ_SMOKE=1``, the PostgreSQL leg of ``.ci/run``: the server
# fuzzed keeps its data in SQLite either way, which the SQLite leg fuzzes at full strength):
# one example per operation, without the coverage phase.
SMOKE = os.environ.get("OFFICEHUB_FUZZ_SMOKE") == "1"
EXAMPLES = 1 if SMOKE else int(os.environ.get("OFFICEHUB_FUZZ_EXAMPLES", "3"))
LONG = EXAMPLES >= 100
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")
CONFIG = Path(__file__).with_name("schemathesis.toml")


async def test_schemathesis_finds_no_failure(tmp_path: Path) -> None:
    phases = "examples,coverage,fuzzing,stateful" if LONG else "examples,coverage,fuzzing"
    if SMOKE:
        phases = "examples,fuzzing"
    # Rate limits off: the fuzzer sends thousands of requests a minute with one key, and a
    # 429 (documented on every keyed route) would only hide what the route itself answers.
    async with running_server(
        tmp_path, "--no-worker", env=clean_env(OFFICEHUB_RATE_LIMITS="")
    ) as server:
        # The document is built on its first read, which a loaded machine can stretch
        # past schemathesis' 10 s load timeout: build it first.
        async with httpx.AsyncClient(timeout=120) as warm:
            assert (await warm.get(f"{server.url}/openapi.json")).status_code == 200
        proc = await asyncio.create_subprocess_exec(
            str(SCHEMATHESIS),
            "--config-file",
            str(CONFIG),
            "run",
            f"{server.url}/openapi.json",
            "--header",
            f"x-service-api-key: {server.demo_key}",
            "--max-examples",
            str(EXAMPLES),
            "--phases",
            phases,
            # It calls the messaging platform (none here: a 502 by design); its own tests
            # run it against a local platform (tests/test_whatsapp_templates.py).
            "--exclude-path",
            "/integration/{id}/whatsapp-templates/sync",
            # A live stream answers for as long as it is open (OFFICEHUB_STREAM_MAX_SECONDS):
            # a fuzzer waiting for its end waits for that; tests/test_stream.py holds it.
            "--exclude-path",
            "/stream",
            "--generation-database",
            "none",
            "--no-color",
            *([] if LONG else ["--seed", "14"]),
            cwd=tmp_path,
            env=clean_env(),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await proc.communicate()
    report = output.decode(errors="replace")
    print(report[-4000:])  # the summary: operations, cases generated, failures
    assert proc.returncode == 0, report[-20000:]
