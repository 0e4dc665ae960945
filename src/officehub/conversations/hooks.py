"""The conversations domain's hook points (see ``officehub.hooks``)."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.hooks import Hook


@dataclass(frozen=True)
class ConversationTagsChanged:
    """The conversation's tags changed (flushed, in the caller's transaction)."""

    session: AsyncSession
    office_id: str
    conversation_id: str


conversation_tags_changed: Hook[ConversationTagsChanged] = Hook(
    "conversation.tags_changed", required=True
)
