"""The funnel board: one page of cards per column, owner filter, a fixed number of queries."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import delete, event, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.crm.models import Card
from officehub.crm.schemas import FunnelBoard
from officehub.kit.timeutil import isoformat, utcnow
from tests import factories as f
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of


async def _fill(session: AsyncSession, office_id: str, world: World, per_column: int) -> None:
    """``per_column`` cards in every column, each a contact of its own, a minute apart."""
    start = utcnow() - timedelta(days=1)
    n = 0
    for column in world.columns:
        for _ in range(per_column):
            contact = await f.make_contact(session, office_id, name=f"Pessoa {n}", phone=None)
            await f.make_card(
                session,
                column,
                contact.id,
                user_id=world.user.id if n % 2 == 0 else None,
                column_changed_at=start + timedelta(minutes=n),
            )
            n += 1
    await session.commit()


async def test_read_funnel_board(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    await _fill(session, office_a.id, world, 3)
    response = await client.get(
        f"/funnel/{world.funnel.id}", params={"limit": 2}, headers=office_a.headers
    )
    assert response.status_code == 200
    board = response.json()
    assert board["id"] == world.funnel.id and board["inboxId"] == world.inbox.id
    assert [c["id"] for c in board["columns"]] == [c.id for c in world.columns]
    first = board["columns"][0]
    assert {k: first[k] for k in ("index", "kind", "total", "page", "hasMore")} == {
        "index": 0,
        "kind": "NORMAL",
        "total": 3,
        "page": 1,
        "hasMore": True,
    }
    assert len(first["items"]) == 2
    item = first["items"][0]
    assert set(item) == {
        "id",
        "channel",
        "funnelId",
        "columnId",
        "person",
        "customFields",
        "createdAt",
        "updatedAt",
        "userId",
    }
    assert set(item["person"]) == {"id", "createdAt", "updatedAt", "name", "email", "phone"}
    assert [i["person"]["name"] for i in first["items"]] == ["Pessoa 2", "Pessoa 1"]
    second_page = await client.get(
        f"/funnel/{world.funnel.id}", params={"limit": 2, "page": 2}, headers=office_a.headers
    )
    column = second_page.json()["columns"][0]
    assert [i["person"]["name"] for i in column["items"]] == ["Pessoa 0"]
    assert column["page"] == 2 and column["hasMore"] is False and column["total"] == 3


async def test_the_board_writes_its_timestamps_as_every_answer_does(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The cards' and their people's timestamps come written by PostgreSQL
    (``kit.db.api_timestamp``; on SQLite by ``isoformat``) and the answer is written through
    ``FunnelBoardWritten``: the bytes ``FunnelBoard`` writes, milliseconds truncated."""
    world = await make_world(session, office_a.id)
    moments = [
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 6, 1, 9, 0, 0, 123456, tzinfo=timezone(timedelta(hours=-3))),
    ]
    for n, moment in enumerate(moments):
        contact = await f.make_contact(session, office_a.id, name=f"Pessoa {n}", phone=None)
        contact.created_at, contact.updated_at = moment, moments[n - 1]
        card = await f.make_card(session, world.columns[0], contact.id)
        card.created_at, card.updated_at = moments[n - 1], moment
    await session.commit()
    response = await client.get(f"/funnel/{world.funnel.id}", headers=office_a.headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/json"
    board = FunnelBoard.model_validate_json(response.content)
    assert board.model_dump_json(by_alias=True).encode() == response.content
    items = response.json()["columns"][0]["items"]
    written = {
        (i["person"]["createdAt"], i["person"]["updatedAt"], i["createdAt"], i["updatedAt"])
        for i in items
    }
    assert written == {
        (isoformat(m), isoformat(moments[n - 1]), isoformat(moments[n - 1]), isoformat(m))
        for n, m in enumerate(moments)
    }
    assert "2026-12-31T23:59:59.999Z" in {i["updatedAt"] for i in items}


async def test_a_funnel_without_columns_answers_its_board_empty(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """On PostgreSQL the funnel, its columns and their totals are one outer-joined read
    (``repository.board_head``): a funnel with no columns is still found, with none."""
    inbox = await f.make_inbox(session, office_a.id)
    funnel, _ = await f.make_funnel(session, office_a.id, inbox.id, 0)
    await session.commit()
    response = await client.get(f"/funnel/{funnel.id}", headers=office_a.headers)
    assert response.status_code == 200, response.text
    board = response.json()
    assert (board["id"], board["name"], board["columns"]) == (funnel.id, "Vendas", [])
    assert board["createdAt"] == isoformat(funnel.created_at)
    assert (
        FunnelBoard.model_validate_json(response.content).model_dump_json(by_alias=True).encode()
        == response.content
    )
    owners = {"userIds": "c" + "0" * 24}
    unknown = await client.get(f"/funnel/{funnel.id}", params=owners, headers=office_a.headers)
    assert unknown.status_code == 404, unknown.text


async def test_read_funnel_board_filters_by_owner(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    await _fill(session, office_a.id, world, 4)
    other = await f.make_user(session, office_a.id, name="Bruno")
    await session.commit()
    url = f"/funnel/{world.funnel.id}"
    mine = await client.get(url, params={"userIds": world.user.id}, headers=office_a.headers)
    assert [c["total"] for c in mine.json()["columns"]] == [2, 2, 2]
    assert all(i["userId"] == world.user.id for c in mine.json()["columns"] for i in c["items"])
    both = await client.get(
        url, params={"userIds": f"{world.user.id},{other.id}"}, headers=office_a.headers
    )
    assert [c["total"] for c in both.json()["columns"]] == [2, 2, 2]
    repeated = await client.get(url, params=[("userIds", other.id)], headers=office_a.headers)
    assert [c["total"] for c in repeated.json()["columns"]] == [0, 0, 0]


async def test_read_funnel_bad_owner_filter_names_the_field(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    response = await client.get(
        f"/funnel/{world.funnel.id}",
        params={"userIds": f"{world.user.id},not-an-id"},
        headers=office_a.headers,
    )
    assert response.status_code == 400
    assert "query.userIds" in error_of(response)["details"]
    too_many = await client.get(
        f"/funnel/{world.funnel.id}", params={"limit": 101}, headers=office_a.headers
    )
    assert too_many.status_code == 400
    assert "query.limit" in error_of(too_many)["details"]


async def test_read_funnel_of_another_office_is_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    other = await make_world(session, office_b.id)
    response = await client.get(f"/funnel/{other.funnel.id}", headers=office_a.headers)
    assert response.status_code == 404
    error_of(response)


@contextmanager
def _counting(app: FastAPI) -> Iterator[list[str]]:
    statements: list[str] = []

    def count(*args: Any) -> None:
        statements.append(args[2])

    engine = app.state.engine.sync_engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield statements
    finally:
        event.remove(engine, "before_cursor_execute", count)


async def _queries_for_board(
    app: FastAPI, client: httpx.AsyncClient, office: OfficeFixture, funnel_id: str
) -> int:
    with _counting(app) as statements:
        response = await client.get(f"/funnel/{funnel_id}", headers=office.headers)
        assert response.status_code == 200
    return len(statements)


async def test_the_board_costs_the_same_queries_for_2_and_10_columns(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    small = await make_world(session, office_a.id, columns=2)
    await _fill(session, office_a.id, small, 3)
    large_funnel, large_columns = await f.make_funnel(session, office_a.id, small.inbox.id, 10)
    await session.commit()
    large = World(**{**small.__dict__, "funnel": large_funnel, "columns": large_columns})
    await _fill(session, office_a.id, large, 30)
    await _queries_for_board(app, client, office_a, small.funnel.id)  # warm the key cache
    two = await _queries_for_board(app, client, office_a, small.funnel.id)
    ten = await _queries_for_board(app, client, office_a, large_funnel.id)
    assert two == ten
    assert ten <= 6, ten  # the key, the funnel, its columns, the page, the totals


async def _true_totals(
    session: AsyncSession, world: World, user_id: str | None = None
) -> list[int]:
    stmt = select(Card.column_id, func.count()).group_by(Card.column_id)
    if user_id is not None:
        stmt = stmt.where(Card.user_id == user_id)
    counted = dict((await session.execute(stmt)).all())
    return [int(counted.get(c.id, 0)) for c in world.columns]


async def test_board_totals_follow_every_change_including_cascades(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    await _fill(session, office_a.id, world, 3)
    url = f"/funnel/{world.funnel.id}"

    async def check() -> None:
        board = (await client.get(url, headers=office_a.headers)).json()
        assert [c["total"] for c in board["columns"]] == await _true_totals(session, world)
        mine = (
            await client.get(url, params={"userIds": world.user.id}, headers=office_a.headers)
        ).json()
        assert [c["total"] for c in mine["columns"]] == await _true_totals(
            session, world, world.user.id
        )

    await check()
    cards = (await client.get(url, headers=office_a.headers)).json()["columns"][0]["items"]
    moved = await client.patch(
        f"/funnel-column-card/{cards[0]['id']}",
        json={"columnId": world.columns[2].id, "userId": None},
        headers=office_a.headers,
    )
    assert moved.status_code == 200
    await check()
    reassigned = await client.patch(
        f"/funnel-column-card/{cards[1]['id']}",
        json={"userId": world.user.id},
        headers=office_a.headers,
    )
    assert reassigned.status_code == 200
    await check()
    removed = await client.request(
        "DELETE", "/funnel-column-card", json={"ids": [cards[2]["id"]]}, headers=office_a.headers
    )
    assert removed.json() == "1 card removed"
    await check()
    # A contact deleted elsewhere takes its card with it (a database cascade).
    person = await session.scalar(select(Card.person_id).where(Card.id == cards[1]["id"]))
    await session.execute(delete(Contact).where(Contact.id == person))
    await session.commit()
    await check()
    assert (await client.get(url, headers=office_a.headers)).json()["columns"][0]["total"] == 0
