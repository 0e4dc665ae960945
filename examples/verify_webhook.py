#!/usr/bin/env python3
"""Check an officehub webhook delivery: standard library only, copy it into your receiver.

    event = verify(secret, request_headers, raw_body)   # raises ValueError when forged

Header ``X-Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`` where each ``v1`` is
HMAC-SHA256(secret, "<t>." + raw body); after a secret rotation there are two ``v1`` for
24 hours. A ``t`` more than ``tolerance`` seconds away is refused (replays). Deliveries are
at least once: drop an ``event["id"]`` you have already handled.

Run as a script it is a tiny receiver that prints verified events:

    WEBHOOK_SECRET=... python3 verify_webhook.py 9000
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import sys
import time
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any


def verify(
    secret: str, headers: Mapping[str, str], body: bytes, tolerance: int = 300
) -> dict[str, Any]:
    """The delivery's JSON body, once its signature and timestamp are checked."""
    header = next((v for k, v in headers.items() if k.lower() == "x-service-signature"), "")
    timestamp = None
    signatures = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t" and value.isdigit():
            timestamp = int(value)
        elif key == "v1":
            signatures.append(value)
    if timestamp is None or not signatures:
        raise ValueError("missing or malformed X-Service-Signature header")
    if abs(time.time() - timestamp) > tolerance:
        raise ValueError("signature timestamp outside the tolerance")
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    if not any(hmac.compare_digest(expected.hexdigest(), s) for s in signatures):
        raise ValueError("no signature matches the secret")
    event: dict[str, Any] = json.loads(body)
    return event


class _Receiver(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        try:
            event = verify(os.environ["WEBHOOK_SECRET"], dict(self.headers.items()), body)
        except ValueError as exc:
            self.send_response(400)
            self.end_headers()
            self.wfile.write(str(exc).encode())
            return
        print(event["event"], event["id"], flush=True)
        self.send_response(200)
        self.end_headers()


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 9000
    HTTPServer(("127.0.0.1", port), _Receiver).serve_forever()
