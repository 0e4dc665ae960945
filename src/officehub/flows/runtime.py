"""The flows consumer of the outbox: runs a conversation's flow as the contact writes.

The outbox consumer hands a conversation's events over one after the other, so a
session is never advanced by two inbound messages at once. Each turn runs in the
consumer's transaction: the messages the flow sends, its system steps' changes and the
session commit together, or not at all (and the event is retried).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.actions.base import ActionContext, ActionFailed
from officehub.contacts import service as contacts
from officehub.contacts.texts import UNVERIFIED_REFUSAL
from officehub.conversations import service as conversations
from officehub.events.consumers import Consumer
from officehub.events.service import Cause, caused_by
from officehub.flows import movements, repository, vocabulary
from officehub.flows.models import FlowSession
from officehub.flows.schemas import (
    FlowContent,
    ListStep,
    MediaStep,
    Option,
    Step,
    StepMetadata,
    SystemStep,
)
from officehub.flows.service import EXPIRY
from officehub.inboxes import service as inboxes
from officehub.kit.config import Settings
from officehub.kit.errors import NotFound, ServiceError
from officehub.kit.pagination import PageParams
from officehub.kit.timeutil import isoformat
from officehub.kit.worker import WorkerContext
from officehub.messages import inbound as inbound_messages
from officehub.messages import outbound as outbound_messages
from officehub.messages.schemas import FallbackTemplate, OutboundIn
from officehub.offices.settings import office_zone

if TYPE_CHECKING:
    from officehub.conversations.models import Conversation
    from officehub.events.models import OutboxEvent

MAX_STEPS_PER_TURN = 50
MAX_LOG = 200
SOCIAL_CHANNELS = frozenset({"INSTAGRAM"})

_FIRST = PageParams(page=1, limit=1)

RUNNING, WAITING, PAUSED, ENDED, EXPIRED = "RUNNING", "WAITING", "PAUSED", "ENDED", "EXPIRED"


@dataclass
class Turn:
    session: AsyncSession
    record: FlowSession
    conversation: Conversation
    content: FlowContent
    now: datetime
    settings: Settings
    reply: str | None = None

    def log(self, step_id: str | None, outcome: str, detail: str | None = None) -> None:
        entry = {"stepId": step_id, "outcome": outcome, "detail": detail, "at": isoformat(self.now)}
        self.record.steps = [*self.record.steps, entry][-MAX_LOG:]


def normalise(text: str) -> str:
    """Case- and accent-insensitive form of a reply or an option."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(plain.casefold().split()).strip(" .!?)")


def match_option(options: list[Option], reply: str) -> int | None:
    """The option a reply picks: by its number (1-based), then ``value``, ``title``, ``text``."""
    wanted = normalise(reply)
    if not wanted:
        return None
    if wanted.isdigit() and 1 <= int(wanted) <= len(options):
        return int(wanted) - 1
    for key in ("value", "title", "text"):
        for index, option in enumerate(options):
            if normalise(getattr(option, key)) == wanted:
                return index
    return None


def reply_key(step: ListStep, index: int) -> str:
    """The reply id a list step's option carries on the platform's buttons and rows."""
    return f"{step.id}:{index + 1}"


def chosen_by_reply_id(step: ListStep, reply_id: str | None) -> int | None:
    """The option a button or list answer picks, when it answers this step."""
    prefix = f"{step.id}:"
    if not reply_id or not reply_id.startswith(prefix):
        return None
    number = reply_id.removeprefix(prefix)
    if number.isdigit() and 1 <= int(number) <= len(step.options):
        return int(number) - 1
    return None


def list_text(step: ListStep) -> str:
    lines = [step.content] if step.content else []
    lines += [f"{i}. {option.text}" for i, option in enumerate(step.options, start=1)]
    return "\n".join(lines)


async def handle_event(session: AsyncSession, event: OutboxEvent, ctx: WorkerContext) -> None:
    if event.conversation_id is None or event.name not in (
        "chat.message.received",
        "chat.conversation.assigned",
    ):
        return
    try:
        conversation = await conversations.get_conversation(
            session, event.office_id, event.conversation_id
        )
    except NotFound:
        return  # deleted since
    with caused_by(Cause(event.id, event.depth)):
        if event.name == "chat.message.received":
            await _on_inbound(session, event, conversation, ctx)
        else:
            await _on_assigned(session, conversation, ctx)


