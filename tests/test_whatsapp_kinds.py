"""The official channel as clients really use it: no signed notification refused, every
inbound kind the Cloud API documents kept readably, reactions, replies, edits and
deletions. Driven by the signed notifications of ``tests/fixtures/whatsapp/``."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.whatsapp import sign
from officehub.conversations.models import Conversation
from officehub.inboxes.models import Integration
from officehub.kit.config import Settings
from officehub.messages.models import Message
from tests.helpers import OfficeFixture, outbox
from tests.whatsapp_world import APP_SECRET, official_integration

FIXTURES = Path(__file__).parent / "fixtures" / "whatsapp"
W = "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjNFQjA"


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The test's settings with the platform stand-in as the Cloud API (``conftest``)."""
    return whatsapp_settings


def fixture(name: str) -> bytes:
    return (FIXTURES / f"{name}.json").read_bytes()


async def post_raw(client: httpx.AsyncClient, integration_id: str, raw: bytes) -> httpx.Response:
    return await client.post(
        f"/channels/whatsapp/{integration_id}/webhook",
        content=raw,
        headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(APP_SECRET, raw)},
    )


async def replay(client: httpx.AsyncClient, integration_id: str, *names: str) -> list[int]:
    stored = []
    for name in names:
        r = await post_raw(client, integration_id, fixture(name))
        assert r.status_code == 200, (name, r.text)
        stored.append(r.json()["stored"])
    return stored


async def listed(client: httpx.AsyncClient, office: OfficeFixture) -> dict[str, dict[str, Any]]:
    """Every message of the office as the API shows it, by the channel's id."""
    conversations = (await client.get("/conversation", headers=office.headers)).json()["data"]
    out: dict[str, dict[str, Any]] = {}
    for conversation in conversations:
        r = await client.get(
            f"/conversation/{conversation['id']}/messages",
            params={"limit": 100},
            headers=office.headers,
        )
        assert r.status_code == 200, r.text
        out.update({m["externalId"]: m for m in r.json()["data"]})
    return out


async def count(session: AsyncSession, model: Any, office_id: str) -> int:
    stmt = select(func.count()).select_from(model).where(model.office_id == office_id)
    return int(await session.scalar(stmt) or 0)


# Never refuse a signed notification


async def test_a_notification_mixing_readable_and_unreadable_parts_keeps_every_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await replay(client, integration.id, "mixed") == [6]
    messages = await listed(client, office_a)
    assert sorted(messages) == [W + f"MIX00{i}" for i in (1, 2, 3, 5, 6, 7)]
    assert messages[W + "MIX001"]["text"] == "Primeira mensagem legível"
    assert messages[W + "MIX006"]["text"] == "Última mensagem legível"
    assert messages[W + "MIX007"]["text"] == "Outra pessoa, outra entrada"
    for ident, platform_type in (
        ("MIX002", "location"),
        ("MIX003", "hologram"),
        ("MIX005", "image"),
    ):
        kept = messages[W + ident]
        assert kept["type"] == "UNSUPPORTED", kept
        assert kept["content"]["kind"] == "unsupported"
        assert kept["content"]["platformType"] == platform_type, kept
    assert await count(session, Conversation, office_a.id) == 2
    # A retry of the same notification stores nothing twice.
    assert await replay(client, integration.id, "mixed") == [0]


async def test_a_signed_body_that_is_not_json_answers_200_and_stores_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    for raw in (b"{not json", b"", b"\xff\xfe\x00", b"<xml/>"):
        r = await post_raw(client, integration.id, raw)
        assert (r.status_code, r.json()) == (200, {"stored": 0}), raw
    assert await count(session, Message, office_a.id) == 0


async def test_a_signed_body_of_the_wrong_shape_answers_200_and_stores_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    bodies: list[Any] = [
        "entry",
        None,
        12,
        {},
        {"entry": "x"},
        {"entry": [{"changes": "x"}]},
        {"entry": [{"changes": [{"field": "messages", "value": {"messages": "x"}}]}]},
        {"entry": [{"changes": [{"field": "messages", "value": {"messages": [{"from": 1}]}}]}]},
    ]
    for body in bodies:
        r = await post_raw(client, integration.id, json.dumps(body).encode())
        assert (r.status_code, r.json()) == (200, {"stored": 0}), body
    assert await count(session, Message, office_a.id) == 0


