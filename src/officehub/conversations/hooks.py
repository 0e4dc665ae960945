"""The conversations domain's hook points (see ``officehub.kit.transaction_hooks``)."""

from __future__ import annotations

from dataclasses import dataclass, field

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


@dataclass(frozen=True)
class ConversationsErasing:
    """Fired when conversations are erased (retention), before their rows go: an upper
    domain removes what it keeps of them that no database cascade reaches (rule runs), may
    add to ``mentions`` more ids whose events, deliveries and jobs must be forgotten, and to
    ``files`` the storage keys of files it stored for them (messages: inbound media)."""

    session: AsyncSession
    office_id: str
    conversation_ids: list[str]
    mentions: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)


conversations_erasing: Hook[ConversationsErasing] = Hook("conversations.erasing", required=True)
