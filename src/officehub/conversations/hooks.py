"""The conversations domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.transaction_hooks import Hook


@dataclass(frozen=True)
class ConversationTagsChanged:
    """The conversation's tags changed (flushed, in the caller's transaction)."""

    session: AsyncSession
    office_id: str
    conversation_id: str


conversation_tags_changed: Hook[ConversationTagsChanged] = Hook(
    "conversation.tags_changed", required=True
)
