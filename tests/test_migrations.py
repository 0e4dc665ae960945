"""The migrations build exactly the schema the models describe, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, inspect, text
from sqlalchemy.ext.asyncio import AsyncSession

import officehub.models  # noqa: F401
from officehub.kit.db import Base, create_engine
from officehub.kit.ids import new_id
from officehub.migrate import HEAD, alembic_config
from officehub.offices.models import Office
from officehub.webchat.models import WebchatVisitor
from tests import factories as f


def _for_this_database(connection: Connection) -> Any:
    """Leaves out the indexes a model declares for one database only (``info["dialect"]``,
    with ``ddl_if``), where the database is another: the migrations skip them there too."""

    def include(obj: Any, _name: Any, type_: str, _reflected: bool, _compare_to: Any) -> bool:
        wanted = obj.info.get("dialect") if type_ == "index" else None
        return wanted in (None, connection.dialect.name)

    return include


def _diff(connection: Connection) -> list[Any]:
    opts = {"compare_type": False, "include_object": _for_this_database(connection)}
    context = MigrationContext.configure(connection, opts=opts)
    return list(compare_metadata(context, Base.metadata))


async def test_migrations_match_the_models(database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        async with engine.connect() as conn:
            diff = await conn.run_sync(_diff)
    finally:
        await engine.dispose()
    assert diff == []


async def test_every_office_table_indexes_start_with_office_id() -> None:
    for table in Base.metadata.sorted_tables:
        if "office_id" not in table.c:
            continue
        for index in table.indexes:
            first = next(iter(index.columns)).name
            queue_index = str(index.name).endswith(("_due", "_undispatched"))
            # One sign-in per email across offices (docs/decisions.md, issue 29).
            across_offices = index.name == "ux_users_sign_in_email"
            assert first == "office_id" or queue_index or across_offices, (
                f"{table.name}.{index.name}: {first}"
            )


def test_the_migration_history_has_one_head() -> None:
    heads = ScriptDirectory.from_config(alembic_config()).get_heads()
    assert len(heads) == 1, heads


def test_the_head_migrate_knows_is_alembics_head() -> None:
    """migrate() skips Alembic for a database at HEAD: HEAD must be the newest revision,
    or a database would stay behind."""
    assert ScriptDirectory.from_config(alembic_config()).get_heads() == [HEAD]


def _migrate(connection: Connection, revision: str, *, down: bool = False) -> None:
    config = alembic_config()
    config.attributes["connection"] = connection
    (command.downgrade if down else command.upgrade)(config, revision)


async def test_the_integrity_migration_refuses_duplicates_and_fills_the_email_key(
    database_url: str,
) -> None:
    """0005_integrity on data that breaks its rules: duplicate phones stop it with a message
    naming the rule; once fixed, it fills ``email_key`` and renumbers shared positions."""
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_migrate, "0004_merge_heads", down=True)
            session = AsyncSession(bind=conn)
            office = Office(name="Old")
            session.add(office)
            await session.flush()
            for n, name in enumerate(("A", "B")):
                # Raw rows: the models describe the newest schema, not 0004's.
                await conn.execute(
                    text(
                        "INSERT INTO contacts (id, office_id, name, search_name, phone,"
                        " is_blocked, created_at, updated_at)"
                        " VALUES (:id, :o, :name, :search, '+5511911112222', false, :t, :t)"
                    ),
                    {
                        "id": f"ccontact00000{n}",
                        "o": office.id,
                        "name": name,
                        "search": name.lower(),
                        "t": datetime(2026, 1, 1),
                    },
                )
            inbox_id = await _old_inbox(conn, office.id)
            funnel, columns = await f.make_funnel(session, office.id, inbox_id, 2)
            await conn.execute(text("UPDATE crm_columns SET position = 0"))
            await conn.execute(
                text(
                    "INSERT INTO users (id, office_id, name, email, role, created_at, updated_at)"
                    " VALUES ('cuser0000001', :o, 'Ana', 'Ana@Example.COM', 'AGENT', :t, :t)"
                ),
                {"o": office.id, "t": datetime(2026, 1, 1)},
            )
        async with engine.begin() as conn:
            # DuplicateDataError, a RuntimeError (Alembic loads the module under its own name)
            with pytest.raises(RuntimeError, match="rule 'one phone per office'") as refused:
                await conn.run_sync(_migrate, "head")
            assert office.id in str(refused.value) and "+55" not in str(refused.value)
        async with engine.begin() as conn:
            await conn.execute(text("UPDATE contacts SET phone = NULL WHERE name = 'B'"))
            await conn.run_sync(_migrate, "head")
        async with engine.connect() as conn:
            key = await conn.scalar(text("SELECT email_key FROM users"))
            positions = (
                await conn.execute(text("SELECT id, position FROM crm_columns ORDER BY position"))
            ).all()
    finally:
        await engine.dispose()
    assert key == "ana@example.com"
    assert [p for _, p in positions] == [0, 1]
    assert {i for i, _ in positions} == {c.id for c in columns} and funnel.id


async def test_the_cases_migration_downgrades_and_upgrades_again(database_url: str) -> None:
    """0007_cases down to 0006_flows drops the cases and the columns it added to
    ``case_movements`` (recorded movements stay), and comes back up."""
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_migrate, "0006_flows", down=True)

            def shape(sync: Connection) -> tuple[set[str], set[str]]:
                inspector = inspect(sync)
                columns = {c["name"] for c in inspector.get_columns("case_movements")}
                return set(inspector.get_table_names()), columns

            tables, columns = await conn.run_sync(shape)
            assert "cases" not in tables and not {"case_id", "code"} & columns
            await conn.run_sync(_migrate, "head")
            tables, columns = await conn.run_sync(shape)
            assert "cases" in tables and {"case_id", "code"} <= columns
    finally:
        await engine.dispose()


async def _old_inbox(conn: Any, office_id: str) -> str:
    """An inbox as a raw row: inboxes gained columns since (0017_routing)."""
    await conn.execute(
        text(
            "INSERT INTO inboxes (id, office_id, name, created_at, updated_at)"
            " VALUES ('cinbox0000001', :o, 'Old', :t, :t)"
        ),
        {"o": office_id, "t": datetime(2026, 1, 1)},
    )
    return "cinbox0000001"


async def _old_conversation(conn: Any, office_id: str, contact_id: str, integration: Any) -> str:
    """A conversation as the tables before 0015_inboxlist hold it (the model has more)."""
    ident = new_id()
    await conn.execute(
        text(
            "INSERT INTO conversations (id, office_id, person_id, inbox_id, integration_id,"
            " status, priority, created_at, updated_at)"
            " VALUES (:id, :o, :p, :i, :n, 'OPEN', 'MEDIUM', :t, :t)"
        ),
        {
            "id": ident,
            "o": office_id,
            "p": contact_id,
            "i": integration.inbox_id,
            "n": integration.id,
            "t": datetime(2026, 1, 1),
        },
    )
    return ident


async def test_the_webchat_identity_migration_makes_webchat_only_contacts_claims(
    database_url: str,
) -> None:
    """0012_confid: a contact only a web chat ever talked with was made by what a visitor
    typed: it becomes unverified, its phone moved to ``claimed_phone``; a contact that also
    talks on another channel, or that no visitor has, keeps its phone and is verified."""
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_migrate, "0011_identity", down=True)
            session = AsyncSession(bind=conn)
            office = Office(name="Old")
            session.add(office)
            await session.flush()
            phones = {
                "typed": "+5511911110001",
                "both": "+5511911110002",
                "office": "+5511911110003",
            }
            for n, (name, phone) in enumerate(phones.items()):
                await conn.execute(
                    text(
                        "INSERT INTO contacts (id, office_id, name, search_name, phone,"
                        " is_blocked, created_at, updated_at)"
                        " VALUES (:id, :o, :name, :name, :phone, false, :t, :t)"
                    ),
                    {
                        "id": f"ccontact00{n}{n}{n}",
                        "o": office.id,
                        "name": name,
                        "phone": phone,
                        "t": datetime(2026, 1, 1),
                    },
                )
            inbox_id = await _old_inbox(conn, office.id)
            chat = await f.make_integration(session, office.id, inbox_id, type="WEBCHAT")
            whatsapp = await f.make_integration(
                session, office.id, inbox_id, type="WHATSAPP_OFFICIAL", device_id="dev-9"
            )
            for contact_id in ("ccontact00000", "ccontact00111"):
                talk_id = await _old_conversation(conn, office.id, contact_id, chat)
                session.add(
                    WebchatVisitor(
                        office_id=office.id,
                        integration_id=chat.id,
                        contact_id=contact_id,
                        conversation_id=talk_id,
                        token_hash=contact_id.ljust(64, "0"),
                    )
                )
            await session.flush()
            await _old_conversation(conn, office.id, "ccontact00111", whatsapp)
            await conn.run_sync(_migrate, "head")
            query = (
                "SELECT name, phone, claimed_phone, verified FROM contacts"
                " WHERE office_id = :o ORDER BY name"
            )
            rows = (await conn.execute(text(query), {"o": office.id})).all()
            talks = await conn.scalar(text("SELECT count(*) FROM conversations"))
            visitors = await conn.scalar(text("SELECT count(*) FROM webchat_visitors"))
            await conn.run_sync(_migrate, "0011_identity", down=True)
            back = (
                await conn.execute(
                    text("SELECT name, phone FROM contacts WHERE office_id = :o ORDER BY name"),
                    {"o": office.id},
                )
            ).all()
            await conn.run_sync(_migrate, "head")
    finally:
        await engine.dispose()
    assert [(n, p, c, bool(v)) for n, p, c, v in rows] == [
        ("both", "+5511911110002", None, True),
        ("office", "+5511911110003", None, True),
        ("typed", None, "+5511911110001", False),
    ]
    assert (talks, visitors) == (3, 2)
    assert [tuple(r) for r in back] == [
        ("both", "+5511911110002"),
        ("office", "+5511911110003"),
        ("typed", "+5511911110001"),
    ]


async def test_this_sessions_migrations_go_down_and_up_keeping_conversations_and_messages(
    database_url: str, app: Any, office_a: Any
) -> None:
    """0008_inbound to 0012_confid down to 0007_cases and up again with a contact, its
    conversation and a message in the database: no step recreates a table that others
    reference with ON DELETE CASCADE (on SQLite a batch copy drops it, and the drop deletes
    the referring rows), so every row is still there."""
    async with app.state.sessionmaker() as session:
        inbox = await f.make_inbox(session, office_a.id)
        whatsapp = await f.make_integration(
            session, office_a.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="dev-1"
        )
        contact = await f.make_contact(session, office_a.id, phone="+5511987650001")
        talk = await f.make_conversation(session, office_a.id, contact.id, whatsapp)
        await session.commit()
    counts = (
        "SELECT (SELECT count(*) FROM contacts), (SELECT count(*) FROM conversations),"
        " (SELECT count(*) FROM messages WHERE conversation_id = :c)"
    )
    engine = create_engine(database_url)
    try:
        async with engine.begin() as conn:
            await conn.execute(
                text(
                    "INSERT INTO messages (id, office_id, conversation_id, direction, type,"
                    " text, status, created_at)"
                    " VALUES ('cmessage000001', :o, :c, 'INBOUND', 'TEXT', 'Olá', 'RECEIVED',"
                    " :t)"
                ),
                {"o": office_a.id, "c": talk.id, "t": datetime(2026, 1, 1)},
            )
            before = tuple((await conn.execute(text(counts), {"c": talk.id})).one())
            await conn.run_sync(_migrate, "0007_cases", down=True)
            down = tuple((await conn.execute(text(counts), {"c": talk.id})).one())
            await conn.run_sync(_migrate, "head")
            up = tuple((await conn.execute(text(counts), {"c": talk.id})).one())
            kept = (
                await conn.execute(
                    text(
                        "SELECT last_message_id, last_message_text, last_message_type,"
                        " inbound_count, inbound_read, sorted_at IS NOT NULL"
                        " FROM conversations WHERE id = :c"
                    ),
                    {"c": talk.id},
                )
            ).one()
    finally:
        await engine.dispose()
    assert before == (1, 1, 1)
    assert down == before and up == before
    # 0015_inboxlist fills what it keeps from the stored messages, all of them read.
    assert tuple(kept) == ("cmessage000001", "Olá", "TEXT", 1, 1, True)
