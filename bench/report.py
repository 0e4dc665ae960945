"""``make bench``: every script under ``bench/`` with quick settings, their printed tables
written into ``docs/performance.md`` between ``<!-- bench:begin -->`` and
``<!-- bench:end -->`` (the rest of the file is kept as it is), with two plots under
``docs/img/``: ``GET /funnel/{id}`` latency against funnel size (``bench.funnel_read``) and
officehub's throughput as a share of the bare stack's (``bench.stack_ratio``).

    .venv/bin/python -m bench.report [--only NAME ...] [--no-write]

``--only`` runs the named scripts and replaces just their parts of the generated section
(and the plot made from them).

PostgreSQL parts use the local server at 127.0.0.1:5432 (user postgres), as the tests do
(``OFFICEHUB_BENCH_POSTGRES`` overrides it): each script that takes a database URL gets a
scratch database of its own, dropped afterwards. A script that fails is reported in the
section with its exit status and the end of its error output; the others still run.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import asyncpg

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "performance.md"
IMAGES = ROOT / "docs" / "img"
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
POSTGRES = os.environ.get("OFFICEHUB_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432")
TIMEOUT = 900  # seconds for one script


@dataclass(frozen=True)
class Run:
    name: str  # a bench module
    args: tuple[str, ...] = ()
    database: str = ""  # "pg": a scratch PostgreSQL database, passed as {url}
    label: str = ""  # the databases it runs on, when it picks them itself

    @property
    def title(self) -> str:
        where = self.label or ("PostgreSQL" if self.database else "SQLite")
        return f"{self.name} ({where})"


RUNS = (
    Run("stack_ratio", ("--quick",), label="SQLite and PostgreSQL"),
    Run("funnel_read", ("--quick",)),
    Run("funnel_read", ("--quick", "{url}"), "pg"),
    Run("contact_search", ("--quick",)),
    Run("contact_search", ("--quick", "--url", "{url}"), "pg"),
    Run("webhook_delivery", ("--quick",)),
    Run("webhook_delivery", ("--quick", "--database-url", "{url}"), "pg"),
    Run("rule_eval", ("--quick",)),
    Run("flow_turn", ("--quick",)),
    Run("inbound_path", ("--quick",)),
    Run("inbound_path", ("--quick", "--database-url", "{url}"), "pg"),
    Run("dispatch", ("--quick",)),
    Run("clients_map", ("--quick",), label="PostgreSQL"),
    Run("avatar_upload", ("--quick",)),
    Run("keyless_bodies", ("--quick",)),
    Run("upload_memory", ("--quick",)),
    Run("request_cpu", ("--quick",)),
    Run("request_cpu", ("--quick", "--url", "{url}"), "pg"),
    Run("queue_jobs", ("--jobs", "5000"), label="PostgreSQL"),
)


@dataclass(frozen=True)
class Outcome:
    run: Run
    command: str
    output: str
    seconds: float
    error: str = ""


async def _admin(statement: str) -> None:
    conn = await asyncpg.connect(f"{POSTGRES}/postgres")
    try:
        await conn.execute(statement)
    finally:
        await conn.close()


def execute(run: Run) -> Outcome:
    scratch = f"officehub_bench_{run.name}"
    url = f"{POSTGRES.replace('postgresql://', 'postgresql+asyncpg://')}/{scratch}"
    args = [a.replace("{url}", url) for a in run.args]
    command = " ".join([".venv/bin/python", "-m", f"bench.{run.name}", *args])
    if run.database:
        asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)'))
        asyncio.run(_admin(f'CREATE DATABASE "{scratch}"'))
    started = time.monotonic()
    try:
        done = subprocess.run(
            [sys.executable, "-m", f"bench.{run.name}", *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
        output, code, stderr = done.stdout, done.returncode, done.stderr
    except subprocess.TimeoutExpired as timed_out:
        output, code, stderr = str(timed_out.stdout or ""), -1, f"timed out after {TIMEOUT} s"
    finally:
        if run.database:
            asyncio.run(_admin(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)'))
    seconds = time.monotonic() - started
    error = "" if code == 0 else f"exit {code}: " + "\n".join(stderr.strip().splitlines()[-5:])
    return Outcome(run, command, output.strip(), seconds, error)


# -- plots ----------------------------------------------------------------------------------

_FUNNEL_ROW = re.compile(
    r"^(?P<label>\S.*?)\s+(?P<size>\d[\d,]*)\s+(?P<p50>[\d.]+)\s+(?P<p99>[\d.]+)"
)


def funnel_points(output: str) -> dict[str, list[tuple[int, float]]]:
    """``{query: [(cards, p50 ms), …]}`` from ``bench.funnel_read``'s table."""
    points: dict[str, list[tuple[int, float]]] = {}
    for line in output.splitlines():
        match = _FUNNEL_ROW.match(line)
        if match and not line.startswith("seeded"):
            size = int(match["size"].replace(",", ""))
            points.setdefault(match["label"], []).append((size, float(match["p50"])))
    return points


def stack_ratios(output: str) -> dict[str, dict[str, float]]:
    """``{database: {route: ratio}}`` from ``bench.stack_ratio``'s markdown tables."""
    ratios: dict[str, dict[str, float]] = {}
    database = ""
    for line in output.splitlines():
        if re.match(r"^\w+:$", line.strip()):
            database = line.strip()[:-1]
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if database and len(cells) > 2 and cells[0].startswith("`"):
            found = re.match(r"([\d.]+)x", cells[-1])
            if found:
                ratios.setdefault(database, {})[cells[0].strip("`")] = float(found.group(1))
    return ratios