async def _on_inbound(
    session: AsyncSession, event: OutboxEvent, conversation: Conversation, ctx: WorkerContext
) -> None:
    office_id = conversation.office_id
    now = ctx.now()
    data = event.data or {}
    record = await repository.session_of(session, office_id, conversation.id)
    if record is None:
        await _start(session, conversation, str(data.get("id")), ctx)
        return
    if record.status != WAITING:
        return
    flow = await repository.get_flow(session, office_id, record.flow_id)
    if flow is None:
        return
    turn = Turn(
        session, record, conversation, FlowContent.model_validate(flow.content), now, ctx.settings
    )
    turn.reply = data.get("text") if isinstance(data.get("text"), str) else None
    if conversation.assigned_user_id is not None:
        record.status = PAUSED
        turn.log(record.current_step_id, "HUMAN_SUPPORT", "a person took the conversation")
        return
    if now - record.last_activity_at > EXPIRY:
        _end(turn, EXPIRED, "EXPIRED")
        return
    step = _step(turn.content, record.current_step_id)
    if not isinstance(step, ListStep):
        _end(turn, ENDED, "STEP_REMOVED")
        return
    record.last_activity_at = now
    answered = await inbound_messages.reply_id(session, office_id, str(data.get("id")))
    choice = chosen_by_reply_id(step, answered)
    if choice is None:
        choice = match_option(step.options, turn.reply or "")
    if choice is None:
        if record.reasked:
            turn.log(step.id, "NO_MATCH", "still waiting")
            return
        record.reasked = True
        await _ask(turn, step, "REASKED")
        return
    option = step.options[choice]
    turn.log(step.id, "ANSWERED", f"option {choice + 1}")
    record.reasked = False
    record.status = RUNNING
    record.current_step_id = option.next_step_id
    await run_turn(turn)


async def _start(
    session: AsyncSession, conversation: Conversation, message_id: str, ctx: WorkerContext
) -> None:
    """A flow starts on the conversation's first inbound message, unless a person has it."""
    office_id = conversation.office_id
    if conversation.assigned_user_id is not None:
        return
    if await inbound_messages.first_inbound_id(session, office_id, conversation.id) != message_id:
        return
    integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
    flow = await repository.flow_for_inbox(
        session, office_id, conversation.inbox_id, social=integration.type in SOCIAL_CHANNELS
    )
    if flow is None:
        return
    content = FlowContent.model_validate(flow.content)
    now = ctx.now()
    record = await repository.add_session(
        session,
        FlowSession(
            office_id=office_id,
            conversation_id=conversation.id,
            flow_id=flow.id,
            status=RUNNING,
            current_step_id=content.initial_step_id,
            reasked=False,
            end_reason=None,
            steps=[],
            last_activity_at=now,
            created_at=now,
            updated_at=now,
        ),
    )
    await run_turn(Turn(session, record, conversation, content, now, ctx.settings))


async def _on_assigned(
    session: AsyncSession, conversation: Conversation, ctx: WorkerContext
) -> None:
    record = await repository.session_of(session, conversation.office_id, conversation.id)
    if record is None:
        return
    flow = await repository.get_flow(session, conversation.office_id, record.flow_id)
    if flow is None:
        return
    now = ctx.now()
    turn = Turn(
        session, record, conversation, FlowContent.model_validate(flow.content), now, ctx.settings
    )
    if conversation.assigned_user_id is not None:
        if record.status in (RUNNING, WAITING):
            record.status = PAUSED
            turn.log(record.current_step_id, "HUMAN_SUPPORT", "a person took the conversation")
        return
    if record.status == PAUSED:
        turn.log(record.current_step_id, "HANDED_BACK", "human support ended")
        record.status = RUNNING
        record.last_activity_at = now
        await run_turn(turn)


def _step(content: FlowContent, step_id: str | None) -> Step | None:
    return next((s for s in content.steps if s.id == step_id), None)


def _end(turn: Turn, status: str, reason: str) -> None:
    turn.record.status = status
    turn.record.end_reason = reason
    turn.log(turn.record.current_step_id, reason)


async def run_turn(turn: Turn) -> None:
    """Runs steps from the current one until a list waits, a person takes over, the flow
    ends or ``MAX_STEPS_PER_TURN`` steps ran."""
    record = turn.record
    taken = 0
    while record.current_step_id is not None:
        if taken >= MAX_STEPS_PER_TURN:
            _end(turn, ENDED, "STEP_LIMIT")
            return
        step = _step(turn.content, record.current_step_id)
        if step is None:
            _end(turn, ENDED, "STEP_REMOVED")
            return
        taken += 1
        if isinstance(step, ListStep):
            await _ask(turn, step, "SENT")
            record.status = WAITING
            record.reasked = False
            record.last_activity_at = turn.now
            return
        if isinstance(step, MediaStep):
            await _send(turn, step.id, "SENT", media_url=step.content)
        elif isinstance(step, SystemStep):
            paused = await _system(turn, step)
            if paused:
                record.current_step_id = step.next_step_id
                record.status = PAUSED
                return
        else:
            fallback = step.metadata.fallback_template if step.metadata else None
            await _send(turn, step.id, "SENT", text=step.content, fallback=fallback)
        record.current_step_id = step.next_step_id
    _end(turn, ENDED, "COMPLETED")