async def test_only_a_bad_signature_is_refused(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    raw = fixture("mixed")
    r = await client.post(
        f"/channels/whatsapp/{integration.id}/webhook",
        content=raw,
        headers={"X-Hub-Signature-256": sign("another-secret", raw)},
    )
    assert r.status_code == 401
    assert await count(session, Message, office_a.id) == 0


async def test_unreadable_parts_are_logged_without_personal_data(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    integration = await official_integration(session, office_a.id)
    with caplog.at_level(logging.DEBUG, logger="officehub"):
        await replay(client, integration.id, "mixed", "unsupported", "system")
        await post_raw(client, integration.id, b"{not json")
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "unreadable location message" in logged
    assert "131051" in logged
    for personal in ("5511987654321", "987654321", "Maria", "Souza", "legível", "5521998765432"):
        assert personal not in logged


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_MESSAGE = st.fixed_dictionaries(
    {"from": st.text(max_size=40), "id": st.text(max_size=40), "type": st.text(max_size=12)},
    optional={
        "text": _JSON,
        "context": _JSON,
        "reaction": _JSON,
        "location": _JSON,
        "interactive": _JSON,
        "edit": _JSON,
        "revoke": _JSON,
        "errors": _JSON,
    },
)
_SHAPED = st.builds(
    lambda messages, statuses: {
        "object": "whatsapp_business_account",
        "entry": [
            {
                "changes": [
                    {"field": "messages", "value": {"messages": messages, "statuses": statuses}}
                ]
            }
        ],
    },
    st.lists(_MESSAGE | _JSON, max_size=3),
    st.lists(_JSON, max_size=2),
)


@pytest.mark.anyio
@hypothesis_settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    body=st.binary(max_size=64)
    | _JSON.map(lambda v: json.dumps(v).encode())
    | _SHAPED.map(lambda v: json.dumps(v).encode())
)
async def test_any_signed_body_answers_200(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture, body: bytes
) -> None:
    integration = await session.scalar(
        select(Integration).where(Integration.office_id == office_a.id)
    ) or await official_integration(session, office_a.id)
    r = await post_raw(client, integration.id, body)
    assert r.status_code == 200, (body, r.text)


# Every inbound kind kept readably

KINDS: list[tuple[str, str, str | None, str | None]] = [
    # fixture, type, text holds, content kind
    ("text", "TEXT", "preciso de ajuda", None),
    ("image", "MEDIA", "Foto do contrato", "media"),
    ("audio", "MEDIA", None, "media"),
    ("video", "MEDIA", "Vídeo da obra", "media"),
    ("document", "MEDIA", "Procuração assinada", "media"),
    ("sticker", "MEDIA", None, "media"),
    ("location", "LOCATION", "Av. Paulista, 1000", "location"),
    ("contacts", "CONTACTS", "João da Silva", "contacts"),
    ("button", "TEXT", "Quero agendar", "reply"),
    ("interactive_button_reply", "TEXT", "Sim", "reply"),
    ("interactive_list_reply", "TEXT", "Trabalhista", "reply"),
    ("interactive_nfm_reply", "INTERACTIVE", "area: familia", "flow"),
    ("order", "ORDER", "700.50 BRL", "order"),
    ("system", "SYSTEM", "changed from", "system"),
    ("unsupported", "UNSUPPORTED", "Mensagem não suportada", "unsupported"),
    ("unknown", "UNSUPPORTED", "Mensagem não suportada", "unsupported"),
    ("forwarded", "TEXT", "notícia", None),
]


@pytest.mark.parametrize(("name", "type", "text", "kind"), KINDS, ids=[k[0] for k in KINDS])
async def test_every_inbound_kind_is_kept_readably(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    name: str,
    type: str,
    text: str | None,
    kind: str | None,
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await replay(client, integration.id, name) == [1]
    [message] = (await listed(client, office_a)).values()
    assert message["type"] == type
    if text is not None:
        assert text in message["text"]
    assert (message["content"] or {}).get("kind") == kind
    [event] = await outbox(app, office_a.id, "chat.message.received")
    assert event.data["content"] == message["content"]


async def test_a_location_keeps_its_place_and_a_map_link(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "location")
    [message] = (await listed(client, office_a)).values()
    assert message["content"] == {
        "kind": "location",
        "name": "Escritório Central",
        "address": "Av. Paulista, 1000 - Bela Vista, São Paulo - SP",
        "latitude": -23.5613,
        "longitude": -46.6565,
        "url": "https://maps.example.com/paulista-1000",
        "mapUrl": "https://www.google.com/maps?q=-23.5613,-46.6565",
    }
    assert "https://www.google.com/maps?q=-23.5613,-46.6565" in message["text"]


async def test_shared_contacts_keep_names_phones_and_emails(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "contacts")
    [message] = (await listed(client, office_a)).values()
    first, second = message["content"]["contacts"]
    assert first == {
        "name": "João da Silva",
        "phones": [{"phone": "+55 11 91234-5678", "waId": "5511912345678", "type": "CELL"}],
        "emails": [{"email": "joao@example.com", "type": "WORK"}],
        "organization": "Silva Advocacia",
    }
    assert second["name"] == "Ana Lima"
    assert message["text"] == (
        "👤 João da Silva: +55 11 91234-5678, joao@example.com\n👤 Ana Lima: +55 21 3333-4444"
    )


async def test_a_sticker_is_media(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "sticker")
    stored = (await session.scalars(select(Message))).one()
    assert stored.media_external_id == "1499543291543640"
    assert stored.content == {
        "kind": "media",
        "mediaKind": "sticker",
        "mimeType": "image/webp",
        "fileName": None,
        "caption": None,
        "animated": False,
    }


async def test_a_flow_completion_keeps_its_response_as_json(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "interactive_nfm_reply")
    [message] = (await listed(client, office_a)).values()
    assert message["content"]["response"] == {
        "flow_token": "tok-123",
        "area": "familia",
        "urgente": True,
    }
    assert "flow_token" not in message["text"]


async def test_an_order_keeps_its_catalog_items_and_total(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "order")
    [message] = (await listed(client, office_a)).values()
    content = message["content"]
    assert (content["catalogId"], content["total"], content["currency"]) == (
        "831244591452153",
        700.5,
        "BRL",
    )
    assert [i["productRetailerId"] for i in content["items"]] == ["consulta-60min", "parecer"]
    assert content["note"] == "Entregar no escritório"


async def test_a_system_message_is_kept_readably(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "system")
    [message] = (await listed(client, office_a)).values()
    assert message["content"] == {
        "kind": "system",
        "systemType": "user_changed_number",
        "body": "Maria Souza changed from 5511987654321 to 5511912340000",
        "newWaId": "5511912340000",
    }


async def test_an_unsupported_message_keeps_the_platform_type_and_error(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "unsupported", "unknown")
    messages = await listed(client, office_a)
    assert messages[W + "UNS001"]["content"] == {
        "kind": "unsupported",
        "platformType": "unsupported",
        "errors": [
            {
                "code": 131051,
                "title": "Message type unknown",
                "message": "Message type unknown",
                "details": "Message type is currently not supported.",
            }
        ],
    }
    assert messages[W + "UNK001"]["content"]["platformType"] == "unknown"
    assert messages[W + "UNK001"]["content"]["errors"][0]["code"] == 131051


async def test_a_button_reply_keeps_what_was_picked(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "interactive_list_reply", "button")
    messages = await listed(client, office_a)
    assert messages[W + "ILR001"]["content"] == {
        "kind": "reply",
        "replyType": "list_reply",
        "id": "trabalhista",
        "title": "Trabalhista",
        "description": "Direito do trabalho (CLT)",
    }
    assert messages[W + "BTN001"]["content"]["id"] == "AGENDAR"


# Reactions, replies, forwards, edits, deletions


async def test_a_reaction_marks_the_message_it_reacts_to(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await replay(client, integration.id, "text", "reaction", "reaction") == [1, 0, 0]
    messages = await listed(client, office_a)
    assert list(messages) == [W + "TEXT01"]
    assert messages[W + "TEXT01"]["reactions"] == [
        {"emoji": "👍", "from": "CONTACT", "at": "2026-01-01T12:01:00.000Z"}
    ]
    [event] = await outbox(app, office_a.id, "chat.message.updated")
    assert event.data["reactions"] == messages[W + "TEXT01"]["reactions"]
    assert len(await outbox(app, office_a.id, "chat.message.received")) == 1


async def test_an_empty_emoji_removes_the_senders_reaction(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "text", "reaction", "reaction_removed")
    messages = await listed(client, office_a)
    assert messages[W + "TEXT01"]["reactions"] == []
    assert len(await outbox(app, office_a.id, "chat.message.updated")) == 2


async def test_a_reply_names_our_stored_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "text", "reply")
    messages = await listed(client, office_a)
    assert messages[W + "RPL001"]["replyTo"] == messages[W + "TEXT01"]["id"]
    assert messages[W + "TEXT01"]["replyTo"] is None


async def test_a_reply_to_a_message_not_stored_here_has_no_reply_to(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "button")
    [message] = (await listed(client, office_a)).values()
    assert message["replyTo"] is None


async def test_a_forwarded_message_is_flagged(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await replay(client, integration.id, "text", "forwarded")
    messages = await listed(client, office_a)
    assert messages[W + "FWD001"]["forwarded"] is True
    assert messages[W + "TEXT01"]["forwarded"] is False


async def test_an_edit_shows_the_new_text_and_keeps_the_original(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await replay(client, integration.id, "text", "edit", "edit") == [1, 0, 0]
    messages = await listed(client, office_a)
    assert list(messages) == [W + "TEXT01"]
    edited = messages[W + "TEXT01"]
    assert edited["text"] == "Bom dia, preciso de ajuda com dois processos"
    assert edited["originalText"] == "Bom dia, preciso de ajuda com um processo"
    assert edited["editedAt"] == "2026-01-01T12:01:40.000Z"
    # The retried edit changes nothing and tells nobody.
    assert len(await outbox(app, office_a.id, "chat.message.updated")) == 1


async def test_an_edit_of_a_message_not_stored_here_is_kept_as_a_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await replay(client, integration.id, "edit") == [1]
    [message] = (await listed(client, office_a)).values()
    assert message["text"] == "Bom dia, preciso de ajuda com dois processos"


async def test_a_deletion_shows_the_message_was_deleted_and_keeps_the_original(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await replay(client, integration.id, "text", "edit", "revoke", "revoke") == [1, 0, 0, 0]
    [deleted] = (await listed(client, office_a)).values()
    assert deleted["text"] == "🚫 Mensagem apagada pelo cliente"
    assert deleted["originalText"] == "Bom dia, preciso de ajuda com um processo"
    assert deleted["deletedAt"] == "2026-01-01T12:02:30.000Z"
    assert len(await outbox(app, office_a.id, "chat.message.updated")) == 2


async def test_the_message_content_is_documented_as_a_union_by_kind(
    client: httpx.AsyncClient,
) -> None:
    doc = (await client.get("/openapi.json")).json()
    schemas = doc["components"]["schemas"]
    content = schemas["MessageOut"]["properties"]["content"]
    union = next(part for part in content["anyOf"] if "oneOf" in part)
    assert set(union["discriminator"]["mapping"]) == {
        "media",
        "location",
        "contacts",
        "reply",
        "flow",
        "order",
        "system",
        "unsupported",
    }
    assert schemas["MessageOut"]["properties"]["type"] == {
        "$ref": "#/components/schemas/MessageType"
    }
    assert "UNSUPPORTED" in schemas["MessageType"]["enum"]
    assert {"replyTo", "forwarded", "reactions", "originalText", "editedAt", "deletedAt"} <= set(
        schemas["MessageOut"]["properties"]
    )
