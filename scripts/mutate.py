"""Mutation testing of the rule modules with cosmic-ray, each against its own tests.

    make mutate                          # every target, two at a time, each within its budget
    make mutate MUTATE=ssrf              # one target (names: see TARGETS)
    make mutate MUTATE_BUDGET=300        # seconds per target (default 600)
    python scripts/mutate.py --fresh ssrf    # start a target's session over

Each target is a module (or a few functions of one: the rule, not the whole file) and the
test files that hold its rules, run on SQLite or on both databases in turn. The target
runs in a scratch copy of the repository (``.mutate/<target>/``), never in the working
tree: cosmic-ray edits the module in place, one mutant at a time, and runs the tests. A
session is resumed where it stopped, so a budget too short for a target's mutants is
finished by running it again; after a change to the tests only the survivors run again.
Prints, per target, killed / survived / not run yet, and each surviving mutant's diff.
Equivalent mutants (no behaviour change) are listed in docs/testing.md.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import os
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from cosmic_ray.work_db import WorkDB, use_db
from cosmic_ray.work_item import WorkerOutcome, WorkResult

ROOT = Path(__file__).resolve().parent.parent
PG_URL = os.environ.get(
    "OFFICEHUB_MUTATE_DATABASE_URL", "postgresql+asyncpg://postgres@127.0.0.1:5432/test"
)
SCRATCH = ROOT / ".mutate"
BIN = Path(sys.executable).parent


@dataclass(frozen=True)
class Target:
    module: str
    tests: list[str]
    # Only mutants inside these functions (the rule); empty: the whole module.
    functions: frozenset[str] = field(default_factory=frozenset)
    pytest_args: list[str] = field(default_factory=list)
    # The databases the tests run on, in turn (a mutant is killed when a run fails). A row
    # lock matters on PostgreSQL (OFFICEHUB_MUTATE_DATABASE_URL); on SQLite a writing request
    # holds the database's lock from its BEGIN IMMEDIATE, and the code has a branch for each.
    databases: tuple[str, ...] = ("sqlite",)


BOTH = ("sqlite", "postgresql")
KEY_CACHE_TESTS = (
    "test_a_resolved_key_is_served_from_the_cache_without_a_query",
    "test_concurrent_requests_with_an_uncached_key_cost_one_key_lookup",
    "test_the_key_cache_forgets_after_its_ttl_and_starts_over_when_full",
    "test_the_key_cache_never_holds_more_than_its_size",
    "test_a_key_cache_of_ttl_zero_keeps_nothing",
    "test_key_lookups_are_single_flight_per_key_hash",
    "test_a_failed_key_lookup_fails_its_waiters_and_the_next_asks_again",
)

TARGETS = {
    # The SSRF guard: which addresses a delivery may connect to, and to which peer; which
    # error of a failed request is the guard's refusal (``refused_by_guard``).
    "ssrf": Target(
        "src/officehub/kit/outbound/ssrf.py",
        ["tests/test_webhook_ssrf.py", "tests/test_kit_outbound.py"],
    ),
    # The 24-hour WhatsApp service window: opened by the contact's inbound messages only.
    "window": Target(
        "src/officehub/messages/outbound.py",
        ["tests/test_whatsapp_dispatch.py"],
        frozenset({"_window_open", "check_service_window"}),
        ["-k", "window"],
    ),
    "window-query": Target(
        "src/officehub/messages/repository.py",
        ["tests/test_whatsapp_dispatch.py"],
        frozenset({"last_inbound_at"}),
        ["-k", "window"],
    ),
    # An automation rule's effective conditions, which the else-branch needs.
    # Its PATCH reads the rule locked (PostgreSQL: the lock is seen there only).
    "conditions": Target(
        "src/officehub/automation/service.py",
        ["tests/test_automation_rules.py"],
        frozenset({"create_rule", "update_rule", "has_effective_conditions"}),
        databases=BOTH,
    ),
    # Webhook signatures: what is signed (timestamp and body), the header, the checks.
    "signing": Target(
        "src/officehub/kit/outbound/signing.py",
        [
            "tests/test_webhook_delivery.py",
            "tests/test_standard_webhooks.py",
            "tests/test_kit_outbound.py",
        ],
        pytest_args=["-k", "signature or verify or standard or whsec or secret"],
    ),
    # Keys and scopes, roles: which scope and roles a route needs, the key cache's expiry.
    "keys": Target(
        "src/officehub/kit/auth.py",
        [
            "tests/test_auth.py",
            "tests/test_scopes.py",
            "tests/test_roles.py",
            *(f"tests/test_performance.py::{name}" for name in KEY_CACHE_TESTS),
        ],
        frozenset(
            {
                "scope_of",
                "roles_of",
                "allowed_roles",
                "require_role",
                "require",
                "who",
                "get",
                "put",
                "resolve",
                "hash_key",
                "lookup_key",
                "current_office",
            }
        ),
    ),
    # Tenant scoping: every read of a record is filtered by its office (and the erasure's
    # search for a contact's ids in other records' payloads, ``mentioning``).
    "scoping": Target(
        "src/officehub/kit/repository.py",
        ["tests/test_tenant_isolation.py", "tests/test_invariants.py", "tests/test_erasure.py"],
        frozenset({"scoped", "_by_id", "get_scoped", "get_all_for_change", "mentioning"}),
        databases=BOTH,
    ),
    # Uniqueness and locking: conflicts answered 409, rows locked in order, sets replaced
    # by their difference.
    "locking": Target(
        "src/officehub/kit/repository.py",
        ["tests/test_invariants.py", "tests/test_races.py"],
        frozenset(
            {
                "_by_id_for_update",
                "lock_rows",
                "flush_or_conflict",
                "insert_or_conflict",
                "conflicts_as",
                "insert_ignoring_duplicates",
                "replace_set",
                "lock_office",
            }
        ),
        databases=BOTH,
    ),
    # A flow's graph: dangling next steps, missing metadata, cycles without a wait.
    "flow-graph": Target("src/officehub/flows/graph.py", ["tests/test_flows.py"]),
    # Erasure of a client (LGPD): what is scrubbed, what is kept.
    "erasure": Target("src/officehub/contacts/erasure.py", ["tests/test_erasure.py"]),
}


def _spans(module: Path, functions: frozenset[str]) -> list[tuple[int, int]]:
    tree = ast.parse(module.read_text())
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in functions
    ]
    missing = functions - {
        n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    if missing:
        raise SystemExit(f"{module}: no function {', '.join(sorted(missing))}")
    return spans


def _digest(parts: tuple[str, ...] = ("src", "tests", "pyproject.toml")) -> str:
    """What the scratch copy is made of: by default src/, tests/ and pyproject.toml."""
    digest = hashlib.sha256()
    for part in parts:
        paths = [ROOT / part] if (ROOT / part).is_file() else sorted((ROOT / part).rglob("*"))
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts and ".db" not in path.name:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _copy_tree(tree: Path) -> None:
    for part in ("src", "tests"):
        if (tree / part).exists():
            shutil.rmtree(tree / part)
    ignore = shutil.ignore_patterns("__pycache__", "*.db", "*.db-*")
    for part in ("src", "tests"):
        shutil.copytree(ROOT / part, tree / part, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", tree / "pyproject.toml")


def _scratch(name: str, target: Target, fresh: bool) -> tuple[Path, bool]:
    """A copy of src/, tests/ and pyproject.toml, and whether its survivors are to run
    again. The session starts over when the target module changed (its mutants moved);
    when only the rest of the tree changed (a test added to kill a survivor), the copy is
    made again and the mutants that survived run again, the killed ones stay killed (as
    when the target's database changed)."""
    work = SCRATCH / name
    tree, stamp, module_stamp = work / "tree", work / "digest", work / "module-digest"
    # The databases are part of the tree's stamp: survivors on SQLite run again on both.
    digest, module_digest = _digest() + "+".join(target.databases), _digest((target.module,))
    same_module = module_stamp.exists() and module_stamp.read_text() == module_digest
    if not fresh and tree.exists() and same_module:
        if stamp.exists() and stamp.read_text() == digest:
            return work, False
        _copy_tree(tree)
        stamp.write_text(digest)
        return work, True
    if work.exists():
        shutil.rmtree(work)
    tree.mkdir(parents=True)
    _copy_tree(tree)
    stamp.write_text(digest)
    module_stamp.write_text(module_digest)
    return work, False


def _run_survivors_again(session: Path) -> int:
    """Forgets the survivors' results (and the timeouts'): they run again."""
    with use_db(str(session), WorkDB.Mode.open) as db:
        again = [
            job
            for job, result in db.results
            if result.worker_outcome != WorkerOutcome.SKIPPED and not result.is_killed
        ]
    with sqlite3.connect(session) as db:
        db.executemany("DELETE FROM work_results WHERE job_id = ?", [(job,) for job in again])
    return len(again)


def _config(work: Path, target: Target) -> Path:
    """cosmic-ray's configuration; its test command is a script running the target's tests
    on each of its databases in turn, stopping at the first failure."""
    pytest = [
        str(BIN / "python"),
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        *target.tests,
        *target.pytest_args,
    ]
    runs = [
        (
            "env -u OFFICEHUB_TEST_DATABASE_URL"
            if database == "sqlite"
            else f"env OFFICEHUB_TEST_DATABASE_URL={shlex.quote(PG_URL)}"
        )
        + " "
        + shlex.join(pytest)
        for database in target.databases
    ]
    script = work / "run-tests.sh"
    script.write_text("#!/bin/sh\nset -e\n" + "\n".join(runs) + "\n")
    config = work / "cosmic-ray.toml"
    config.write_text(
        "[cosmic-ray]\n"
        f'module-path = "{target.module}"\n'
        f"timeout = {120.0 * len(target.databases)}\n"
        "excluded-modules = []\n"
        f'test-command = "sh {script}"\n'
        "\n[cosmic-ray.distributor]\n"
        'name = "local"\n'
    )
    return config


def _annotations(module: Path) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """Where the module's annotations are: never evaluated (``from __future__ import
    annotations``), so a mutant there (``str | None`` to ``str & None``) is equivalent."""
    spans = []
    for node in ast.walk(ast.parse(module.read_text())):
        found: list[ast.expr | None] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append(node.returns)
        elif isinstance(node, ast.arg | ast.AnnAssign):
            found.append(node.annotation)
        spans += [
            ((a.lineno, a.col_offset), (a.end_lineno or a.lineno, a.end_col_offset or 0))
            for a in found
            if a is not None
        ]
    return spans


def _skip_outside(session: Path, module: Path, target: Target) -> None:
    """Marks as skipped (never run) the mutants outside the target's functions and those
    inside an annotation."""
    functions = _spans(module, target.functions) if target.functions else []
    annotations = _annotations(module)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            start = tuple(item.mutations[0].start_pos)
            outside = functions and not any(a <= start[0] <= b for a, b in functions)
            annotation = any(a <= start < b for a, b in annotations)
            if outside or annotation:
                db.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED))


