"""Accounts (issue 29): invitations and resets, passwords, signing in, sessions, CSRF,
throttling and deactivation. Each test is named after the rule it holds."""

from __future__ import annotations

from datetime import timedelta
from http.cookies import SimpleCookie
from pathlib import Path

import httpx
from fastapi import FastAPI
from sqlalchemy import select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.accounts.models import UserSession, UserToken
from officehub.app import create_app
from officehub.kit.auth import hash_key
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.users.models import User
from tests.accounts_helpers import PASSWORD, app_client, make_account, signed_in
from tests.helpers import OfficeFixture, error_of
from tests.server import concurrent_client, fire, running_server

ID = "cxxxxxxxxxxxxxxxx"


async def _user(client: httpx.AsyncClient, office: OfficeFixture, **extra: object) -> str:
    body = {"name": "Carla Menezes", "email": "carla.menezes@escritorio.example", **extra}
    r = await client.post("/user", json=body, headers=office.headers)
    assert r.status_code == 201, r.text
    ident: str = r.json()["id"]
    return ident


async def _invite(client: httpx.AsyncClient, office: OfficeFixture, user_id: str) -> str:
    r = await client.post(f"/user/{user_id}/invite", headers=office.headers)
    assert r.status_code == 201, r.text
    token: str = r.json()["token"]
    return token


# --- invitations ---------------------------------------------------------------------------


