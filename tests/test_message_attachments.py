"""Attachments the office sends a client: ``POST /conversation/{id}/media`` stores the file
(type read from the bytes), ``POST /conversation/{id}/messages`` ``{mediaPath, caption,
fileName}`` sends it, through the WhatsApp Cloud API stand-in, the web chat visitor's
history and a bridged gateway; bad input, other offices, keys and the 24-hour window."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from tests.helpers import OfficeFixture, error_of, outbox
from tests.test_bridge import SECRET, Gateway, _bridged, _message, _signed
from tests.test_bridge import gateway as gateway
from tests.webchat_world import dispatcher, make_webchat, start_visitor, visitor_headers
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import notification, official_integration, post_notification
from tests.whatsapp_world import text_message as wa_text

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 500
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n" + b"x" * 500
OGG = b"OggS\x00\x02" + b"\x00" * 20 + b"OpusHead" + b"\x00" * 200
MISSING = "c" + "0" * 24


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    return whatsapp_settings


async def _official_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture
) -> str:
    """An official integration's conversation where the client just wrote."""
    integration = await official_integration(session, office.id)
    r = await post_notification(client, integration.id, notification([wa_text("wamid.in1")]))
    assert r.status_code == 200, r.text
    conversation_id = await session.scalar(
        select(Message.conversation_id).where(Message.office_id == office.id)
    )
    assert conversation_id is not None
    return conversation_id


async def _upload(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    conversation_id: str,
    content: bytes,
    name: str,
) -> httpx.Response:
    return await client.post(
        f"/conversation/{conversation_id}/media",
        files={"file": (name, content, "application/octet-stream")},
        headers=office.headers,
    )


async def _uploaded(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    conversation_id: str,
    content: bytes,
    name: str,
) -> dict[str, Any]:
    r = await _upload(client, office, conversation_id, content, name)
    assert r.status_code == 201, r.text
    body: dict[str, Any] = r.json()
    return body


def _send(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, body: dict[str, Any]
) -> Any:
    return client.post(
        f"/conversation/{conversation_id}/messages", json=body, headers=office.headers
    )


