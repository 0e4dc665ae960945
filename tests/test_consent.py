"""Consent and opt-out (issue 30): a contact's consent records per purpose, append-only,
the latest one the current state; a client's opt-out keyword (``SAIR``, ``PARAR``,
``STOP``; ``VOLTAR`` to return, or the office's own words) withdraws marketing consent and
is answered once through the conversation's channel; a marketing template to an opted-out
contact is 409 ``CONTACT_OPTED_OUT``, a utility one still goes. Inbound messages come
through the signed WhatsApp webhook; answers reach the platform stand-in."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import texts
from officehub.contacts.models import ConsentRecord, Contact
from officehub.conversations.models import Conversation
from officehub.inboxes.models import Integration
from officehub.kit.config import Settings
from officehub.messages.models import Message
from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire, running_server
from tests.whatsapp_fixtures import catalogue_template
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import (
    notification,
    official_integration,
    post_notification,
    text_message,
    worker,
)

OPTED_OUT = texts.OPTED_OUT_ANSWER.format(out="SAIR", back="VOLTAR")
OPTED_IN = texts.OPTED_IN_ANSWER.format(out="SAIR", back="VOLTAR")


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The test's settings with the platform stand-in as the Cloud API (``conftest``)."""
    return whatsapp_settings


class Client:
    """A client writing to the office's official number."""

    def __init__(self, client: httpx.AsyncClient, integration: Integration) -> None:
        self.client = client
        self.integration = integration
        self.count = 0

    async def writes(self, text: str) -> None:
        self.count += 1
        body = notification([text_message(f"wamid.c{self.count:04d}", body=text)])
        r = await post_notification(self.client, self.integration.id, body)
        assert r.status_code == 200, r.text


async def _client(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture
) -> Client:
    return Client(client, await official_integration(session, office.id))


async def _person(session: AsyncSession, office_id: str) -> str:
    ident = await session.scalar(select(Contact.id).where(Contact.office_id == office_id))
    assert ident is not None
    return ident


async def _answers(session: AsyncSession, office_id: str) -> list[str | None]:
    stmt = (
        select(Message.text)
        .where(Message.office_id == office_id, Message.direction == "OUTBOUND")
        .order_by(Message.created_at, Message.id)
        .execution_options(populate_existing=True)
    )
    return list(await session.scalars(stmt))


async def _consents(
    client: httpx.AsyncClient, office: OfficeFixture, person_id: str
) -> list[dict[str, Any]]:
    r = await client.get(f"/people/{person_id}/consents", headers=office.headers)
    assert r.status_code == 200, r.text
    return list(r.json()["data"])


async def _opted_out(client: httpx.AsyncClient, office: OfficeFixture, person_id: str) -> bool:
    r = await client.get(f"/people/{person_id}", headers=office.headers)
    assert r.status_code == 200, r.text
    return bool(r.json()["marketingOptOut"])


def _consent(purpose: str, granted: bool, **extra: Any) -> dict[str, Any]:
    return {"purpose": purpose, "granted": granted, "source": "formulário do site", **extra}


# Records and the current state


