"""The optional TOTP second factor (issue 29): enrolment, sign-in's second step, replay and
recovery codes, disabling and an administrator's reset. Each test is named after the rule it
holds. Codes are computed with pyotp against the app's TOTP clock (``app.state.totp_clock``),
which each test steps by 30 s when it needs a fresh code."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import httpx
import pyotp
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.accounts.models import UserRecoveryCode, UserSession, UserToken
from officehub.audit.models import AuditEntry
from officehub.kit.auth import SESSION_COOKIE, hash_key
from officehub.kit.encryption import is_sealed
from officehub.kit.timeutil import utcnow
from tests.accounts_helpers import (
    PASSWORD,
    SignedInUser,
    SteppedClock,
    app_client,
    make_account,
    signed_in,
)
from tests.helpers import OfficeFixture, error_of
from tests.server import concurrent_client, fire, running_server

ID = "cxxxxxxxxxxxxxxxx"


@dataclass
class Enrolled:
    user: SignedInUser
    secret: str
    recovery_codes: list[str]
    clock: SteppedClock

    def code(self) -> str:
        """A code of a fresh step (the step before is spent by whoever used it)."""
        self.clock.step()
        return pyotp.TOTP(self.secret).at(self.clock.now)


def _wrong(secret: str, now: datetime) -> str:
    """A code no step within the drift has."""
    totp = pyotp.TOTP(secret)
    near = {totp.at(now + timedelta(seconds=30 * k)) for k in (-1, 0, 1)}
    return next(c for c in (f"{n:06d}" for n in range(10)) if c not in near)


def _clock(app: FastAPI) -> SteppedClock:
    clock = SteppedClock()
    app.state.totp_clock = clock
    return clock


async def _enrol(user: SignedInUser, clock: SteppedClock) -> Enrolled:
    started = await user.request("POST", "/me/totp")
    assert started.status_code == 201, started.text
    secret = started.json()["secret"]
    code = pyotp.TOTP(secret).at(clock.now)
    confirmed = await user.request("POST", "/me/totp/confirm", json={"code": code})
    assert confirmed.status_code == 200, confirmed.text
    return Enrolled(user, secret, confirmed.json()["recoveryCodes"], clock)


async def _challenge(client: httpx.AsyncClient, email: str) -> str:
    r = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text
    assert r.json()["totpRequired"] is True and "set-cookie" not in r.headers
    challenge: str = r.json()["challenge"]
    return challenge


async def _sessions(session: AsyncSession, user_id: str) -> int:
    found = await session.scalars(select(UserSession).where(UserSession.user_id == user_id))
    return len(found.all())


# --- enrolment ------------------------------------------------------------------------------


async def test_enrolment_answers_a_secret_and_otpauth_uri_and_is_inactive_until_confirmed(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    clock = _clock(app)
    async with signed_in(app, office_a) as user:
        started = await user.request("POST", "/me/totp")
        assert started.status_code == 201, started.text
        body = started.json()
        assert body["otpauthUri"].startswith("otpauth://totp/")
        assert pyotp.parse_uri(body["otpauthUri"]).secret == body["secret"]
        # Not confirmed: the password alone still signs in.
        r = await client.post("/auth/login", json={"email": user.email, "password": PASSWORD})
        assert r.status_code == 200 and "csrfToken" in r.json()
        bad = _wrong(body["secret"], clock.now)
        wrong = await user.request("POST", "/me/totp/confirm", json={"code": bad})
        assert wrong.status_code == 400 and error_of(wrong)["code"] == "INVALID_CODE"
        assert "code" in error_of(wrong)["details"]
        code = pyotp.TOTP(body["secret"]).at(clock.now)
        confirmed = await user.request("POST", "/me/totp/confirm", json={"code": code})
        assert confirmed.status_code == 200, confirmed.text
        codes = confirmed.json()["recoveryCodes"]
        assert len(codes) == 10 and len(set(codes)) == 10
        again = await user.request("POST", "/me/totp")
        assert again.status_code == 409 and error_of(again)["code"] == "TOTP_ACTIVE"


async def test_me_tells_whether_totp_is_active(app: FastAPI, office_a: OfficeFixture) -> None:
    async with signed_in(app, office_a) as user:
        assert (await user.request("GET", "/me")).json()["totpActive"] is False
        started = await user.request("POST", "/me/totp")
        assert started.status_code == 201
        # Started, not confirmed: not active yet.
        assert (await user.request("GET", "/me")).json()["totpActive"] is False
        clock = _clock(app)
        code = pyotp.TOTP(started.json()["secret"]).at(clock.now)
        assert (await user.request("POST", "/me/totp/confirm", json={"code": code})).is_success
        assert (await user.request("GET", "/me")).json()["totpActive"] is True


async def test_confirm_without_enrolment_is_409(app: FastAPI, office_a: OfficeFixture) -> None:
    async with signed_in(app, office_a) as user:
        r = await user.request("POST", "/me/totp/confirm", json={"code": "123456"})
        assert r.status_code == 409 and error_of(r)["code"] == "TOTP_NOT_PENDING"


async def test_the_secret_is_stored_sealed_and_recovery_codes_hashed(
    app: FastAPI, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
    raw = (await session.execute(text("SELECT secret FROM user_totp"))).scalar_one()
    assert is_sealed(raw) and enrolled.secret not in raw
    hashes = set((await session.scalars(select(UserRecoveryCode.code_hash))).all())
    assert len(hashes) == 10
    assert not hashes & set(enrolled.recovery_codes)
    normal = enrolled.recovery_codes[0].replace("-", "")
    assert hash_key(normal) in hashes


# --- signing in -------------------------------------------------------------------------------


async def test_login_with_totp_answers_a_challenge_and_no_session_until_the_code(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
    before = await _sessions(session, user.id)
    challenge = await _challenge(client, user.email)
    assert await _sessions(session, user.id) == before
    stored = (await session.scalars(select(UserToken).where(UserToken.purpose == "totp"))).one()
    assert stored.token_hash == hash_key(challenge) and challenge not in stored.token_hash
    assert timedelta(minutes=4) < stored.expires_at - utcnow() <= timedelta(minutes=5)
    async with app_client(app) as browser:
        r = await browser.post(
            "/auth/login/totp", json={"challenge": challenge, "code": enrolled.code()}
        )
        assert r.status_code == 200, r.text
        assert r.json()["user"]["id"] == user.id and r.json()["csrfToken"]
        assert SESSION_COOKIE in r.headers["set-cookie"]
        me = await browser.get("/me")
        assert me.status_code == 200 and me.json()["id"] == user.id
    # The challenge worked once.
    r = await client.post(
        "/auth/login/totp", json={"challenge": challenge, "code": enrolled.code()}
    )
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_TOKEN"


async def test_an_expired_challenge_is_refused(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
    challenge = await _challenge(client, user.email)
    stored = (await session.scalars(select(UserToken).where(UserToken.purpose == "totp"))).one()
    stored.expires_at = utcnow() - timedelta(seconds=1)
    await session.commit()
    r = await client.post(
        "/auth/login/totp", json={"challenge": challenge, "code": enrolled.code()}
    )
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_TOKEN"


async def test_a_challenge_is_no_invitation_token(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user:
        await _enrol(user, _clock(app))
    challenge = await _challenge(client, user.email)
    r = await client.post(
        "/auth/invite/accept", json={"token": challenge, "password": f"{PASSWORD} novo"}
    )
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_TOKEN"


async def test_a_wrong_code_is_401_and_counts_towards_the_sign_in_lock(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
    challenge = await _challenge(client, user.email)
    right = enrolled.code()
    wrong = _wrong(enrolled.secret, enrolled.clock.now)
    for _ in range(5):
        r = await client.post("/auth/login/totp", json={"challenge": challenge, "code": wrong})
        assert r.status_code == 401 and error_of(r)["code"] == "INVALID_CODE", r.text
    r = await client.post("/auth/login/totp", json={"challenge": challenge, "code": right})
    assert r.status_code == 429 and error_of(r)["code"] == "RATE_LIMITED"
    assert 1 <= int(r.headers["retry-after"]) <= 15 * 60
    assert "set-cookie" not in r.headers
    # The email is locked for the password step too.
    r = await client.post("/auth/login", json={"email": user.email, "password": PASSWORD})
    assert r.status_code == 429


async def test_one_code_is_accepted_once(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
    code = enrolled.code()
    first = await client.post(
        "/auth/login/totp", json={"challenge": await _challenge(client, user.email), "code": code}
    )
    assert first.status_code == 200, first.text
    replay = await client.post(
        "/auth/login/totp", json={"challenge": await _challenge(client, user.email), "code": code}
    )
    assert replay.status_code == 401 and error_of(replay)["code"] == "INVALID_CODE"
    # An earlier step's code is refused too once a later one was used.
    earlier = pyotp.TOTP(enrolled.secret).at(enrolled.clock.now - timedelta(seconds=30))
    r = await client.post(
        "/auth/login/totp",
        json={"challenge": await _challenge(client, user.email), "code": earlier},
    )
    assert r.status_code == 401


async def test_one_code_sent_at_once_on_several_challenges_makes_one_session(
    app: FastAPI, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
        before = await _sessions(session, user.id)
        challenges = [await _challenge(user.client, user.email) for _ in range(4)]
    code = enrolled.code()
    async with running_server(app) as base_url, concurrent_client(base_url) as client:
        answers = await fire(
            4,
            lambda i: client.post(
                "/auth/login/totp", json={"challenge": challenges[i], "code": code}
            ),
        )
    statuses = sorted(a.status_code for a in answers)
    assert statuses == [200, 401, 401, 401], [a.text for a in answers]
    assert await _sessions(session, user.id) == before + 1


async def test_a_recovery_code_signs_in_once(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
    spare = enrolled.recovery_codes[3]
    r = await client.post(
        "/auth/login/totp",
        json={"challenge": await _challenge(client, user.email), "recoveryCode": spare.upper()},
    )
    assert r.status_code == 200, r.text
    again = await client.post(
        "/auth/login/totp",
        json={"challenge": await _challenge(client, user.email), "recoveryCode": spare},
    )
    assert again.status_code == 401 and error_of(again)["code"] == "INVALID_CODE"


async def test_login_totp_with_a_bad_body_is_400_naming_the_field(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/auth/login/totp", json={"code": "123456"})
    assert r.status_code == 400 and "challenge" in error_of(r)["details"]
    r = await client.post("/auth/login/totp", json={"challenge": "x", "code": "12ab56"})
    assert r.status_code == 400 and "code" in error_of(r)["details"]
    r = await client.post("/auth/login/totp", json={"challenge": "x"})
    assert r.status_code == 400 and "recoveryCode" in error_of(r)["details"]
    r = await client.post("/auth/login/totp", json={"challenge": "x", "code": "123456"})
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_TOKEN"


# --- disabling and resetting ----------------------------------------------------------------


async def test_disable_needs_a_current_code_or_a_recovery_code(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
        code = enrolled.code()
        wrong = _wrong(enrolled.secret, enrolled.clock.now)
        r = await user.request("DELETE", "/me/totp", json={"code": wrong})
        assert r.status_code == 400 and error_of(r)["code"] == "INVALID_CODE"
        assert "code" in error_of(r)["details"]
        r = await user.request("DELETE", "/me/totp", json={})
        assert r.status_code == 400 and "recoveryCode" in error_of(r)["details"]
        assert (await session.execute(text("SELECT count(*) FROM user_totp"))).scalar_one() == 1
        r = await user.request("DELETE", "/me/totp", json={"code": code})
        assert r.status_code == 200 and r.json() == {"userId": user.id, "totpActive": False}
        assert (await session.execute(text("SELECT count(*) FROM user_totp"))).scalar_one() == 0
        count = "SELECT count(*) FROM user_recovery_codes"
        assert (await session.execute(text(count))).scalar_one() == 0
        r = await user.request("DELETE", "/me/totp", json={"code": code})
        assert r.status_code == 409 and error_of(r)["code"] == "TOTP_NOT_ACTIVE"
    r = await client.post("/auth/login", json={"email": user.email, "password": PASSWORD})
    assert r.status_code == 200 and "csrfToken" in r.json()


async def test_disable_with_a_recovery_code(app: FastAPI, office_a: OfficeFixture) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
        r = await user.request(
            "DELETE", "/me/totp", json={"recoveryCode": enrolled.recovery_codes[0]}
        )
        assert r.status_code == 200, r.text


async def test_an_admin_resets_a_users_totp(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user:
        await _enrol(user, _clock(app))
    other = await client.delete(f"/user/{user.id}/totp", headers=office_b.headers)
    assert other.status_code == 404
    async with signed_in(app, office_a, "SUPERVISOR") as supervisor:
        r = await supervisor.request("DELETE", f"/user/{user.id}/totp")
        assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION"
    async with signed_in(app, office_a, "ADMIN") as admin:
        r = await admin.request("DELETE", f"/user/{user.id}/totp")
        assert r.status_code == 200 and r.json() == {"userId": user.id, "totpActive": False}
    r = await client.post("/auth/login", json={"email": user.email, "password": PASSWORD})
    assert r.status_code == 200 and "csrfToken" in r.json()
    await app.state.audit.flush()
    async with app.state.sessionmaker() as s:
        stmt = select(AuditEntry).where(AuditEntry.office_id == office_a.id)
        trail = [(e.action, e.record_type, e.record_id) for e in await s.scalars(stmt)]
    assert ("resetTotp", "user", user.id) in trail


async def test_admin_reset_checks_its_input_and_key(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.delete("/user/not-an-id/totp", headers=office_a.headers)
    assert r.status_code == 400 and "id" in error_of(r)["details"]
    assert (await client.delete(f"/user/{ID}/totp", headers=office_a.headers)).status_code == 404
    assert (await client.delete(f"/user/{ID}/totp")).status_code == 401


# --- who may ---------------------------------------------------------------------------------


async def test_totp_routes_need_a_signed_in_user(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    for method, path, body in (
        ("POST", "/me/totp", None),
        ("POST", "/me/totp/confirm", {"code": "123456"}),
        ("DELETE", "/me/totp", {"code": "123456"}),
    ):
        r = await client.request(method, path, json=body, headers=office_a.headers)
        assert r.status_code == 403 and error_of(r)["code"] == "MISSING_PERMISSION", path
        assert (await client.request(method, path, json=body)).status_code == 401


async def test_totp_changes_on_a_session_need_the_csrf_token(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user:
        r = await user.client.post("/me/totp")
        assert r.status_code == 403


async def test_a_deactivated_users_challenge_stops_working(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with signed_in(app, office_a) as user:
        enrolled = await _enrol(user, _clock(app))
    challenge = await _challenge(client, user.email)
    r = await client.patch(f"/user/{user.id}", json={"isActive": False}, headers=office_a.headers)
    assert r.status_code == 200, r.text
    r = await client.post(
        "/auth/login/totp", json={"challenge": challenge, "code": enrolled.code()}
    )
    assert r.status_code == 400 and error_of(r)["code"] == "INVALID_TOKEN"


async def test_an_account_without_totp_signs_in_with_the_password_alone(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    _, email = await make_account(client, office_a)
    r = await client.post("/auth/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200 and "totpRequired" not in r.json()
