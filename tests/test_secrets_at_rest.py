"""Secrets at rest (issue 30): channel tokens and app secrets, bridge and webhook secrets and
the evidence key are stored sealed (AES-GCM) under a key outside the database, opened only in
the service; the migration seals what was stored in clear; ``officehub secrets rotate``."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.accounts.models import UserTotp
from officehub.app import create_app
from officehub.kit.config import Settings
from officehub.kit.db import create_engine
from officehub.kit.encryption import (
    KEY_FILE,
    PREFIX,
    SealedSecretError,
    is_sealed,
    keyring,
    load_secrets_keys,
    new_key_text,
    parse_key,
)
from tests import factories as f
from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture
from tests.test_cli import officehub
from tests.test_scopes import _to, empty_database_url  # noqa: F401 - the fixture
from tests.whatsapp_platform import TOKEN
from tests.whatsapp_world import APP_SECRET, SETTINGS, VERIFY_TOKEN

pytestmark = pytest.mark.anyio
WEBHOOK_SECRET = "whsec_" + "s3cr3t-of-the-webhook-0123456789"
BRIDGE_SECRET = "bridge-secret-0123456789abcdef"
CLEAR = (WEBHOOK_SECRET, BRIDGE_SECRET, TOKEN, APP_SECRET, VERIFY_TOKEN)


async def _store_secrets(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture
) -> dict[str, str]:
    h = office.headers
    r = await client.post(
        "/webhooks",
        json={
            "name": "CRM",
            "url": "http://127.0.0.1:9/hook",
            "events": ["contact.created"],
            "secret": WEBHOOK_SECRET,
        },
        headers=h,
    )
    assert r.status_code == 201, r.text
    webhook_id = r.json()["id"]
    inbox = await f.make_inbox(session, office.id)
    official = await f.make_integration(
        session, office.id, inbox.id, type="WHATSAPP_OFFICIAL", device_id="5511999990000"
    )
    official.whatsapp = dict(SETTINGS)
    await session.commit()
    r = await client.post(
        "/integration",
        json={
            "inboxId": inbox.id,
            "type": "WHATSAPP",
            "name": "Gateway",
            "bridge": {"bridgeUrl": "http://127.0.0.1:9/bridge", "secret": BRIDGE_SECRET},
        },
        headers=h,
    )
    assert r.status_code == 201, r.text
    return {"webhook": webhook_id, "official": official.id, "bridge": r.json()["id"]}


async def _raw(app: FastAPI) -> list[Any]:
    async with app.state.sessionmaker() as s:
        webhooks = list(await s.execute(text("SELECT secret FROM webhooks")))
        channels = list(await s.execute(text("SELECT whatsapp, bridge FROM integrations")))
        keys = list(await s.execute(text("SELECT private_key_sealed FROM evidence_keys")))
    return [*webhooks, *channels, *keys]


def _sealed_values(rows: list[Any]) -> list[str]:
    import json

    found: list[str] = []
    for row in rows:
        for value in row:
            if isinstance(value, str) and value.startswith("{"):
                value = json.loads(value)
            if isinstance(value, dict):
                found += [v for v in value.values() if isinstance(v, str) and is_sealed(v)]
            elif isinstance(value, str) and is_sealed(value):
                found.append(value)
    return found


def _database_bytes(path: Path) -> bytes:
    """The SQLite file and its write-ahead log, as they lie on disk."""
    wal = Path(f"{path}-wal")
    return path.read_bytes() + (wal.read_bytes() if wal.exists() else b"")


async def test_secrets_are_stored_sealed_and_read_in_clear_only_in_the_service(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    ids = await _store_secrets(client, session, office_a)
    assert (await client.get("/office/evidence-key", headers=office_a.headers)).status_code == 200
    rows = await _raw(app)
    stored = repr(rows)
    for secret in CLEAR:
        assert secret not in stored
    # webhook, accessToken, appSecret, verifyToken, bridge secret, evidence key
    assert len(_sealed_values(rows)) == 6
    # GET /webhooks/{id} still shows the secret, as the spec says (opened there).
    r = await client.get(f"/webhooks/{ids['webhook']}", headers=office_a.headers)
    assert r.json()["secret"] == WEBHOOK_SECRET
    r = await client.get(f"/integration/{ids['official']}", headers=office_a.headers)
    assert TOKEN not in r.text and APP_SECRET not in r.text
    if settings.sqlite_path() is not None:
        await app.state.engine.dispose()
        data = _database_bytes(Path(str(settings.sqlite_path())))
        for secret in CLEAR:
            assert secret.encode() not in data


async def test_secrets_key_is_made_on_first_start_in_the_data_folder_readable_by_owner_only(
    app: FastAPI, settings: Settings
) -> None:
    path = Path(settings.data_dir) / KEY_FILE
    assert path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(parse_key(path.read_text()).key) == 32
    again = create_app(settings)
    async with again.router.lifespan_context(again):
        assert parse_key(path.read_text()).ident == keyring.current.ident  # type: ignore[union-attr]


def test_secrets_key_setting_wins_and_must_be_32_bytes(tmp_path: Path) -> None:
    key = new_key_text()
    settings = Settings(data_dir=tmp_path, secrets_key=key)
    assert load_secrets_keys(settings).key == parse_key(key).key
    assert not (tmp_path / KEY_FILE).exists()
    with pytest.raises(ValueError, match="32 bytes"):
        parse_key("c2hvcnQ=")


def test_secrets_sealed_for_one_column_do_not_open_in_another_nor_under_another_key() -> None:
    key = parse_key(new_key_text())
    sealed = key.seal("token", purpose="webhooks.secret")
    assert sealed.startswith(PREFIX) and "token" not in sealed
    assert key.open(sealed, purpose="webhooks.secret") == "token"
    with pytest.raises(SealedSecretError):
        key.open(sealed, purpose="integrations.bridge.secret")
    with pytest.raises(SealedSecretError, match="sealed under key"):
        parse_key(new_key_text()).open(sealed, purpose="webhooks.secret")
    changed = sealed[:-3] + ("A" if sealed[-3] != "A" else "B") + sealed[-2:]
    with pytest.raises(SealedSecretError):
        key.open(changed, purpose="webhooks.secret")


async def test_secrets_a_database_without_its_key_cannot_read_them(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    tmp_path: Path,
) -> None:
    ids = await _store_secrets(client, session, office_a)
    elsewhere = settings.model_copy(update={"data_dir": tmp_path / "restored-without-key"})
    saved = dict(keyring.keys), keyring.current
    keyring.keys.clear()
    try:
        stranger = create_app(elsewhere)
        async with stranger.router.lifespan_context(stranger):
            transport = httpx.ASGITransport(app=stranger)
            async with httpx.AsyncClient(transport=transport, base_url="http://x.test") as c:
                r = await c.get(f"/webhooks/{ids['webhook']}", headers=office_a.headers)
                assert r.status_code == 503
                assert r.json()["code"] == "SECRETS_UNREADABLE"
                assert WEBHOOK_SECRET not in r.text
    finally:
        keyring.keys.clear()
        keyring.keys.update(saved[0])
        keyring.current = saved[1]


# The migration and the rotation


async def test_secrets_migration_seals_the_secrets_stored_in_clear(
    empty_database_url: str,  # noqa: F811
    tmp_path: Path,
) -> None:
    settings = Settings(database_url=empty_database_url, data_dir=tmp_path, signing_key="k")
    load_secrets_keys(settings)
    engine = create_engine(empty_database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_to("0014_casetoken"))
            await conn.execute(
                text(
                    "INSERT INTO offices (id, name, created_at, updated_at)"
                    " VALUES ('c-office', 'O', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO webhooks (id, office_id, name, url, secret, events, is_active,"
                    " created_at, updated_at) VALUES ('c-hook', 'c-office', 'n', 'http://x',"
                    " :s, '[]', true, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {"s": WEBHOOK_SECRET},
            )
            await conn.execute(
                text(
                    "INSERT INTO inboxes (id, office_id, name, created_at, updated_at)"
                    " VALUES ('c-inbox', 'c-office', 'i', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO integrations (id, office_id, inbox_id, type, name, bridge,"
                    " created_at, updated_at) VALUES ('c-chan', 'c-office', 'c-inbox', 'WHATSAPP',"
                    " 'g', :b, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {"b": f'{{"bridgeUrl": "http://x", "secret": "{BRIDGE_SECRET}"}}'},
            )
            await conn.run_sync(_to("0016_audit"))
            hook = (await conn.execute(text("SELECT secret FROM webhooks"))).scalar_one()
            bridge = (await conn.execute(text("SELECT bridge FROM integrations"))).scalar_one()
    finally:
        await engine.dispose()
    assert is_sealed(hook) and WEBHOOK_SECRET not in hook
    assert BRIDGE_SECRET not in str(bridge)
    assert (tmp_path / KEY_FILE).exists() or settings.secrets_key


async def test_secrets_rotate_reseals_every_secret_under_a_new_key(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    database_url: str,
    office_a: OfficeFixture,
) -> None:
    ids = await _store_secrets(client, session, office_a)
    assert (await client.get("/office/evidence-key", headers=office_a.headers)).status_code == 200
    async with signed_in(app, office_a) as user:  # a TOTP secret (issue 29) is sealed too
        started = await user.request("POST", "/me/totp")
        assert started.status_code == 201, started.text
    totp_secret = started.json()["secret"]
    old = parse_key((Path(settings.data_dir) / KEY_FILE).read_text())
    env = {**os.environ, "OFFICEHUB_DATA_DIR": str(settings.data_dir)}
    result = await officehub(database_url, "secrets", "rotate", "--json", env=env)
    assert result.returncode == 0, result.stderr
    new = parse_key((Path(settings.data_dir) / KEY_FILE).read_text())
    assert new.ident != old.ident
    kept = Path(settings.data_dir) / f"{KEY_FILE}.old-{old.ident}"
    assert parse_key(kept.read_text()).ident == old.ident
    sealed = _sealed_values(await _raw(app))
    assert len(sealed) == 6
    assert {value[len(PREFIX) :].split(":")[0] for value in sealed} == {new.ident}
    async with app.state.sessionmaker() as s:
        raw_totp = (await s.execute(text("SELECT secret FROM user_totp"))).scalar_one()
    assert raw_totp.startswith(f"{PREFIX}{new.ident}:") and totp_secret not in raw_totp
    # A process that holds only the new key reads every secret.
    saved = dict(keyring.keys), keyring.current
    keyring.keys.clear()
    try:
        fresh = create_app(settings)
        async with fresh.router.lifespan_context(fresh):
            assert set(keyring.keys) == {new.ident}
            transport = httpx.ASGITransport(app=fresh)
            async with httpx.AsyncClient(transport=transport, base_url="http://x.test") as c:
                r = await c.get(f"/webhooks/{ids['webhook']}", headers=office_a.headers)
                assert r.json()["secret"] == WEBHOOK_SECRET
                r = await c.get("/office/evidence-key", headers=office_a.headers)
                assert r.status_code == 200
            async with fresh.state.sessionmaker() as s:
                assert (await s.scalars(select(UserTotp.secret))).one() == totp_secret
    finally:
        keyring.keys.clear()
        keyring.keys.update(saved[0])
        keyring.current = saved[1]


async def test_secrets_rotate_refuses_when_the_key_is_a_setting(
    settings: Settings, database_url: str
) -> None:
    env = {**os.environ, "OFFICEHUB_SECRETS_KEY": new_key_text()}
    result = await officehub(database_url, "secrets", "rotate", env=env)
    assert result.returncode == 2
    assert "OFFICEHUB_SECRETS_KEY" in result.stderr