def _report(session: Path, name: str) -> str:
    with use_db(str(session), WorkDB.Mode.open) as db:
        specs = {item.job_id: item.mutations[0] for item in db.work_items}
        results = dict(db.results)
    ran = {job: r for job, r in results.items() if r.worker_outcome != WorkerOutcome.SKIPPED}
    killed = [job for job, r in ran.items() if r.is_killed]
    survived = [job for job, r in ran.items() if not r.is_killed]
    pending = [job for job in specs if job not in results]
    skipped = len(results) - len(ran)
    lines = [
        f"{name}: {len(specs)} mutants, {skipped} skipped (outside the rule or in an "
        f"annotation), {len(killed)} killed, {len(survived)} survived, "
        f"{len(pending)} not run yet"
    ]
    for job in sorted(survived, key=lambda j: specs[j].start_pos):
        spec = specs[job]
        lines.append(f"  SURVIVED line {spec.start_pos[0]} ({spec.operator_name}):")
        for line in (ran[job].diff or "").splitlines():
            if line.startswith(("+", "-")) and not line.startswith(("+++", "---")):
                lines.append(f"    {line}")
    return "\n".join(lines)


def _exec(config: Path, session: Path, cwd: Path, env: dict[str, str], budget: float) -> bool:
    """``cosmic-ray exec`` until done (True) or out of budget (False); then its process
    group is ended (the caller restores the module: a mutant may have been in place)."""
    proc = subprocess.Popen(  # noqa: S603 (the venv's cosmic-ray)
        [str(BIN / "cosmic-ray"), "exec", str(config), str(session)],
        cwd=cwd,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
    )
    try:
        proc.wait(timeout=budget)
    except subprocess.TimeoutExpired:
        # SIGINT first: pytest ends as on Ctrl-C, running its teardown (the PostgreSQL
        # databases of the test under way are dropped); then SIGKILL if it lingers.
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return False
    return True


