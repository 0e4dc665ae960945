"""LGPD: no log line holds a client's personal data, a failed statement's included.

A database error's text can quote the statement's values twice: SQLAlchemy appends the
parameters, and the driver's message may quote a value (a PostgreSQL trigger's ``RAISE``
below). The engines hide the parameters and the log formatters withhold a database error's
message (``officehub/kit/safe_trace.py``); the frames and the SQL statement stay.
"""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.logs import JsonFormatter, TextFormatter
from tests.helpers import OfficeFixture, error_of

EMAIL = "ana.segredo@example.com"
PHONE = "+5511987650123"
SECRETS = (EMAIL, "ana.segredo", PHONE, "987650123")


async def _break_contact_inserts(session: AsyncSession) -> None:
    """A trigger that fails every contact insert with a server error (not a 409)."""
    if session.get_bind().dialect.name == "postgresql":
        await session.execute(
            text(
                "CREATE FUNCTION leak_probe() RETURNS trigger LANGUAGE plpgsql AS "
                "$$ BEGIN RAISE EXCEPTION 'refused % %', NEW.email, NEW.phone; END $$"
            )
        )
        await session.execute(
            text(
                "CREATE TRIGGER leak_probe BEFORE INSERT ON contacts "
                "FOR EACH ROW EXECUTE FUNCTION leak_probe()"
            )
        )
    else:
        await session.execute(
            text(
                "CREATE TRIGGER leak_probe BEFORE INSERT ON contacts BEGIN "
                "INSERT INTO no_such_table VALUES (NEW.email, NEW.phone); END"
            )
        )
    await session.commit()


def _formatted(records: list[logging.LogRecord]) -> list[str]:
    formatters: list[logging.Formatter] = [JsonFormatter(), TextFormatter(colour=False)]
    return [f.format(record) for record in records for f in formatters]


async def test_engines_hide_sql_parameters(app: FastAPI) -> None:
    assert app.state.engine.sync_engine.hide_parameters is True


async def test_database_error_on_personal_data_logs_no_personal_data(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    caplog: pytest.LogCaptureFixture,
) -> None:
    await _break_contact_inserts(session)
    with caplog.at_level(logging.DEBUG):
        r = await client.post(
            "/people",
            json={"name": "Ana", "email": EMAIL, "phone": PHONE},
            headers=office_a.headers,
        )
    assert r.status_code == 500
    assert error_of(r)["code"] == "INTERNAL_ERROR"
    assert not any(s in r.text for s in SECRETS)
    failures = [rec for rec in caplog.records if rec.exc_info is not None]
    assert failures, "the 500 was not logged with its trace"
    lines = _formatted(caplog.records)
    # The trace is still useful: the failed statement and the error's type are there.
    assert any("Traceback" in line and "INSERT INTO contacts" in line for line in lines)
    for line in lines:
        for secret in SECRETS:
            assert secret not in line, f"{secret!r} logged: {line[:300]}"


def test_driver_message_quoting_a_value_is_withheld_from_traces() -> None:
    """The driver's own message may quote a value (PostgreSQL ``Key (email)=(…)``): the
    formatters withhold it, and the parameters, whichever database produced them."""
    statement = "INSERT INTO contacts (email) VALUES (?)"
    driver = ValueError(f"Key (email)=({EMAIL}) already exists")
    try:
        try:
            raise driver
        except ValueError as exc:
            raise DBAPIError(statement, (EMAIL,), exc) from exc
    except DBAPIError as failure:
        assert EMAIL in str(failure)  # what Python's own trace would print
        record = logging.LogRecord(
            "officehub.test",
            logging.ERROR,
            __file__,
            1,
            "failed",
            None,
            (DBAPIError, failure, failure.__traceback__),
        )
    lines = _formatted([record])
    assert all(statement in line and "ValueError" in line for line in lines)
    assert all(EMAIL not in line for line in lines)