async def test_invite_answers_a_one_use_link_for_72_hours_kept_hashed(
    client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    user_id = await _user(client, office_a)
    before = utcnow()
    r = await client.post(f"/user/{user_id}/invite", headers=office_a.headers)
    assert r.status_code == 201, r.text
    body = r.json()
    assert set(body) == {"token", "inviteUrl", "expiresAt"}
    assert body["inviteUrl"].endswith(f"/console/#invite={body['token']}")
    stored = (await session.scalars(select(UserToken))).one()
    assert stored.token_hash == hash_key(body["token"]) and body["token"] not in stored.token_hash
    lifetime = stored.expires_at - before
    assert timedelta(hours=71, minutes=59) < lifetime <= timedelta(hours=72, minutes=1)


async def test_invite_of_another_offices_user_is_404(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    user_id = await _user(client, office_a)
    r = await client.post(f"/user/{user_id}/invite", headers=office_b.headers)
    assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"


async def test_invite_with_a_bad_id_is_400_and_without_a_key_401(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.post("/user/not-an-id/invite", headers=office_a.headers)
    assert r.status_code == 400 and "id" in error_of(r)["details"]
    r = await client.post(f"/user/{ID}/invite")
    assert r.status_code == 401 and error_of(r)["code"] == "UNAUTHORIZED"


async def test_invite_of_a_user_who_has_a_password_is_409(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    user_id, _ = await make_account(client, office_a)
    r = await client.post(f"/user/{user_id}/invite", headers=office_a.headers)
    assert r.status_code == 409 and error_of(r)["code"] == "ACCOUNT_EXISTS"


async def test_invitation_works_once(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    token = await _invite(client, office_a, await _user(client, office_a))
    first = await client.post("/auth/invite/accept", json={"token": token, "password": PASSWORD})
    assert first.status_code == 200, first.text
    assert first.json()["user"]["hasPassword"] is True
    again = await client.post("/auth/invite/accept", json={"token": token, "password": PASSWORD})
    assert again.status_code == 400 and error_of(again)["code"] == "INVALID_TOKEN"


async def test_a_new_invitation_ends_the_earlier_one(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    user_id = await _user(client, office_a)
    old = await _invite(client, office_a, user_id)
    new = await _invite(client, office_a, user_id)
    r = await client.post("/auth/invite/accept", json={"token": old, "password": PASSWORD})
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_TOKEN"
    r = await client.post("/auth/invite/accept", json={"token": new, "password": PASSWORD})
    assert r.status_code == 200, r.text


async def test_an_expired_invitation_is_refused(
    client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    token = await _invite(client, office_a, await _user(client, office_a))
    await session.execute(update(UserToken).values(expires_at=utcnow() - timedelta(seconds=1)))
    await session.commit()
    r = await client.post("/auth/invite/accept", json={"token": token, "password": PASSWORD})
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_TOKEN"


async def test_accept_with_a_bad_body_is_400_naming_the_field(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/auth/invite/accept", json={"password": PASSWORD})
    assert r.status_code == 400 and "token" in error_of(r)["details"]


async def test_password_rules_refuse_short_common_and_personal_passwords(
    client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    token = await _invite(client, office_a, await _user(client, office_a))
    refused = [
        "curta123",  # fewer than 10 characters
        "Senha12345",  # common (case and accents do not matter)
        "qwertyuiop",
        "aaaaaaaaaaaa",
        "Carla do escritório 1",  # the user's name
        "xx-carla.menezes-xx",  # the email's local part
        "MENEZES e mais coisas",
    ]
    for password in refused:
        r = await client.post("/auth/invite/accept", json={"token": token, "password": password})
        assert r.status_code == 400, (password, r.text)
        body = error_of(r)
        assert body["code"] == "WEAK_PASSWORD" and "password" in body["details"], password
    # Nothing was spent: the link still sets a good password.
    assert (await session.scalars(select(User))).one().password_hash is None
    r = await client.post("/auth/invite/accept", json={"token": token, "password": PASSWORD})
    assert r.status_code == 200, r.text


async def test_passwords_are_stored_as_argon2id_hashes(
    client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    await make_account(client, office_a)
    stored = (await session.scalars(select(User))).one().password_hash
    assert stored is not None and stored.startswith("$argon2id$") and PASSWORD not in stored


async def test_one_invitation_accepted_twice_at_once_succeeds_once(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    async with app_client(app) as setup:
        token = await _invite(setup, office_a, await _user(setup, office_a))
    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        answers = await fire(
            6,
            lambda i: client.post(
                "/auth/invite/accept", json={"token": token, "password": f"{PASSWORD} {i}"}
            ),
        )
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 400, 400, 400, 400, 400], [a.text for a in answers]
    assert all(error_of(a)["code"] == "INVALID_TOKEN" for a in answers if a.status_code == 400)


async def test_one_email_signs_in_to_one_office_only(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    _, email = await make_account(client, office_a)
    other = await client.post(
        "/user", json={"name": "Outra Pessoa", "email": email.upper()}, headers=office_b.headers
    )
    assert other.status_code == 201, other.text
    token = await _invite(client, office_b, other.json()["id"])
    r = await client.post("/auth/invite/accept", json={"token": token, "password": PASSWORD})
    assert r.status_code == 409 and error_of(r)["code"] == "EMAIL_TAKEN"


# --- password resets ---------------------------------------------------------------------------


async def test_password_reset_by_an_admin_sets_a_new_password_and_ends_sessions(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as agent:
        r = await client.post(
            "/auth/password-reset", json={"userId": agent.id}, headers=office_a.headers
        )
        assert r.status_code == 201, r.text
        assert set(r.json()) == {"token", "resetUrl", "expiresAt"}
        assert "/console/#reset=" in r.json()["resetUrl"]
        new_password = "Outra frase bem comprida 7"
        accepted = await client.post(
            "/auth/invite/accept", json={"token": r.json()["token"], "password": new_password}
        )
        assert accepted.status_code == 200, accepted.text
        assert (await agent.request("GET", "/me")).status_code == 401
        old = await client.post("/auth/login", json={"email": agent.email, "password": PASSWORD})
        assert old.status_code == 401
        new = await client.post(
            "/auth/login", json={"email": agent.email, "password": new_password}
        )
        assert new.status_code == 200, new.text


async def test_password_reset_checks_its_input_office_and_key(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    user_id = await _user(client, office_a)
    r = await client.post("/auth/password-reset", json={}, headers=office_a.headers)
    assert r.status_code == 400 and "userId" in error_of(r)["details"]
    r = await client.post(
        "/auth/password-reset", json={"userId": user_id}, headers=office_b.headers
    )
    assert r.status_code == 404
    r = await client.post("/auth/password-reset", json={"userId": user_id})
    assert r.status_code == 401


async def test_invite_and_reset_need_an_admin(app: FastAPI, office_a: OfficeFixture) -> None:
    async with signed_in(app, office_a, "SUPERVISOR") as supervisor:
        async with signed_in(app, office_a, "ADMIN") as admin:
            async with app_client(app) as setup:
                user_id = await _user(setup, office_a)
            for path, body in ((f"/user/{user_id}/invite", None), ("/auth/password-reset", {})):
                denied = await supervisor.request("POST", path, json=body)
                assert denied.status_code == 403, denied.text
                assert error_of(denied)["code"] == "MISSING_PERMISSION"
            r = await admin.request("POST", f"/user/{user_id}/invite")
            assert r.status_code == 201, r.text


# --- signing in ---------------------------------------------------------------------------


def _cookie_attributes(response: httpx.Response) -> dict[str, str]:
    header = response.headers["set-cookie"]
    parts = [p.strip() for p in header.split(";")]
    return {p.split("=", 1)[0].lower(): (p.split("=", 1)[1] if "=" in p else "") for p in parts}


async def test_login_sets_an_httponly_samesite_lax_session_cookie_and_answers_csrf(
    client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    user_id, email = await make_account(client, office_a)
    r = await client.post("/auth/login", json={"email": email.upper(), "password": PASSWORD})
    assert r.status_code == 200, r.text
    assert r.json()["user"]["id"] == user_id and r.json()["csrfToken"]
    attributes = _cookie_attributes(r)
    assert "httponly" in attributes and attributes["path"] == "/"
    assert attributes["samesite"].lower() == "lax" and "secure" not in attributes
    cookie = SimpleCookie(r.headers["set-cookie"])["officehub_session"].value
    stored = (await session.scalars(select(UserSession))).one()
    assert stored.token_hash == hash_key(cookie) and stored.csrf_hash == hash_key(
        r.json()["csrfToken"]
    )


async def test_the_cookie_is_secure_when_the_public_url_is_https(
    database_url: str, tmp_path: Path
) -> None:
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        signing_key="k",
        public_url="https://escritorio.example",
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app), app_client(app) as client:
        from tests.helpers import make_office

        office = await make_office(app, "Seguro")
        _, email = await make_account(client, office)
        r = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert r.status_code == 200, r.text
        assert "secure" in _cookie_attributes(r)


async def test_a_wrong_password_and_an_unknown_email_answer_alike(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    _, email = await make_account(client, office_a)
    wrong = await client.post("/auth/login", json={"email": email, "password": "nao-e-essa-1"})
    unknown = await client.post(
        "/auth/login", json={"email": "ninguem@escritorio.example", "password": "nao-e-essa-1"}
    )
    assert wrong.status_code == unknown.status_code == 401
    assert error_of(wrong) == error_of(unknown)
    assert error_of(wrong)["code"] == "INVALID_CREDENTIALS"
    assert "set-cookie" not in wrong.headers


async def test_login_with_a_bad_body_is_400_naming_the_field(client: httpx.AsyncClient) -> None:
    r = await client.post("/auth/login", json={"email": "a@b.example"})
    assert r.status_code == 400 and "password" in error_of(r)["details"]


async def test_repeated_wrong_passwords_lock_the_email_even_for_the_right_one(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    _, email = await make_account(client, office_a)
    for _ in range(5):
        r = await client.post("/auth/login", json={"email": email, "password": "errada-0000"})
        assert r.status_code == 401
    right = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert right.status_code == 429 and error_of(right)["code"] == "RATE_LIMITED"
    assert 1 <= int(right.headers["retry-after"]) <= 15 * 60
    assert "set-cookie" not in right.headers
    # An email nobody has is locked the same way: the answers do not tell them apart.
    for _ in range(5):
        r = await client.post(
            "/auth/login", json={"email": "ninguem@x.example", "password": "errada-0000"}
        )
        assert r.status_code == 401
    r = await client.post("/auth/login", json={"email": "ninguem@x.example", "password": "x"})
    assert r.status_code == 429 and "retry-after" in r.headers


async def test_repeated_wrong_passwords_from_one_address_lock_that_address(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    _, email = await make_account(client, office_a)
    for i in range(20):
        r = await client.post(
            "/auth/login", json={"email": f"tentativa{i}@x.example", "password": "errada-0000"}
        )
        assert r.status_code == 401, i
    right = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert right.status_code == 429 and "retry-after" in right.headers


# --- sessions -----------------------------------------------------------------------------


async def test_me_names_the_signed_in_user_or_the_key(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a, "SUPERVISOR") as user:
        me = (await user.request("GET", "/me")).json()
        assert me["kind"] == "user" and me["id"] == user.id and me["role"] == "SUPERVISOR"
        assert me["officeId"] == office_a.id and me["user"]["email"] == user.email
        assert me["sessionId"]
        assert me["scopes"] == ["read", "write"]  # the role's, no more (issue 39)
    key = (await client.get("/me", headers=office_a.headers)).json()
    assert key == {
        "kind": "apikey",
        "id": office_a.key_id,
        "role": None,
        "officeId": office_a.id,
        "sessionId": None,
        "user": None,
        "totpActive": False,
        "scopes": ["read", "write", "webhooks", "edit:customer", "admin", "audit"],
    }
    assert (await client.get("/me")).status_code == 401


async def test_every_route_accepts_a_session(app: FastAPI, office_a: OfficeFixture) -> None:
    async with signed_in(app, office_a, "ADMIN") as admin:
        assert (await admin.request("GET", "/people")).status_code == 200
        made = await admin.request("POST", "/people", json={"name": "Cliente Novo"})
        assert made.status_code == 201, made.text


async def test_a_change_on_a_session_needs_the_csrf_token(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a, "ADMIN") as admin:
        for headers in ({}, {"x-csrf-token": "not-the-token"}):
            r = await admin.client.post("/people", json={"name": "X"}, headers=headers)
            assert r.status_code == 403 and error_of(r)["code"] == "CSRF_FAILED"
        r = await admin.client.post("/people", json={"name": "X"}, headers=admin.csrf_header)
        assert r.status_code == 201, r.text
        assert (await admin.client.get("/people")).status_code == 200  # reads need none


async def test_a_key_needs_no_csrf_token(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.post("/people", json={"name": "X"}, headers=office_a.headers)
    assert r.status_code == 201, r.text


async def test_my_sessions_are_listed_and_one_can_be_ended(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user, app_client(app) as second:
        login = await second.post("/auth/login", json={"email": user.email, "password": PASSWORD})
        assert login.status_code == 200
        page = (await user.request("GET", "/me/sessions")).json()
        assert page["totalResults"] == 2 and page["totalPages"] == 1
        listed = page["data"]
        assert len(listed) == 2 and sum(s["current"] for s in listed) == 1
        other = next(s["id"] for s in listed if not s["current"])
        r = await user.request("DELETE", f"/me/sessions/{other}")
        assert r.status_code == 200 and r.json() == {"id": other}
        assert (await second.get("/me")).status_code == 401
        assert (await user.request("GET", "/me")).status_code == 200
        r = await user.request("DELETE", f"/me/sessions/{other}")
        assert r.status_code == 404
        r = await user.request("DELETE", "/me/sessions/bad id")
        assert r.status_code == 400


async def test_another_users_session_cannot_be_ended(
    app: FastAPI, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as one, signed_in(app, office_b) as other:
        theirs = (await other.request("GET", "/me")).json()["sessionId"]
        r = await one.request("DELETE", f"/me/sessions/{theirs}")
        assert r.status_code == 404
        assert (await other.request("GET", "/me")).status_code == 200


async def test_session_routes_need_a_signed_in_user(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    for method, path in (
        ("GET", "/me/sessions"),
        ("POST", "/auth/logout"),
        ("DELETE", f"/me/sessions/{ID}"),
    ):
        r = await client.request(method, path, headers=office_a.headers)
        assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"
        assert (await client.request(method, path)).status_code == 401


async def test_logout_ends_the_session_and_clears_the_cookie(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user:
        cookie = user.client.cookies["officehub_session"]
        r = await user.request("POST", "/auth/logout")
        assert r.status_code == 200, r.text
        assert _cookie_attributes(r).get("max-age") == "0"
        async with app_client(app) as replay:
            replay.cookies.set("officehub_session", cookie)
            assert (await replay.get("/me")).status_code == 401


async def test_an_idle_session_ends(
    app: FastAPI, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with signed_in(app, office_a) as user:
        idle = app.state.settings.session_idle_seconds
        await session.execute(
            update(UserSession).values(last_seen_at=utcnow() - timedelta(seconds=idle + 1))
        )
        await session.commit()
        assert (await user.request("GET", "/me")).status_code == 401


async def test_a_used_session_is_kept_alive_but_ends_at_its_absolute_timeout(
    app: FastAPI, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with signed_in(app, office_a) as user:
        idle = app.state.settings.session_idle_seconds
        await session.execute(
            update(UserSession).values(last_seen_at=utcnow() - timedelta(seconds=idle - 30))
        )
        await session.commit()
        assert (await user.request("GET", "/me")).status_code == 200
        session.expire_all()
        touched = (await session.scalars(select(UserSession))).one()
        assert utcnow() - touched.last_seen_at < timedelta(seconds=30)
        await session.execute(
            update(UserSession).values(expires_at=utcnow() - timedelta(seconds=1))
        )
        await session.commit()
        assert (await user.request("GET", "/me")).status_code == 401


async def test_a_deactivated_users_sessions_end_at_once(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with signed_in(app, office_a) as user:
        assert (await user.request("GET", "/me")).status_code == 200
        r = await client.patch(
            f"/user/{user.id}", json={"isActive": False}, headers=office_a.headers
        )
        assert r.status_code == 200 and r.json()["isActive"] is False
        assert (await user.request("GET", "/me")).status_code == 401
        assert list(await session.scalars(select(UserSession))) == []
        login = await client.post("/auth/login", json={"email": user.email, "password": PASSWORD})
        assert login.status_code == 401
        # Made active again, the old session stays ended; signing in works again.
        r = await client.patch(
            f"/user/{user.id}", json={"isActive": True}, headers=office_a.headers
        )
        assert r.status_code == 200
        assert (await user.request("GET", "/me")).status_code == 401
        login = await client.post("/auth/login", json={"email": user.email, "password": PASSWORD})
        assert login.status_code == 200


async def test_is_active_may_not_be_null(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    user_id = await _user(client, office_a)
    r = await client.patch(f"/user/{user_id}", json={"isActive": None}, headers=office_a.headers)
    assert r.status_code == 400 and "isActive" in error_of(r)["details"]


async def test_a_role_change_applies_to_the_next_request(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a, "ADMIN") as user:
        assert (await user.request("GET", "/webhooks")).status_code == 200
        r = await client.patch(f"/user/{user.id}", json={"role": "AGENT"}, headers=office_a.headers)
        assert r.status_code == 200
        r = await user.request("GET", "/webhooks")
        assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"


async def test_reset_password_command_prints_a_one_use_link(
    database_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    from tests.test_cli import json_of, officehub

    _, email = await make_account(client, office_a)
    printed = json_of(
        await officehub(database_url, "user", "reset-password", "--email", email.upper(), "--json")
    )
    assert set(printed) == {"userId", "officeId", "resetUrl", "expiresAt"}
    token = printed["resetUrl"].split("#reset=", 1)[1]
    new_password = "Cajueiro florido em maio"
    r = await client.post("/auth/invite/accept", json={"token": token, "password": new_password})
    assert r.status_code == 200, r.text
    r = await client.post("/auth/login", json={"email": email, "password": new_password})
    assert r.status_code == 200, r.text
    missing = await officehub(database_url, "user", "reset-password", "--email", "x@y.example")
    assert missing.returncode != 0


async def test_the_sign_in_lock_is_shared_by_every_process_through_redis(
    settings: Settings,
) -> None:
    import uuid

    from tests.helpers import make_office

    shared = {
        "login_email_failure_limits": "2 per 15 minutes",
        "redis_url": "redis://127.0.0.1:6379/0",
        "redis_key_prefix": f"officehub-test-{uuid.uuid4().hex}",
    }
    one, two = (create_app(settings.model_copy(update=shared)) for _ in range(2))
    async with one.router.lifespan_context(one), two.router.lifespan_context(two):
        office = await make_office(one, "A")
        async with app_client(one) as first, app_client(two) as second:
            _, email = await make_account(first, office)
            wrong = {"email": email, "password": "errada-0000"}
            assert (await first.post("/auth/login", json=wrong)).status_code == 401
            assert (await second.post("/auth/login", json=wrong)).status_code == 401
            right = {"email": email, "password": PASSWORD}
            assert (await first.post("/auth/login", json=right)).status_code == 429
            assert (await second.post("/auth/login", json=right)).status_code == 429


async def test_an_unreachable_redis_leaves_sign_in_working(settings: Settings) -> None:
    from tests.helpers import make_office

    down = {"login_email_failure_limits": "1 per 15 minutes", "redis_url": "redis://127.0.0.1:1/0"}
    app = create_app(settings.model_copy(update=down))
    async with app.router.lifespan_context(app), app_client(app) as client:
        office = await make_office(app, "A")
        _, email = await make_account(client, office)
        for _ in range(2):
            r = await client.post("/auth/login", json={"email": email, "password": "errada-0000"})
            assert r.status_code == 401
        r = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert r.status_code == 200, r.text


async def test_ended_sessions_and_spent_links_are_purged(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    from officehub.accounts.retention import ACCOUNTS_PURGE_JOB
    from officehub.jobs import periodic_jobs
    from officehub.kit.worker import WorkerContext

    assert ACCOUNTS_PURGE_JOB in periodic_jobs()
    _, email = await make_account(client, office_a)  # its invitation is spent
    pending = await _invite(client, office_a, await _user(client, office_a))  # still open
    for _ in range(3):
        r = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
        assert r.status_code == 200
    idle = app.state.settings.session_idle_seconds
    live, idle_one, expired = (await session.scalars(select(UserSession))).all()
    await session.execute(
        update(UserSession)
        .where(UserSession.id == idle_one.id)
        .values(last_seen_at=utcnow() - timedelta(seconds=idle + 1))
    )
    await session.execute(
        update(UserSession)
        .where(UserSession.id == expired.id)
        .values(expires_at=utcnow() - timedelta(seconds=1))
    )
    await session.commit()
    ctx = WorkerContext(app.state.settings, app.state.engine, app.state.sessionmaker)
    assert await ACCOUNTS_PURGE_JOB.run(ctx) == 3  # two sessions, one spent invitation
    session.expire_all()
    assert [s.id for s in await session.scalars(select(UserSession))] == [live.id]
    left = (await session.scalars(select(UserToken))).one()
    assert left.token_hash == hash_key(pending)
