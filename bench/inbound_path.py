"""The inbound WhatsApp path: a signed notification of the platform → the message stored →
an automation rule's reply handed to the platform, through a real ``officehub serve``.

    .venv/bin/python -m bench.inbound_path [--messages 400] [--senders 50] [--rate 10]
        [--database-url URL] [--worker-poll SECONDS] [--quick]

The database (a temporary SQLite file unless ``--database-url``) is migrated and given an
office whose official WhatsApp integration's inbox has one rule: every
``chat.message.received`` answers with a TEXT fast message. A stand-in of the Cloud API runs
in its own process on 127.0.0.1 and records when each ``POST /{phoneNumberId}/messages``
arrived; ``officehub serve`` (API and its worker in one process) runs as a subprocess with
``OFFICEHUB_WHATSAPP_API_URL`` pointing at it. Then ``--messages`` notifications, each a new
text message from one of ``--senders`` senders (signed with the integration's app secret,
``X-Hub-Signature-256``), are posted open loop at ``--rate`` per second (each leaves on
time whether or not the earlier ones were answered, as the platform posts).

Printed, each p50/p99 in ms from the moment a notification was posted: → 200 answered;
→ inbound message stored (its ``created_at``, the server's clock); → the rule's reply
stored ``QUEUED`` for the dispatcher (the n-th outbound message of a conversation answers
its n-th inbound one); → the reply arrived at the stand-in (replies to one sender matched
to that sender's notifications in order). Answers other than 200 are counted and shown
(and their notifications left out of the figures). Then the throughput: notifications per
second posted and answered, and replies per second from the first notification to the
last reply. One machine, one clock: every time is ``time.time()`` or its UTC equivalent.
Above what the server sustains (replies/s below ``--rate``) the queue grows and the
latencies are the queue's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select

from officehub.automation import service as automation
from officehub.automation.schemas import RuleCreate
from officehub.channels.whatsapp import SIGNATURE_HEADER, sign
from officehub.fast_messages.models import FastMessage
from officehub.inboxes import service as inboxes
from officehub.inboxes.schemas import InboxCreate, IntegrationCreate
from officehub.kit.config import Settings
from officehub.kit.db import create_engine, create_sessionmaker
from officehub.kit.encryption import load_secrets_keys
from officehub.messages.models import Message
from officehub.migrate import migrate_async
from officehub.offices import service as offices

PHONE_NUMBER_ID = "106540352242922"
WABA_ID = "102290129340398"
TOKEN = "EAAG-bench-access-token"  # noqa: S105
APP_SECRET = "app-secret-of-the-bench"  # noqa: S105
REPLY = "Olá! Recebemos a sua mensagem."
WAIT_SECONDS = 120  # for the server to start, and for the last replies
IN_FLIGHT = 50  # notifications posted and not yet answered, at most


def platform_main(port: int) -> None:
    """A minimal Cloud API: ``POST /v26.0/{phoneNumberId}/messages`` answers a ``wamid`` and
    records ``(to, arrival)``; ``GET /stats`` returns them."""
    import uvicorn

    arrivals: list[tuple[str, float]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        now = time.time()
        status, reply = 200, b"{}"
        if scope["path"] == "/stats":
            reply = json.dumps({"arrivals": arrivals}).encode()
        elif scope["path"].endswith("/message_templates"):  # the periodic catalogue sync
            reply = b'{"data": [], "paging": {}}'
        elif scope["method"] == "POST" and scope["path"].endswith("/messages"):
            sent = json.loads(body)
            if sent.get("status") == "read":
                reply = b'{"success": true}'
            else:
                arrivals.append((sent["to"], now))
                answer = {
                    "messaging_product": "whatsapp",
                    "contacts": [{"input": sent["to"], "wa_id": sent["to"]}],
                    "messages": [{"id": f"wamid.bench{len(arrivals):06d}"}],
                }
                reply = json.dumps(answer).encode()
        else:
            status = 404
        headers = [(b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": reply})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def _world(database_url: str, data_dir: Path) -> str:
    """The office, its official integration and the rule; the integration's id. The
    integration's secrets are sealed with the key of the server's data folder."""
    await migrate_async(database_url)
    settings = Settings(database_url=database_url, signing_key="bench", data_dir=data_dir)
    load_secrets_keys(settings)
    engine = create_engine(database_url)
    async with create_sessionmaker(engine)() as s:
        office = await offices.create_office(s, "Bench office")
        inbox = await inboxes.create_inbox(s, office.id, InboxCreate(name="Atendimento"))
        integration = await inboxes.create_integration(
            s,
            office.id,
            IntegrationCreate.model_validate(
                {
                    "inboxId": inbox.id,
                    "type": "WHATSAPP_OFFICIAL",
                    "name": "WhatsApp oficial",
                    "deviceId": "5511999990000",
                    "whatsapp": {
                        "phoneNumberId": PHONE_NUMBER_ID,
                        "businessAccountId": WABA_ID,
                        "accessToken": TOKEN,
                        "appSecret": APP_SECRET,
                        "verifyToken": "bench-verify-token",
                    },
                }
            ),
        )
        fast = FastMessage(
            office_id=office.id, inbox_id=inbox.id, title="Recebido", kind="TEXT", text=REPLY
        )
        s.add(fast)
        await s.flush()
        rule = RuleCreate.model_validate(
            {
                "name": "Resposta automática",
                "triggerEvent": "chat.message.received",
                "integrationId": integration.id,
                "actions": [
                    {"action": "SEND_FAST_MESSAGE", "actionParams": {"fastMessageId": fast.id}}
                ],
            }
        )
        await automation.create_rule(s, office.id, rule, settings)
        await s.commit()
        ident: str = integration.id
    await engine.dispose()
    return ident


def _sender(n: int) -> str:
    return f"55119{n:08d}"


def _notification(wamid: str, sender: str, n: int) -> bytes:
    value = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "5511999990000", "phone_number_id": PHONE_NUMBER_ID},
        "contacts": [{"profile": {"name": f"Cliente {sender[-4:]}"}, "wa_id": sender}],
        "messages": [
            {
                "from": sender,
                "id": wamid,
                "timestamp": str(int(time.time())),
                "type": "text",
                "text": {"body": f"Olá, preciso de ajuda com o processo ({n})"},
            }
        ],
    }
    body = {
        "object": "whatsapp_business_account",
        "entry": [{"id": WABA_ID, "changes": [{"field": "messages", "value": value}]}],
    }
    return json.dumps(body).encode()


async def _wait_ready(url: str, server: subprocess.Popen[bytes] | None = None) -> None:
    async with httpx.AsyncClient() as client:
        for _ in range(WAIT_SECONDS * 20):
            if server is not None and server.poll() is not None:
                raise SystemExit(f"officehub serve exited with {server.returncode}")
            try:
                await client.get(url)
                return
            except httpx.TransportError:
                await asyncio.sleep(0.05)
    raise SystemExit(f"{url} did not answer")


async def _arrivals(platform: str) -> list[tuple[str, float]]:
    async with httpx.AsyncClient() as client:
        data = (await client.get(f"{platform}/stats")).json()
    return [(to, at) for to, at in data["arrivals"]]


async def _post_paced(
    server: str, integration_id: str, messages: int, senders: int, rate: float
) -> tuple[dict[str, tuple[str, float]], list[float], Counter[int], float]:
    """``{wamid: (sender, posted at)}`` of the notifications answered 200, their answer
    times in ms, the count of every other answer by status, the run's seconds.

    Open loop, as the platform posts: notification ``n`` leaves at ``n / rate`` seconds
    whether or not the earlier ones were answered (at most ``IN_FLIGHT`` at once)."""
    posted: dict[str, tuple[str, float]] = {}
    answered: list[float] = []
    refused: Counter[int] = Counter()
    url = f"{server}/channels/whatsapp/{integration_id}/webhook"
    limits = httpx.Limits(max_connections=IN_FLIGHT, max_keepalive_connections=IN_FLIGHT)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def post(n: int) -> None:
            sender = _sender(n % senders)
            wamid = f"wamid.in{n:06d}"
            raw = _notification(wamid, sender, n)
            headers = {"Content-Type": "application/json", SIGNATURE_HEADER: sign(APP_SECRET, raw)}
            posted[wamid] = (sender, time.time())
            started = time.perf_counter()
            response = await client.post(url, content=raw, headers=headers)
            if response.status_code == 200:
                answered.append((time.perf_counter() - started) * 1000)
            else:  # counted and shown: the platform would post it again later
                refused[response.status_code] += 1
                del posted[wamid]

        begun = time.perf_counter()
        tasks = []
        for n in range(messages):
            pause = begun + n / rate - time.perf_counter()
            if pause > 0:
                await asyncio.sleep(pause)
            tasks.append(asyncio.create_task(post(n)))
        await asyncio.gather(*tasks)
        return posted, answered, refused, time.perf_counter() - begun


async def _stored(
    database_url: str, wamids: list[str]
) -> tuple[dict[str, float], dict[str, float]]:
    """When each inbound message was stored, and when the reply to it was (the n-th
    outbound message of its conversation answers its n-th inbound one)."""
    engine = create_engine(database_url)
    async with create_sessionmaker(engine)() as s:
        rows = await s.execute(
            select(Message.conversation_id, Message.direction, Message.external_id)
            .add_columns(Message.created_at)
            .order_by(Message.created_at)
        )
        inbound: dict[str, list[tuple[str, float]]] = defaultdict(list)
        outbound: dict[str, list[float]] = defaultdict(list)
        for conversation, direction, wamid, at in rows:
            if direction == "INBOUND":
                inbound[conversation].append((str(wamid), at.timestamp()))
            else:
                outbound[conversation].append(at.timestamp())
    await engine.dispose()
    wanted = set(wamids)
    stored = {w: at for ins in inbound.values() for w, at in ins if w in wanted}
    queued = {
        w: out
        for conversation, ins in inbound.items()
        for (w, _at), out in zip(ins, outbound[conversation], strict=False)
    }
    return stored, queued


def _serve_env(
    args: argparse.Namespace, database_url: str, folder: Path, platform: str
) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OFFICEHUB_")}
    env.update(
        {
            "OFFICEHUB_DATABASE_URL": database_url,
            "OFFICEHUB_DATA_DIR": str(folder / "data"),
            "OFFICEHUB_WHATSAPP_API_URL": f"{platform}/v26.0",
            "OFFICEHUB_SIGNING_KEY": "bench-signing-key",
            "OFFICEHUB_LOG_LEVEL": "WARNING",
        }
    )
    if args.worker_poll is not None:
        env["OFFICEHUB_WORKER_POLL_SECONDS"] = str(args.worker_poll)
    return env


async def measure(
    args: argparse.Namespace,
    database_url: str,
    integration_id: str,
    platform: str,
    server_url: str,
    server: subprocess.Popen[bytes],
) -> None:
    await _wait_ready(f"{platform}/stats")
    await _wait_ready(f"{server_url}/healthz", server)
    posted, answered, refused, paced = await _post_paced(
        server_url, integration_id, args.messages, args.senders, args.rate
    )
    deadline = time.monotonic() + WAIT_SECONDS
    arrivals = await _arrivals(platform)
    while len(arrivals) < len(posted) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
        arrivals = await _arrivals(platform)
    if len(arrivals) < len(posted):
        raise SystemExit(f"{len(arrivals)} of {len(posted)} replies reached the platform in time")
    stored_at, queued_at = await _stored(database_url, list(posted))
    if len(stored_at) != len(posted) or len(queued_at) != len(posted):
        raise SystemExit(
            f"{len(stored_at)} of {len(posted)} inbound messages stored, "
            f"{len(queued_at)} replies stored"
        )
    by_sender: dict[str, list[float]] = defaultdict(list)
    for to, at in sorted(arrivals, key=lambda a: a[1]):
        by_sender[to].append(at)
    sent_by: dict[str, list[str]] = defaultdict(list)
    for wamid, (sender, _at) in sorted(posted.items(), key=lambda p: p[1][1]):
        sent_by[sender].append(wamid)
    handed = {
        wamid: reply
        for sender, wamids in sent_by.items()
        for wamid, reply in zip(wamids, by_sender[sender], strict=True)
    }
    replied = [(handed[wamid] - at) * 1000 for wamid, (_s, at) in posted.items()]
    stored = [(stored_at[wamid] - at) * 1000 for wamid, (_s, at) in posted.items()]
    queued = [(queued_at[wamid] - at) * 1000 for wamid, (_s, at) in posted.items()]
    first = min(at for _s, at in posted.values())
    last = max(at for _to, at in arrivals)
    backend = database_url.split(":", 1)[0]
    count = len(posted) + sum(refused.values())
    poll = Settings.model_fields["worker_poll_seconds"].default
    poll = poll if args.worker_poll is None else args.worker_poll
    if args.worker_processes:
        shape = (
            f"officehub serve --workers {args.api_processes} --no-worker and "
            f"{args.worker_processes} x officehub worker"
        )
    else:
        shape = f"officehub serve --workers {args.api_processes} (API and worker in each)"
    print(
        f"database: {backend}; {count} notifications from {args.senders} senders "
        f"at {args.rate:g}/s; {shape}, worker poll {poll:g} s; load "
        f"{os.getloadavg()[0]:.1f}"
    )

    def line(label: str, values: list[float]) -> str:
        return (
            f"{label:<44} p50 {statistics.median(values):7.1f} ms, "
            f"p99 {_percentile(values, 0.99):7.1f} ms"
        )

    others = ", ".join(f"{n} x {status}" for status, n in sorted(refused.items())) or "none"
    print(f"answers other than 200: {others}")
    print(line("notification -> 200 answered", answered))
    print(line("notification -> message stored", stored))
    print(line("notification -> rule's reply stored (queued)", queued))
    print(line("notification -> reply handed to the platform", replied))
    print(
        f"throughput: {count / paced:.1f} notifications/s posted and answered; "
        f"{len(posted) / (last - first):.1f} replies/s from the first notification "
        "to the last reply"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--messages", type=int, default=400)
    parser.add_argument("--senders", type=int, default=50)
    parser.add_argument("--rate", type=float, default=10.0, help="notifications per second")
    parser.add_argument("--database-url", default="")
    parser.add_argument(
        "--worker-poll", type=float, default=None, help="OFFICEHUB_WORKER_POLL_SECONDS (1 s)"
    )
    parser.add_argument(
        "--api-processes", type=int, default=1, help="API processes (serve --workers N)"
    )
    parser.add_argument(
        "--worker-processes",
        type=int,
        default=0,
        help="separate `officehub worker` processes (then serve runs --no-worker); 0: the "
        "worker runs inside each API process",
    )
    parser.add_argument("--quick", action="store_true", help="60 notifications, 20 senders")
    args = parser.parse_args()
    if args.quick:
        args.messages, args.senders = 60, 20
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        url = args.database_url or f"sqlite+aiosqlite:///{folder / 'bench.db'}"
        integration_id = asyncio.run(_world(url, folder / "data"))
        platform_port, server_port = _free_port(), _free_port()
        platform = f"http://127.0.0.1:{platform_port}"
        code = f"from bench.inbound_path import platform_main; platform_main({platform_port})"
        serve = ["officehub", "serve", "--host", "127.0.0.1", "--port", str(server_port)]
        serve += ["--workers", str(args.api_processes)]
        if args.worker_processes:
            serve.append("--no-worker")
        log = folder / "serve.log"
        env = _serve_env(args, url, folder, platform)
        with log.open("wb") as errors:
            stand_in = subprocess.Popen([sys.executable, "-c", code])
            server = subprocess.Popen(
                [sys.executable, "-m", *serve],
                cwd=folder,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=errors,
            )
            workers = [
                subprocess.Popen(
                    [sys.executable, "-m", "officehub", "worker"],
                    cwd=folder,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                )
                for _ in range(args.worker_processes)
            ]
            try:
                asyncio.run(
                    measure(
                        args,
                        url,
                        integration_id,
                        platform,
                        f"http://127.0.0.1:{server_port}",
                        server,
                    )
                )
            except SystemExit:
                tail = log.read_text(errors="replace").strip().splitlines()[-10:]
                print("officehub serve said:", *tail, sep="\n", file=sys.stderr)
                raise
            finally:
                for process in (server, stand_in, *workers):
                    process.terminate()
                for process in (server, stand_in, *workers):
                    process.wait(30)


if __name__ == "__main__":
    main()
