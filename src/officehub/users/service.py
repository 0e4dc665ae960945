from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes import repository as inboxes
from officehub.kit.db import on_rollback
from officehub.kit.errors import Conflict, NotFound, UnsupportedMediaType
from officehub.kit.ids import new_id
from officehub.kit.multipart_upload import UploadedFile, sniff_image
from officehub.kit.pagination import PageParams
from officehub.kit.repository import flush_or_conflict, lock_office
from officehub.kit.storage import Storage
from officehub.legal_areas import service as legal_areas
from officehub.users import repository
from officehub.users.hooks import (
    UserDeactivated,
    UserRoutingChanged,
    user_deactivated,
    user_routing_changed,
)
from officehub.users.models import User
from officehub.users.schemas import UserCreate, UserOut, UserUpdate

AVATAR_MAX_BYTES = 5 * 1024 * 1024


async def get_user(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> User:
    record = await repository.get_user(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("User", ident)
    return record


async def users_with_email(
    session: AsyncSession, email: str, office_id: str | None = None
) -> list[User]:
    return await repository.with_email(session, email, office_id)


async def require_users(session: AsyncSession, office_id: str, idents: Sequence[str]) -> None:
    """404 naming the first of ``idents`` that is not a user of the office (one query)."""
    found = await repository.existing_ids(session, office_id, idents)
    missing = [ident for ident in idents if ident not in found]
    if missing:
        raise NotFound.of("User", missing[0])


def image_url_of(user: User, storage: Storage) -> str | None:
    """A freshly signed link to the stored avatar (the stored ``image_url`` may have expired)."""
    if user.image_path:
        return storage.url(user.image_path)
    return user.image_url


async def present(
    session: AsyncSession, storage: Storage, office_id: str, users: Sequence[User]
) -> list[UserOut]:
    inbox_ids = await repository.inbox_ids_of(session, office_id, [u.id for u in users])
    area_ids = await repository.legal_area_ids_of(session, office_id, [u.id for u in users])
    return [
        UserOut(
            id=user.id,
            office_id=user.office_id,
            name=user.name,
            email=user.email,
            role=user.role,
            document=user.document,
            image_url=image_url_of(user, storage),
            inbox_ids=inbox_ids[user.id],
            is_active=user.is_active,
            only_assigned_conversations=user.only_assigned_conversations,
            availability=user.availability,
            capacity=user.capacity,
            legal_area_ids=area_ids[user.id],
            has_password=user.password_hash is not None,
            created_at=user.created_at,
            updated_at=user.updated_at,
        )
        for user in users
    ]


async def list_users(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    search: str | None = None,
) -> tuple[list[User], int]:
    if inbox_id is not None:
        await _inbox(session, office_id, inbox_id)
    return await repository.list_users(session, office_id, params, inbox_id=inbox_id, search=search)


async def _check_email(
    session: AsyncSession, office_id: str, email: str, own_id: str | None = None
) -> None:
    other = await repository.get_by_email(session, office_id, email)
    if other is not None and other.id != own_id:
        raise _email_taken(f"User {other.id} already has the email {email}")


def _email_taken(details: str) -> Conflict:
    return Conflict("Email already used", details=details, code="EMAIL_TAKEN")


async def _check_inboxes(session: AsyncSession, office_id: str, inbox_ids: Sequence[str]) -> None:
    for ident in inbox_ids:
        await _inbox(session, office_id, ident)


async def _inbox(session: AsyncSession, office_id: str, ident: str) -> None:
    """404 unless the inbox is the office's (read from the repository: the inboxes' service
    and its schemas are not imported by the CLI's user commands)."""
    if await inboxes.get_inbox(session, office_id, ident) is None:
        raise NotFound.of("Inbox", ident)


async def _check_legal_areas(
    session: AsyncSession, office_id: str, legal_area_ids: Sequence[str]
) -> None:
    """404 naming the first id that is no legal area of the office (nor a default one)."""
    for ident in legal_area_ids:
        await legal_areas.get_legal_area(session, office_id, ident)


ROUTING_FIELDS = frozenset({"availability", "capacity", "legal_area_ids", "inbox_ids", "is_active"})


Grant = Callable[[str], None]
"""The caller's check that they may hand on a role (``OfficeContext.require_grant``: 403 when
the role holds a scope the caller lacks); ``None``: the operator's command line."""


async def create_user(
    session: AsyncSession, office_id: str, body: UserCreate, grant: Grant | None = None
) -> User:
    if grant is not None:
        grant(body.role)
    await _check_email(session, office_id, body.email)
    await _check_inboxes(session, office_id, body.inbox_ids)
    await _check_legal_areas(session, office_id, body.legal_area_ids)
    if body.inbox_ids:
        await lock_office(session, office_id)
    user = User(
        office_id=office_id,
        name=body.name,
        email=body.email,
        role=body.role,
        document=body.document,
        availability=body.availability,
        capacity=body.capacity,
    )
    session.add(user)
    await flush_or_conflict(session, _email_taken(f"Another user has the email {body.email}"))
    await repository.set_inboxes(session, office_id, user.id, body.inbox_ids)
    await repository.set_legal_areas(session, office_id, user.id, body.legal_area_ids)
    if body.inbox_ids:
        await user_routing_changed.fire(UserRoutingChanged(session, office_id, user.id))
    return user


async def update_user(
    session: AsyncSession, office_id: str, ident: str, body: UserUpdate, grant: Grant | None = None
) -> User:
    """``grant``: the caller must hold the scopes of the user's role, as it stands (read
    locked) and as it is to become: nobody changes a user above them."""
    body.refuse_sent_nulls()
    sent = body.model_fields_set
    routing = bool(sent & ROUTING_FIELDS)
    if routing:
        # The office's routing lock before the user's row (the order routing takes them).
        await get_user(session, office_id, ident)
        await lock_office(session, office_id)
    user = await get_user(session, office_id, ident, for_change=True)
    if grant is not None:
        grant(user.role)
        if body.role is not None:
            grant(body.role)
    if body.email is not None:
        await _check_email(session, office_id, body.email, user.id)
        user.email = body.email
    if body.name is not None:
        user.name = body.name
    if body.role is not None:
        user.role = body.role
    if "document" in sent:
        user.document = body.document
    if body.inbox_ids is not None:
        await _check_inboxes(session, office_id, body.inbox_ids)
        await repository.set_inboxes(session, office_id, user.id, body.inbox_ids)
    if body.only_assigned_conversations is not None:
        user.only_assigned_conversations = body.only_assigned_conversations
    if body.availability is not None:
        user.availability = body.availability
    if "capacity" in sent:
        user.capacity = body.capacity
    if body.legal_area_ids is not None:
        await _check_legal_areas(session, office_id, body.legal_area_ids)
        await repository.set_legal_areas(session, office_id, user.id, body.legal_area_ids)
    if body.is_active is not None and body.is_active != user.is_active:
        user.is_active = body.is_active
        if not body.is_active:
            await user_deactivated.fire(UserDeactivated(session, office_id, user.id))
    await flush_or_conflict(session, _email_taken(f"Another user has the email {user.email}"))
    if routing:
        await user_routing_changed.fire(UserRoutingChanged(session, office_id, user.id))
    return user


async def set_avatar(
    session: AsyncSession, storage: Storage, office_id: str, ident: str, upload: UploadedFile
) -> tuple[User, str | None]:
    """Stores a JPEG, PNG or WebP (type read from the bytes, at most 5 MB) as the picture.

    Answers the user and the key of the picture it replaced, for the caller to delete once
    the change has committed.
    """
    user = await get_user(session, office_id, ident)
    kind = sniff_image(await upload.peek())
    if kind is None:
        raise UnsupportedMediaType(
            "Unsupported image type", details="The avatar must be a JPEG, PNG or WebP image"
        )
    extension, _media_type = kind
    key = f"avatars/{office_id}/{user.id}/{new_id()}.{extension}"
    await storage.save(key, upload.chunks, AVATAR_MAX_BYTES)
    on_rollback(session, lambda: storage.delete(key))
    # Locked once the file is stored: the upload streams without SQLite's write lock.
    user = await get_user(session, office_id, ident, for_change=True)
    previous = user.image_path
    user.image_path = key
    user.image_url = storage.url(key)
    await session.flush()
    return user, previous


async def remove_avatar(
    session: AsyncSession, office_id: str, ident: str
) -> tuple[User, str | None]:
    """Clears the picture; answers the user and the key of the file to delete after commit.

    A user without a picture is left as is (the removal is idempotent).
    """
    user = await get_user(session, office_id, ident, for_change=True)
    previous = user.image_path
    user.image_path = None
    user.image_url = None
    await session.flush()
    return user, previous
