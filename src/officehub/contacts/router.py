from __future__ import annotations

from typing import Annotated

from fastapi import BackgroundTasks, Query, Request, Response

from officehub.contacts import consent, erasure, merge, service
from officehub.contacts.schemas import (
    ConsentIn,
    ConsentOut,
    ContactErasedOut,
    ContactIn,
    ContactOut,
    ContactPatch,
    LegalHoldIn,
    MergeIn,
)
from officehub.contacts.visibility import (
    VisibleContact,
    contacts_seen,
    require_visible_contact,
)
from officehub.kit.auth import (
    ADMIN,
    ADMIN_SCOPE,
    SUPERVISOR,
    OfficeDep,
    role_override,
    scope_override,
)
from officehub.kit.db import SessionDep, checkpoint_wal
from officehub.kit.errors import ValidationFailed, error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep

router = Router(tags=["Contacts"])
MAX_TAG_FILTER = 50


@router.post(
    "/people",
    status_code=201,
    response_model=ContactOut,
    responses=error_responses(400, 401, 404, 409, 413),
    summary="Create a contact",
)
async def create_contact(body: ContactIn, office: OfficeDep, session: SessionDep) -> ContactOut:
    return await service.create_contact(session, office.office_id, body)


@router.get(
    "/people",
    response_model=Page[ContactOut],
    responses=error_responses(400, 401, 404),
    summary="List contacts",
)
async def list_contacts(
    office: OfficeDep,
    session: SessionDep,
    params: PageDep,
    inbox_id: Annotated[str | None, Query(alias="inboxId", max_length=32)] = None,
    search: Annotated[
        str | None,
        Query(
            max_length=200,
            description="Part of the name (any case, any accents), WhatsApp username or phone",
        ),
    ] = None,
    tag_ids: Annotated[
        list[str] | None,
        Query(alias="tagIds", description="Contacts with any of these tags (repeat or a,b)"),
    ] = None,
) -> Response:
    ids = [part for value in tag_ids or [] for part in value.split(",") if part]
    if len(ids) > MAX_TAG_FILTER:
        raise ValidationFailed.field("query.tagIds", f"at most {MAX_TAG_FILTER} tag ids")
    # Written by the service (FastAPI's own writing skipped): the bytes it would write.
    answer = await service.list_contacts(
        session,
        office.office_id,
        params,
        inbox_id=inbox_id,
        search=search,
        tag_ids=ids,
        scope=await contacts_seen(session, office.who),
    )
    return Response(answer, media_type="application/json")


@router.get(
    "/people/{id}",
    response_model=ContactOut,
    responses=error_responses(400, 401, 404),
    summary="Read a contact",
)
async def read_contact(
    id: PathId, _visible: VisibleContact, office: OfficeDep, session: SessionDep
) -> ContactOut:
    return await service.read_contact(session, office.office_id, id)


@router.patch(
    "/people/{id}",
    response_model=ContactOut,
    responses=error_responses(400, 401, 404, 409, 413),
    summary="Change a contact",
)
async def update_contact(
    id: PathId, _visible: VisibleContact, body: ContactPatch, office: OfficeDep, session: SessionDep
) -> ContactOut:
    return await service.update_contact(session, office.office_id, id, body)


@router.delete(
    "/people/{id}",
    response_model=ContactOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Delete a contact with its conversations",
    description="409 `LEGAL_HOLD` while the contact is under legal hold.",
    openapi_extra=role_override(ADMIN, SUPERVISOR),
)
async def delete_contact(
    id: PathId, _visible: VisibleContact, office: OfficeDep, session: SessionDep
) -> ContactOut:
    return await service.delete_contact(session, office.office_id, id)


@router.post(
    "/people/{id}/merge",
    response_model=ContactOut,
    responses=error_responses(400, 401, 404, 413),
    summary="Merge another contact into this one",
    openapi_extra=role_override(ADMIN, SUPERVISOR),
    description=(
        "The same person stored twice: everything of `otherId` (conversations with their "
        "messages and notes, CRM cards, cases, tags, partner links) moves to this contact, "
        "fields empty here are filled from it, and it is deleted (`contact.deleted`; this "
        "contact emits `contact.updated`). Where both have an open conversation on the same "
        "channel, `otherId`'s is closed (`chat.conversation.updated`) and kept. The operator "
        "who merges has checked: this contact is `verified` afterwards, and a web chat claim "
        "(`claimedPhone`/`claimedEmail` of either) fills its empty phone or email only when "
        "no other contact holds it, else is dropped."
    ),
)
async def merge_contact(
    id: PathId, _visible: VisibleContact, body: MergeIn, office: OfficeDep, session: SessionDep
) -> ContactOut:
    await require_visible_contact(session, office.who, body.other_id)
    return await merge.merge_contacts(session, office.office_id, id, body.other_id)


