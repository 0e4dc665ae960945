"""A real ``officehub serve`` process on a free port, run in a folder of the test's own."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx

PNG_1X1 = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010802000000907753de"
    "0000000c49444154789c633830c1000003940181906255580000000049454e44ae426082"
)
KEY_RE = re.compile(r"ohk_[A-Za-z0-9_-]+")
OFFICE_RE = re.compile(r"demo office:\s+(c[a-z0-9]+)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without any OFFICEHUB_ setting of the caller's, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFICEHUB_")}
    return {**env, **extra}


@dataclass
class Server:
    url: str
    folder: Path
    stderr_lines: list[str]
    pid: int = 0

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    @property
    def demo_key(self) -> str:
        match = KEY_RE.search(self.stderr)
        assert match, self.stderr
        return match.group(0)

    @property
    def demo_office(self) -> str:
        match = OFFICE_RE.search(self.stderr)
        assert match, self.stderr
        return match.group(1)


@contextlib.asynccontextmanager
async def running_server(
    folder: Path, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[Server]:
    """``officehub serve --port <free> *args`` with ``folder`` as its working folder."""
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "officehub",
        "serve",
        "--port",
        str(port),
        *args,
        cwd=folder,
        env=env if env is not None else clean_env(),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    server = Server(f"http://127.0.0.1:{port}", folder, [], proc.pid)
    assert proc.stderr is not None
    stream = proc.stderr

    async def read_stderr() -> None:
        while line := await stream.readline():
            server.stderr_lines.append(line.decode())

    reader = asyncio.create_task(read_stderr())
    try:
        async with httpx.AsyncClient() as client, asyncio.timeout(60):
            while True:
                if proc.returncode is not None:
                    raise AssertionError(f"officehub serve exited: {server.stderr}")
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get(f"{server.url}/healthz")).status_code == 200:
                        break
                await asyncio.sleep(0.1)
        yield server
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGINT)
            try:
                await asyncio.wait_for(proc.wait(), 20)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        await reader


async def avatar_link(server: Server) -> str:
    """A new user's avatar (``PNG_1X1``) uploaded with the demo key: its signed link."""
    headers = {"x-service-api-key": server.demo_key}
    async with httpx.AsyncClient(base_url=server.url) as client:
        user = await client.post(
            "/user", json={"name": "Ana Lima", "email": "ana@example.com"}, headers=headers
        )
        assert user.status_code == 201, user.text
        avatar = await client.put(
            f"/user/{user.json()['id']}/avatar",
            files={"file": ("a.png", PNG_1X1, "image/png")},
            headers=headers,
        )
        assert avatar.status_code == 200, avatar.text
    link: str = avatar.json()["imageUrl"]
    return link
