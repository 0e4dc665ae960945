"""How long a person waits for each CLI command: wall and CPU seconds of a fresh process.

    .venv/bin/python -m bench.cli_latency [--runs N] [--quick]

Runs every command below ``--runs`` times (median printed) against a temporary SQLite data
folder it migrates first, with bytecode written as on a person's machine (the first run of
each command is thrown away: it may compile the sources). The goal (issue 41): ``--help``
under 1 s and every command under 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_HELP = 1.0
GOAL_COMMAND = 1.5


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds of the child, stdout) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "officehub", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({done.returncode}): {done.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def _person(n: int) -> list[str]:
    return ["--email", f"p{n}@example.com.br", "--name", "Pessoa de medida"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="two runs (tests)")
    options = parser.parse_args()
    runs = 2 if options.quick else options.runs
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "OFFICEHUB_DATA_DIR": str(Path(folder) / "data")}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env.pop("OFFICEHUB_DATABASE_URL", None)
        _run(["migrate"], env)
        made = json.loads(_run(["office", "create", "Escritório de medida", "--json"], env)[2])
        office = made["id"]
        _run(["user", "create", "--office", office, *_person(-1)], env)
        counter = iter(range(1_000_000))

        def commands() -> list[tuple[str, list[str]]]:
            n = next(counter)
            spare = json.loads(_run(["apikey", "create", "--office", office, "--json"], env)[2])
            return [
                ("officehub --help", ["--help"]),
                ("officehub user create --help", ["user", "create", "--help"]),
                ("office list", ["office", "list"]),
                ("office create", ["office", "create", f"Escritório {n}"]),
                ("office rename", ["office", "rename", office, f"Escritório de medida {n}"]),
                ("apikey create", ["apikey", "create", "--office", office]),
                ("apikey list", ["apikey", "list", "--office", office]),
                ("apikey revoke", ["apikey", "revoke", spare["id"]]),
                ("user create", ["user", "create", "--office", office, *_person(n)]),
                (
                    "user create --role SUPERVISOR",
                    [
                        "user",
                        "create",
                        "--office",
                        office,
                        *_person(n + 500_000),
                        "--role",
                        "supervisor",
                    ],
                ),
                (
                    "user reset-password",
                    ["user", "reset-password", "--email", "p-1@example.com.br"],
                ),
                ("people duplicates", ["people", "duplicates", "--office", office]),
                ("audit verify", ["audit", "verify", "--office", office]),
                ("config", ["config"]),
            ]

        figures: dict[str, list[tuple[float, float]]] = {}
        for attempt in range(runs + 1):
            for name, args in commands():
                wall, cpu, _ = _run(args, env)
                if attempt:  # the first run may compile the sources
                    figures.setdefault(name, []).append((wall, cpu))
    print(f"CLI latency, SQLite, {runs} runs each (median), load {os.getloadavg()[0]:.1f}")
    print(f"{'command':<34} {'wall s':>7} {'CPU s':>7}  goal")
    for name, pairs in figures.items():
        wall = statistics.median(p[0] for p in pairs)
        cpu = statistics.median(p[1] for p in pairs)
        goal = GOAL_HELP if "--help" in name else GOAL_COMMAND
        mark = "ok" if wall < goal else "OVER"
        print(f"{name:<34} {wall:>7.2f} {cpu:>7.2f}  < {goal} {mark}")


if __name__ == "__main__":
    main()
