"""The tests' webhook receivers count only what is addressed to them (issue 41).

CI runs the SQLite and PostgreSQL legs at once; each binds receivers on ports the OS
chooses, so one leg's receiver may get a port another test (of either leg) used a moment
before, while a delivery or a retry to it is still on its way. The receiver's secret path
is what tells such a stray request from the test's own.
"""

from __future__ import annotations

import httpx

from tests.receiver import running_receiver
from tests.test_faults import hangs, raw_receiver


async def test_a_receiver_counts_only_requests_to_its_own_secret_path() -> None:
    async with running_receiver() as receiver, running_receiver() as other:
        assert receiver.path != other.path
        async with httpx.AsyncClient() as client:
            base = f"http://127.0.0.1:{receiver.port}"
            stray = [
                await client.post(f"{base}/hook", json={"id": "e1"}),  # the old, shared path
                await client.post(f"{base}{other.path}", json={"id": "e2"}),  # another's
            ]
            mine = await client.post(receiver.url, json={"id": "e3"})
    assert [r.status_code for r in stray] == [404, 404]
    assert mine.status_code == 200
    assert receiver.event_ids() == ["e3"] and receiver.strays == 2
    assert other.received == [] and other.strays == 0


async def test_a_raw_receiver_answers_a_stray_request_404_and_does_not_serve_it() -> None:
    async with raw_receiver(hangs) as hang:
        async with httpx.AsyncClient(timeout=5) as client:
            stray = await client.post(f"http://127.0.0.1:{hang.port}/hook", json={"id": "e1"})
    assert stray.status_code == 404  # a hanging receiver would not have answered
    assert hang.requests == 0 and hang.opened == []
