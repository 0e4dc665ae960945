"""Funnels and columns: create, list, update, delete, and the key every route needs."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.crm.models import Funnel, FunnelColumn
from tests import factories as f
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of

SOME_ID = "cm3k9x2f70001abcd1234efgh"
ROUTES = [
    ("POST", "/funnel"),
    ("GET", "/funnel"),
    ("GET", f"/funnel/{SOME_ID}"),
    ("PATCH", f"/funnel/{SOME_ID}"),
    ("DELETE", f"/funnel/{SOME_ID}"),
    ("GET", "/funnel-column"),
    ("POST", "/funnel-column"),
    ("PATCH", f"/funnel-column/{SOME_ID}"),
    ("DELETE", f"/funnel-column/{SOME_ID}"),
    ("POST", "/funnel-column-card"),
    ("GET", f"/funnel-column-card/{SOME_ID}"),
    ("PATCH", f"/funnel-column-card/{SOME_ID}"),
    ("DELETE", "/funnel-column-card/"),
    ("GET", f"/funnel-column-card/person/{SOME_ID}/conversation/{SOME_ID}"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_every_crm_route_needs_the_key(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    response = await client.request(method, path, json={} if method != "GET" else None)
    assert response.status_code == 401
    assert error_of(response)["code"] == "UNAUTHORIZED"


async def _count(session: AsyncSession, model: type[Funnel] | type[FunnelColumn]) -> int:
    return int(await session.scalar(select(func.count()).select_from(model)) or 0)


# POST /funnel


async def test_create_funnel_with_columns(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    response = await client.post(
        "/funnel",
        json={
            "name": "Previdenciário",
            "inboxId": inbox.id,
            "cardConfig": [{"id": "phone", "visible": True}, {"id": "email", "visible": False}],
            "columns": [
                {"name": "Novo"},
                {"name": "Ganho", "kind": "WON", "color": "#00FF00"},
                {"name": "Perdido", "kind": "LOST"},
            ],
        },
        headers=office_a.headers,
    )
    assert response.status_code == 201
    funnel = response.json()
    assert set(funnel) == {
        "id",
        "name",
        "cardConfig",
        "inboxId",
        "createdAt",
        "updatedAt",
        "columns",
    }
    assert funnel["cardConfig"][1] == {"id": "email", "visible": False}
    assert [(c["name"], c["index"], c["kind"]) for c in funnel["columns"]] == [
        ("Novo", 0, "NORMAL"),
        ("Ganho", 1, "WON"),
        ("Perdido", 2, "LOST"),
    ]


async def test_create_funnel_bad_input_names_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    config = [{"id": f"f{i}", "visible": True} for i in range(51)]
    response = await client.post(
        "/funnel",
        json={"name": "Vendas", "inboxId": inbox.id, "cardConfig": config},
        headers=office_a.headers,
    )
    assert response.status_code == 400
    assert "body.cardConfig" in error_of(response)["details"]
    assert await _count(session, Funnel) == 0


async def test_create_funnel_in_another_offices_inbox_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox = await f.make_inbox(session, office_b.id)
    await session.commit()
    response = await client.post(
        "/funnel", json={"name": "Vendas", "inboxId": inbox.id}, headers=office_a.headers
    )
    assert response.status_code == 404
    error_of(response)
    assert await _count(session, Funnel) == 0


# GET /funnel


async def test_list_funnels_with_their_columns(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    await make_world(session, office_b.id)
    response = await client.get(
        "/funnel", params={"inboxId": world.inbox.id}, headers=office_a.headers
    )
    assert response.status_code == 200
    body = response.json()
    assert body["totalResults"] == 1 and body["totalPages"] == 1
    [funnel] = body["data"]
    assert funnel["id"] == world.funnel.id
    assert [c["index"] for c in funnel["columns"]] == [0, 1, 2]
    assert all("items" not in c for c in funnel["columns"])


async def test_list_funnels_bad_input_names_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    response = await client.get("/funnel", params={"limit": 101}, headers=office_a.headers)
    assert response.status_code == 400
    assert "query.limit" in error_of(response)["details"]


async def test_list_funnels_of_another_offices_inbox_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    other = await make_world(session, office_b.id)
    response = await client.get(
        "/funnel", params={"inboxId": other.inbox.id}, headers=office_a.headers
    )
    assert response.status_code == 404
    error_of(response)


# PATCH /funnel/{id}


async def test_update_funnel(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.patch(
        f"/funnel/{world.funnel.id}",
        json={"name": "Trabalhista", "cardConfig": [{"id": "tags", "visible": True}]},
        headers=office_a.headers,
    )
    assert response.status_code == 200
    assert response.json()["name"] == "Trabalhista"
    assert response.json()["cardConfig"] == [{"id": "tags", "visible": True}]
    back = await client.patch(
        f"/funnel/{world.funnel.id}", json={"cardConfig": None}, headers=office_a.headers
    )
    assert back.json()["cardConfig"] is None
    assert back.json()["name"] == "Trabalhista"
    assert len(back.json()["columns"]) == 3


async def test_update_funnel_bad_input_names_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.patch(
        f"/funnel/{world.funnel.id}", json={"name": ""}, headers=office_a.headers
    )
    assert response.status_code == 400
    assert "body.name" in error_of(response)["details"]


async def test_update_funnel_of_another_office_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    other = await make_world(session, office_b.id)
    response = await client.patch(
        f"/funnel/{other.funnel.id}", json={"name": "Mine"}, headers=office_a.headers
    )
    assert response.status_code == 404
    error_of(response)


# DELETE /funnel/{id}


async def test_delete_funnel_removes_its_columns(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.delete(f"/funnel/{world.funnel.id}", headers=office_a.headers)
    assert response.status_code == 200
    assert response.json()["id"] == world.funnel.id
    assert await _count(session, Funnel) == 0
    assert await _count(session, FunnelColumn) == 0


async def test_delete_funnel_holding_cards_is_a_conflict(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    await f.make_card(session, world.columns[1], world.contact.id)
    await session.commit()
    response = await client.delete(f"/funnel/{world.funnel.id}", headers=office_a.headers)
    assert response.status_code == 409
    assert error_of(response)["code"] == "FUNNEL_NOT_EMPTY"


async def test_delete_funnel_bad_id_names_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    response = await client.delete("/funnel/nope", headers=office_a.headers)
    assert response.status_code == 400
    assert "path.id" in error_of(response)["details"]


async def test_delete_funnel_of_another_office_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    other = await make_world(session, office_b.id)
    response = await client.delete(f"/funnel/{other.funnel.id}", headers=office_a.headers)
    assert response.status_code == 404
    error_of(response)
    assert await _count(session, Funnel) == 1


# GET /funnel-column


async def test_list_columns_of_a_funnel(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    await f.make_funnel(session, office_a.id, world.inbox.id, 2)
    await session.commit()
    response = await client.get(
        "/funnel-column", params={"funnelId": world.funnel.id}, headers=office_a.headers
    )
    assert response.status_code == 200
    body = response.json()
    assert body["totalResults"] == 3
    assert [c["id"] for c in body["data"]] == [c.id for c in world.columns]
    assert set(body["data"][0]) == {
        "id",
        "funnelId",
        "name",
        "color",
        "index",
        "kind",
        "timeLimitDays",
        "showBadgeProgress",
        "createdAt",
        "updatedAt",
    }
    everything = await client.get("/funnel-column", headers=office_a.headers)
    assert everything.json()["totalResults"] == 5


async def test_list_columns_bad_input_names_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    response = await client.get(
        "/funnel-column", params={"funnelId": "x"}, headers=office_a.headers
    )
    assert response.status_code == 400
    assert "query.funnelId" in error_of(response)["details"]


async def test_list_columns_of_another_offices_funnel_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    other = await make_world(session, office_b.id)
    response = await client.get(
        "/funnel-column", params={"funnelId": other.funnel.id}, headers=office_a.headers
    )
    assert response.status_code == 404
    error_of(response)


# POST /funnel-column


async def test_create_column_at_an_index_renumbers_the_funnel(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.post(
        "/funnel-column",
        json={
            "funnelId": world.funnel.id,
            "name": "Triagem",
            "index": 1,
            "timeLimitDays": 3,
            "showBadgeProgress": True,
        },
        headers=office_a.headers,
    )
    assert response.status_code == 201
    column = response.json()
    assert column["index"] == 1 and column["kind"] == "NORMAL" and column["timeLimitDays"] == 3
    listed = await client.get(
        "/funnel-column", params={"funnelId": world.funnel.id}, headers=office_a.headers
    )
    assert [(c["name"], c["index"]) for c in listed.json()["data"]] == [
        ("Etapa 1", 0),
        ("Triagem", 1),
        ("Etapa 2", 2),
        ("Etapa 3", 3),
    ]


async def test_create_column_bad_input_names_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.post(
        "/funnel-column",
        json={"funnelId": world.funnel.id, "name": "X", "kind": "ARCHIVED"},
        headers=office_a.headers,
    )
    assert response.status_code == 400
    assert "body.kind" in error_of(response)["details"]
    assert await _count(session, FunnelColumn) == 3


async def test_create_column_in_another_offices_funnel_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    other = await make_world(session, office_b.id)
    response = await client.post(
        "/funnel-column",
        json={"funnelId": other.funnel.id, "name": "X"},
        headers=office_a.headers,
    )
    assert response.status_code == 404
    error_of(response)


# PATCH /funnel-column/{id}


async def test_update_column_renames_and_reorders(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.patch(
        f"/funnel-column/{world.columns[0].id}",
        json={"name": "Fechado", "index": 2, "kind": "WON"},
        headers=office_a.headers,
    )
    assert response.status_code == 200
    assert response.json()["index"] == 2 and response.json()["kind"] == "WON"
    listed = await client.get(
        "/funnel-column", params={"funnelId": world.funnel.id}, headers=office_a.headers
    )
    assert [c["name"] for c in listed.json()["data"]] == ["Etapa 2", "Etapa 3", "Fechado"]


async def test_update_column_bad_input_names_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.patch(
        f"/funnel-column/{world.columns[0].id}",
        json={"timeLimitDays": 0},
        headers=office_a.headers,
    )
    assert response.status_code == 400
    assert "body.timeLimitDays" in error_of(response)["details"]


async def test_update_column_of_another_office_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    other = await make_world(session, office_b.id)
    response = await client.patch(
        f"/funnel-column/{other.columns[0].id}", json={"name": "Mine"}, headers=office_a.headers
    )
    assert response.status_code == 404
    error_of(response)


# DELETE /funnel-column/{id}


async def test_delete_column_renumbers_the_rest(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.delete(
        f"/funnel-column/{world.columns[0].id}", headers=office_a.headers
    )
    assert response.status_code == 200
    listed = await client.get(
        "/funnel-column", params={"funnelId": world.funnel.id}, headers=office_a.headers
    )
    assert [(c["name"], c["index"]) for c in listed.json()["data"]] == [
        ("Etapa 2", 0),
        ("Etapa 3", 1),
    ]


async def test_delete_column_holding_cards_is_a_conflict(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    await f.make_card(session, world.columns[0], world.contact.id)
    await session.commit()
    response = await client.delete(
        f"/funnel-column/{world.columns[0].id}", headers=office_a.headers
    )
    assert response.status_code == 409
    assert error_of(response)["code"] == "COLUMN_NOT_EMPTY"
    assert await _count(session, FunnelColumn) == 3


async def test_delete_column_bad_id_names_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    response = await client.delete("/funnel-column/c-1", headers=office_a.headers)
    assert response.status_code == 400
    assert "path.id" in error_of(response)["details"]


async def test_delete_column_of_another_office_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    other = await make_world(session, office_b.id)
    response = await client.delete(
        f"/funnel-column/{other.columns[0].id}", headers=office_a.headers
    )
    assert response.status_code == 404
    error_of(response)
