"""Fast messages of kind TEXT, AUDIO and SEQUENCE."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.fast_messages.models import FastMessage
from tests import factories as f
from tests.helpers import OfficeFixture, error_of

pytestmark = pytest.mark.anyio

ROUTES = [
    ("GET", "/fast-message"),
    ("POST", "/fast-message"),
    ("GET", "/fast-message/cxxxxxxxxxxxx"),
    ("PATCH", "/fast-message/cxxxxxxxxxxxx"),
    ("DELETE", "/fast-message/cxxxxxxxxxxxx"),
]
INBOX = "cxxxxxxxxxxxx"


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_each_kind_is_created_read_and_listed_by_inbox(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    other = await f.make_inbox(session, office_a.id, "Outra")
    await session.commit()
    h = office_a.headers
    text = {"inboxId": inbox.id, "title": "Boas-vindas", "kind": "TEXT", "text": "Olá!"}
    audio = {
        "inboxId": inbox.id,
        "title": "Áudio",
        "kind": "AUDIO",
        "audioUrl": "https://cdn.example.com/a.ogg",
        "text": "dropped",
    }
    sequence = {
        "inboxId": other.id,
        "title": "Sequência",
        "kind": "SEQUENCE",
        "blocks": [
            {"kind": "TEXT", "text": "Oi", "typingSeconds": 2, "waitSeconds": 1},
            {"kind": "IMAGE", "mediaUrl": "https://cdn.example.com/i.png", "text": "ignored"},
        ],
    }
    created = []
    for body in (text, audio, sequence):
        r = await client.post("/fast-message", json=body, headers=h)
        assert r.status_code == 201, r.text
        created.append(r.json())
    assert created[0]["text"] == "Olá!" and created[0]["audioUrl"] is None
    assert created[1]["audioUrl"] == "https://cdn.example.com/a.ogg" and created[1]["text"] is None
    assert created[2]["blocks"] == [
        {"kind": "TEXT", "text": "Oi", "mediaUrl": None, "typingSeconds": 2, "waitSeconds": 1},
        {
            "kind": "IMAGE",
            "text": None,
            "mediaUrl": "https://cdn.example.com/i.png",
            "typingSeconds": 0,
            "waitSeconds": 0,
        },
    ]
    r = await client.get(f"/fast-message/{created[2]['id']}", headers=h)
    assert r.json() == created[2]
    listed = (await client.get(f"/fast-message?inboxId={inbox.id}", headers=h)).json()
    assert {m["id"] for m in listed["data"]} == {created[0]["id"], created[1]["id"]}
    assert listed["totalResults"] == 2
    assert (await client.get("/fast-message", headers=h)).json()["totalResults"] == 3


async def test_update_checks_the_result_for_its_kind(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    h = office_a.headers
    body = {"inboxId": inbox.id, "title": "T", "kind": "TEXT", "text": "Olá"}
    ident = (await client.post("/fast-message", json=body, headers=h)).json()["id"]
    r = await client.patch(f"/fast-message/{ident}", json={"kind": "AUDIO"}, headers=h)
    assert r.status_code == 400 and "body.audioUrl" in error_of(r)["details"]
    r = await client.patch(
        f"/fast-message/{ident}",
        json={"kind": "AUDIO", "audioUrl": "https://x.example/a.mp3", "title": "Áudio"},
        headers=h,
    )
    assert r.status_code == 200
    assert r.json()["kind"] == "AUDIO" and r.json()["text"] is None and r.json()["title"] == "Áudio"
    r = await client.patch(f"/fast-message/{ident}", json={"title": "Novo"}, headers=h)
    assert r.status_code == 200 and r.json()["audioUrl"] == "https://x.example/a.mp3"


async def test_delete_fast_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    h = office_a.headers
    body = {"inboxId": inbox.id, "title": "T", "kind": "TEXT", "text": "Olá"}
    ident = (await client.post("/fast-message", json=body, headers=h)).json()["id"]
    r = await client.delete(f"/fast-message/{ident}", headers=h)
    assert r.status_code == 200 and r.json()["id"] == ident
    assert (await client.get(f"/fast-message/{ident}", headers=h)).status_code == 404


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("GET", "/fast-message?inboxId=bad", None, "query.inboxId"),
        (
            "POST",
            "/fast-message",
            {"inboxId": "bad", "title": "t", "kind": "TEXT", "text": "x"},
            "body.inboxId",
        ),
        ("POST", "/fast-message", {"inboxId": INBOX, "title": "t", "kind": "VIDEO"}, "body.kind"),
        ("POST", "/fast-message", {"inboxId": INBOX, "title": "t", "kind": "TEXT"}, "body.text"),
        (
            "POST",
            "/fast-message",
            {"inboxId": INBOX, "title": "t", "kind": "AUDIO"},
            "body.audioUrl",
        ),
        (
            "POST",
            "/fast-message",
            {"inboxId": INBOX, "title": "t", "kind": "AUDIO", "audioUrl": "ftp://x"},
            "body.audioUrl",
        ),
        (
            "POST",
            "/fast-message",
            {"inboxId": INBOX, "title": "t", "kind": "SEQUENCE"},
            "body.blocks",
        ),
        (
            "POST",
            "/fast-message",
            {"inboxId": INBOX, "title": "t", "kind": "SEQUENCE", "blocks": [{"kind": "TEXT"}]},
            "body.blocks.0.text",
        ),
        (
            "POST",
            "/fast-message",
            {
                "inboxId": INBOX,
                "title": "t",
                "kind": "SEQUENCE",
                "blocks": [{"kind": "TEXT", "text": "a"}, {"kind": "AUDIO"}],
            },
            "body.blocks.1.mediaUrl",
        ),
        (
            "POST",
            "/fast-message",
            {
                "inboxId": INBOX,
                "title": "t",
                "kind": "SEQUENCE",
                "blocks": [{"kind": "TEXT", "text": "a", "waitSeconds": -1}],
            },
            "body.blocks.0.waitSeconds",
        ),
        ("GET", "/fast-message/bad-id", None, "path.id"),
        ("PATCH", "/fast-message/bad-id", {"title": "x"}, "path.id"),
        ("DELETE", "/fast-message/bad-id", None, "path.id"),
    ],
)
async def test_bad_input_names_the_field(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    method: str,
    path: str,
    body: object,
    field: str,
) -> None:
    r = await client.request(method, path, json=body, headers=office_a.headers)
    assert r.status_code == 400
    assert field in error_of(r)["details"]


async def test_another_offices_records_are_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox = await f.make_inbox(session, office_b.id)
    message = FastMessage(
        office_id=office_b.id, inbox_id=inbox.id, title="B", kind="TEXT", text="b"
    )
    session.add(message)
    await session.commit()
    h = office_a.headers
    calls = [
        ("POST", "/fast-message", {"inboxId": inbox.id, "title": "t", "kind": "TEXT", "text": "x"}),
        ("GET", f"/fast-message/{message.id}", None),
        ("PATCH", f"/fast-message/{message.id}", {"title": "mine"}),
        ("DELETE", f"/fast-message/{message.id}", None),
    ]
    for method, path, payload in calls:
        r = await client.request(method, path, json=payload, headers=h)
        assert r.status_code == 404, (method, path)
        assert error_of(r)["code"] == "NOT_FOUND"
    listed = await client.get(f"/fast-message?inboxId={inbox.id}", headers=h)
    assert listed.status_code == 404  # a filter naming another office's inbox, as a path id
    assert (await client.get("/fast-message", headers=h)).json()["data"] == []
    session.expunge_all()
    stored = await session.get(FastMessage, message.id)
    assert stored is not None and stored.title == "B"
