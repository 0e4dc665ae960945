from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.fast_messages import repository
from officehub.fast_messages.models import FastMessage
from officehub.fast_messages.schemas import Block, FastMessageCreate, FastMessageUpdate
from officehub.inboxes import service as inboxes
from officehub.kit.errors import NotFound, ValidationFailed
from officehub.kit.pagination import PageParams


async def get_fast_message(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> FastMessage:
    record = await repository.get_fast_message(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Fast message", ident)
    return record


def _content(
    kind: str, text: str | None, audio_url: str | None, blocks: list[Block] | None
) -> tuple[str | None, str | None, list[dict[str, Any]] | None]:
    """The fields the kind keeps, checked: ``TEXT`` text, ``AUDIO`` audioUrl, ``SEQUENCE``
    blocks (each ``TEXT`` block with text, each other with mediaUrl). Others are dropped."""
    if kind == "TEXT":
        if not text:
            raise ValidationFailed.field("body.text", "required when kind is TEXT")
        return text, None, None
    if kind == "AUDIO":
        if not audio_url:
            raise ValidationFailed.field("body.audioUrl", "required when kind is AUDIO")
        return None, audio_url, None
    if not blocks:
        raise ValidationFailed.field("body.blocks", "at least one block when kind is SEQUENCE")
    stored: list[dict[str, Any]] = []
    for index, block in enumerate(blocks):
        if block.kind == "TEXT" and not block.text:
            raise ValidationFailed.field(f"body.blocks.{index}.text", "required for a TEXT block")
        if block.kind != "TEXT" and not block.media_url:
            raise ValidationFailed.field(
                f"body.blocks.{index}.mediaUrl", f"required for a {block.kind} block"
            )
        keep = {"text"} if block.kind == "TEXT" else {"media_url"}
        stored.append(
            block.model_copy(
                update={k: None for k in ("text", "media_url") if k not in keep}
            ).model_dump(mode="json", by_alias=True)
        )
    return None, None, stored


async def list_fast_messages(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    kind: str | None = None,
) -> tuple[list[FastMessage], int]:
    if inbox_id is not None:
        await inboxes.get_inbox(session, office_id, inbox_id)
    return await repository.list_fast_messages(
        session, office_id, params, inbox_id=inbox_id, kind=kind
    )


async def create_fast_message(
    session: AsyncSession, office_id: str, body: FastMessageCreate
) -> FastMessage:
    text, audio_url, blocks = _content(body.kind, body.text, body.audio_url, body.blocks)
    await inboxes.get_inbox(session, office_id, body.inbox_id)
    record = FastMessage(
        office_id=office_id,
        inbox_id=body.inbox_id,
        title=body.title,
        kind=body.kind,
        text=text,
        audio_url=audio_url,
        blocks=blocks,
    )
    session.add(record)
    await session.flush()
    return record


async def update_fast_message(
    session: AsyncSession, office_id: str, ident: str, body: FastMessageUpdate
) -> FastMessage:
    """Fields not sent keep their value; the result is checked as a whole for its kind."""
    record = await get_fast_message(session, office_id, ident, for_change=True)
    sent = body.model_fields_set
    kind = body.kind or record.kind
    text = body.text if "text" in sent else record.text
    audio_url = body.audio_url if "audio_url" in sent else record.audio_url
    if "blocks" in sent:
        blocks = body.blocks
    else:
        blocks = [Block.model_validate(b) for b in record.blocks or []] or None
    record.text, record.audio_url, record.blocks = _content(kind, text, audio_url, blocks)
    record.kind = kind
    if body.title is not None:
        record.title = body.title
    await session.flush()
    return record


async def delete_fast_message(session: AsyncSession, office_id: str, ident: str) -> FastMessage:
    record = await get_fast_message(session, office_id, ident, for_change=True)
    await repository.delete(session, record)
    return record