async def _ask(turn: Turn, step: ListStep, outcome: str) -> None:
    """A list step's question: numbered text everywhere; on the official channel reply
    buttons (up to 3 options) or a list (up to 10)."""
    office_id, conversation_id = turn.conversation.office_id, turn.conversation.id
    options = [(reply_key(step, i), o.title or o.text) for i, o in enumerate(step.options)]
    try:
        async with turn.session.begin_nested():
            sent = await outbound_messages.send_choice(
                turn.session, office_id, conversation_id, list_text(step), step.content, options
            )
        turn.log(step.id, outcome, f"message {sent.id}")
    except ServiceError as exc:
        turn.log(step.id, "FAILED", f"{exc.code}: {exc.details or exc.message}")


async def _send_text(turn: Turn, step_id: str, text: str, outcome: str) -> None:
    await _send(turn, step_id, outcome, text=text)


async def _send(
    turn: Turn,
    step_id: str,
    outcome: str,
    *,
    text: str | None = None,
    media_url: str | None = None,
    fallback: FallbackTemplate | None = None,
) -> None:
    """A failed send (the service window closed, the text empty) is logged; the flow goes on."""
    office_id, conversation_id = turn.conversation.office_id, turn.conversation.id
    try:
        async with turn.session.begin_nested():
            if media_url is not None:
                sent = await outbound_messages.send_media(
                    turn.session, office_id, conversation_id, media_url
                )
            elif text:
                sent = await outbound_messages.send(
                    turn.session,
                    office_id,
                    conversation_id,
                    OutboundIn(text=text[:4096], fallback_template=fallback),
                )
            else:
                turn.log(step_id, "SKIPPED", "nothing to send")
                return
        turn.log(step_id, outcome, f"message {sent.id}")
    except ServiceError as exc:
        turn.log(step_id, "FAILED", f"{exc.code}: {exc.details or exc.message}")


async def _system(turn: Turn, step: SystemStep) -> bool:
    """Performs the step's action; True when it handed the conversation to a person."""
    meta = step.metadata or StepMetadata()
    try:
        async with turn.session.begin_nested():
            paused, detail = await _perform(turn, step, meta)
    except ServiceError as exc:
        turn.log(
            step.id, "FAILED", f"{step.system_action}: {exc.code}: {exc.details or exc.message}"
        )
        return False
    except ActionFailed as exc:
        turn.log(step.id, "FAILED", f"{step.system_action}: {exc}")
        return False
    turn.log(step.id, "DONE", f"{step.system_action}: {detail}")
    return paused


async def _perform(turn: Turn, step: SystemStep, meta: StepMetadata) -> tuple[bool, str]:
    """The step's catalogue actions (``flows.vocabulary``); SEARCH_MOVEMENTS answers the
    contact with their movements."""
    session, conversation = turn.session, turn.conversation
    office_id = conversation.office_id
    action = step.system_action
    if action == "SEARCH_MOVEMENTS":
        return False, await _search_movements(turn, step)
    payload: dict[str, Any] = {}
    if action == "FIRE_WEBHOOK":
        payload = vocabulary.webhook_body(meta)
        if meta.webhook_include_context:
            payload["context"] = {
                "flowId": turn.record.flow_id,
                "stepId": step.id,
                "conversationId": conversation.id,
                "personId": conversation.person_id,
                "inboxId": conversation.inbox_id,
                "lastMessage": turn.reply,
            }
    context = ActionContext(
        office_id=office_id,
        now=turn.now,
        settings=turn.settings,
        conversation_id=conversation.id,
        source_flow_id=turn.record.flow_id,
        webhook_event="flow.webhook",
        webhook_payload=payload,
    )
    handed, details = False, []
    planned = vocabulary.to_run(action, meta, payload=payload)
    for spec, params in planned:
        outcome = await spec.run(session, context, params)
        handed = handed or outcome.handed_to_person
        details.append(outcome.detail)
    if action == "ADD_LABELS":
        return False, f"{len(planned)} tags"
    return handed, "; ".join(details)


async def _search_movements(turn: Turn, step: SystemStep) -> str:
    session, conversation = turn.session, turn.conversation
    office_id = conversation.office_id
    if not await contacts.is_verified(session, office_id, conversation.person_id):
        await _send_text(turn, step.id, UNVERIFIED_REFUSAL, "SENT")
        return "refused: the contact is not verified"
    found = await movements.ADAPTER.search(session, office_id, conversation.person_id)
    text = movements.describe(found, await office_zone(session, office_id))
    await _send_text(turn, step.id, text, "SENT")
    return f"{len(found)} movements"


FLOWS = Consumer("flows", handle_event)
