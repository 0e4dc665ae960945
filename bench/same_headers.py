"""What the shared request layer answers, byte for byte, of one source tree: every answer's
status, headers (in their order) and body, and the server's log lines, for requests that
each layer answers or marks (a key's success, 401, 404, a NUL, a trailing slash, request ids
kept and replaced, 400, 413, 415, a web chat origin refused, the docs, the console, https
behind the proxy), on a database seeded afresh. Server-made ids, times, durations, the pid
and the port are masked; a client's request id is not.

    .venv/bin/python -m bench.same_headers URL TREE out.txt     # per tree, then:
    cmp main.txt branch.txt

URL is a PostgreSQL (``postgresql+asyncpg://…``, created or emptied here) or SQLite
(``sqlite+aiosqlite:///…``) database. Written for the request layer's cuts (issue 45, item
1: docs/performance.md, "The shared request layer in instructions").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from typing import Any

import httpx

from bench import same_answers, stack_ratio

_ID = re.compile(r"c[0-9a-z]{24}")
_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z?")
_VOLATILE = re.compile(r"process \[\d+\]|127\.0\.0\.1:\d+")


def mask(text: str) -> str:
    return _VOLATILE.sub("<volatile>", _TIME.sub("<time>", _ID.sub("<id>", text)))


def cases(world: dict[str, Any]) -> list[tuple[str, str, dict[str, str], bytes | None]]:
    key = {"x-service-api-key": world["key"]}
    json_key = {**key, "content-type": "application/json"}
    tag = f"/tag/{world['tag_id']}"
    chat = "/webchat/cnotanintegration0000000000/session"
    evil = "https://evil.example"
    return [
        ("GET", tag, key, None),
        ("GET", tag, {**key, "x-request-id": "abc.DEF-1_2"}, None),
        ("GET", tag, {**key, "x-request-id": "bad id!"}, None),
        ("GET", tag, {**key, "x-request-id": "x" * 65}, None),
        ("GET", tag + "/", key, None),
        ("GET", tag, {}, None),
        ("GET", tag, {"x-service-api-key": "wrong"}, None),
        ("GET", "/tag/c0doesnotexist000000000000", key, None),
        ("GET", "/tag/bad%00id", key, None),
        ("GET", "/tag?name=a&name=b", key, None),
        ("GET", "/nowhere", key, None),
        ("POST", "/people", json_key, b'{"name": "Header Test"}'),
        ("POST", "/people", json_key, b'{"name": '),
        ("POST", "/people", {**key, "content-type": "text/plain"}, b'{"name": "x"}'),
        ("POST", "/people", {"content-type": "application/json"}, b'{"name": "x"}'),
        ("POST", "/people", json_key, b'{"name": "' + b"x" * 3_000_000 + b'"}'),
        ("POST", "/people", {**json_key, "x-forwarded-proto": "https"}, b'{"name": "Two"}'),
        ("OPTIONS", chat, {"origin": evil, "access-control-request-method": "POST"}, None),
        ("POST", chat, {"origin": evil, "content-type": "application/json"}, b"{}"),
        ("GET", "/healthz", {}, None),
        ("GET", "/docs", {}, None),
        ("GET", "/console", {}, None),
        ("DELETE", tag, key, None),
        ("GET", tag, key, None),
    ]


def answers(base: str, world: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    with httpx.Client(base_url=base, timeout=30) as client:
        for method, path, headers, body in cases(world):
            head = f"== {method} {mask(path)[:80]}"
            try:
                r = client.request(method, path, headers=headers, content=body)
            except httpx.HTTPError as exc:
                lines.append(f"{head} {type(exc).__name__}")
                continue
            lines.append(f"{head} {r.status_code}")
            for name, value in r.headers.raw:
                shown = "<date>" if name.lower() == b"date" else mask(value.decode("latin-1"))
                lines.append(f"  {name.decode('latin-1')}: {shown}")
            lines.append("  body: " + mask(r.text[:2000]))
    return lines


def log_lines(path: str) -> list[str]:
    lines = []
    with open(path) as handle:
        for line in handle:
            try:
                entry = json.loads(line)
            except ValueError:
                lines.append("raw: " + mask(line.rstrip()))
                continue
            for volatile in ("time", "duration_ms"):
                if volatile in entry:
                    entry[volatile] = f"<{volatile}>"
            lines.append(mask(json.dumps(entry)))
    return lines


def run(url: str, tree: str, out: str) -> None:
    world_file = out + ".world.json"
    same_answers.seed(url, world_file)
    with open(world_file) as handle:
        world: dict[str, Any] = json.load(handle)
    data = out + ".data"
    os.makedirs(data, exist_ok=True)
    port = stack_ratio.free_port()
    env = {**os.environ, "PYTHONPATH": f"{tree}/src:{tree}"}
    args = [sys.executable, "-m", "bench.stack_ratio", "--serve", "officehub", url, str(port)]
    base = f"http://127.0.0.1:{port}"
    with open(out + ".log", "w") as err:
        proc = subprocess.Popen(
            [*args, data], cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=err
        )
        try:
            stack_ratio.await_health(base, proc, f"{tree}'s server", 60)
            lines = answers(base, world)
            time.sleep(1)  # the last access log line written
        finally:
            proc.terminate()
            proc.wait(20)
    with open(out, "w") as handle:
        handle.write("\n".join([*lines, "== log", *log_lines(out + ".log")]) + "\n")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    run(sys.argv[1], sys.argv[2], sys.argv[3])