def plot_funnel(series: dict[str, dict[str, list[tuple[int, float]]]], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = {db: points for db, points in series.items() if points}
    if not shown:
        return False
    fig, axes = plt.subplots(1, len(shown), figsize=(5.5 * len(shown), 4), squeeze=False)
    for ax, (database, points) in zip(axes[0], shown.items(), strict=True):
        for label, values in points.items():
            sizes, p50s = zip(*sorted(values), strict=True)
            ax.plot(sizes, p50s, marker="o", label=label)
        ax.set_xscale("log")
        ax.set_ylim(bottom=0)
        ax.set_xlabel("cards in the funnel")
        ax.set_ylabel("p50 latency (ms)")
        ax.set_title(f"GET /funnel/{{id}}, {database}")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


def plot_ratios(ratios: dict[str, dict[str, float]], path: Path) -> bool:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not ratios:
        return False
    routes = list(next(iter(ratios.values())))
    fig, ax = plt.subplots(figsize=(9, 4))
    width = 0.8 / len(ratios)
    for n, (database, values) in enumerate(ratios.items()):
        xs = [i + n * width for i in range(len(routes))]
        ax.bar(xs, [values.get(r, 0.0) for r in routes], width, label=database)
    ax.axhline(0.7, color="green", linestyle="--", linewidth=1, label="goal for reads (0.7x)")
    ax.axhline(0.5, color="orange", linestyle="--", linewidth=1, label="goal for writes (0.5x)")
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks([i + width * (len(ratios) - 1) / 2 for i in range(len(routes))])
    ax.set_xticklabels(routes, fontsize=8)
    ax.set_ylabel("officehub req/s ÷ bare app req/s")
    ax.set_title("Throughput against the bare stack (bench.stack_ratio --quick)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return True


# -- the section ----------------------------------------------------------------------------


def _commit() -> str:
    found = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return found.stdout.strip() or "unknown"


def subsection(outcome: Outcome) -> list[str]:
    lines = [f"### {outcome.run.title}", "", "```sh", outcome.command, "```", ""]
    if outcome.error:
        lines += ["Failed:", "", "```text", outcome.error, "```", ""]
    body = outcome.output
    if body and any(line.startswith("|") for line in body.splitlines()):
        lines += [body, ""]  # markdown tables already
    elif body:
        lines += ["```text", body, "```", ""]
    return [*lines, f"({outcome.seconds:.0f} s)", ""]


def replace_subsections(doc: str, outcomes: list[Outcome], images: list[str]) -> str:
    """``--only``: the section as it is, but the subsections of the scripts run again."""
    head, rest = doc.split(BEGIN, 1)
    block, tail = rest.split(END, 1)
    for image in images:
        if f"(img/{image})" not in block:
            first, _, others = block.partition("\n### ")
            block = f"{first}![{image}](img/{image})\n\n### {others}"
    for outcome in outcomes:
        title = f"### {outcome.run.title}\n"
        new = "\n".join(subsection(outcome))
        if title in block:
            before, after = block.split(title, 1)
            nxt = after.find("\n### ")
            block = before + new + (after[nxt + 1 :] if nxt >= 0 else "\n")
        else:
            block = block.rstrip("\n") + "\n\n" + new + "\n"
    return head + BEGIN + block + END + tail


def section(outcomes: list[Outcome], images: list[str]) -> str:
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    lines = [
        "## `make bench` (generated)",
        "",
        "Written by `make bench` (`bench/report.py`): every script under `bench/` with its quick "
        "settings, one after the other. Do not edit by hand: the next run replaces it.",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC at commit `{_commit()}`, Python "
        f"{platform.python_version()}, {os.cpu_count()} cores, load average {load} at the end "
        "(other work shares the machine: read ratios, not absolute figures).",
        "",
    ]
    for image in images:
        lines += [f"![{image}](img/{image})", ""]
    for outcome in outcomes:
        lines += subsection(outcome)
    return "\n".join(lines).rstrip() + "\n"


def write(text: str) -> None:
    doc = DOC.read_text()
    block = f"{BEGIN}\n{text}{END}"
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        DOC.write_text(head + block + tail)
    else:
        DOC.write_text(doc.rstrip("\n") + "\n\n" + block + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--only", nargs="*", help="bench modules to run (default: all)")
    parser.add_argument("--no-write", action="store_true", help="print, leave the docs alone")
    args = parser.parse_args()
    outcomes = []
    for run in RUNS:
        if args.only and run.name not in args.only:
            continue
        print(f"bench: {run.title} ...", flush=True)
        outcome = execute(run)
        print(outcome.output or outcome.error, f"\n({outcome.seconds:.0f} s)\n", flush=True)
        outcomes.append(outcome)
    funnel = {
        ("PostgreSQL" if o.run.database else "SQLite"): funnel_points(o.output)
        for o in outcomes
        if o.run.name == "funnel_read"
    }
    ratios = {
        db: values
        for o in outcomes
        if o.run.name == "stack_ratio"
        for db, values in stack_ratios(o.output).items()
    }
    images = []
    if not args.no_write:
        IMAGES.mkdir(parents=True, exist_ok=True)
        if plot_funnel(funnel, IMAGES / "bench_funnel_latency.png"):
            images.append("bench_funnel_latency.png")
        if plot_ratios(ratios, IMAGES / "bench_stack_ratio.png"):
            images.append("bench_stack_ratio.png")
    text = section(outcomes, images)
    if args.no_write:
        print(text)
        return
    doc = DOC.read_text()
    if args.only and BEGIN in doc and END in doc:
        DOC.write_text(replace_subsections(doc, outcomes, images))
    else:
        write(text)
    print(f"wrote {DOC.relative_to(ROOT)} and {', '.join(images) or 'no plot'}")
    failed = [o.run.title for o in outcomes if o.error]
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
