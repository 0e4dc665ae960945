"""GET /conversation's inbox filters (issue 42): assigneeId, tagId, legalAreaId and q."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from tests import factories as f
from tests.helpers import OfficeFixture, error_of

MISSING = "c" + "0" * 24


@dataclass(frozen=True)
class Inbox:
    """Three conversations: Maria's (assigned to Ana, tagged, in an area, a message about
    a lease), João's (username ``joaozinho``, a phone of its own) and Zé's (nothing)."""

    maria: str
    joao: str
    ze: str
    user_id: str
    tag_id: str
    area_id: str


async def _inbox(session: AsyncSession, office_id: str) -> Inbox:
    inbox = await f.make_inbox(session, office_id)
    integration = await f.make_integration(session, office_id, inbox.id)
    user = await f.make_user(session, office_id)
    tag = await f.make_tag(session, office_id, inbox.id, name="urgente")
    area = await f.make_legal_area(session, office_id)
    maria = await f.make_contact(session, office_id, name="Maria Conceição")
    maria.search_name = "maria conceicao"
    joao = await f.make_contact(session, office_id, name="João", phone="+5521976501234")
    joao.search_name = "joao"
    joao.whatsapp_username = "JoaoZinho_99"
    ze = await f.make_contact(session, office_id, name="Zé", phone="+5531912340000")
    ze.search_name = "ze"
    first = await f.make_conversation(
        session, office_id, maria.id, integration, tags=[tag], assigned_user_id=user.id
    )
    first.legal_area_id = area.id
    second = await f.make_conversation(session, office_id, joao.id, integration)
    third = await f.make_conversation(session, office_id, ze.id, integration)
    session.add(
        Message(
            office_id=office_id,
            conversation_id=first.id,
            direction="INBOUND",
            type="TEXT",
            text="Sobre o CONTRATO de locação 100%",
            status="RECEIVED",
            created_at=utcnow(),
        )
    )
    await session.commit()
    return Inbox(first.id, second.id, third.id, user.id, tag.id, area.id)


async def _ids(client: httpx.AsyncClient, office: OfficeFixture, **params: Any) -> set[str]:
    r = await client.get("/conversation", params=params, headers=office.headers)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["totalResults"] == len(body["data"])
    return {c["id"] for c in body["data"]}


async def test_each_filter_lists_its_conversations(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _inbox(session, office_a.id)
    assert await _ids(client, office_a) == {w.maria, w.joao, w.ze}
    assert await _ids(client, office_a, assigneeId=w.user_id) == {w.maria}
    assert await _ids(client, office_a, tagId=w.tag_id) == {w.maria}
    assert await _ids(client, office_a, legalAreaId=w.area_id) == {w.maria}
    assert await _ids(client, office_a, tagId=w.tag_id, status="CLOSED") == set()


async def test_q_searches_name_phone_username_and_message_text(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _inbox(session, office_a.id)
    # the name, accents and case ignored
    assert await _ids(client, office_a, q="CONCEIÇÃO") == {w.maria}
    assert await _ids(client, office_a, q="joão") == {w.joao}
    # a fragment of the phone's digits, written any way
    assert await _ids(client, office_a, q="97650-1234") == {w.joao}
    # the WhatsApp username, any case
    assert await _ids(client, office_a, q="zinho_9") == {w.joao}
    # a message's text, any case; % and _ are literal
    assert await _ids(client, office_a, q="contrato de") == {w.maria}
    assert await _ids(client, office_a, q="100%") == {w.maria}
    assert await _ids(client, office_a, q="1_0") == set()
    assert await _ids(client, office_a, q="nada disso") == set()
    # with another filter
    assert await _ids(client, office_a, q="contrato", tagId=w.tag_id) == {w.maria}
    assert await _ids(client, office_a, q="joao", tagId=w.tag_id) == set()


async def test_filtered_pages_hold_every_match_once(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    tag = await f.make_tag(session, office_a.id, inbox.id)
    tagged = set()
    for i in range(7):
        contact = await f.make_contact(session, office_a.id, name=f"Cliente {i}")
        conversation = await f.make_conversation(
            session, office_a.id, contact.id, integration, tags=[tag] if i % 2 == 0 else []
        )
        if i % 2 == 0:
            tagged.add(conversation.id)
    await session.commit()
    seen: list[str] = []
    for page in (1, 2, 3):
        r = await client.get(
            "/conversation",
            params={"tagId": tag.id, "q": "cliente", "limit": 2, "page": page},
            headers=office_a.headers,
        )
        assert r.status_code == 200, r.text
        assert r.json()["totalResults"] == 4 and r.json()["totalPages"] == 2
        seen += [c["id"] for c in r.json()["data"]]
    assert len(seen) == 4 and set(seen) == tagged


async def test_bad_filters_are_400_naming_the_param(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    for params, field in (
        ({"assigneeId": "x"}, "query.assigneeId"),
        ({"assigneeId": MISSING, "mine": "true"}, "query.assigneeId"),
        ({"assigneeId": MISSING, "unassigned": "true"}, "query.assigneeId"),
        ({"tagId": ""}, "query.tagId"),
        ({"tagId": "t" * 65}, "query.tagId"),
        ({"legalAreaId": ""}, "query.legalAreaId"),
        ({"legalAreaId": "l" * 33}, "query.legalAreaId"),
        ({"q": ""}, "query.q"),
        ({"q": "   "}, "query.q"),
        ({"q": "a" * 101}, "query.q"),
    ):
        r = await client.get("/conversation", params=params, headers=office_a.headers)
        assert r.status_code == 400, (params, r.text)
        assert field in error_of(r)["details"], params


async def test_another_offices_ids_are_404_and_its_text_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    ours = await _inbox(session, office_a.id)
    theirs = await _inbox(session, office_b.id)
    for params in (
        {"assigneeId": theirs.user_id},
        {"tagId": theirs.tag_id},
        {"legalAreaId": theirs.area_id},
        {"assigneeId": MISSING},
        {"tagId": MISSING},
        {"legalAreaId": MISSING},
    ):
        r = await client.get("/conversation", params=params, headers=office_a.headers)
        assert r.status_code == 404, (params, r.text)
        assert error_of(r)["code"] == "NOT_FOUND"
    # the other office's contacts and messages are never matched
    assert await _ids(client, office_a, q="contrato") == {ours.maria}
    assert await _ids(client, office_b, q="contrato") == {theirs.maria}


async def test_filters_need_a_key(client: httpx.AsyncClient) -> None:
    for params in (
        {"assigneeId": MISSING},
        {"tagId": MISSING},
        {"legalAreaId": MISSING},
        {"q": "maria"},
    ):
        r = await client.get("/conversation", params=params)
        assert r.status_code == 401
        r = await client.get("/conversation", params=params, headers={"x-api-key": "nope"})
        assert r.status_code == 401


async def test_unknown_query_params_are_still_ignored_and_a_filter_given_twice_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _inbox(session, office_a.id)
    # as the route did before: a name it does not take is ignored
    assert await _ids(client, office_a, color="red", tagId=w.tag_id) == {w.maria}
    for name, value in (("assigneeId", w.user_id), ("tagId", w.tag_id), ("q", "maria")):
        r = await client.get(
            "/conversation", params=[(name, value), (name, value)], headers=office_a.headers
        )
        assert r.status_code == 400, name
        assert f"query.{name}" in error_of(r)["details"]


async def test_the_openapi_describes_each_filter(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    params = {p["name"]: p for p in spec["paths"]["/conversation"]["get"]["parameters"]}
    for name in ("assigneeId", "tagId", "legalAreaId", "q"):
        assert params[name].get("description"), name
