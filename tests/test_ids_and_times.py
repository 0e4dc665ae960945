from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import httpx
from pydantic import AliasChoices, Field
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.ids import ID_RE, new_id
from officehub.kit.pagination import MAX_PAGE, Page, PageParams
from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import Timestamp, isoformat, written_timestamps
from tests import factories as f
from tests.helpers import OfficeFixture, error_of


def test_ids_are_c_and_24_base36_characters() -> None:
    for _ in range(1000):
        value = new_id()
        assert re.fullmatch(r"c[0-9a-z]{24}", value)
        assert ID_RE.match(value)


def test_ids_sort_in_creation_order() -> None:
    ids = [new_id() for _ in range(5000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)


def test_timestamps_are_utc_with_milliseconds_and_z() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=UTC)
    assert isoformat(moment) == "2026-03-04T05:06:07.891Z"
    local = moment.astimezone(timezone(timedelta(hours=-3)))
    assert isoformat(local) == "2026-03-04T05:06:07.891Z"
    assert isoformat(moment.replace(tzinfo=None)) == "2026-03-04T05:06:07.891Z"
    assert isoformat(datetime(1, 1, 1, tzinfo=UTC)) == "0001-01-01T00:00:00.000Z"  # 4-digit year


class _Mark(ApiModel):
    at: Timestamp
    note_text: str


class _Plain(ApiModel):
    score: float


class _Record(ApiModel):
    record_id: str
    created_at: Timestamp
    marks: list[_Mark]
    best_mark: _Mark | None
    plain: _Plain
    plain_list: list[_Plain]


def written(value: object) -> object:
    """``value`` with its datetimes written as ``isoformat`` writes them."""
    if isinstance(value, datetime):
        return isoformat(value)
    if isinstance(value, dict):
        return {k: written(v) for k, v in value.items()}
    if isinstance(value, list):
        return [written(v) for v in value]
    return value


def test_a_twin_with_written_timestamps_writes_the_same_bytes_as_its_model() -> None:
    """``written_timestamps``: the model's answer, each ``Timestamp`` already written by
    ``isoformat`` (or by PostgreSQL's ``api_timestamp``, tests/test_crm_board.py)."""
    moments = [
        datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC),  # no fraction
        datetime(2026, 3, 4, 5, 6, 7, 999999, tzinfo=UTC),  # truncated, never rounded up
        datetime(2026, 3, 4, 5, 6, 7, 500, tzinfo=timezone(timedelta(hours=-3))),
    ]
    values = {
        "record_id": "r1",
        "created_at": moments[0],
        "marks": [{"at": m, "note_text": 'ü "x"'} for m in moments],
        "best_mark": {"at": moments[1], "note_text": ""},
        "plain": {"score": 1.5},
        "plain_list": [{"score": 2.0}],
    }
    twin = written_timestamps(_Record)
    expected = _Record.model_validate(values).model_dump_json(by_alias=True)
    assert twin.model_validate(written(values)).model_dump_json(by_alias=True) == expected
    assert twin.model_validate(written({**values, "best_mark": None})).model_dump_json(
        by_alias=True
    ) == _Record.model_validate({**values, "best_mark": None}).model_dump_json(by_alias=True)
    assert [(n, f.alias) for n, f in twin.model_fields.items()] == [
        (n, f.alias) for n, f in _Record.model_fields.items()
    ]
    # nested models holding no timestamp are kept as they are; the twin is made once
    assert twin.model_fields["plain"].annotation is _Plain
    assert written_timestamps(_Record) is twin


class _Due(ApiModel):
    due_at: Timestamp | None


class _Case(ApiModel):
    opened_at: Timestamp | None
    closed_at: Timestamp | None = Field(
        None, validation_alias=AliasChoices("ended_at", "closed_at")
    )
    due: _Due | None = None


def test_a_twin_writes_optional_timestamps_keeping_aliases_and_defaults() -> None:
    """``Timestamp | None`` becomes ``str | None`` in the twin (written by pydantic-core,
    no serializer called), a field read under another name (``resolvedAt`` from
    ``closed_at``) is read so in the twin too, and a field's default stays."""
    moment = datetime(2026, 3, 4, 5, 6, 7, 891234, tzinfo=UTC)
    twin = written_timestamps(_Case)
    for values in (
        {"opened_at": moment, "ended_at": moment, "due": {"due_at": moment}},
        {"opened_at": None, "due": {"due_at": None}},
        {"opened_at": moment},
    ):
        assert twin.model_validate(written(values)).model_dump_json(by_alias=True) == (
            _Case.model_validate(values).model_dump_json(by_alias=True)
        ), values
    assert twin.model_fields["opened_at"].annotation == str | None
    assert twin.model_fields["due"].annotation == written_timestamps(_Due) | None


def test_page_envelope_counts_pages() -> None:
    page = Page[int].of([1, 2], total=101, params=PageParams(page=1, limit=50))
    assert page.model_dump(by_alias=True) == {"data": [1, 2], "totalResults": 101, "totalPages": 3}
    empty = Page[int].of([], total=0, params=PageParams(page=1, limit=50))
    assert empty.model_dump(by_alias=True)["totalPages"] == 0


async def test_page_number_past_the_bound_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A huge page would overflow the database's OFFSET: it is refused, never a 500."""
    inbox = await f.make_inbox(session, office_a.id)
    funnel, _columns = await f.make_funnel(session, office_a.id, inbox.id, columns=1)
    await session.commit()
    huge = str(10**30)
    for path in ("/inbox", f"/funnel/{funnel.id}", "/tag", "/webhooks/cxxxxxxxxxxxx/deliveries"):
        r = await client.get(path, params={"page": huge}, headers=office_a.headers)
        assert r.status_code == 400, (path, r.text)
        assert "query.page" in error_of(r)["details"]
    r = await client.get("/inbox", params={"page": str(MAX_PAGE)}, headers=office_a.headers)
    assert r.status_code == 200 and r.json()["data"] == []
