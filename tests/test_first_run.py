"""A first run as a new user makes it: a real ``officehub serve`` on a port other than 8000."""

from __future__ import annotations

import asyncio
import json
import re
import socket
import sys
from pathlib import Path

import httpx

from tests.server_process import PNG_1X1, avatar_link, clean_env, free_port, running_server

ROOT = Path(__file__).resolve().parent.parent


async def test_first_start_prints_the_demo_office_in_a_frame_before_the_logs(
    tmp_path: Path,
) -> None:
    async with running_server(tmp_path) as server:
        lines = server.stderr_lines
        first_log = next(i for i, line in enumerate(lines) if line.startswith("{"))
        banner = "".join(lines[:first_log])
        assert banner.lstrip().startswith("╭") and "First start" in banner
        assert server.demo_key in banner and server.demo_office in banner
        assert server.url in banner
        for line in lines[first_log:]:
            json.loads(line)  # not a terminal: every log line after the frame is JSON
        async with httpx.AsyncClient() as client:
            r = await client.get(
                f"{server.url}/webhooks/events", headers={"x-service-api-key": server.demo_key}
            )
        assert r.status_code == 200
    async with running_server(tmp_path) as again:
        assert "First start" not in again.stderr  # the demo office is made once


async def test_public_url_follows_the_served_port_so_avatar_links_work(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server, httpx.AsyncClient() as client:
        link = await avatar_link(server)
        assert link.startswith(f"{server.url}/media/")
        fetched = await client.get(link)
        assert fetched.status_code == 200 and fetched.content == PNG_1X1


async def test_default_database_lives_in_the_data_dir(tmp_path: Path) -> None:
    data_dir = tmp_path / "elsewhere"
    run_in = tmp_path / "run"
    run_in.mkdir()
    env = clean_env(OFFICEHUB_DATA_DIR=str(data_dir))
    async with running_server(run_in, env=env):
        pass
    assert (data_dir / "officehub.db").is_file()
    assert list(run_in.iterdir()) == []


async def test_log_format_setting_gives_text_lines(tmp_path: Path) -> None:
    env = clean_env(OFFICEHUB_LOG_FORMAT="text")
    async with running_server(tmp_path, env=env) as server:
        after_frame = server.stderr.split("╯", 1)[1].strip().splitlines()
    assert after_frame and not any(line.startswith("{") for line in after_frame)
    assert any(re.match(r"\d\d:\d\d:\d\d INFO ", line) for line in after_frame)


async def test_quickstart_script_runs_against_a_started_server(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        env = clean_env(OFFICEHUB_URL=server.url, OFFICEHUB_API_KEY=server.demo_key)
        for _ in range(2):  # it can run again against the same office
            proc = await asyncio.create_subprocess_exec(
                "bash",
                str(ROOT / "examples" / "quickstart.sh"),
                env=env,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            _out, err = await asyncio.wait_for(proc.communicate(), 120)
            assert proc.returncode == 0, err.decode()
            assert "every call answered as expected" in err.decode()
            assert f"avatar link works: {server.url}/media/" in err.decode()
            assert "the reply is FAILED: " in err.decode()  # said, with the reason


async def test_quickstart_script_stops_at_the_first_unexpected_answer(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        env = clean_env(OFFICEHUB_URL=server.url, OFFICEHUB_API_KEY="ohk_not-a-key")
        proc = await asyncio.create_subprocess_exec(
            "bash",
            str(ROOT / "examples" / "quickstart.sh"),
            env=env,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode != 0
    assert "FAILED: GET /webhooks/events answered 401" in err.decode()


def test_readme_shows_the_quickstart_calls() -> None:
    """Every call the script makes is in the README's walkthrough, so neither can rot."""
    script = (ROOT / "examples" / "quickstart.sh").read_text()
    readme = (ROOT / "README.md").read_text()
    call = r"^\s*(?:\w+=\$\()?(?:post|patch|call) (?:\d{3} )?(?:[A-Z]+ )?\"?(/[^\s\"']*)"
    calls = re.findall(call, script, re.M)
    assert len(calls) > 30
    missing = [path for path in calls if path.split("?")[0] not in readme]
    assert missing == []
    assert "examples/quickstart.sh" in readme


async def test_a_taken_port_creates_no_demo_office_so_the_next_start_shows_the_key(
    tmp_path: Path,
) -> None:
    port = free_port()
    with socket.socket() as holder:
        holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        holder.bind(("127.0.0.1", port))
        holder.listen()
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "officehub",
            "serve",
            "--port",
            str(port),
            cwd=tmp_path,
            env=clean_env(),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        _out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 1, err.decode()
    lines = err.decode().strip().splitlines()
    assert len(lines) == 1 and "First start" not in lines[0] and "ohk_" not in lines[0]
    assert f"127.0.0.1:{port}" in lines[0] and "PORT=" in lines[0], lines[0]
    async with running_server(tmp_path) as server:
        assert "First start" in server.stderr and server.demo_key in server.stderr


async def test_the_first_start_frame_fits_80_columns_and_stays_on_screen(tmp_path: Path) -> None:
    async with running_server(tmp_path) as server:
        async with asyncio.timeout(60):  # the worker's first round of periodic jobs
            while True:  # lines come from the server's stderr reader
                if any("periodic jobs ran" in line for line in server.stderr_lines):
                    break
                await asyncio.sleep(0.05)
        lines = list(server.stderr_lines)
    frame_end = next(i for i, line in enumerate(lines) if line.startswith("╰"))
    frame = lines[: frame_end + 1]
    assert all(len(line.rstrip("\n")) <= 80 for line in frame), "".join(frame)
    assert any(server.demo_key in line for line in frame)  # the whole key on one line
    assert any(f"OFFICEHUB_API_KEY={server.demo_key}" in line for line in frame)
    # What follows in the first seconds leaves the frame on a 24-line terminal.
    assert len(frame) + len(lines[frame_end + 1 :]) <= 24, "".join(lines)


async def test_the_frame_names_a_command_that_runs_from_where_the_server_started(
    tmp_path: Path,
) -> None:
    async with running_server(tmp_path) as server:
        frame = server.stderr.split("╯", 1)[0]
    text = " ".join(line.strip("│ ") for line in frame.splitlines())
    found = re.search(r"Make another: +(\S.*?) apikey create --office (\w+)", text)
    assert found, frame
    assert found.group(2) == server.demo_office
    command = found.group(1).split()
    proc = await asyncio.create_subprocess_exec(
        *command,
        "apikey",
        "list",
        "--office",
        server.demo_office,
        "--json",
        cwd=tmp_path,
        env=clean_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode()
    assert json.loads(out)["data"][0]["prefix"] == server.demo_key[:10]
