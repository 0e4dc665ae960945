"""Which tests the PostgreSQL leg leaves out (``tests/conftest.py``,
``needs_the_test_database``): those that cannot tell the two databases apart, because they
never reach the test database. They run on the SQLite leg."""

from __future__ import annotations

from types import SimpleNamespace

import httpx
import pytest

import tests.test_faults
import tests.test_kit_outbound
from tests.conftest import needs_the_test_database


def test_a_test_asking_for_no_database_is_left_to_one_leg(request: pytest.FixtureRequest) -> None:
    assert not needs_the_test_database(request.node)


async def test_a_test_asking_for_its_database_runs_on_both_legs(
    request: pytest.FixtureRequest, database_url: str
) -> None:
    assert database_url
    assert needs_the_test_database(request.node)


async def test_a_test_reaching_the_database_through_another_fixture_runs_on_both_legs(
    request: pytest.FixtureRequest, client: httpx.AsyncClient
) -> None:
    assert "database_url" not in request.fixturenames[:2]  # asked for the client only
    assert needs_the_test_database(request.node)


def test_a_module_that_reads_the_postgresql_url_itself_runs_on_both_legs() -> None:
    own_choice = SimpleNamespace(fixturenames=["tmp_path"], module=tests.test_faults)
    none = SimpleNamespace(fixturenames=["tmp_path"], module=tests.test_kit_outbound)
    assert needs_the_test_database(own_choice)  # type: ignore[arg-type]
    assert not needs_the_test_database(none)  # type: ignore[arg-type]