def run(name: str, budget: float, fresh: bool = False) -> str:
    """Runs one target within ``budget`` seconds; its report, as text."""
    target = TARGETS[name]
    work, again = _scratch(name, target, fresh)
    config = _config(work, target)
    tree = work / "tree"
    shutil.copy2(ROOT / target.module, tree / target.module)  # an earlier run killed mid-mutant
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    session = work / "session.sqlite"
    lines = []
    if not session.exists():
        subprocess.run(  # noqa: S603 (the venv's cosmic-ray)
            [str(BIN / "cosmic-ray"), "init", str(config), str(session)],
            cwd=tree,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        _skip_outside(session, tree / target.module, target)
    elif again:
        lines.append(f"{name}: the tests changed; {_run_survivors_again(session)} survivors again")
    started = time.monotonic()
    if not _exec(config, session, tree, env, budget):
        lines.append(f"{name}: the budget of {budget:.0f} s ran out; run it again to go on")
    shutil.copy2(ROOT / target.module, tree / target.module)
    lines.append(f"{name}: {time.monotonic() - started:.0f} s on {' and '.join(target.databases)}")
    return "\n".join([*lines, _report(session, name)])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("targets", nargs="*", help=f"of {', '.join(TARGETS)} (default: all)")
    parser.add_argument("--budget", type=float, default=480.0, help="seconds per target")
    parser.add_argument("--jobs", type=int, default=1, help="targets run at once")
    parser.add_argument("--fresh", action="store_true", help="start the sessions over")
    args = parser.parse_args()
    unknown = set(args.targets) - TARGETS.keys()
    if unknown:
        parser.error(f"no target {', '.join(sorted(unknown))}; targets: {', '.join(TARGETS)}")
    names = args.targets or list(TARGETS)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        running = [pool.submit(run, name, args.budget, args.fresh) for name in names]
        for done in running:  # in the order asked, each as soon as it and those before end
            print(done.result(), flush=True)


if __name__ == "__main__":
    main()
