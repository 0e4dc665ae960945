from __future__ import annotations

from datetime import datetime

from fastapi import Request, Response
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.accounts import service, totp
from officehub.accounts.schemas import (
    AcceptedOut,
    InviteAccept,
    InviteOut,
    LoginBody,
    LoginTotpBody,
    MeOut,
    PasswordResetCreate,
    PasswordResetOut,
    RecoveryCodesOut,
    SessionEnded,
    SessionOut,
    SignedIn,
    TotpConfirm,
    TotpEnrolment,
    TotpProof,
    TotpRequired,
    TotpState,
)
from officehub.accounts.throttle import LoginThrottle
from officehub.kit.auth import (
    ADMIN,
    ADMIN_SCOPE,
    SCOPES,
    SESSION_COOKIE,
    ActorDep,
    OfficeDep,
    role_override,
    scope_override,
)
from officehub.kit.config import Settings
from officehub.kit.db import SessionDep
from officehub.kit.errors import ValidationFailed, error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.kit.storage import Storage, StorageDep
from officehub.kit.timeutil import utcnow
from officehub.users import service as users

router = Router(tags=["Accounts"])


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _throttle(request: Request) -> LoginThrottle:
    throttle: LoginThrottle = request.app.state.login_throttle
    return throttle


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _totp_now(request: Request) -> datetime:
    """The clock TOTP codes are checked against (``app.state.totp_clock``: tests step it)."""
    now: datetime = getattr(request.app.state, "totp_clock", utcnow)()
    return now


def _one_factor(body: TotpProof) -> None:
    if (body.code is None) == (body.recovery_code is None):
        raise ValidationFailed.field("code", "send either code or recoveryCode (one of them)")


async def _signed_in(
    request: Request,
    response: Response,
    session: AsyncSession,
    storage: Storage,
    created: service.NewSession,
) -> SignedIn:
    settings = _settings(request)
    response.set_cookie(
        SESSION_COOKIE,
        created.token,
        max_age=settings.session_absolute_seconds,
        path="/",
        secure=settings.public_url.startswith("https://"),
        httponly=True,
        samesite="lax",
    )
    user = (await users.present(session, storage, created.user.office_id, [created.user]))[0]
    return SignedIn(user=user, csrf_token=created.csrf_token)


@router.post(
    "/user/{id}/invite",
    status_code=201,
    response_model=InviteOut,
    responses=error_responses(400, 401, 403, 404, 409),
    openapi_extra={**scope_override(ADMIN_SCOPE), **role_override(ADMIN)},
    summary="A one-use link (72 h) for the user to choose a password",
)
async def invite_user(
    id: PathId, request: Request, office: OfficeDep, session: SessionDep
) -> InviteOut:
    link = await service.create_link(
        session,
        office.office_id,
        id,
        service.INVITE,
        _settings(request).public_url,
        office.require_grant,
    )
    return InviteOut(token=link.token, invite_url=link.url, expires_at=link.expires_at)


@router.post(
    "/auth/password-reset",
    status_code=201,
    response_model=PasswordResetOut,
    responses=error_responses(400, 401, 403, 404, 409),
    openapi_extra={**scope_override(ADMIN_SCOPE), **role_override(ADMIN)},
    summary="A one-use link (72 h) for the user to choose a new password",
)
async def reset_password(
    body: PasswordResetCreate, request: Request, office: OfficeDep, session: SessionDep
) -> PasswordResetOut:
    link = await service.create_link(
        session,
        office.office_id,
        body.user_id,
        service.RESET,
        _settings(request).public_url,
        office.require_grant,
    )
    return PasswordResetOut(token=link.token, reset_url=link.url, expires_at=link.expires_at)


@router.post(
    "/auth/invite/accept",
    response_model=AcceptedOut,
    responses=error_responses(400, 409),
    summary="Set the password of an invitation or reset link (each link works once)",
)
async def accept_invite(
    body: InviteAccept, session: SessionDep, storage: StorageDep
) -> AcceptedOut:
    user = await service.accept_link(session, body.token, body.password)
    return AcceptedOut(user=(await users.present(session, storage, user.office_id, [user]))[0])


@router.post(
    "/auth/login",
    response_model=SignedIn | TotpRequired,
    responses=error_responses(400, 401, 429),
    summary="Sign in: sets the session cookie and answers the CSRF token (a user with TOTP: "
    "a challenge for POST /auth/login/totp, no session yet)",
)
async def login(
    body: LoginBody,
    request: Request,
    response: Response,
    session: SessionDep,
    storage: StorageDep,
) -> SignedIn | TotpRequired:
    created = await service.sign_in(
        session,
        _throttle(request),
        body.email,
        body.password,
        _address(request),
        request.headers.get("user-agent"),
        _settings(request).session_absolute_seconds,
    )
    if isinstance(created, service.Challenge):
        return TotpRequired(challenge=created.token, expires_at=created.expires_at)
    return await _signed_in(request, response, session, storage, created)


