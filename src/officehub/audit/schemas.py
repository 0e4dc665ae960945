from __future__ import annotations

from typing import Literal

from pydantic import Field
from typing_extensions import TypeAliasType

from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import Timestamp

ActorKind = TypeAliasType("ActorKind", Literal["apikey", "user", "system"])


class AuditActor(ApiModel):
    kind: ActorKind = Field(
        description="An API key, a signed-in user, or the service itself (`system`: the "
        "worker or an operator's command)"
    )
    id: str = Field(
        description="The key's or the user's id; for `system`, what acted (`worker:retention`, "
        "`cli:keys-create`)"
    )
    address: str = Field(description="The client's address as the service saw it; empty for system")


class AuditEntryOut(ApiModel):
    id: ServerId
    seq: int = Field(description="The entry's place in the office's chain, from 1, no gap")
    at: Timestamp
    actor: AuditActor
    action: str = Field(description="The operation (its operationId): getContact, listMessages…")
    record_type: str = Field(description="contact, conversation, card, case, or the path's noun")
    record_id: ServerId | None
    person_id: ServerId | None = Field(description="The contact the entry concerns, when one does")
    details: dict[str, int] | None = Field(
        default=None,
        description="What a system run did, as counts (retention: `closedConversations`, "
        "`webhookDeliveries`); null for a request",
    )
    previous_hash: str
    hash: str = Field(description="SHA-256 of the entry's fields and previousHash")
