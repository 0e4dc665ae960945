"""Every benchmark script under ``bench/`` that runs on SQLite alone still runs, with its
quick settings. They print figures and assert none: these tests hold only that each one
finishes and prints. ``bench/webhook_delivery.py`` had stopped finishing for two days
(its webhook was not yet flushed when its events were recorded, so none was delivered)
and only ``make bench`` could tell. The PostgreSQL ones and the two that load a server with
``wrk`` for a minute (``stack_ratio``, ``funnel_read``) are left to ``make bench``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SCRIPTS = [
    ("webhook_delivery", "--quick"),
    ("audit_trail", "--quick"),
    ("rule_eval", "--quick"),
    ("flow_turn", "--quick"),
    ("inbound_path", "--quick"),
    ("dispatch", "--quick"),
    ("contact_search", "--quick"),
    ("avatar_upload", "--quick"),
    ("keyless_bodies", "--quick"),
    ("upload_memory", "--quick"),
    ("case_watch", "--cases", "50", "--no-tracemalloc"),
    ("djen_sync", "--lawyers", "10", "--no-tracemalloc"),
    ("request_cpu", "--quick"),
    ("client_export", "--quick"),
    ("conversation_reports", "--quick"),
]


@pytest.mark.parametrize(
    ("script", "args"), [(s[0], s[1:]) for s in SCRIPTS], ids=[s[0] for s in SCRIPTS]
)
def test_the_benchmark_script_runs_to_its_figures(script: str, args: tuple[str, ...]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{script}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), done.stderr[-3000:]
