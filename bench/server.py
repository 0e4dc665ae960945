"""The real server as a separate process for memory benches, and its peak RSS from /proc.

async with served({"OFFICEHUB_DATABASE_URL": url, ...}) as (base_url, pid):
    reset_peak(pid); ...; status_kib(pid, "VmHWM")
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx


def status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(field)


def reset_peak(pid: int) -> None:
    """Sets the process's peak RSS (``VmHWM``) back to its current RSS."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.asynccontextmanager
async def served(env: dict[str, str], port: int | None = None) -> AsyncIterator[tuple[str, int]]:
    """uvicorn serving the app with ``env`` added to this process's environment; yields its
    base URL and pid once ``/healthz`` answers (a minute at most: a loaded machine starts
    slowly), and stops it on the way out."""
    port = port or free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "uvicorn",
        "--factory",
        "officehub.app:create_app",
        "--port",
        str(port),
        "--log-level",
        "warning",
        env={**os.environ, **env},
    )
    base_url = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=5) as client:
            for _ in range(600):
                try:
                    if (await client.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
            else:
                raise RuntimeError(f"the server at {base_url} did not start")
        yield base_url, server.pid
    finally:
        server.terminate()
        await server.wait()
