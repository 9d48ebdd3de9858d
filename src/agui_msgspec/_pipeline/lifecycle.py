"""Verification: the run lifecycle as one sans-IO state machine (spec: events/lifecycle).

Like h11's ``_state.py``, this module owns every sequencing rule, the rules are
tables, and the machine does not know which side it serves: it checks what a
consumer received and, equally, what a producer is about to send.

The stream is in one of four states; ``_TRANSITIONS`` says which run-level event
moves it where and which rule any other event breaks. Inside a run, ``_ITEMS``
says which events open, continue and close which kind of item (text messages,
tool calls, reasoning spans and messages, steps, subagent invocations); the
machine tracks what is open per run and clears it at every run boundary.

Each rule has a stable id, used in :attr:`ProtocolViolation.rule`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from msgspec import UNSET

from agui_msgspec._errors import LifecycleViolation, ProtocolViolation
from agui_msgspec._pipeline.run import Run, RunStatus


class StreamState(enum.Enum):
    IDLE = "idle"  # nothing yet: the stream must open with RUN_STARTED or RUN_ERROR
    ACTIVE = "active"  # a run is in progress
    CLOSED = "closed"  # the last run finished: a new run or one late RUN_ERROR may follow
    FAILED = "failed"  # the last run reported RUN_ERROR: only a new run may follow

    # Members are singletons, so identity hashing (in C) is exact; Enum's own hashes the
    # name in Python, on every event that looks up its row of _TRANSITIONS.
    __hash__ = object.__hash__


_RUN_EVENTS = ("RUN_STARTED", "RUN_FINISHED", "RUN_ERROR")

# state → run-level event → next state, or the rule that event breaks.
# "*" is every event that is not a run-level event.
_TRANSITIONS: dict[StreamState, dict[str, StreamState | str]] = {
    StreamState.IDLE: {
        "RUN_STARTED": StreamState.ACTIVE,
        "RUN_ERROR": StreamState.FAILED,
        "RUN_FINISHED": "first-event",
        "*": "first-event",
    },
    StreamState.ACTIVE: {
        "RUN_STARTED": "nested-run",
        "RUN_FINISHED": StreamState.CLOSED,
        "RUN_ERROR": StreamState.FAILED,
        "*": StreamState.ACTIVE,
    },
    StreamState.CLOSED: {
        "RUN_STARTED": StreamState.ACTIVE,
        "RUN_ERROR": StreamState.FAILED,  # a late error turns the finished run into a failed one
        "RUN_FINISHED": "event-after-run-finished",
        "*": "event-after-run-finished",
    },
    StreamState.FAILED: {
        "RUN_STARTED": StreamState.ACTIVE,
        "RUN_ERROR": "event-after-run-error",
        "RUN_FINISHED": "event-after-run-error",
        "*": "event-after-run-error",
    },
}

_RULE_TEXT = {
    "first-event": "a stream must begin with RUN_STARTED or RUN_ERROR",
    "nested-run": "RUN_STARTED while a run is still active",
    "event-after-run-finished": "after RUN_FINISHED only RUN_STARTED or a late RUN_ERROR may follow",
    "event-after-run-error": "after RUN_ERROR only RUN_STARTED may follow",
}


class Act(enum.Enum):
    OPEN = "open"
    CONTINUE = "continue"
    CLOSE = "close"


@dataclass(frozen=True, eq=False)  # identity hashing: kinds key the tracking tables
class Kind:
    """One kind of item a run opens and closes."""

    slug: str  # rule ids: "<slug>-already-open", "<slug>-not-open"
    label: str
    attributed: bool  # continuations must agree with the opener's subagent owner
    owner_in_key: bool  # steps: the same name may be open once per owner


TEXT = Kind("text-message", "text message", attributed=True, owner_in_key=False)
TOOL = Kind("tool-call", "tool call", attributed=True, owner_in_key=False)
SPAN = Kind("reasoning", "reasoning span", attributed=True, owner_in_key=False)
THOUGHT = Kind("reasoning-message", "reasoning message", attributed=True, owner_in_key=False)
STEP = Kind("step", "step", attributed=False, owner_in_key=True)
SUBAGENT = Kind("subagent", "subagent invocation", attributed=False, owner_in_key=False)
ACTIVITY = Kind("activity", "activity message", attributed=True, owner_in_key=False)
_ACTIVITY_EVENTS = frozenset({"ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA"})

# event type → (kind, act, attribute holding the item's id)
_ITEMS: dict[str, tuple[Kind, Act, str]] = {
    "TEXT_MESSAGE_START": (TEXT, Act.OPEN, "message_id"),
    "TEXT_MESSAGE_CONTENT": (TEXT, Act.CONTINUE, "message_id"),
    "TEXT_MESSAGE_END": (TEXT, Act.CLOSE, "message_id"),
    "TOOL_CALL_START": (TOOL, Act.OPEN, "tool_call_id"),
    "TOOL_CALL_ARGS": (TOOL, Act.CONTINUE, "tool_call_id"),
    "TOOL_CALL_END": (TOOL, Act.CLOSE, "tool_call_id"),
    "REASONING_START": (SPAN, Act.OPEN, "message_id"),
    "REASONING_END": (SPAN, Act.CLOSE, "message_id"),
    "REASONING_MESSAGE_START": (THOUGHT, Act.OPEN, "message_id"),
    "REASONING_MESSAGE_CONTENT": (THOUGHT, Act.CONTINUE, "message_id"),
    "REASONING_MESSAGE_END": (THOUGHT, Act.CLOSE, "message_id"),
    "STEP_STARTED": (STEP, Act.OPEN, "step_name"),
    "STEP_FINISHED": (STEP, Act.CLOSE, "step_name"),
    "SUBAGENT_STARTED": (SUBAGENT, Act.OPEN, "subagent_run_id"),
    "SUBAGENT_FINISHED": (SUBAGENT, Act.CLOSE, "subagent_run_id"),
    "SUBAGENT_ERROR": (SUBAGENT, Act.CLOSE, "subagent_run_id"),
}

_OPEN_ORDER = (TEXT, TOOL, SPAN, THOUGHT, STEP, SUBAGENT)
_NOT_OPEN: Any = object()
# module globals: an enum member looked up on its class costs per event
_OPEN, _CONTINUE, _CLOSE, _ACTIVE = Act.OPEN, Act.CONTINUE, Act.CLOSE, StreamState.ACTIVE

DEFAULT_MAX_OPEN_ITEMS = 100_000
"""Items (messages, calls, steps, ...) one run may hold open at once: a resource bound,
not a protocol rule, so a hostile stream cannot grow the tracking tables without end."""

DEFAULT_MAX_CLOSED_ITEMS = 100_000
"""Owners one run remembers of items no longer open (closed messages, tool calls and
reasoning, and those a snapshot restated or a tool call named), for the attribution of a
reopen: the same kind of bound, so a run's memory does not grow with what it said."""


