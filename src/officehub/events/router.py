from __future__ import annotations

from functools import cache
from typing import Any, Literal, cast

from fastapi import APIRouter
from pydantic import BaseModel, Field, create_model

from officehub.events.catalogue import BY_NAME, EVENT_TYPES, payload_model, payload_schema
from officehub.events.schemas import EventTypeList, EventTypeOut
from officehub.kit.auth import READ, OfficeDep, scope_override
from officehub.kit.errors import error_responses
from officehub.kit.id_params import ServerId
from officehub.kit.indexed_router import Router
from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import Timestamp

router = Router(tags=["Webhooks"])


@router.get(
    "/webhooks/events",
    response_model=EventTypeList,
    responses=error_responses(401),
    summary="The event catalogue",
    description="Each event's name, group, description, an example payload and the JSON "
    "Schema of its payload (the webhook body's `data`; the document's `webhooks` lists the "
    "bodies).",
    openapi_extra=scope_override(READ),  # names only, no secret: any reading key may list it
)
async def list_event_types(_office: OfficeDep) -> EventTypeList:
    data = [
        EventTypeOut(
            name=e.name,
            group=e.group,
            description=e.description,
            example_payload=e.example,
            payload_schema=payload_schema(e.name),
        )
        for e in EVENT_TYPES
    ]
    return EventTypeList(data=data, total_results=len(data), total_pages=1)


def _camel(name: str) -> str:
    """``CrmLeadMoved`` of ``crm.lead.moved``."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("."))


@cache
def webhook_body(name: str) -> type[BaseModel]:
    """The body a webhook receives for the event ``name`` (``webhooks/delivery.event_body``),
    ``data`` its payload's model: ``<CamelName>Event`` in the document."""
    model = create_model(
        f"{_camel(name)}Event",
        __base__=ApiModel,
        __doc__=BY_NAME[name].description,
        id=(ServerId, Field(description="The event's id: the same on every retry")),
        event=(cast(Any, Literal)[name], ...),
        created_at=(Timestamp, ...),
        office_id=(ServerId, ...),
        subject_id=(
            str | None,
            Field(
                max_length=40,
                description="What the event is about: its conversation, else the record its "
                "`data` describes (`data.id`); null for an event about no record",
            ),
        ),
        sequence=(
            int | None,
            Field(
                ge=1,
                description="The event's place among its subject's events in the office (1, "
                "2, …, in the order their changes committed, without gaps): deliveries may "
                "arrive out of order (retries), so a receiver orders one subject's events by "
                "it; null where `subjectId` is",
            ),
        ),
        data=(payload_model(name), ...),
    )
    return cast(type[BaseModel], model)


def webhook_routes() -> APIRouter:
    """The document's ``webhooks``, one per event (``app.webhooks``; never served).

    Each states its body as its response model, so that FastAPI writes the body's schema
    in its serialized form (what is sent) beside the responses sharing its models
    (``ContactOut``); ``state_webhook_bodies`` moves it to the request body."""
    webhooks = APIRouter(tags=["Webhooks"])
    for e in EVENT_TYPES:
        webhooks.add_api_route(
            e.name,
            _never_called,
            methods=["POST"],
            response_model=webhook_body(e.name),
            summary=e.name,
            description=f"{e.description}. Signed with `X-Service-Signature` and the Standard "
            "Webhooks headers; any 2xx answer is success, anything else is retried. Deliveries "
            "to an endpoint may arrive out of order (retries, several workers): order one "
            "subject's events by `sequence`.",
            operation_id=_camel(e.name)[:1].lower() + _camel(e.name)[1:],
        )
    return webhooks


async def _never_called() -> None:  # pragma: no cover - a webhook route is documentation
    return None


def _example_subject(example: Any) -> str | None:
    if isinstance(example, dict):
        found = example.get("conversationId") or example.get("id")
        return found if isinstance(found, str) else None
    return None


def state_webhook_bodies(document: dict[str, Any]) -> None:
    """Each webhook's body schema (written as its response) becomes its request body, with
    the catalogue's example."""
    for name, operations in document.get("webhooks", {}).items():
        operation = operations["post"]
        schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
        example = {
            "id": "cm3k9x2f7000eabcd1234efgh",
            "event": name,
            "createdAt": "2026-01-01T12:00:00.000Z",
            "officeId": "cm3k9x2f7000fabcd1234efgh",
            "subjectId": _example_subject(BY_NAME[name].example),
            "sequence": 1 if _example_subject(BY_NAME[name].example) else None,
            "data": BY_NAME[name].example,
        }
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": schema, "example": example}},
        }
        operation["responses"] = {"200": {"description": "Received (any 2xx)"}}
