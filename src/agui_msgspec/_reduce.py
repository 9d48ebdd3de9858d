"""The reducer: what an application shows — messages, state, activity — from verified events.

Spec pages: events/text-messages, tool-calls, reasoning, state, activity, and
basic/metadata. It runs after verification, so every event it sees is in a
legal place; what can still go wrong here (a patch that does not apply, a
delta for a missing activity) is tolerated with a warning, as the spec says.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import msgspec
from msgspec import UNSET

from agui_msgspec._patch import PatchConflict, apply_patch

# Roles the application keeps for itself: a snapshot that carries none of them leaves them in place.
_CLIENT_ONLY_ROLES = ("activity", "reasoning")
_UNSEEN: Any = object()
DeltaSink = Callable[[str], None]
"""Where the text deltas of one message or the argument deltas of one tool call go."""


def _merge_metadata(target: Any, event: Any) -> None:
    """Per key, last write wins, not recursive (spec: basic/metadata)."""
    incoming = event.metadata
    if incoming is UNSET:
        return
    current = target.metadata
    target.metadata = {**incoming} if current is UNSET else {**current, **incoming}


def _own_copy(message: Any) -> Any:
    """A deep copy, so streaming into a message never changes a delivered event or the input."""
    return msgspec.json.decode(msgspec.json.encode(message), type=type(message))


def _joined(parts: list[str]) -> str:
    if len(parts) > 1:
        parts[:] = ["".join(parts)]
    return parts[0]


def _arguments_of(call: Any) -> str:
    return str(call.function.arguments)


def _text_of(message: Any) -> str:
    """The text a reopened message continues from (none yet for a tool-calls-only message)."""
    content = getattr(message, "content", UNSET)
    return content if isinstance(content, str) else ""


class Reducer:
    """Holds messages and state; ``apply`` one verified event at a time."""

    def __init__(self, bindings: ModuleType, warn: Callable[[str], None], seed: Any = None) -> None:
        """``seed`` is the ``RunAgentInput`` Struct the run started from, already read."""
        self._b = bindings
        self._warn = warn
        # role → message Struct, for the roles a text message may stream as
        streamed = bindings.CLOSED_STRING_SETS["TextMessageRole"]
        self._text_roles: dict[str, Any] = {
            role: struct
            for role, struct in bindings.UNIONS["Message"][1].items()
            if role in streamed
        }
        self.state: Any = {}
        self._messages: list[Any] = []
        self._by_id: dict[str, Any] = {}
        self._tool_calls: dict[str, Any] = {}
        # id → the deltas streamed so far into a message's content or a tool call's
        # arguments: joined when read, not once per delta
        self._text: dict[str, list[str]] = {}
        self._thoughts: dict[str, list[str]] = {}  # reasoning messages: their own lifecycle
        self._args: dict[str, list[str]] = {}
        if seed is not None:
            self._seed(seed)
        self._by_class: dict[type, Any] = {}
        self._handlers: dict[str, Callable[[Any, int], DeltaSink | None]] = {
            "TEXT_MESSAGE_START": self._text_start,
            "TEXT_MESSAGE_CONTENT": self._text_content,
            "TEXT_MESSAGE_END": self._text_end,
            "TOOL_CALL_START": self._tool_start,
            "TOOL_CALL_ARGS": self._tool_args,
            "TOOL_CALL_END": self._tool_end,
            "TOOL_CALL_RESULT": self._tool_result,
            "REASONING_MESSAGE_START": self._thought_start,
            "REASONING_MESSAGE_CONTENT": self._thought_content,
            "REASONING_MESSAGE_END": self._thought_end,
            "REASONING_ENCRYPTED_VALUE": self._encrypted_value,
            "RUN_STARTED": self._run_started,
            "RUN_ERROR": self._end_streams,
            "STATE_SNAPSHOT": self._state_snapshot,
            "STATE_DELTA": self._state_delta,
            "MESSAGES_SNAPSHOT": self._messages_snapshot,
            "ACTIVITY_SNAPSHOT": self._activity_snapshot,
            "ACTIVITY_DELTA": self._activity_delta,
        }

    @property
    def messages(self) -> list[Any]:
        self._flush_all()
        return list(self._messages)

    def apply(self, event: Any, index: int) -> DeltaSink | None:
        """Apply one verified event.

        For a delta that only grew a message's text or a call's arguments, return that
        buffer's ``append``: until the next ``apply``, the delta of an event of the same
        class naming the same item, without metadata, has no other effect.
        """
        handler = self._by_class.get(type(event), _UNSEEN)
        if handler is _UNSEEN:
            handler = self._by_class[type(event)] = self._handlers.get(event.type)
        return None if handler is None else handler(event, index)

    # --- seeding -------------------------------------------------------------------------

    def _seed(self, seed: Any) -> None:
        if seed.state is not UNSET:
            self.state = seed.state
        for message in seed.messages:
            self._add(message)

    # --- messages ------------------------------------------------------------------------

    def _add(self, message: Any) -> None:
        """Keep ``message``; the reducer writes into it, so it must be the reducer's own."""
        self._messages.append(message)
        self._by_id[message.id] = message
        for call in getattr(message, "tool_calls", None) or ():
            self._tool_calls[call.id] = call

    def _replace(self, old: Any, new: Any) -> None:
        position = next(i for i, message in enumerate(self._messages) if message is old)
        self._messages[position] = new
        self._by_id[new.id] = new

    def _end_streams(self, event: Any, index: int) -> None:
        """A run boundary ends whatever was streaming (RUN_ERROR abandons open items)."""
        self._flush_all()
        self._text.clear()
        self._thoughts.clear()
        self._args.clear()

    def _run_started(self, event: Any, index: int) -> None:
        """A new run: what streamed ends, and the messages of an echoed input that this
        consumer does not hold join the conversation, in order (basic/run-input: the echo
        lets "a consumer that did not make the request" see what the agent was asked)."""
        self._end_streams(event, index)
        echoed = event.input
        if echoed is UNSET:
            return
        for message in echoed.messages:
            if message.id not in self._by_id:
                self._add(_own_copy(message))

    def _flush_all(self) -> None:
        for streams in (self._text, self._thoughts):
            for message_id, parts in streams.items():
                self._by_id[message_id].content = _joined(parts)
        for call_id, parts in self._args.items():
            self._tool_calls[call_id].function.arguments = _joined(parts)

    def _text_start(self, event: Any, index: int) -> None:
        existing = self._by_id.get(event.message_id)
        if existing is None:
            message_type = self._text_roles[event.role]
            existing = message_type(id=event.message_id, content="", name=event.name)
            existing.subagent_run_id = event.subagent_run_id
            self._add(existing)
        elif not self._streamable(existing, self._text_roles, event, index):
            return
        self._text[event.message_id] = [_text_of(existing)]
        _merge_metadata(existing, event)

    def _streamable(self, existing: Any, roles: Any, event: Any, index: int) -> bool:
        """Whether text may stream into ``existing``: a message of a streamed role whose
        content is text. Another message under the same id keeps its content, with a warning."""
        if existing.role in roles and not isinstance(existing.content, list):
            return True
        self._warn(
            f"event {index}: {event.type} names message {existing.id!r}, a "
            f"{existing.role} message that cannot take streamed text; its text is not kept"
        )
        return False

    def _text_content(self, event: Any, index: int) -> DeltaSink | None:
        return self._append_text(self._text, event)

    def _text_end(self, event: Any, index: int) -> None:
        self._end_text(self._text, event)

    def _thought_content(self, event: Any, index: int) -> DeltaSink | None:
        return self._append_text(self._thoughts, event)

    def _thought_end(self, event: Any, index: int) -> None:
        self._end_text(self._thoughts, event)

    def _append_text(self, streams: dict[str, list[str]], event: Any) -> DeltaSink | None:
        parts = streams.get(event.message_id)
        if parts is None:  # the message cannot take text, or a snapshot removed it
            return None
        parts.append(event.delta)
        if event.metadata is not UNSET:
            _merge_metadata(self._by_id[event.message_id], event)
        return parts.append

    def _end_text(self, streams: dict[str, list[str]], event: Any) -> None:
        parts = streams.pop(event.message_id, None)
        if parts is not None:
            message = self._by_id[event.message_id]
            message.content = _joined(parts)
            _merge_metadata(message, event)

    def _thought_start(self, event: Any, index: int) -> None:
        existing = self._by_id.get(event.message_id)
        if existing is None:
            existing = self._b.ReasoningMessage(id=event.message_id, content="")
            existing.subagent_run_id = event.subagent_run_id
            self._add(existing)
        elif not self._streamable(existing, ("reasoning",), event, index):
            return
        self._thoughts[event.message_id] = [_text_of(existing)]
        _merge_metadata(existing, event)

    def _tool_start(self, event: Any, index: int) -> None:
        call = self._tool_calls.get(event.tool_call_id)
        if call is None:
            call = self._new_tool_call(event)
        self._args[event.tool_call_id] = [call.function.arguments]
        _merge_metadata(call, event)

    def _new_tool_call(self, event: Any) -> Any:
        # Without parentMessageId nothing names a carrier: the call gets an assistant message
        # of its own, under its id, rather than joining a message another turn or owner made.
        parent_id = (
            event.tool_call_id if event.parent_message_id is UNSET else event.parent_message_id
        )
        parent = self._by_id.get(parent_id)
        if parent is not None and parent.role != "assistant":
            self._warn(
                f"TOOL_CALL_START /parentMessageId: {parent_id!r} is a {parent.role} message; "
                f"the call is kept on an assistant message of its own, {event.tool_call_id!r}"
            )
            parent = self._by_id.get(event.tool_call_id)
            parent_id = event.tool_call_id
        if parent is None or parent.role != "assistant":
            parent = self._b.AssistantMessage(id=parent_id)
            parent.subagent_run_id = event.subagent_run_id
            self._add(parent)
        function = self._b.FunctionCall(name=event.tool_call_name, arguments="")
        call = self._b.ToolCall(id=event.tool_call_id, type="function", function=function)
        if parent.tool_calls is UNSET:
            parent.tool_calls = [call]
        else:
            parent.tool_calls.append(call)
        self._tool_calls[call.id] = call
        return call

    def _tool_args(self, event: Any, index: int) -> DeltaSink | None:
        parts = self._args.get(event.tool_call_id)
        if parts is None:
            return None
        parts.append(event.delta)
        _merge_metadata(self._tool_calls[event.tool_call_id], event)
        return parts.append

    def _tool_end(self, event: Any, index: int) -> None:
        parts = self._args.pop(event.tool_call_id, None)
        if parts is not None:
            call = self._tool_calls[event.tool_call_id]
            call.function.arguments = _joined(parts)
            _merge_metadata(call, event)

    def _tool_result(self, event: Any, index: int) -> None:
        message = self._b.ToolMessage(
            id=event.message_id,
            content=event.content,
            tool_call_id=event.tool_call_id,
            subagent_run_id=event.subagent_run_id,
            metadata=event.metadata,
        )
        existing = self._by_id.get(event.message_id)
        if existing is None:
            self._add(message)
        else:
            self._replace(existing, message)

    def _encrypted_value(self, event: Any, index: int) -> None:
        if event.subtype == "tool-call":
            target = self._tool_calls.get(event.entity_id)
        else:
            target = self._by_id.get(event.entity_id)
            if target is not None and target.role == "activity":
                target = None
        if target is None:
            self._warn(
                f"event {index}: REASONING_ENCRYPTED_VALUE names no known "
                f"{event.subtype} {event.entity_id!r}; ignored"
            )
            return
        target.encrypted_value = event.encrypted_value
        if hasattr(target, "encrypted_value_type"):
            # the type describes this value: it is replaced alongside, or cleared with it
            target.encrypted_value_type = getattr(event, "encrypted_value_type", UNSET)

    def _messages_snapshot(self, event: Any, index: int) -> None:
        self._flush_all()
        incoming = {message.id: _own_copy(message) for message in event.messages}
        carried_roles = {message.role for message in event.messages}
        kept = []
        for message in self._messages:
            if message.id in incoming:
                kept.append(incoming.pop(message.id))
            elif message.role in _CLIENT_ONLY_ROLES and message.role not in carried_roles:
                kept.append(message)
        self._messages = []
        self._by_id = {}
        self._tool_calls = {}
        for message in [*kept, *incoming.values()]:
            self._add(message)
        # What is still streaming continues from the snapshot's version of it.
        self._restart(self._text, self._by_id, _text_of, "message", index)
        self._restart(self._thoughts, self._by_id, _text_of, "reasoning message", index)
        self._restart(self._args, self._tool_calls, _arguments_of, "tool call", index)

    def _restart(
        self,
        streams: dict[str, list[str]],
        targets: dict[str, Any],
        current: Callable[[Any], str],
        label: str,
        index: int,
    ) -> None:
        for item_id in list(streams):
            target = targets.get(item_id)
            if target is None:
                del streams[item_id]
                self._warn(
                    f"event {index}: MESSAGES_SNAPSHOT removed {label} {item_id!r} while it "
                    "was streaming; what still streams into it is ignored"
                )
            else:
                streams[item_id] = [current(target)]

    # --- state ---------------------------------------------------------------------------

    def _state_snapshot(self, event: Any, index: int) -> None:
        self.state = event.snapshot

    def _state_delta(self, event: Any, index: int) -> None:
        try:
            self.state = apply_patch(self.state, event.delta)
        except PatchConflict as conflict:
            self._warn(f"event {index} /delta: STATE_DELTA does not apply, state kept: {conflict}")

    # --- activity ------------------------------------------------------------------------

    def _activity_snapshot(self, event: Any, index: int) -> None:
        existing = self._by_id.get(event.message_id)
        if existing is not None and not event.replace:
            return  # replace: false leaves an existing message, of any role, as it stands
        message = self._b.ActivityMessage(
            id=event.message_id,
            activity_type=event.activity_type,
            content=event.content,
            subagent_run_id=event.subagent_run_id,
        )
        if existing is None:
            message.metadata = event.metadata
            self._add(message)
            return
        message.metadata = existing.metadata  # metadata survives replacement
        _merge_metadata(message, event)
        self._replace(existing, message)

    def _activity_delta(self, event: Any, index: int) -> None:
        target = self._by_id.get(event.message_id)
        if target is None or target.role != "activity":
            self._warn(
                f"event {index}: ACTIVITY_DELTA names no activity message {event.message_id!r}; skipped"
            )
            return
        try:
            content = apply_patch(target.content, event.patch)
        except PatchConflict as conflict:
            self._warn(
                f"event {index} /patch: ACTIVITY_DELTA does not apply, content kept: {conflict}"
            )
            return
        if not isinstance(content, dict):
            self._warn(
                f"event {index} /patch: ACTIVITY_DELTA would make content a non-object; skipped"
            )
            return
        target.content = content
        target.activity_type = event.activity_type  # the delta's type replaces the message's
        _merge_metadata(target, event)
