"""A client's data exported at their request (issue 30, LGPD art. 18, II):
``GET /people/{id}/export`` → a zip. docs/lgpd.md."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.cases.models import Case, CaseMovement
from officehub.client_export import service as export
from officehub.contacts.models import ContactTag, PartnerLink
from officehub.kit.config import Settings
from officehub.kit.storage import storage_from_settings
from officehub.kit.timeutil import utcnow
from officehub.messages import statuses as message_statuses
from officehub.messages.models import Message
from tests import factories as f
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, error_of

pytestmark = pytest.mark.anyio
MISSING = "c" + "0" * 24
NAME = "Joana Quitéria Bastos"
INBOUND = "Olá, doutora! Segue a procuração: ação de cobrança nº 123."
OUTBOUND = "Recebido, obrigada. Até amanhã."
SECOND = "Bom dia, alguma novidade do processo?"
NOTE = "Cliente prefere contato à tarde."
CASE_NUMBER = "10091315220248260224"
MOVEMENT = "Juntada de petição de acordo"
MEDIA = b"%PDF-1.4 procuracao assinada \x00\x01\x02" + bytes(range(256)) * 40
SPOOFED = "Ana \u202egpj.exe\u2066x\u2069"


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data


@dataclass(frozen=True)
class Client:
    contact_id: str
    conversation_ids: tuple[str, str]
    card_id: str
    case_id: str
    outbound_id: str
    photo_id: str


async def _client(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office: OfficeFixture,
    *,
    name: str = NAME,
    words: str = "",
    case_number: str = CASE_NUMBER,
) -> Client:
    """A client with two conversations (messages in and out, one with a stored file), a
    note, a card, a case with a movement, a tag and a partner link."""
    inbox = await f.make_inbox(session, office.id)
    first = await f.make_integration(session, office.id, inbox.id)
    second = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id, name=name, phone=None)
    tag = await f.make_tag(session, office.id, inbox.id, name=f"prioridade{words}")
    session.add(ContactTag(office_id=office.id, contact_id=contact.id, tag_id=tag.id))
    session.add(
        PartnerLink(
            office_id=office.id,
            contact_id=contact.id,
            partner={"id": f"p-{contact.id}", "system": "escritorio"},
            source="MANUAL",
            linked_at=utcnow(),
        )
    )
    one = await f.make_conversation(session, office.id, contact.id, first)
    two = await f.make_conversation(session, office.id, contact.id, second, status="CLOSED")
    _funnel, columns = await f.make_funnel(session, office.id, inbox.id)
    card = await f.make_card(session, columns[0], contact.id, one.id)
    case = Case(
        office_id=office.id,
        person_id=contact.id,
        conversation_id=one.id,
        number=case_number,
        court="tjsp",
        watch=False,
    )
    session.add(case)
    await session.flush()
    session.add(
        CaseMovement(
            office_id=office.id,
            person_id=contact.id,
            case_number=case_number,
            description=MOVEMENT + words,
            occurred_at=utcnow(),
            case_id=case.id,
        )
    )
    await session.commit()
    storage = storage_from_settings(settings)
    key = f"inbound-media/{office.id}/{contact.id}/procuracao.pdf"
    await storage.save(key, _chunks(MEDIA), 1 << 20)
    h = office.headers
    base = f"/conversation/{one.id}/messages"
    r = await client.post(f"{base}/inbound", json={"text": INBOUND + words}, headers=h)
    assert r.status_code == 201, r.text
    r = await client.post(
        f"{base}/inbound", json={"text": "procuração", "mediaUrl": storage.url(key)}, headers=h
    )
    assert r.status_code == 201, r.text
    photo_id = r.json()["id"]
    r = await client.post(base, json={"text": OUTBOUND + words}, headers=h)
    assert r.status_code == 201, r.text
    outbound_id = r.json()["id"]
    row = await session.get(Message, outbound_id)
    assert row is not None
    await message_statuses.change_status(session, row, "SENT", external_id=f"wamid.{outbound_id}")
    await message_statuses.change_status(session, row, "DELIVERED")
    await session.commit()
    r = await client.post(
        "/conversation/note", json={"conversationId": one.id, "text": NOTE + words}, headers=h
    )
    assert r.status_code == 201, r.text
    r = await client.post(
        f"/conversation/{two.id}/messages/inbound", json={"text": SECOND + words}, headers=h
    )
    assert r.status_code == 201, r.text
    return Client(contact.id, (one.id, two.id), card.id, case.id, outbound_id, photo_id)


async def _export(client: httpx.AsyncClient, office: OfficeFixture, contact_id: str) -> bytes:
    r = await client.get(f"/people/{contact_id}/export", headers=office.headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/zip"
    assert "attachment" in r.headers["content-disposition"]
    assert r.headers["cache-control"] == "no-store"
    return r.content


def _files(data: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    assert archive.testzip() is None
    return {name: archive.read(name) for name in archive.namelist()}


def _json(files: dict[str, bytes], name: str) -> Any:
    return json.loads(files[name].decode())


# GET /people/{id}/export


async def test_export_holds_the_contact_conversations_cards_cases_tags_links_and_files(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    world = await _client(client, session, settings, office_a)
    files = _files(await _export(client, office_a, world.contact_id))
    one, two = world.conversation_ids
    media = f"media/{world.photo_id}-procuracao.pdf"
    assert set(files) == {
        "README.txt",
        "contact.json",
        "tags.json",
        "partner-links.json",
        "consents.json",
        f"conversations/{one}/conversation.json",
        f"conversations/{one}/messages.json",
        f"conversations/{one}/notes.json",
        f"conversations/{two}/conversation.json",
        f"conversations/{two}/messages.json",
        f"conversations/{two}/notes.json",
        "cards.json",
        "cases.json",
        "case-movements.json",
        media,
    }
    contact = _json(files, "contact.json")
    assert contact["id"] == world.contact_id and contact["name"] == NAME
    assert contact["legalHold"] is False
    assert "officeId" not in contact and "searchName" not in contact
    assert [t["name"] for t in _json(files, "tags.json")] == ["prioridade"]
    [link] = _json(files, "partner-links.json")
    assert link["partner"]["id"] == f"p-{world.contact_id}"
    conversation = _json(files, f"conversations/{one}/conversation.json")
    assert conversation["id"] == one and conversation["personId"] == world.contact_id
    assert conversation["status"] == "OPEN" and conversation["channel"]
    assert _json(files, f"conversations/{two}/conversation.json")["status"] == "CLOSED"
    sent = _json(files, f"conversations/{one}/messages.json")
    assert [(m["direction"], m["text"]) for m in sent] == [
        ("INBOUND", INBOUND),
        ("INBOUND", "procuração"),
        ("OUTBOUND", OUTBOUND),
    ]
    assert sent[1]["file"] == media and "?" not in sent[1]["mediaUrl"]
    outbound = sent[2]
    assert outbound["id"] == world.outbound_id
    assert outbound["externalId"] == f"wamid.{world.outbound_id}"
    assert [s["status"] for s in outbound["statusHistory"]][-2:] == ["SENT", "DELIVERED"]
    assert "claimToken" not in outbound and "leaseUntil" not in outbound
    [second] = _json(files, f"conversations/{two}/messages.json")
    assert second["text"] == SECOND
    assert [n["text"] for n in _json(files, f"conversations/{one}/notes.json")] == [NOTE]
    assert _json(files, f"conversations/{two}/notes.json") == []
    [card] = _json(files, "cards.json")
    assert card["id"] == world.card_id and card["conversationId"] == one
    [case] = _json(files, "cases.json")
    assert case["id"] == world.case_id and case["number"] == CASE_NUMBER
    assert "claimToken" not in case
    [movement] = _json(files, "case-movements.json")
    assert movement["caseId"] == world.case_id and movement["description"] == MOVEMENT
    assert files[media] == MEDIA
    readme = files["README.txt"].decode()
    for name in ("contact.json", "messages.json", "notes.json", "cards.json", "media/"):
        assert name in readme
    assert f"Dados de {NAME}" in readme and "LGPD, art. 18, II" in readme
    assert one in readme and two in readme
    assert "Total: 4 mensagem(ns), 1 nota(s), 1 arquivo(s) de mídia." in readme


async def test_export_holds_nothing_of_another_contact_nor_of_another_office(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await _client(client, session, settings, office_a)
    neighbour = await _client(
        client,
        session,
        settings,
        office_a,
        name="Vizinho Zacarias",
        words=" vizinhança",
        case_number="00012345620238260100",
    )
    stranger = await _client(
        client, session, settings, office_b, name="Estranho Xisto", words=" alheio"
    )
    # A message of the client's naming another office's stored file: never copied.
    storage = storage_from_settings(settings)
    foreign = f"inbound-media/{office_b.id}/arquivos/segredo.pdf"
    await storage.save(foreign, _chunks(b"ARQUIVO-DE-OUTRO-ESCRITORIO"), 1 << 20)
    r = await client.post(
        f"/conversation/{world.conversation_ids[0]}/messages/inbound",
        json={"text": "olha", "mediaUrl": storage.url(foreign)},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    data = await _export(client, office_a, world.contact_id)
    files = _files(data)
    everything = b"".join(files.values()) + "".join(files).encode()
    for other in (neighbour, stranger):
        for ident in (other.contact_id, *other.conversation_ids, other.card_id, other.case_id):
            assert ident.encode() not in everything
    for word in ("Zacarias", "Xisto", "vizinhança", "alheio", "ARQUIVO-DE-OUTRO"):
        assert word.encode() not in everything, word
    assert not any(name.endswith("segredo.pdf") for name in files)
    readme = files["README.txt"].decode()
    assert "arquivo fora do escritório (link externo, não copiado): 1" in readme


async def test_export_of_a_contact_under_legal_hold_still_works(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    world = await _client(client, session, settings, office_a)
    held = await client.put(
        f"/people/{world.contact_id}/legal-hold",
        json={"legalHold": True, "legalHoldReason": "Ação judicial em curso"},
        headers=office_a.headers,
    )
    assert held.status_code == 200, held.text
    contact = _json(_files(await _export(client, office_a, world.contact_id)), "contact.json")
    assert contact["legalHold"] is True
    assert contact["legalHoldReason"] == "Ação judicial em curso"


async def test_export_readme_neutralises_bidi_controls_while_json_keeps_the_original(
    client: httpx.AsyncClient, session: AsyncSession, settings: Settings, office_a: OfficeFixture
) -> None:
    world = await _client(client, session, settings, office_a, name=SPOOFED)
    files = _files(await _export(client, office_a, world.contact_id))
    readme = files["README.txt"].decode()
    assert "Ana [U+202E]gpj.exe[U+2066]x[U+2069]" in readme
    assert not any(chr(c) in readme for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
    assert SPOOFED.encode() in files["contact.json"]  # the exact bytes, nothing escaped
    assert _json(files, "contact.json")["name"] == SPOOFED


def test_export_legible_shows_every_bidi_and_control_character() -> None:
    controls = "".join(chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A)))
    shown = export.legible(f"a{controls}\tb\nção")
    assert shown == (
        "a[U+202A][U+202B][U+202C][U+202D][U+202E][U+2066][U+2067][U+2068][U+2069][U+0009]b\nção"
    )


async def test_export_reads_messages_in_pages_missing_none_with_equal_times(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(export, "PAGE", 2)
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    contact = await f.make_contact(session, office_a.id, name="Paginada", phone=None)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    at = utcnow()
    texts = [f"mensagem {i}" for i in range(7)]
    session.add_all(
        Message(
            office_id=office_a.id,
            conversation_id=conversation.id,
            direction="INBOUND",
            type="text",
            text=text,
            status="RECEIVED",
            created_at=at,  # one instant: the page key's id decides
        )
        for text in texts
    )
    await session.commit()
    files = _files(await _export(client, office_a, contact.id))
    sent = _json(files, f"conversations/{conversation.id}/messages.json")
    assert sorted(m["text"] for m in sent) == texts
    assert len({m["id"] for m in sent}) == 7


async def test_export_is_recorded_in_the_audit_log(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact = await f.make_contact(session, office_a.id, name="Auditada", phone=None)
    await session.commit()
    await _export(client, office_a, contact.id)
    await app.state.audit.flush()
    r = await client.get("/audit-log", params={"personId": contact.id}, headers=office_a.headers)
    assert r.status_code == 200, r.text
    [entry] = [e for e in r.json()["data"] if e["action"] == "exportContact"]
    assert entry["recordType"] == "contact" and entry["recordId"] == contact.id
    assert entry["personId"] == contact.id and entry["actor"]["id"] == office_a.key_id


async def test_export_is_for_admins_supervisors_and_agents_refused(
    app: FastAPI, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact = await f.make_contact(session, office_a.id, name="Restrita", phone=None)
    await session.commit()
    path = f"/people/{contact.id}/export"
    async with signed_in(app, office_a, "ADMIN") as admin:
        r = await admin.request("GET", path)
        assert r.status_code == 200 and r.headers["content-type"] == "application/zip"
    for role in ("SUPERVISOR", "AGENT"):
        async with signed_in(app, office_a, role) as user:
            r = await user.request("GET", path)
            assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"


async def test_export_bad_id_is_400_naming_path_id(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/people/not-an-id!/export", headers=office_a.headers)
    assert r.status_code == 400
    assert "path.id" in error_of(r)["details"]


async def test_export_of_another_office_contact_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id, name="Do Escritório A", phone=None)
    await session.commit()
    r = await client.get(f"/people/{contact.id}/export", headers=office_b.headers)
    assert r.status_code == 404
    assert error_of(r)["code"] == "NOT_FOUND"
    r = await client.get(f"/people/{MISSING}/export", headers=office_a.headers)
    assert r.status_code == 404


async def test_export_without_key_or_with_a_bad_key_is_401(client: httpx.AsyncClient) -> None:
    path = f"/people/{MISSING}/export"
    assert (await client.get(path)).status_code == 401
    r = await client.get(path, headers={"x-service-api-key": "ohk_wrong"})
    assert r.status_code == 401
