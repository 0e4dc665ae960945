from __future__ import annotations

from fastapi import Request, Response

from officehub.accounts import service
from officehub.accounts.schemas import (
    AcceptedOut,
    InviteAccept,
    InviteOut,
    LoginBody,
    MeOut,
    PasswordResetCreate,
    PasswordResetOut,
    SessionEnded,
    SessionOut,
    SignedIn,
)
from officehub.accounts.throttle import LoginThrottle
from officehub.kit.auth import ADMIN, SESSION_COOKIE, ActorDep, OfficeDep, role_override
from officehub.kit.config import Settings
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.kit.storage import StorageDep
from officehub.users import service as users

router = Router(tags=["Accounts"])


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def _throttle(request: Request) -> LoginThrottle:
    throttle: LoginThrottle = request.app.state.login_throttle
    return throttle


@router.post(
    "/user/{id}/invite",
    status_code=201,
    response_model=InviteOut,
    responses=error_responses(400, 401, 404, 409),
    openapi_extra=role_override(ADMIN),
    summary="A one-use link (72 h) for the user to choose a password",
)
async def invite_user(
    id: PathId, request: Request, office: OfficeDep, session: SessionDep
) -> InviteOut:
    link = await service.create_link(
        session, office.office_id, id, service.INVITE, _settings(request).public_url
    )
    return InviteOut(token=link.token, invite_url=link.url, expires_at=link.expires_at)


@router.post(
    "/auth/password-reset",
    status_code=201,
    response_model=PasswordResetOut,
    responses=error_responses(400, 401, 404, 409),
    openapi_extra=role_override(ADMIN),
    summary="A one-use link (72 h) for the user to choose a new password",
)
async def reset_password(
    body: PasswordResetCreate, request: Request, office: OfficeDep, session: SessionDep
) -> PasswordResetOut:
    link = await service.create_link(
        session, office.office_id, body.user_id, service.RESET, _settings(request).public_url
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
    response_model=SignedIn,
    responses=error_responses(400, 401, 429),
    summary="Sign in: sets the session cookie and answers the CSRF token",
)
async def login(
    body: LoginBody,
    request: Request,
    response: Response,
    session: SessionDep,
    storage: StorageDep,
) -> SignedIn:
    settings = _settings(request)
    created = await service.sign_in(
        session,
        _throttle(request),
        body.email,
        body.password,
        request.client.host if request.client else "unknown",
        request.headers.get("user-agent"),
        settings.session_absolute_seconds,
    )
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
async def read_me(actor: ActorDep, session: SessionDep, storage: StorageDep) -> MeOut:
    user = None
    if actor.is_user:
        record = await users.get_user(session, actor.office_id, actor.id)
        user = (await users.present(session, storage, actor.office_id, [record]))[0]
    return MeOut(
        kind=actor.kind,
        id=actor.id,
        role=actor.role,
        office_id=actor.office_id,
        session_id=actor.session_id,
        user=user,
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