async def test_official_channel_sends_image_document_and_audio_by_type(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    settings.whatsapp_media_upload = "never"  # links, as a public deployment sends them
    conversation_id = await _official_conversation(client, session, office_a)
    image = await _uploaded(client, office_a, conversation_id, PNG, "foto da fachada.png")
    assert image["mediaKind"] == "image" and image["mimeType"] == "image/png"
    assert image["fileName"] == "foto da fachada.png"
    assert image["storagePath"].startswith(f"conversation-media/{office_a.id}/{conversation_id}/")
    fetched = await client.get(image["url"].removeprefix(settings.public_url))
    assert fetched.status_code == 200 and fetched.content == PNG
    pdf = await _uploaded(client, office_a, conversation_id, PDF, "Contrato.pdf")
    assert (pdf["mediaKind"], pdf["mimeType"]) == ("document", "application/pdf")
    audio = await _uploaded(client, office_a, conversation_id, OGG, "recado.ogg")
    assert (audio["mediaKind"], audio["mimeType"]) == ("audio", "audio/ogg")

    sent_image = await _send(
        client,
        office_a,
        conversation_id,
        {"mediaPath": image["storagePath"], "caption": "A fachada do fórum"},
    )
    assert sent_image.status_code == 201, sent_image.text
    out = sent_image.json()
    assert (out["type"], out["text"], out["status"]) == ("MEDIA", "A fachada do fórum", "QUEUED")
    assert out["mediaUrl"].startswith(f"{settings.public_url}/media/{image['storagePath']}?")
    assert out["content"]["mediaKind"] == "image"
    sent_pdf = await _send(
        client,
        office_a,
        conversation_id,
        {"mediaPath": pdf["storagePath"], "fileName": pdf["fileName"], "caption": "Para assinar"},
    )
    assert sent_pdf.status_code == 201, sent_pdf.text
    assert sent_pdf.json()["content"]["fileName"] == "Contrato.pdf"
    sent_audio = await _send(client, office_a, conversation_id, {"mediaPath": audio["storagePath"]})
    assert sent_audio.status_code == 201, sent_audio.text

    from tests.whatsapp_world import worker

    assert await worker(app, settings).run_once() == 3
    kinds = {body["type"]: body for body in platform.sent}
    assert set(kinds) == {"image", "document", "audio"}
    assert kinds["image"]["image"]["caption"] == "A fachada do fórum"
    assert kinds["image"]["image"]["link"].startswith(
        f"{settings.public_url}/media/{image['storagePath']}?"
    )
    assert kinds["document"]["document"]["filename"] == "Contrato.pdf"
    assert kinds["document"]["document"]["caption"] == "Para assinar"
    assert "caption" not in kinds["audio"]["audio"]
    assert kinds["image"]["to"] == "5511987654321"
    events = await outbox(app, office_a.id, "chat.message.sent")
    assert {e.data["id"] for e in events} >= {
        sent_image.json()["id"],
        sent_pdf.json()["id"],
        sent_audio.json()["id"],
    }
    listed = await client.get(f"/conversation/{conversation_id}/messages", headers=office_a.headers)
    statuses = {m["id"]: m["status"] for m in listed.json()["data"]}
    assert statuses[sent_pdf.json()["id"]] == "SENT"


async def test_official_channel_uploads_a_private_file_through_the_media_api(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    conversation_id = await _official_conversation(client, session, office_a)
    pdf = await _uploaded(client, office_a, conversation_id, PDF, "Procuração.pdf")
    r = await _send(
        client, office_a, conversation_id, {"mediaPath": pdf["storagePath"], "fileName": "P.pdf"}
    )
    assert r.status_code == 201, r.text
    from tests.whatsapp_world import worker

    assert await worker(app, settings).run_once() == 1
    [upload] = platform.uploads
    assert upload["content"] == PDF and upload["type"] == "application/pdf"
    [sent] = platform.sent
    assert sent["document"] == {"id": upload["id"], "filename": "P.pdf"}


async def test_window_closed_refuses_the_file_as_it_refuses_free_text(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    conversation_id = await _official_conversation(client, session, office_a)
    image = await _uploaded(client, office_a, conversation_id, PNG, "a.png")
    await session.execute(
        update(Message)
        .where(Message.conversation_id == conversation_id)
        .values(created_at=utcnow() - timedelta(hours=25))
    )
    await session.commit()
    text = await _send(client, office_a, conversation_id, {"text": "Olá"})
    media = await _send(client, office_a, conversation_id, {"mediaPath": image["storagePath"]})
    assert media.status_code == text.status_code == 409
    assert error_of(media)["code"] == error_of(text)["code"] == "OUTSIDE_SERVICE_WINDOW"
    stored = await session.scalar(
        select(Message.id).where(
            Message.conversation_id == conversation_id, Message.type == "MEDIA"
        )
    )
    assert stored is None and platform.sent == []


async def test_web_chat_visitor_gets_a_link_to_open(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    started = await start_visitor(client, chat["id"])
    conversation_id = started["conversationId"]
    pdf = await _uploaded(client, office_a, conversation_id, PDF, "Orçamento.pdf")
    r = await _send(
        client,
        office_a,
        conversation_id,
        {"mediaPath": pdf["storagePath"], "fileName": pdf["fileName"], "caption": "Segue"},
    )
    assert r.status_code == 201, r.text
    assert await dispatcher(app, settings).run_once() == 1
    history = await client.get(
        f"/webchat/{chat['id']}/messages", headers=visitor_headers(started["token"])
    )
    [seen] = [m for m in history.json()["data"] if m["id"] == r.json()["id"]]
    assert (seen["type"], seen["text"], seen["fileName"]) == ("MEDIA", "Segue", "Orçamento.pdf")
    opened = await client.get(seen["mediaUrl"].removeprefix(settings.public_url))
    assert opened.status_code == 200 and opened.content == PDF


async def test_bridged_gateway_is_posted_the_link(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    gateway: Gateway,
) -> None:
    from officehub.kit.outbound.signing import verify

    bridged = await _bridged(client, office_a, gateway.url)
    await client.post(f"/channels/bridge/{bridged['id']}/inbound", **_signed(_message()))
    conversation = (await client.get("/conversation", headers=office_a.headers)).json()["data"][0]
    image = await _uploaded(client, office_a, conversation["id"], PNG, "a.png")
    r = await _send(client, office_a, conversation["id"], {"mediaPath": image["storagePath"]})
    assert r.status_code == 201, r.text
    assert await dispatcher(app, settings).run_once() == 1
    [(headers, raw)] = gateway.received
    body = verify(SECRET, headers, raw)
    assert body["messageType"] == "MEDIA"
    assert body["mediaUrl"].startswith(f"{settings.public_url}/media/{image['storagePath']}?")


async def test_bad_input_is_refused_naming_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id = await _official_conversation(client, session, office_a)
    image = await _uploaded(client, office_a, conversation_id, PNG, "a.png")
    audio = await _uploaded(client, office_a, conversation_id, OGG, "a.ogg")
    path = image["storagePath"]
    cases: list[tuple[dict[str, Any], str]] = [
        ({"mediaPath": path, "text": "oi"}, "body.text"),
        ({"mediaPath": path, "templateName": "x"}, "body.templateName"),
        ({"text": "oi", "caption": "x"}, "body.caption"),
        ({"text": "oi", "fileName": "a.pdf"}, "body.fileName"),
        ({"caption": "só legenda"}, "body.text"),
        ({"mediaPath": path, "caption": ""}, "body.caption"),
        ({"mediaPath": path, "caption": "x" * 1025}, "body.caption"),
        ({"mediaPath": ""}, "body.mediaPath"),
        ({"mediaPath": path, "fallbackTemplate": {"name": "t"}}, "body.fallbackTemplate"),
        ({"mediaPath": f"conversation-media/{office_a.id}/{MISSING}/x.png"}, "body.mediaPath"),
        ({"mediaPath": path.rsplit("/", 1)[0] + "/0123.png"}, "body.mediaPath"),
        ({"mediaPath": "../../etc/passwd"}, "body.mediaPath"),
        ({"mediaPath": "inbound-media/x/y/z.png"}, "body.mediaPath"),
        ({"mediaPath": audio["storagePath"], "caption": "oi"}, "body.caption"),
        ({"mediaPath": path, "attachment": True}, "body.attachment"),
    ]
    for body, field in cases:
        r = await _send(client, office_a, conversation_id, body)
        assert r.status_code == 400, (body, r.text)
        assert field in error_of(r)["details"], (body, r.text)
    unsupported = await _upload(client, office_a, conversation_id, b"\x00\x01\x02" * 100, "x.bin")
    assert unsupported.status_code == 415
    assert error_of(unsupported)["code"] == "UNSUPPORTED_MEDIA_TYPE"
    too_big = await _upload(
        client, office_a, conversation_id, PNG + b"\x00" * (5 * 1024**2), "b.png"
    )
    assert too_big.status_code == 413
    no_file = await client.post(
        f"/conversation/{conversation_id}/media",
        files={"other": ("a.png", PNG, "image/png")},
        headers=office_a.headers,
    )
    assert no_file.status_code == 400 and "file" in error_of(no_file)["details"]
    count = await session.scalar(select(Message.id).where(Message.type == "MEDIA"))
    assert count is None


async def test_another_office_conversation_or_file_is_not_found_and_never_sent(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    conversation_id = await _official_conversation(client, session, office_a)
    image = await _uploaded(client, office_a, conversation_id, PNG, "a.png")
    foreign_upload = await _upload(client, office_b, conversation_id, PNG, "a.png")
    assert foreign_upload.status_code == 404 and error_of(foreign_upload)["code"] == "NOT_FOUND"
    foreign_send = await _send(
        client, office_b, conversation_id, {"mediaPath": image["storagePath"]}
    )
    assert foreign_send.status_code == 404
    missing = await _upload(client, office_a, MISSING, PNG, "a.png")
    assert missing.status_code == 404
    # Office B's own conversation may not send office A's file.
    other = await make_webchat(client, office_b)
    started = await start_visitor(client, other["id"])
    stolen = await _send(
        client, office_b, started["conversationId"], {"mediaPath": image["storagePath"]}
    )
    assert stolen.status_code == 400 and "body.mediaPath" in error_of(stolen)["details"]
    media = await session.scalar(select(Message.id).where(Message.type == "MEDIA"))
    assert media is None


async def test_no_or_bad_key_is_401(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id = await _official_conversation(client, session, office_a)
    for headers in ({}, {"x-service-api-key": "not-a-key"}):
        upload = await client.post(
            f"/conversation/{conversation_id}/media",
            files={"file": ("a.png", PNG, "image/png")},
            headers=headers,
        )
        assert upload.status_code == 401
        send = await client.post(
            f"/conversation/{conversation_id}/messages",
            json={"mediaPath": "conversation-media/x/y/z.png"},
            headers=headers,
        )
        assert send.status_code == 401


async def test_the_openapi_document_describes_upload_and_send(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    upload = document["paths"]["/conversation/{id}/media"]["post"]
    assert upload["requestBody"]["content"]["multipart/form-data"]["schema"]["required"] == ["file"]
    assert {"201", "400", "401", "404", "413", "415"} <= set(upload["responses"])
    out = document["components"]["schemas"]["MediaUploadOut"]
    assert {"storagePath", "url", "fileName", "mediaKind", "mimeType"} <= set(out["properties"])
    outbound = document["components"]["schemas"]["OutboundIn"]
    assert {"mediaPath", "caption", "fileName"} <= set(outbound["properties"])
    assert any(rule.get("required") == ["mediaPath"] for rule in outbound["oneOf"])