@router.post(
    "/people/{id}/verify",
    response_model=ContactOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Verify a web chat visitor's claimed phone or email, after checking it",
    description=(
        "An operator who checked a web chat visitor's identity makes the claimed phone and "
        "email the contact's own and marks it verified. 409 `PHONE_TAKEN` when another "
        "contact holds the claimed phone: merge the visitor into that contact instead. "
        "A verified contact is answered unchanged."
    ),
)
async def verify_contact(
    id: PathId, _visible: VisibleContact, office: OfficeDep, session: SessionDep
) -> ContactOut:
    return await service.verify_contact(session, office.office_id, id)


@router.put(
    "/people/{id}/legal-hold",
    response_model=ContactOut,
    responses=error_responses(400, 401, 404, 413),
    summary="Hold or release a contact's data (admin)",
    description=(
        "A contact under legal hold (`legalHold: true`, with a `legalHoldReason`) can be "
        "neither erased nor deleted (409 `LEGAL_HOLD`); it can still be read and exported. "
        "`legalHold: false` releases it and drops the reason. `contact.updated` when it "
        "changes."
    ),
    openapi_extra={**scope_override(ADMIN_SCOPE), **role_override(ADMIN)},
)
async def set_legal_hold(
    id: PathId, body: LegalHoldIn, office: OfficeDep, session: SessionDep
) -> ContactOut:
    return await erasure.set_legal_hold(session, office.office_id, id, body)


async def _checkpoint(request: Request) -> None:
    if not await checkpoint_wal(request.app.state.engine):
        erasure.logger.warning("WAL checkpoint after an erasure was busy; it runs again later")


@router.post(
    "/people/{id}/erase",
    response_model=ContactErasedOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Erase a contact and every personal datum derived from it (admin)",
    description=(
        "The client's right to deletion (LGPD art. 18, VI). Deletes the contact, its "
        "conversations with every message and note (text and files), CRM cards (custom "
        "fields, lead origin), cases, flow sessions, rule runs, and the events, webhook "
        "deliveries (payloads and receivers' answers) and scheduled jobs that carry any of "
        "them. Emits `contact.deleted` with ids only (`erased: true`). 409 `LEGAL_HOLD` while "
        "the contact is under legal hold. See docs/lgpd.md."
    ),
    openapi_extra={**scope_override(ADMIN_SCOPE), **role_override(ADMIN)},
)
async def erase_contact(
    id: PathId,
    office: OfficeDep,
    session: SessionDep,
    request: Request,
    background: BackgroundTasks,
) -> ContactErasedOut:
    erased = await erasure.erase_contact(session, office.office_id, id)
    background.add_task(_checkpoint, request)  # after the commit: the WAL's old pages go
    return erased


@router.get(
    "/people/{id}/consents",
    response_model=Page[ConsentOut],
    responses=error_responses(400, 401, 404),
    summary="List a contact's consent records, newest first",
    description=(
        "Every consent the contact gave or withdrew, per purpose (`service`, `marketing`), "
        "with its source, text version and time. The current state of a purpose is its "
        "latest record; `marketingOptOut` follows the latest `marketing` one. See "
        "docs/lgpd.md."
    ),
)
async def list_consents(
    id: PathId, _visible: VisibleContact, office: OfficeDep, session: SessionDep, params: PageDep
) -> Page[ConsentOut]:
    items, total = await consent.list_consents(session, office.office_id, id, params)
    return Page[ConsentOut].of(items, total, params)


@router.post(
    "/people/{id}/consents",
    status_code=201,
    response_model=ConsentOut,
    responses=error_responses(400, 401, 404, 413),
    summary="Record a consent given or withdrawn",
    description=(
        "Appends a record (history is never changed). When it changes the purpose's current "
        "state, the contact follows it (`marketing` withdrawn: `marketingOptOut: true`, "
        "marketing templates refused with 409 `CONTACT_OPTED_OUT`) and `contact.updated` "
        "goes, once per change."
    ),
)
async def add_consent(
    id: PathId, _visible: VisibleContact, body: ConsentIn, office: OfficeDep, session: SessionDep
) -> ConsentOut:
    return await consent.add_consent(session, office.office_id, id, body)