_STATUS_BY_OUTCOME: dict[str, RunStatus] = {"interrupt": "interrupted", "cancelled": "cancelled"}


def _status_of(outcome: Any) -> RunStatus:
    """Absent, success or a stripped unknown outcome all read as completed."""
    return "completed" if outcome is None else _STATUS_BY_OUTCOME.get(outcome.type, "completed")


def _optional(value: Any) -> Any:
    return None if value is UNSET else value


class Lifecycle:
    """The state machine. ``receive`` an event, or raise the rule it breaks; ``close`` at the end."""

    def __init__(
        self,
        max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
        thread_id: str | None = None,
        *,
        max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
        keeps_history: bool = True,
    ) -> None:
        """``keeps_history=False`` keeps only the latest run in :attr:`runs` (a verdict
        needs no other); :attr:`runs_started` still counts them all."""
        self.state = StreamState.IDLE
        # The thread every run's boundary events name: the input's, else the first run's.
        self._thread_id = thread_id
        self.max_open_items = max_open_items
        self.max_closed_items = max_closed_items
        self._keeps_history = keeps_history
        self.runs: list[Run[Any, Any, Any, Any]] = []
        self.runs_started = 0  # RUN_STARTED events and runs a RUN_ERROR opened
        # kind → item key → the owner (subagentRunId, or None for the parent) that opened it
        self._open: dict[Kind, dict[Any, str | None]] = {kind: {} for kind in _OPEN_ORDER}
        self._open_count = 0  # the items of _open: checked against max_open_items per open
        # The same for attributed items no longer open (steps and subagents are not
        # attributed: nothing of them outlives their close).
        self._closed_owner: dict[Kind, dict[Any, str | None]] = {kind: {} for kind in _OPEN_ORDER}
        # activity message id → the owner its last replacing snapshot established, this run
        self._activity_owner: dict[str, str | None] = {}
        self._remembered = 0  # the items of _closed_owner and _activity_owner
        # event class → (wire type, its row of _ITEMS): computed once per class
        self._plans: dict[type, tuple[str, tuple[Kind, Act, str] | None]] = {}
        # The run's tool calls without a result yet, in the order they were made (dict: ordered set)
        self._unanswered: dict[str, None] = {}

    def receive(self, event: Any, index: int) -> str | None:
        """Check ``event`` against the rules and record its effect, or raise the rule it breaks.

        For an event that only continued an open item, return the attribute naming the item:
        the machine did not change, so until the next ``receive`` an event of the same class
        naming the same item with the same ``subagent_run_id`` passes unchanged too.
        """
        plan = self._plans.get(type(event))
        if plan is None:
            event_type = event.type
            plan = self._plans[type(event)] = (event_type, _ITEMS.get(event_type))
        event_type, item = plan
        if item is not None and item[1] is _CONTINUE and self.state is _ACTIVE:
            # Most of a stream is content for an open item: checked here, without more calls.
            kind = item[0]
            opener = self._open[kind].get(getattr(event, item[2]), _NOT_OPEN)
            if opener is _NOT_OPEN:
                self._track(event, event_type, item, index)  # raises the not-open rule
            owner = event.subagent_run_id
            if owner is not UNSET and owner != opener:
                self._check_owner(kind, getattr(event, item[2]), opener, owner, event_type, index)
            return item[2]
        row = _TRANSITIONS[self.state]
        target = row[event_type] if event_type in _RUN_EVENTS else row["*"]
        if isinstance(target, str):
            raise LifecycleViolation(target, f"{event_type}: {_RULE_TEXT[target]}", index=index)
        if event_type == "RUN_STARTED":
            self._start_run(event, index)
        elif event_type == "MESSAGES_SNAPSHOT":
            self._restate(event, index)
        elif event_type == "RUN_FINISHED":
            self._finish_run(event, index)
        elif event_type == "RUN_ERROR":
            self._fail_run(event)
        elif event_type in _ACTIVITY_EVENTS:
            self._track_activity(event, event_type, index)
        elif item is not None:
            self._track(event, event_type, item, index)
        elif event_type == "TOOL_CALL_RESULT":
            self._unanswered.pop(event.tool_call_id, None)
        self.state = target
        return None

    def close(self) -> None:
        """End of stream. A run still active is truncated: never a success."""
        if self.state is StreamState.ACTIVE:
            self.runs[-1].status = "truncated"
            self._settle_pending(self.runs[-1], None)
            raise ProtocolViolation("truncated", "the stream ended while a run was still active")
        if self.state is StreamState.IDLE:
            raise ProtocolViolation("truncated", "the stream ended before any event")

    # --- run boundaries -----------------------------------------------------------------

    def _start_run(self, event: Any, index: int) -> None:
        if self._thread_id is None:
            self._thread_id = event.thread_id
        elif event.thread_id != self._thread_id:
            raise LifecycleViolation(
                "thread-id-mismatch",
                f"RUN_STARTED names thread {event.thread_id!r}; the stream's runs are on "
                f"thread {self._thread_id!r}",
                index=index,
                path="/threadId",
            )
        self._clear()
        self._add_run(
            Run(
                thread_id=event.thread_id,
                run_id=event.run_id,
                parent_run_id=_optional(event.parent_run_id),
                protocol_version=_optional(event.protocol_version),
            )
        )

    def _add_run(self, run: Run[Any, Any, Any, Any]) -> None:
        self.runs_started += 1
        if not self._keeps_history:
            self.runs.clear()
        self.runs.append(run)

    def _finish_run(self, event: Any, index: int) -> None:
        run = self.runs[-1]
        for rule, attr, wire, started in (
            ("run-id-mismatch", "run_id", "runId", run.run_id),
            ("thread-id-mismatch", "thread_id", "threadId", run.thread_id),
        ):
            if getattr(event, attr) != started:
                raise LifecycleViolation(
                    rule,
                    f"RUN_FINISHED names {wire} {getattr(event, attr)!r}; its RUN_STARTED "
                    f"named {started!r}",
                    index=index,
                    path=f"/{wire}",
                )
        still_open = [
            f"{kind.label} {_describe(key)}" for kind in _OPEN_ORDER for key in self._open[kind]
        ]
        if still_open:
            raise LifecycleViolation(
                "open-at-run-finished",
                f"RUN_FINISHED while still open: {', '.join(still_open)}",
                index=index,
            )
        outcome = _optional(event.outcome)
        status = _status_of(outcome)
        if status == "interrupted":
            _check_interrupt_ids(outcome.interrupts, index)
            run.interrupts = list(outcome.interrupts)
        run.outcome = outcome
        run.status = status
        run.result = _optional(event.result)
        run.usage = list(_optional(event.usage) or [])
        self._settle_pending(run, run.outcome)

    def _fail_run(self, event: Any) -> None:
        if self.state is StreamState.IDLE:  # a stream may open with RUN_ERROR: a run of its own
            self._add_run(Run(thread_id=None, run_id=None))
        run = self.runs[-1]
        run.status = "failed"
        run.error = event
        run.usage = list(_optional(event.usage) or run.usage)
        if self.state is not StreamState.CLOSED:  # a late RUN_ERROR keeps what RUN_FINISHED said
            self._settle_pending(run, None)
        self._clear()

    def _settle_pending(self, run: Run[Any, Any, Any, Any], outcome: Any) -> None:
        """The ended run's unanswered tool calls: the producer's list when it sent a non-empty
        one; otherwise derived, as absence must not read as "nothing pending" (events/tool-calls)."""
        stated = getattr(outcome, "pending_tool_call_ids", UNSET) if outcome is not None else UNSET
        if stated is not UNSET and stated:
            run.pending_tool_calls, run.pending_source = list(stated), "producer"
        else:
            run.pending_tool_calls, run.pending_source = list(self._unanswered), "stream"

    def _clear(self) -> None:
        for kind in _OPEN_ORDER:
            self._open[kind].clear()
            self._closed_owner[kind].clear()
        self._activity_owner.clear()
        self._unanswered.clear()
        self._open_count = self._remembered = 0

    def _remember(
        self, owners: dict[Any, str | None], key: Any, owner: str | None, index: int
    ) -> None:
        """``owners[key] = owner`` for an item not open, within ``max_closed_items``."""
        if key not in owners:
            if self._remembered >= self.max_closed_items:
                raise LifecycleViolation(
                    "too-many-closed-items",
                    f"more than {self.max_closed_items} closed items to remember in one run",
                    index=index,
                )
            self._remembered += 1
        owners[key] = owner

    # --- items inside a run -------------------------------------------------------------

    def _track(self, event: Any, event_type: str, item: tuple[Kind, Act, str], index: int) -> None:
        kind, act, id_attr = item
        item_id = getattr(event, id_attr)
        owner = None if kind is SUBAGENT else _optional(event.subagent_run_id)
        key = (owner, item_id) if kind.owner_in_key else item_id
        open_items = self._open[kind]
        if act is _OPEN:
            if key in open_items:
                raise LifecycleViolation(
                    f"{kind.slug}-already-open",
                    f"{event_type}: {kind.label} {_describe(key)} is already open",
                    index=index,
                )
            if self._open_count >= self.max_open_items:
                raise LifecycleViolation(
                    "too-many-open-items",
                    f"{event_type}: more than {self.max_open_items} items open at once",
                    index=index,
                )
            if kind is TOOL:
                owner = self._tool_call_owner(event, owner, index)
            if kind.attributed and key in self._closed_owner[kind]:
                established = self._closed_owner[kind][key]
                self._check_owner(kind, key, established, owner, event_type, index)
                owner = established  # an untagged reopen continues whatever the opener owned
            open_items[key] = owner
            self._open_count += 1
            if kind is TOOL:
                self._unanswered[item_id] = None
            return
        if key not in open_items:
            raise LifecycleViolation(
                f"{kind.slug}-not-open",
                f"{event_type}: no open {kind.label} {_describe(key)}",
                index=index,
            )
        if kind.attributed and owner is not None:
            self._check_owner(kind, key, open_items[key], owner, event_type, index)
        if act is _CLOSE:
            if kind.attributed:  # remembered first: a refusal leaves the item open
                self._remember(self._closed_owner[kind], key, open_items[key], index)
            del open_items[key]
            self._open_count -= 1

    def _tool_call_owner(self, event: Any, tag: str | None, index: int) -> str | None:
        """A tool call belongs to the message that carries it (events/subagents, tool-calls):
        an untagged call takes that message's owner, a tagged one must agree with it, and a
        message this run has not seen yet is minted under the call's owner."""
        parent_id = _optional(event.parent_message_id)
        if parent_id is None:
            return tag  # the reducer gives the call a message of its own
        carrier = self._open[TEXT].get(
            parent_id, self._closed_owner[TEXT].get(parent_id, _NOT_OPEN)
        )
        if carrier is _NOT_OPEN:
            self._remember(self._closed_owner[TEXT], parent_id, tag, index)
            return tag
        if tag is None:
            return carrier  # type: ignore[no-any-return]
        if tag != carrier:
            raise LifecycleViolation(
                "attribution-mismatch",
                f"TOOL_CALL_START: subagentRunId {tag!r} does not match the owner {carrier!r} "
                f"of message {parent_id!r}, which carries the call",
                index=index,
                path="/subagentRunId",
            )
        return tag

    def _restate(self, event: Any, index: int) -> None:
        """A MESSAGES_SNAPSHOT establishes the owner of each message it restates, and of the
        tool calls they carry (events/state), open or not: a continuation then agrees with
        the snapshot, not the opener. Reasoning spans are no messages, and keep theirs. A tool
        message in it answers its call."""
        for message in event.messages:
            owner = _optional(getattr(message, "subagent_run_id", UNSET))
            role = message.role
            if role == "tool":  # a tool message: the call it names is answered
                self._unanswered.pop(message.tool_call_id, None)
            if role == "activity":
                self._remember(self._activity_owner, message.id, owner, index)
                continue
            self._establish(THOUGHT if role == "reasoning" else TEXT, message.id, owner, index)
            for call in _optional(getattr(message, "tool_calls", UNSET)) or ():
                self._establish(TOOL, call.id, owner, index)

    def _establish(self, kind: Kind, key: Any, owner: str | None, index: int) -> None:
        """``owner`` owns the item from now on: the open one, else the next to reopen it."""
        if key in self._open[kind]:
            self._open[kind][key] = owner
        else:
            self._remember(self._closed_owner[kind], key, owner, index)

    def _track_activity(self, event: Any, event_type: str, index: int) -> None:
        """A delta continues the activity its snapshot opened: a tag must agree with that owner."""
        owner = _optional(event.subagent_run_id)
        if event_type == "ACTIVITY_DELTA":
            established = self._activity_owner.get(event.message_id, owner)
            self._check_owner(ACTIVITY, event.message_id, established, owner, event_type, index)
        elif event.replace or event.message_id not in self._activity_owner:
            # replacing re-mints attribution
            self._remember(self._activity_owner, event.message_id, owner, index)

    @staticmethod
    def _check_owner(
        kind: Kind, key: Any, opener: str | None, owner: str | None, event_type: str, index: int
    ) -> None:
        if owner is not None and owner != opener:
            raise LifecycleViolation(
                "attribution-mismatch",
                f"{event_type}: subagentRunId {owner!r} does not match the owner "
                f"{opener!r} that opened {kind.label} {_describe(key)}",
                index=index,
                path="/subagentRunId",
            )


def _check_interrupt_ids(interrupts: Any, index: int) -> None:
    """A resume answers an interrupt by id: a duplicate would let one answer cover two."""
    seen: set[str] = set()
    for position, interrupt in enumerate(interrupts):
        if interrupt.id in seen:
            raise LifecycleViolation(
                "duplicate-interrupt-id",
                f"RUN_FINISHED: interrupt id {interrupt.id!r} appears twice in one outcome",
                index=index,
                path=f"/outcome/interrupts/{position}/id",
            )
        seen.add(interrupt.id)


def _describe(key: Any) -> str:
    if isinstance(key, tuple):
        owner, name = key
        return repr(name) if owner is None else f"{name!r} of subagent {owner!r}"
    return repr(key)
