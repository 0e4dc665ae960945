"""The step graph's shape, checked on save: problems refuse the flow, unreachable steps warn.

Pure functions over the validated steps; what needs the database (a user of the office, a
funnel and its column) is checked by the service.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from officehub.flows.schemas import ListStep, Step, SystemStep

DUPLICATE_STEP_ID = "DUPLICATE_STEP_ID"
INITIAL_STEP_NOT_FOUND = "INITIAL_STEP_NOT_FOUND"
NEXT_STEP_NOT_FOUND = "NEXT_STEP_NOT_FOUND"
MISSING_METADATA = "MISSING_METADATA"
UNKNOWN_REFERENCE = "UNKNOWN_REFERENCE"
WEBHOOK_NOT_SENDABLE = "WEBHOOK_NOT_SENDABLE"
CYCLE_WITHOUT_WAIT = "CYCLE_WITHOUT_WAIT"
UNREACHABLE = "UNREACHABLE"

REQUIRED_METADATA: dict[str, tuple[tuple[str, ...], ...]] = {
    # Each inner tuple: at least one of these keys must be set.
    # No userId: the inbox's routing policy picks the person (issue 32).
    "ASSIGN_USER": (),
    "ASSIGN_AGENT": (("agentId", "departmentId", "departmentIds"),),
    "ADD_LABELS": (("tagIds",),),
    "CHANGE_CRM_COLUMN": (("funnelId",), ("funnelColumnId",)),
    "CREATE_TICKET": (("ticketTitle",),),
    "FIRE_WEBHOOK": (("webhookUrl",),),
    "SEARCH_MOVEMENTS": (),
}


@dataclass(frozen=True)
class Problem:
    step_id: str
    reason: str
    details: str

    def describe(self) -> str:
        return f"step {self.step_id!r}: {self.reason}: {self.details}"


def successors(step: Step) -> list[str | None]:
    """Where the step can go next (a list step: each option's target)."""
    if isinstance(step, ListStep):
        return [option.next_step_id for option in step.options]
    return [step.next_step_id]


def waits(step: Step) -> bool:
    """A list step stops the turn until the contact answers."""
    return isinstance(step, ListStep)


def structural_problems(steps: Sequence[Step], initial_step_id: str) -> list[Problem]:
    problems: list[Problem] = []
    seen: set[str] = set()
    for step in steps:
        if step.id in seen:
            problems.append(Problem(step.id, DUPLICATE_STEP_ID, "another step has this id"))
        seen.add(step.id)
    if initial_step_id not in seen:
        problems.append(
            Problem(initial_step_id, INITIAL_STEP_NOT_FOUND, "initialStepId names no step")
        )
    for step in steps:
        problems.extend(_dangling(step, seen))
        if isinstance(step, SystemStep):
            problems.extend(_missing_metadata(step))
    if not any(p.reason == DUPLICATE_STEP_ID for p in problems):
        problems.extend(_cycles_without_wait(steps, seen))
    return problems


def _dangling(step: Step, ids: set[str]) -> list[Problem]:
    if isinstance(step, ListStep):
        return [
            Problem(
                step.id,
                NEXT_STEP_NOT_FOUND,
                f"options[{i}].nextStepId {option.next_step_id!r} names no step",
            )
            for i, option in enumerate(step.options)
            if option.next_step_id is not None and option.next_step_id not in ids
        ]
    if step.next_step_id is not None and step.next_step_id not in ids:
        return [
            Problem(step.id, NEXT_STEP_NOT_FOUND, f"nextStepId {step.next_step_id!r} names no step")
        ]
    return []


def _missing_metadata(step: SystemStep) -> list[Problem]:
    metadata = step.metadata.model_dump(by_alias=True, exclude_none=True) if step.metadata else {}
    problems = []
    for keys in REQUIRED_METADATA[step.system_action]:
        if not any(metadata.get(key) for key in keys):
            problems.append(
                Problem(
                    step.id,
                    MISSING_METADATA,
                    f"{step.system_action} needs metadata." + " or metadata.".join(keys),
                )
            )
    return problems


def _cycles_without_wait(steps: Sequence[Step], ids: set[str]) -> list[Problem]:
    """A cycle through steps that never wait would run forever: one problem per cycle found,
    naming the step where the walk closed it."""
    by_id = {step.id: step for step in steps}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    problems: list[Problem] = []
    for start in by_id:
        if state.get(start) or waits(by_id[start]):
            continue
        path: list[str] = []
        stack: list[tuple[str, bool]] = [(start, False)]
        while stack:
            node, leaving = stack.pop()
            if leaving:
                state[node] = 2
                path.pop()
                continue
            if state.get(node):
                continue
            state[node] = 1
            path.append(node)
            stack.append((node, True))
            nxt = by_id[node].next_step_id
            if nxt is None or nxt not in ids or waits(by_id[nxt]):
                continue
            if state.get(nxt) == 1:
                loop = [*path[path.index(nxt) :], nxt]
                problems.append(
                    Problem(
                        nxt,
                        CYCLE_WITHOUT_WAIT,
                        "the steps " + " -> ".join(loop) + " loop without waiting for the contact",
                    )
                )
            elif not state.get(nxt):
                stack.append((nxt, False))
    return problems


def unreachable(steps: Sequence[Step], initial_step_id: str) -> list[Problem]:
    by_id = {step.id: step for step in steps}
    reached: set[str] = set()
    todo = [initial_step_id] if initial_step_id in by_id else []
    while todo:
        node = todo.pop()
        if node in reached:
            continue
        reached.add(node)
        todo.extend(n for n in successors(by_id[node]) if n is not None and n in by_id)
    return [
        Problem(step.id, UNREACHABLE, "no path from initialStepId reaches this step")
        for step in steps
        if step.id not in reached
    ]