@router.post(
    "/auth/login/totp",
    response_model=SignedIn,
    responses=error_responses(400, 401, 429),
    summary="Sign in's second step: the challenge and a TOTP code (or a recovery code)",
)
async def login_totp(
    body: LoginTotpBody,
    request: Request,
    response: Response,
    session: SessionDep,
    storage: StorageDep,
) -> SignedIn:
    _one_factor(body)
    created = await service.sign_in_totp(
        session,
        _throttle(request),
        body.challenge,
        body.code,
        body.recovery_code,
        _address(request),
        request.headers.get("user-agent"),
        _settings(request).session_absolute_seconds,
        _totp_now(request),
    )
    return await _signed_in(request, response, session, storage, created)


@router.post(
    "/auth/logout",
    response_model=SessionEnded,
    responses=error_responses(400, 401, 403),
    summary="Sign out: ends this session and clears its cookie",
)
async def logout(
    request: Request, response: Response, actor: ActorDep, session: SessionDep
) -> SessionEnded:
    ended = await service.sign_out(session, actor)
    response.delete_cookie(
        SESSION_COOKIE,
        path="/",
        secure=_settings(request).public_url.startswith("https://"),
        httponly=True,
        samesite="lax",
    )
    return SessionEnded(id=ended)


@router.get("/me", response_model=MeOut, responses=error_responses(400, 401))
async def read_me(
    office: OfficeDep, actor: ActorDep, session: SessionDep, storage: StorageDep
) -> MeOut:
    user = None
    totp_active = False
    if actor.is_user:
        record = await users.get_user(session, actor.office_id, actor.id)
        user = (await users.present(session, storage, actor.office_id, [record]))[0]
        totp_active = await totp.active(session, record) is not None
    return MeOut(
        kind=actor.kind,
        id=actor.id,
        role=actor.role,
        office_id=actor.office_id,
        session_id=actor.session_id,
        user=user,
        totp_active=totp_active,
        scopes=[scope for scope in SCOPES if scope in office.permissions],
    )


@router.get(
    "/me/sessions", response_model=Page[SessionOut], responses=error_responses(400, 401, 403)
)
async def list_my_sessions(actor: ActorDep, session: SessionDep, page: PageDep) -> Page[SessionOut]:
    records, total = await service.list_sessions(session, actor, page)
    items = [
        SessionOut(
            id=r.id,
            current=r.id == actor.session_id,
            user_agent=r.user_agent,
            created_at=r.created_at,
            last_seen_at=r.last_seen_at,
            expires_at=r.expires_at,
        )
        for r in records
    ]
    return Page[SessionOut].of(items, total, page)


@router.delete(
    "/me/sessions/{id}", response_model=SessionEnded, responses=error_responses(400, 401, 403, 404)
)
async def end_my_session(id: PathId, actor: ActorDep, session: SessionDep) -> SessionEnded:
    await service.end_session(session, actor, id)
    return SessionEnded(id=id)


@router.post(
    "/me/totp",
    status_code=201,
    response_model=TotpEnrolment,
    responses=error_responses(400, 401, 403, 409),
    summary="Start a TOTP enrolment: a new secret, active once confirmed",
)
async def start_totp(actor: ActorDep, session: SessionDep) -> TotpEnrolment:
    service.require_user(actor)
    enrolment = await totp.start(session, actor.office_id, actor.id)
    return TotpEnrolment(secret=enrolment.secret, otpauth_uri=enrolment.uri)


@router.post(
    "/me/totp/confirm",
    response_model=RecoveryCodesOut,
    responses=error_responses(400, 401, 403, 409),
    summary="Activate TOTP with a current code; answers ten one-use recovery codes, once",
)
async def confirm_totp(
    body: TotpConfirm, request: Request, actor: ActorDep, session: SessionDep
) -> RecoveryCodesOut:
    service.require_user(actor)
    codes = await totp.confirm(session, actor.office_id, actor.id, body.code, _totp_now(request))
    return RecoveryCodesOut(recovery_codes=codes)


@router.delete(
    "/me/totp",
    response_model=TotpState,
    responses=error_responses(400, 401, 403, 409, 429),
    summary="Disable TOTP with a current code or a recovery code",
)
async def disable_totp(
    body: TotpProof, request: Request, actor: ActorDep, session: SessionDep
) -> TotpState:
    service.require_user(actor)
    _one_factor(body)
    user = await users.get_user(session, actor.office_id, actor.id)
    throttle, address = _throttle(request), _address(request)
    wait = await throttle.locked_for(user.email, address)
    if wait is not None:
        raise service.locked(wait, "wrong passwords or codes")
    now = _totp_now(request)
    if not await totp.disable(
        session, actor.office_id, actor.id, body.code, body.recovery_code, now
    ):
        await throttle.failed(user.email, address)
        field = "code" if body.code is not None else "recoveryCode"
        raise ValidationFailed.field(field, totp.WRONG_CODE, code="INVALID_CODE")
    return TotpState(user_id=actor.id, totp_active=False)


@router.delete(
    "/user/{id}/totp",
    response_model=TotpState,
    responses=error_responses(400, 401, 403, 404),
    openapi_extra={**scope_override(ADMIN_SCOPE), **role_override(ADMIN)},
    summary="Reset a user's TOTP (a lost phone): they sign in with the password alone",
)
async def reset_totp(id: PathId, office: OfficeDep, session: SessionDep) -> TotpState:
    office.require_grant((await users.get_user(session, office.office_id, id)).role)
    await totp.reset(session, office.office_id, id)
    return TotpState(user_id=id, totp_active=False)