async def test_consent_records_are_appended_and_the_latest_is_the_current_state(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    path = f"/people/{contact.id}/consents"
    r = await client.post(
        path, json=_consent("service", True, textVersion="termos-v3"), headers=office_a.headers
    )
    assert r.status_code == 201, r.text
    first = r.json()
    assert (first["personId"], first["purpose"], first["granted"]) == (contact.id, "service", True)
    assert (first["source"], first["textVersion"]) == ("formulário do site", "termos-v3")
    assert first["recordedAt"].endswith("Z")
    r = await client.post(path, json=_consent("marketing", False), headers=office_a.headers)
    assert r.status_code == 201, r.text
    assert await _opted_out(client, office_a, contact.id) is True
    # The same state again: appended (history), but nothing changes and no event goes.
    events_before = len(await outbox(app, office_a.id, "contact.updated"))
    r = await client.post(path, json=_consent("marketing", False), headers=office_a.headers)
    assert r.status_code == 201, r.text
    assert len(await outbox(app, office_a.id, "contact.updated")) == events_before
    r = await client.post(path, json=_consent("marketing", True), headers=office_a.headers)
    assert await _opted_out(client, office_a, contact.id) is False
    listed = await _consents(client, office_a, contact.id)
    assert [(c["purpose"], c["granted"]) for c in listed] == [
        ("marketing", True),
        ("marketing", False),
        ("marketing", False),
        ("service", True),
    ]
    page = await client.get(path, params={"limit": 1, "page": 2}, headers=office_a.headers)
    assert page.json()["totalResults"] == 4 and page.json()["totalPages"] == 4
    assert [c["granted"] for c in page.json()["data"]] == [False]
    # One event per change of a current state: service given, marketing withdrawn, given.
    updated = await outbox(app, office_a.id, "contact.updated")
    assert [e.data["marketingOptOut"] for e in updated] == [False, True, False]


async def test_a_consent_record_changing_no_state_emits_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Marketing is granted until withdrawn: a first ``granted: true`` changes nothing."""
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    r = await client.post(
        f"/people/{contact.id}/consents",
        json=_consent("marketing", True),
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert await outbox(app, office_a.id, "contact.updated") == []
    assert len(await _consents(client, office_a, contact.id)) == 1


# Keywords


async def test_an_opt_out_keyword_withdraws_marketing_and_answers_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    maria = await _client(client, session, office_a)
    await maria.writes("Olá, bom dia")
    person_id = await _person(session, office_a.id)
    assert await _opted_out(client, office_a, person_id) is False
    await maria.writes("SAIR")
    assert await _opted_out(client, office_a, person_id) is True
    [record] = await _consents(client, office_a, person_id)
    assert (record["purpose"], record["granted"], record["source"]) == (
        "marketing",
        False,
        "keyword",
    )
    assert await _answers(session, office_a.id) == [OPTED_OUT]
    [event] = await outbox(app, office_a.id, "contact.updated")
    assert event.data["marketingOptOut"] is True
    # The answer goes through the channel's normal outbound path: a plain text reply.
    assert await worker(app, settings).run_once() >= 1
    [sent] = platform.sent
    assert sent["type"] == "text" and sent["text"]["body"] == OPTED_OUT
    assert sent["to"] == "5511987654321"


async def test_a_second_opt_out_keyword_does_not_answer_again(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    maria = await _client(client, session, office_a)
    await maria.writes("SAIR")
    await maria.writes("sair")
    await maria.writes("PARAR")
    person_id = await _person(session, office_a.id)
    assert await _answers(session, office_a.id) == [OPTED_OUT]
    assert len(await _consents(client, office_a, person_id)) == 1
    assert len(await outbox(app, office_a.id, "contact.updated")) == 1


@pytest.mark.parametrize("text", ["sair", "  Sair  ", "PÁRAR", "párar", "sTop", "Saír\n"])
async def test_keywords_match_any_case_any_accents_and_spaces_around(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture, text: str
) -> None:
    maria = await _client(client, session, office_a)
    await maria.writes(text)
    assert await _opted_out(client, office_a, await _person(session, office_a.id)) is True
    assert await _answers(session, office_a.id) == [OPTED_OUT]


@pytest.mark.parametrize("text", ["quero sair", "SAIR!", "sair da lista", "STOPS", "voltar?"])
async def test_a_keyword_inside_other_words_is_no_keyword(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    text: str,
) -> None:
    maria = await _client(client, session, office_a)
    await maria.writes(text)
    person_id = await _person(session, office_a.id)
    assert await _opted_out(client, office_a, person_id) is False
    assert await _answers(session, office_a.id) == []
    assert await _consents(client, office_a, person_id) == []


async def test_voltar_gives_marketing_back_and_answers_once(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    maria = await _client(client, session, office_a)
    await maria.writes("VOLTAR")  # never opted out: nothing to give back, no answer
    assert await _answers(session, office_a.id) == []
    await maria.writes("STOP")
    await maria.writes("Voltar")
    await maria.writes("VOLTAR")
    person_id = await _person(session, office_a.id)
    assert await _opted_out(client, office_a, person_id) is False
    assert await _answers(session, office_a.id) == [OPTED_OUT, OPTED_IN]
    listed = await _consents(client, office_a, person_id)
    assert [(c["granted"], c["source"]) for c in listed] == [(True, "keyword"), (False, "keyword")]
    updated = await outbox(app, office_a.id, "contact.updated")
    assert [e.data["marketingOptOut"] for e in updated] == [True, False]


async def test_configured_keywords_replace_the_defaults(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    r = await client.get("/office", headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert r.json() == {
        "optOutKeywords": ["SAIR", "PARAR", "STOP"],
        "optInKeywords": ["VOLTAR"],
        "retentionDays": {"closedConversations": None, "webhookDeliveries": None},
        "timeZone": "America/Sao_Paulo",
        "updatedAt": None,
    }
    r = await client.patch(
        "/office",
        json={"optOutKeywords": ["CANCELAR", "Não quero"], "optInKeywords": ["RETORNAR"]},
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    assert r.json()["optOutKeywords"] == ["CANCELAR", "Não quero"]
    assert (await client.get("/office", headers=office_a.headers)).json() == r.json()
    maria = await _client(client, session, office_a)
    await maria.writes("SAIR")  # a default no more
    person_id = await _person(session, office_a.id)
    assert await _opted_out(client, office_a, person_id) is False
    await maria.writes("nao   QUERO")
    assert await _opted_out(client, office_a, person_id) is True
    await maria.writes("VOLTAR")
    assert await _opted_out(client, office_a, person_id) is True
    await maria.writes("retornar")
    assert await _opted_out(client, office_a, person_id) is False
    assert await _answers(session, office_a.id) == [
        texts.OPTED_OUT_ANSWER.format(out="CANCELAR", back="RETORNAR"),
        texts.OPTED_IN_ANSWER.format(out="CANCELAR", back="RETORNAR"),
    ]
    # null: back to the defaults.
    r = await client.patch("/office", json={"optOutKeywords": None}, headers=office_a.headers)
    assert r.json()["optOutKeywords"] == ["SAIR", "PARAR", "STOP"]
    assert r.json()["optInKeywords"] == ["RETORNAR"]


async def test_one_offices_keywords_are_not_anothers(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    r = await client.patch(
        "/office", json={"optOutKeywords": ["CANCELAR"]}, headers=office_b.headers
    )
    assert r.status_code == 200, r.text
    assert (await client.get("/office", headers=office_a.headers)).json()["optOutKeywords"] == [
        "SAIR",
        "PARAR",
        "STOP",
    ]
    maria = await _client(client, session, office_a)
    await maria.writes("CANCELAR")
    assert await _opted_out(client, office_a, await _person(session, office_a.id)) is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"optOutKeywords": []}, "optOutKeywords"),
        ({"optOutKeywords": ["  "]}, "optOutKeywords"),
        ({"optOutKeywords": ["x" * 31]}, "optOutKeywords"),
        ({"optOutKeywords": ["SAIR", "sáir"]}, "optOutKeywords"),
        ({"optInKeywords": "VOLTAR"}, "optInKeywords"),
        ({"optInKeywords": ["Parar"]}, "optInKeywords"),
    ],
)
async def test_bad_office_settings_are_400_naming_the_field_and_change_nothing(
    client: httpx.AsyncClient, office_a: OfficeFixture, body: dict[str, Any], field: str
) -> None:
    r = await client.patch("/office", json=body, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field in error_of(r)["details"]
    after = (await client.get("/office", headers=office_a.headers)).json()
    assert after["optOutKeywords"] == ["SAIR", "PARAR", "STOP"] and after["updatedAt"] is None


# Refusal


async def test_a_marketing_template_to_an_opted_out_contact_is_409_contact_opted_out(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    maria = await _client(client, session, office_a)
    await maria.writes("PARAR")
    await catalogue_template(session, maria.integration, status="APPROVED", category="MARKETING")
    conversation_id = await session.scalar(
        select(Conversation.id).where(Conversation.office_id == office_a.id)
    )
    sent_before = len(await outbox(app, office_a.id, "chat.message.sent"))
    count = select(func.count()).select_from(Message).where(Message.office_id == office_a.id)
    rows_before = await session.scalar(count)
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"templateName": "lembrete_audiencia", "variables": ["Maria", "amanhã"]},
        headers=office_a.headers,
    )
    assert r.status_code == 409, r.text
    assert error_of(r)["code"] == "CONTACT_OPTED_OUT"
    assert len(await outbox(app, office_a.id, "chat.message.sent")) == sent_before
    assert await session.scalar(count) == rows_before


@pytest.mark.parametrize("category", ["UTILITY", "AUTHENTICATION"])
async def test_a_utility_or_authentication_template_to_an_opted_out_contact_still_goes(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture, category: str
) -> None:
    maria = await _client(client, session, office_a)
    await maria.writes("PARAR")
    await catalogue_template(session, maria.integration, status="APPROVED", category=category)
    conversation_id = await session.scalar(
        select(Conversation.id).where(Conversation.office_id == office_a.id)
    )
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"templateName": "lembrete_audiencia", "variables": ["Maria", "amanhã"]},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text


async def test_a_marketing_template_goes_again_after_consent_is_given_back(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    maria = await _client(client, session, office_a)
    await maria.writes("SAIR")
    person_id = await _person(session, office_a.id)
    r = await client.post(
        f"/people/{person_id}/consents",
        json=_consent("marketing", True, textVersion="promo-v1"),
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    await catalogue_template(session, maria.integration, status="APPROVED", category="MARKETING")
    conversation_id = await session.scalar(
        select(Conversation.id).where(Conversation.office_id == office_a.id)
    )
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"templateName": "lembrete_audiencia", "variables": ["Maria", "amanhã"]},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text


# The routes' standard answers


async def test_another_offices_contact_consents_are_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    theirs = await f.make_contact(session, office_b.id)
    await session.commit()
    path = f"/people/{theirs.id}/consents"
    assert (await client.get(path, headers=office_a.headers)).status_code == 404
    r = await client.post(path, json=_consent("marketing", False), headers=office_a.headers)
    assert r.status_code == 404
    assert await _consents(client, office_b, theirs.id) == []
    assert await _opted_out(client, office_b, theirs.id) is False


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"granted": False, "source": "x"}, "purpose"),
        ({"purpose": "newsletter", "granted": False, "source": "x"}, "purpose"),
        ({"purpose": "marketing", "granted": "no", "source": "x"}, "granted"),
        ({"purpose": "marketing", "granted": 0, "source": "x"}, "granted"),
        ({"purpose": "marketing", "granted": False}, "source"),
        ({"purpose": "marketing", "granted": False, "source": "   "}, "source"),
        ({"purpose": "marketing", "granted": False, "source": "x" * 65}, "source"),
        (
            {"purpose": "marketing", "granted": False, "source": "x", "textVersion": "v" * 65},
            "textVersion",
        ),
    ],
)
async def test_bad_consent_input_is_400_naming_the_field_and_changes_nothing(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    body: dict[str, Any],
    field: str,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    r = await client.post(f"/people/{contact.id}/consents", json=body, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field in error_of(r)["details"]
    assert await _consents(client, office_a, contact.id) == []
    assert await _opted_out(client, office_a, contact.id) is False
    assert await outbox(app, office_a.id, "contact.updated") == []


@pytest.mark.parametrize("headers", [{}, {"x-service-api-key": "ohk_not-a-key"}])
async def test_consent_and_office_routes_without_a_valid_key_are_401(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    headers: dict[str, str],
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    path = f"/people/{contact.id}/consents"
    assert (await client.get(path, headers=headers)).status_code == 401
    r = await client.post(path, json=_consent("marketing", False), headers=headers)
    assert r.status_code == 401
    assert (await client.get("/office", headers=headers)).status_code == 401
    r = await client.patch("/office", json={"optOutKeywords": ["X"]}, headers=headers)
    assert r.status_code == 401
    assert await _opted_out(client, office_a, contact.id) is False
    assert (await client.get("/office", headers=office_a.headers)).json()["updatedAt"] is None


# Concurrency


async def test_a_concurrent_opt_out_keyword_and_consent_post_leave_one_consistent_state(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The keyword's record and the POSTed one are serialised on the contact's row: whichever
    comes last is the current state, the flag follows it, and each change made one event
    and (for the keyword) at most one answer."""
    maria = await _client(client, session, office_a)
    await maria.writes("Olá")
    person_id = await _person(session, office_a.id)
    async with running_server(app) as url, concurrent_client(url) as remote:
        for round_ in range(4):
            stop = notification([text_message(f"wamid.race{round_}", body="SAIR")])
            # Each round starts opted in, so the keyword is a change.
            r = await remote.post(
                f"/people/{person_id}/consents",
                json=_consent("marketing", True),
                headers=office_a.headers,
            )
            assert r.status_code == 201, r.text

            async def one(i: int, stop: dict[str, Any] = stop) -> httpx.Response:
                if i == 0:
                    return await post_notification(remote, maria.integration.id, stop)
                return await remote.post(
                    f"/people/{person_id}/consents",
                    json=_consent("marketing", True),
                    headers=office_a.headers,
                )

            answers = await fire(2, one)
            assert [a.status_code for a in answers] == [200, 201], [a.text for a in answers]
    records = sorted(
        await session.scalars(
            select(ConsentRecord)
            .where(ConsentRecord.contact_id == person_id, ConsentRecord.purpose == "marketing")
            .execution_options(populate_existing=True)
        ),
        key=lambda c: (c.recorded_at, c.id),
    )
    changes, state = [], True
    for record in records:
        if record.granted != state:
            changes.append(not record.granted)
            state = record.granted
    assert await _opted_out(client, office_a, person_id) is (not records[-1].granted)
    updated = await outbox(app, office_a.id, "contact.updated")
    assert [e.data["marketingOptOut"] for e in updated] == changes
    keyword_records = [r for r in records if r.source == "keyword"]
    assert len(keyword_records) == 4  # each round's keyword came while opted in or after
    assert await _answers(session, office_a.id) == [OPTED_OUT] * len(keyword_records)


async def test_a_merged_contacts_consent_records_move_to_the_kept_one(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    kept = await f.make_contact(session, office_a.id, name="Maria")
    other = await f.make_contact(session, office_a.id, name="Maria S.")
    await session.commit()
    r = await client.post(
        f"/people/{other.id}/consents",
        json=_consent("marketing", False),
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    r = await client.post(
        f"/people/{kept.id}/merge", json={"otherId": other.id}, headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    assert r.json()["marketingOptOut"] is True
    [moved] = await _consents(client, office_a, kept.id)
    assert (moved["purpose"], moved["granted"]) == ("marketing", False)


async def test_the_client_export_holds_the_consent_records(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    contact = await f.make_contact(session, office_a.id)
    other = await f.make_contact(session, office_a.id, name="Outra pessoa")
    await session.commit()
    for person, body in (
        (contact.id, _consent("service", True, textVersion="termos-v3")),
        (contact.id, _consent("marketing", False)),
        (other.id, _consent("marketing", False)),
    ):
        r = await client.post(f"/people/{person}/consents", json=body, headers=office_a.headers)
        assert r.status_code == 201, r.text
    r = await client.get(f"/people/{contact.id}/export", headers=office_a.headers)
    assert r.status_code == 200, r.text
    archive = zipfile.ZipFile(io.BytesIO(r.content))
    consents = json.loads(archive.read("consents.json"))
    assert [(c["purpose"], c["granted"], c["textVersion"]) for c in consents] == [
        ("service", True, "termos-v3"),
        ("marketing", False, None),
    ]
    assert {c["contactId"] for c in consents} == {contact.id}
    assert "consents.json" in archive.read("README.txt").decode()
