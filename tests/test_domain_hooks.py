"""In-transaction hooks (``officehub.kit.transaction_hooks``) and their one wiring place
(``officehub.hook_subscriptions``).

The cascades and vetoes themselves are tested where they always were (inbox delete with
cards in test_inboxes, contact delete in test_contacts, tag changes in test_conversations and
test_tags); here: registration order, a veto rolling back the whole change, and that every
entry point (app, worker, CLI) installs the wiring, checked in fresh interpreters.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub import hook_subscriptions as wiring
from officehub.audit import recorder
from officehub.case_notices import subscribers as case_notices_subscribers
from officehub.cases import subscribers as cases_subscribers
from officehub.cases.hooks import movements_announced
from officehub.channels import subscribers as channels_subscribers
from officehub.contacts.hooks import ContactDeleting, contact_deleting, contact_merging
from officehub.conversations import subscribers as conversations_subscribers
from officehub.conversations.hooks import conversation_tags_changed
from officehub.crm import subscribers as crm_subscribers
from officehub.crm.models import Card
from officehub.inboxes.hooks import inbox_deleting, integration_deleting
from officehub.inboxes.models import Inbox
from officehub.kit.errors import Conflict
from officehub.kit.transaction_hooks import (
    HOOKS,
    Hook,
    HookNotWired,
    unwired,
    wire_now,
    wire_on_demand,
)
from officehub.tags.hooks import tag_deleting
from officehub.webchat import subscribers as webchat_subscribers
from tests import factories as f
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of, outbox


async def test_every_required_hook_has_a_subscriber_once_the_app_is_built(app: FastAPI) -> None:
    assert {h.name for h in HOOKS if h.required} >= {
        "inbox.deleting",
        "integration.deleting",
        "contact.deleting",
        "contact.merging",
        "conversation.tags_changed",
        "tag.deleting",
    }
    assert unwired() == []
    assert movements_announced.subscribers == (case_notices_subscribers.notices_for_movements,)
    assert inbox_deleting.subscribers == (
        conversations_subscribers.refuse_inbox_with_conversations,
        crm_subscribers.refuse_inbox_with_cards,
    )
    assert integration_deleting.subscribers == (
        conversations_subscribers.refuse_channel_with_conversations,
    )
    assert tag_deleting.subscribers == (conversations_subscribers.take_tag_off_conversations,)
    assert contact_deleting.subscribers == (crm_subscribers.delete_cards_of_contact,)
    assert contact_merging.subscribers == (
        conversations_subscribers.conversations_follow_merge,
        crm_subscribers.move_cards_of_merged_contact,
        cases_subscribers.cases_follow_merge,
        case_notices_subscribers.notices_follow_merge,
        channels_subscribers.peers_follow_merge,
        webchat_subscribers.visitors_follow_merge,
    )
    assert conversation_tags_changed.subscribers == (crm_subscribers.card_tags_follow_conversation,)


async def test_install_is_idempotent(app: FastAPI) -> None:
    before = [h.subscribers for h in HOOKS]
    wiring.install()
    wiring.install()
    assert [h.subscribers for h in HOOKS] == before


async def test_subscribers_run_in_registration_order_and_once_each() -> None:
    hook: Hook[list[str]] = Hook("test.order")
    try:

        async def first(seen: list[str]) -> None:
            seen.append("first")

        async def second(seen: list[str]) -> None:
            seen.append("second")

        hook.subscribe(first)
        hook.subscribe(second)
        hook.subscribe(first)  # again: no second call, no change of place
        seen: list[str] = []
        await hook.fire(seen)
        assert seen == ["first", "second"]
        hook.unsubscribe(first)
        seen.clear()
        await hook.fire(seen)
        assert seen == ["second"]
    finally:
        HOOKS.remove(hook)


async def test_a_required_hook_with_no_subscriber_refuses_to_fire() -> None:
    hook: Hook[list[str]] = Hook("test.required", required=True)
    try:
        assert "test.required" in unwired()
        with pytest.raises(HookNotWired, match=r"officehub\.hook_subscriptions\.install\(\)"):
            await hook.fire([])
    finally:
        HOOKS.remove(hook)
    assert "test.required" not in unwired()


async def test_wiring_deferred_on_demand_runs_once_at_the_first_hook_fired_even_optional() -> None:
    hook: Hook[list[str]] = Hook("test.optional")
    installs: list[str] = []

    def install() -> None:
        installs.append("wired")

        async def seen_by_the_wiring(seen: list[str]) -> None:
            seen.append("subscriber")

        hook.subscribe(seen_by_the_wiring)

    try:
        wire_on_demand(install)
        assert installs == []
        seen: list[str] = []
        await hook.fire(seen)  # not required: without the deferral it would fire to nobody
        assert installs == ["wired"]
        assert seen == ["subscriber"]
        await hook.fire(seen)
        wire_now()
        assert installs == ["wired"]  # once
        assert seen == ["subscriber", "subscriber"]
    finally:
        HOOKS.remove(hook)


async def test_the_audit_trails_person_lookups_are_exactly_its_resolved_types(app: FastAPI) -> None:
    # The CLI defers the wiring until an audit entry of one of these types needs its contact:
    # a lookup the wiring registered for another type would never be wired in time.
    assert set(recorder._person_resolvers) == recorder.RESOLVED_TYPES
    with pytest.raises(ValueError, match="RESOLVED_TYPES"):
        recorder.use_person_resolver("apikey", recorder._person_resolvers["case"])


_CLI_IMPORTS_SCRIPT = textwrap.dedent(
    """
    import sys
    from officehub.cli import main
    try:
        main(sys.argv[1:])
    except SystemExit as exc:
        assert not exc.code, exc.code
    print("wired:", "officehub.hook_subscriptions" in sys.modules)
    """
)


@pytest.mark.parametrize(
    "args",
    [
        ["office", "create", "Escritório sem ganchos"],
        ["user", "create", "--email", "nova@example.com.br", "--name", "Nova"],
        ["apikey", "create"],
    ],
)
async def test_a_cli_command_that_fires_nothing_never_imports_the_wiring(
    args: list[str], database_url: str, office_a: OfficeFixture, tmp_path: Path
) -> None:
    # The other half, a CLI command whose hook wires the domains on demand, is the "cli" case
    # of test_each_entry_point_installs_the_wiring_in_a_fresh_process (the inbox's veto).
    if args[0] != "office":
        args = [*args, "--office", office_a.id]
    env = {
        **os.environ,
        "OFFICEHUB_DATABASE_URL": database_url,
        "OFFICEHUB_DATA_DIR": str(tmp_path / "data"),
    }
    done = await anyio.to_thread.run_sync(
        lambda: subprocess.run(
            [sys.executable, "-c", _CLI_IMPORTS_SCRIPT, *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "wired: False", done.stdout


async def test_a_later_subscriber_sees_the_crm_cascade_already_done_in_the_same_session(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    card = await f.make_card(session, world.columns[0], world.contact.id, world.conversation.id)
    await session.commit()
    seen: list[tuple[str, list[str]]] = []

    async def later(event: ContactDeleting) -> None:
        left = await event.session.scalars(select(Card.id).where(Card.id == card.id))
        seen.append((event.contact_id, list(left)))

    contact_deleting.subscribe(later)
    try:
        r = await client.delete(f"/people/{world.contact.id}", headers=office_a.headers)
    finally:
        contact_deleting.unsubscribe(later)
    assert r.status_code == 200
    assert seen == [(world.contact.id, [])]  # crm subscribed first, so it ran first


async def test_a_veto_rolls_back_the_whole_change_cascades_included(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    card = await f.make_card(session, world.columns[0], world.contact.id, world.conversation.id)
    await session.commit()
    h = office_a.headers

    async def veto(event: ContactDeleting) -> None:
        raise Conflict("Vetoed", details="A test subscriber refuses", code="TEST_VETO")

    contact_deleting.subscribe(veto)  # after crm's: its cascade has run when the veto comes
    try:
        r = await client.delete(f"/people/{world.contact.id}", headers=h)
    finally:
        contact_deleting.unsubscribe(veto)
    assert r.status_code == 409 and error_of(r)["code"] == "TEST_VETO"
    assert (await client.get(f"/people/{world.contact.id}", headers=h)).status_code == 200
    assert (await client.get(f"/funnel-column-card/{card.id}", headers=h)).status_code == 200
    assert await outbox(app, office_a.id, "crm.lead.deleted") == []
    assert await outbox(app, office_a.id, "contact.deleted") == []
    # Without the veto the same call goes through, cascade and events included.
    r = await client.delete(f"/people/{world.contact.id}", headers=h)
    assert r.status_code == 200
    assert (await client.get(f"/funnel-column-card/{card.id}", headers=h)).status_code == 404
    assert [e.data["id"] for e in await outbox(app, office_a.id, "crm.lead.deleted")] == [card.id]


# Each entry point in a fresh interpreter, where nothing else has installed the wiring: it
# tries to delete an inbox whose funnel holds a card through the inboxes service.
_ENTRY_SCRIPT = textwrap.dedent(
    """
    import asyncio, sys
    from officehub.contacts import hooks as _contacts_hooks  # noqa: F401
    from officehub.conversations import hooks as _conversations_hooks  # noqa: F401
    from officehub.kit.db import create_engine, create_sessionmaker
    from officehub.kit.errors import ServiceError
    from officehub.kit.transaction_hooks import HookNotWired, unwired
    from officehub.inboxes import service as inboxes

    entry, url, office_id, inbox_id = sys.argv[1:]

    async def delete(session):
        await inboxes.delete_inbox(session, office_id, inbox_id)
        await session.commit()

    async def in_session():
        engine = create_engine(url)
        try:
            async with create_sessionmaker(engine)() as session:
                await delete(session)
        finally:
            await engine.dispose()

    if entry == "app":
        from officehub.app import create_app
        from officehub.kit.config import Settings
        create_app(Settings(database_url=url))
    elif entry == "worker":
        from officehub.jobs import periodic_jobs, queue_jobs
        queue_jobs(), periodic_jobs()
    print("unwired:", ",".join(sorted(unwired())))
    try:
        if entry == "cli":
            from officehub.cli import _in_session
            _in_session(delete)
        else:
            asyncio.run(in_session())
    except ServiceError as exc:
        print("refused:", exc.code)
    except HookNotWired:
        print("refused: NOT_WIRED")
    else:
        print("deleted")
    """
)


ALL_REQUIRED = (
    "contact.deleting,contact.erasing,contact.locking,contact.merging,conversation.tags_changed,"
    "conversations.erasing,inbox.away_message_checking,inbox.deleting,inbox.routing_changed,"
    "integration.deleting"
)


@pytest.mark.parametrize(
    ("entry", "unwired_hooks", "outcome"),
    [
        ("app", "", "INBOX_IN_USE"),
        ("worker", "", "INBOX_IN_USE"),
        # The CLI defers it in ``_in_session`` (every command runs its work through it) to
        # the first hook fired: the inbox's veto is that hook.
        ("cli", ALL_REQUIRED, "INBOX_IN_USE"),
        ("none", ALL_REQUIRED, "NOT_WIRED"),
    ],
)
async def test_each_entry_point_installs_the_wiring_in_a_fresh_process(
    entry: str,
    unwired_hooks: str,
    outcome: str,
    database_url: str,
    session: AsyncSession,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    _funnel, columns = await f.make_funnel(session, office_a.id, inbox.id, columns=1)
    contact = await f.make_contact(session, office_a.id)
    await f.make_card(session, columns[0], contact.id)
    await session.commit()
    inbox_id = inbox.id
    env = {
        **os.environ,
        "OFFICEHUB_DATABASE_URL": database_url,
        "OFFICEHUB_DATA_DIR": str(tmp_path / "data"),
    }
    args = [sys.executable, "-c", _ENTRY_SCRIPT, entry, database_url, office_a.id]
    done = await anyio.to_thread.run_sync(
        lambda: subprocess.run(
            [*args, inbox_id], env=env, capture_output=True, text=True, timeout=120
        )
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [f"unwired: {unwired_hooks}", f"refused: {outcome}"], done.stdout
    assert await session.scalar(select(Inbox.id).where(Inbox.id == inbox_id)) == inbox_id
