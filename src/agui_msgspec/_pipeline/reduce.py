"""The reducer: what an application shows — messages, state, activity — from verified events.

Spec pages: events/text-messages, tool-calls, reasoning, state, activity, and
basic/metadata. It runs after verification, so every event it sees is in a
legal place; what can still go wrong here (a patch that does not apply, a
delta for a missing activity) is tolerated with a warning, as the spec says.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
from msgspec import UNSET

from agui_msgspec._errors import MalformedEvent, ProtocolViolation
from agui_msgspec._pipeline.containers import COMPACT_PARTS, MergedMetadata, MessageList, TextParts
from agui_msgspec._pipeline.patch import (
    PatchConflict,
    PatchRefused,
    StateBounds,
    bound_passed,
    copy_json,
    measure,
    patch_in_place,
)
from agui_msgspec._versions import Bindings

# Roles the application keeps for itself: a snapshot that carries none of them leaves them in place.
_CLIENT_ONLY_ROLES = ("activity", "reasoning")
_UNSEEN: Any = object()
DEFAULT_MAX_STATE_SIZE = 16 * 1024 * 1024
"""Bound on the state, and on each activity message's content, in :func:`measure` units
(about the encoded size, at least 8 per value): past the 10 MiB an event may carry."""
DEFAULT_MAX_STATE_DEPTH = 512
"""Levels of nesting the state and activity content may have: half the interpreter's
default recursion limit, so encoding the state into the next run's input has room."""
DEFAULT_STATE_BOUNDS = StateBounds(DEFAULT_MAX_STATE_SIZE, DEFAULT_MAX_STATE_DEPTH)
DeltaSink = Callable[[str], None]
"""Where the text deltas of one message or the argument deltas of one tool call go."""


def _merge_metadata(target: Any, event: Any) -> None:
    """Per key, last write wins, not recursive (spec: basic/metadata)."""
    incoming = event.metadata
    if incoming is UNSET:
        return
    current = target.metadata
    if type(current) is MergedMetadata:
        current.update(incoming)
    else:
        target.metadata = (
            MergedMetadata(incoming) if current is UNSET else MergedMetadata(current, **incoming)
        )


def _own_copy(message: Any) -> Any:
    """A deep copy, so streaming into a message never changes a delivered event or the input."""
    return msgspec.json.decode(msgspec.json.encode(message), type=type(message))


def _store_content(message: Any, text: str) -> None:
    message.content = text


def _store_arguments(call: Any, text: str) -> None:
    call.function.arguments = text


def _arguments_of(call: Any) -> str:
    return str(call.function.arguments)


def _text_of(message: Any) -> str:
    """The text a reopened message continues from (none yet for a tool-calls-only message)."""
    content = getattr(message, "content", UNSET)
    return content if isinstance(content, str) else ""


class Reducer:
    """Holds messages and state; ``apply`` one verified event at a time."""

    def __init__(
        self,
        bindings: Bindings,
        warn: Callable[[str], None],
        seed: Any = None,
        bounds: StateBounds = DEFAULT_STATE_BOUNDS,
    ) -> None:
        """``seed`` is the ``RunAgentInput`` Struct the run started from, already read."""
        self._b = bindings
        self._warn = warn
        self._bounds = bounds
        # role → message Struct, for the roles a text message may stream as
        streamed = bindings.CLOSED_STRING_SETS["TextMessageRole"]
        self._text_roles: dict[str, Any] = {
            role: struct
            for role, struct in bindings.UNIONS["Message"][1].items()
            if role in streamed
        }
        self.state: Any = {}
        self._state_size = measure(self.state, bounds)[0]
        # Deltas write the state in place: first into a copy of what a snapshot (an event
        # the application holds) or the input brought.
        self._state_owned = True
        # activity message id → (the content object deltas write in place, its size)
        self._activity: dict[str, tuple[Any, int]] = {}
        # The messages in order, by a serial number of their own: a replacement keeps its
        # place and a removal costs O(1), so no event walks the whole list.
        self._messages: dict[int, Any] = {}
        # What ``messages`` returns: appended to as messages are added; rebuilt at the next
        # read (one C-level copy) after a replacement or a removal.
        self._view = MessageList()
        self._view_stale = False
        self._serial = 0
        # id → the serial of the latest message under it (the message is ``_messages[serial]``:
        # no second map by id), and the serials of earlier ones, in order, for the rare id
        # several messages share: an int per message, no list.
        self._latest: dict[str, int] = {}
        self._earlier: dict[str, list[int]] = {}
        # role → its messages' serials: a set, smaller than a dict, as a snapshot sorts
        # what it visits anyway
        self._by_role: defaultdict[str, set[int]] = defaultdict(set)
        self._tool_calls: dict[str, Any] = {}
        # id → the deltas streamed so far into a message's content or a tool call's
        # arguments: joined when read, not once per delta
        self._text: dict[str, TextParts] = {}
        self._thoughts: dict[str, TextParts] = {}  # reasoning messages: their own lifecycle
        self._args: dict[str, TextParts] = {}
        # Closed items whose text is still in parts (reopened ones): joined when read, so
        # reopening a long message and closing it again costs what was added, not its length.
        self._settled_content: dict[str, tuple[Any, TextParts]] = {}
        self._settled_args: dict[str, tuple[Any, TextParts]] = {}
        # The parts whose append the last delta was given back as: the consumer streams
        # repeats of that delta straight into it, and asks for it compacted now and then.
        self._growing = TextParts([])
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
    def messages(self) -> Sequence[Any]:
        self._flush_all()
        if self._view_stale:
            list.__setitem__(self._view, slice(None), self._messages.values())
            self._view_stale = False
        return self._view

    def compact(self) -> None:
        """Join the deltas streamed straight into the growing text (see :meth:`apply`)."""
        self._growing.compact()

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
            self._set_state(seed.state, None, "/state", MalformedEvent)
        for message in seed.messages:
            self._add(message)

    # --- messages ------------------------------------------------------------------------

    def _add(self, message: Any) -> None:
        """Keep ``message``; the reducer writes into it, so it must be the reducer's own."""
        serial = self._serial = self._serial + 1
        self._messages[serial] = message
        if not self._view_stale:
            list.append(self._view, message)
        latest = self._latest.setdefault(message.id, serial)
        if latest != serial:  # the id has a message already: this one is now its latest
            self._earlier.setdefault(message.id, []).append(latest)
            self._latest[message.id] = serial
        self._by_role[message.role].add(serial)
        self._index_calls(message)

    def _index_calls(self, message: Any) -> None:
        for call in getattr(message, "tool_calls", None) or ():
            self._tool_calls[call.id] = call

    def _unindex_calls(self, message: Any) -> None:
        for call in getattr(message, "tool_calls", None) or ():
            call_id = call.id
            if self._tool_calls.get(call_id) is call:
                del self._tool_calls[call_id]

    def _replace(self, old: Any, new: Any) -> None:
        """Put ``new`` in the place of ``old``, the latest message under its id. The tool
        calls of ``old`` stay addressable: one may still be streaming its arguments."""
        self._replace_at(self._latest[old.id], new, keep_calls=True)

    def _replace_at(self, serial: int, new: Any, *, keep_calls: bool = False) -> None:
        """Put ``new`` in the place of the message ``serial``, which has the same id."""
        old = self._messages[serial]
        self._messages[serial] = new
        self._view_stale = True
        if old.role != new.role:
            self._by_role[old.role].remove(serial)
            self._by_role[new.role].add(serial)
        if not keep_calls:
            self._unindex_calls(old)
        self._index_calls(new)

    def _remove_at(self, serial: int) -> None:
        message = self._messages.pop(serial)
        self._view_stale = True
        self._by_role[message.role].remove(serial)
        self._forget_id(message.id, serial)
        self._unindex_calls(message)

    def _forget_id(self, message_id: str, serial: int) -> None:
        earlier = self._earlier.get(message_id)
        if earlier is None:  # the id's only message
            del self._latest[message_id]
            return
        if serial == self._latest[message_id]:
            self._latest[message_id] = earlier.pop()
        else:
            earlier.remove(serial)
        if not earlier:
            del self._earlier[message_id]

    def _message(self, message_id: str) -> Any:
        """The latest message under ``message_id``, or None."""
        serial = self._latest.get(message_id)
        return None if serial is None else self._messages[serial]

    def _serials_under(self, message_id: str) -> list[int]:
        """The serials of the messages under ``message_id``, in order."""
        latest = self._latest.get(message_id)
        return [] if latest is None else [*self._earlier.get(message_id, ()), latest]

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
            if message.id not in self._latest:
                self._add(_own_copy(message))

    def _flush_all(self) -> None:
        for streams in (self._text, self._thoughts):
            for message_id, parts in streams.items():
                self._message(message_id).content = parts.text()
        for call_id, parts in self._args.items():
            self._tool_calls[call_id].function.arguments = parts.text()
        self._flush_settled()

    def _flush_settled(self) -> None:
        for message, parts in self._settled_content.values():
            _store_content(message, parts.text())
        for call, parts in self._settled_args.values():
            _store_arguments(call, parts.text())
        self._settled_content.clear()
        self._settled_args.clear()

    @staticmethod
    def _reopened(
        settled: dict[str, tuple[Any, TextParts]],
        item_id: str,
        target: Any,
        current: Callable[[Any], str],
        store: Callable[[Any, str], None],
    ) -> TextParts:
        """The parts an item (re)opens with: those it closed with, if still unjoined."""
        held = settled.pop(item_id, None)
        if held is not None and held[0] is target:
            held[1].reopen()
            return held[1]
        if held is not None:  # the item was replaced since: its text is joined into it
            store(held[0], held[1].text())
        text = current(target)
        return TextParts(
            [text] if text else []
        )  # no empty part: a new item's one delta is its text

    def _text_start(self, event: Any, index: int) -> None:
        existing = self._message(event.message_id)
        if existing is None:
            message_type = self._text_roles[event.role]
            existing = message_type(id=event.message_id, content="", name=event.name)
            existing.subagent_run_id = event.subagent_run_id
            self._add(existing)
        elif not self._streamable(existing, self._text_roles, event, index):
            return
        self._text[event.message_id] = self._reopened(
            self._settled_content, event.message_id, existing, _text_of, _store_content
        )
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

    def _append_text(self, streams: dict[str, TextParts], event: Any) -> DeltaSink | None:
        parts = streams.get(event.message_id)
        if parts is None:  # the message cannot take text, or a snapshot removed it
            return None
        parts.append(event.delta)
        if len(parts) - parts.joined >= COMPACT_PARTS:
            parts.compact()
        if event.metadata is not UNSET:
            _merge_metadata(self._message(event.message_id), event)
        self._growing = parts
        return parts.append

    def _end_text(self, streams: dict[str, TextParts], event: Any) -> None:
        parts = streams.pop(event.message_id, None)
        if parts is not None:
            message = self._message(event.message_id)
            if parts.close():
                message.content = parts[0]
            else:
                self._settled_content[event.message_id] = (message, parts)
            _merge_metadata(message, event)

    def _thought_start(self, event: Any, index: int) -> None:
        existing = self._message(event.message_id)
        if existing is None:
            existing = self._b.ReasoningMessage(id=event.message_id, content="")
            existing.subagent_run_id = event.subagent_run_id
            self._add(existing)
        elif not self._streamable(existing, ("reasoning",), event, index):
            return
        self._thoughts[event.message_id] = self._reopened(
            self._settled_content, event.message_id, existing, _text_of, _store_content
        )
        _merge_metadata(existing, event)

    def _tool_start(self, event: Any, index: int) -> None:
        call = self._tool_calls.get(event.tool_call_id)
        if call is None:
            call = self._new_tool_call(event)
        self._args[event.tool_call_id] = self._reopened(
            self._settled_args, event.tool_call_id, call, _arguments_of, _store_arguments
        )
        _merge_metadata(call, event)

    def _new_tool_call(self, event: Any) -> Any:
        # Without parentMessageId nothing names a carrier: the call gets an assistant message
        # of its own, under its id, rather than joining a message another turn or owner made.
        parent_id = (
            event.tool_call_id if event.parent_message_id is UNSET else event.parent_message_id
        )
        parent = self._message(parent_id)
        if parent is not None and parent.role != "assistant":
            self._warn(
                f"TOOL_CALL_START /parentMessageId: {parent_id!r} is a {parent.role} message; "
                f"the call is kept on an assistant message of its own, {event.tool_call_id!r}"
            )
            parent = self._message(event.tool_call_id)
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
        if len(parts) - parts.joined >= COMPACT_PARTS:
            parts.compact()
        _merge_metadata(self._tool_calls[event.tool_call_id], event)
        self._growing = parts
        return parts.append

    def _tool_end(self, event: Any, index: int) -> None:
        parts = self._args.pop(event.tool_call_id, None)
        if parts is not None:
            call = self._tool_calls[event.tool_call_id]
            if parts.close():
                call.function.arguments = parts[0]
            else:
                self._settled_args[event.tool_call_id] = (call, parts)
            _merge_metadata(call, event)

    def _tool_result(self, event: Any, index: int) -> None:
        message = self._b.ToolMessage(
            id=event.message_id,
            content=event.content,
            tool_call_id=event.tool_call_id,
            subagent_run_id=event.subagent_run_id,
            metadata=event.metadata,
        )
        existing = self._message(event.message_id)
        if existing is None:
            self._add(message)
        else:
            self._replace(existing, message)

    def _encrypted_value(self, event: Any, index: int) -> None:
        if event.subtype == "tool-call":
            target = self._tool_calls.get(event.entity_id)
        else:
            target = self._message(event.entity_id)
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
        # What streams into a message the snapshot replaces or removes is dropped with it, and
        # one it leaves keeps its parts: only closed items, whose parts go by id, are written.
        self._flush_settled()
        incoming = {message.id: _own_copy(message) for message in event.messages}
        carried_roles = {message.role for message in event.messages}
        # Only the messages the snapshot replaces or removes are visited: those under its
        # ids, and those of the roles it rules (every role but a client-only one it does
        # not carry). Each is removed once, so a snapshot costs its own size, amortised.
        visited = {serial for item_id in incoming for serial in self._serials_under(item_id)}
        for role, serials in self._by_role.items():
            if role not in _CLIENT_ONLY_ROLES or role in carried_roles:
                visited.update(serials)
        touched: list[str] = []  # the ids of the messages replaced or removed
        for serial in sorted(visited):
            message = self._messages[serial]
            if message.id in incoming:
                touched.append(message.id)
                self._replace_at(serial, incoming.pop(message.id))
            elif message.role not in _CLIENT_ONLY_ROLES or message.role in carried_roles:
                touched.append(message.id)
                self._remove_at(serial)
        for message in incoming.values():
            self._add(message)
        # What is still streaming continues from the snapshot's version of it. An open text
        # message or tool call belongs to a role every snapshot visits, so restarting all of
        # them costs what was visited; an open reasoning message, whose role a snapshot may
        # leave alone, is restarted only when the snapshot touched it.
        self._restart(self._text, list(self._text), self._message, _text_of, "message", index)
        thoughts = [item_id for item_id in touched if item_id in self._thoughts]
        self._restart(self._thoughts, thoughts, self._message, _text_of, "reasoning message", index)
        calls = list(self._args)
        self._restart(self._args, calls, self._tool_calls.get, _arguments_of, "tool call", index)

    def _restart(
        self,
        streams: dict[str, TextParts],
        item_ids: list[str],
        target_of: Callable[[str], Any],
        current: Callable[[Any], str],
        label: str,
        index: int,
    ) -> None:
        for item_id in item_ids:
            target = target_of(item_id)
            if target is None:
                del streams[item_id]
                self._warn(
                    f"event {index}: MESSAGES_SNAPSHOT removed {label} {item_id!r} while it "
                    "was streaming; what still streams into it is ignored"
                )
            else:
                streams[item_id] = TextParts([current(target)])

    # --- state ---------------------------------------------------------------------------

    def _state_snapshot(self, event: Any, index: int) -> None:
        self._set_state(event.snapshot, index, "/snapshot", ProtocolViolation)

    def _set_state(
        self, state: Any, index: int | None, path: str, error: type[ProtocolViolation]
    ) -> None:
        self._state_size = self._measured(state, index, path, error)
        self.state = state
        self._state_owned = False

    def _measured(
        self, value: Any, index: int | None, path: str, error: type[ProtocolViolation]
    ) -> int:
        """The size of a value a snapshot brings; a violation if it passes the bounds."""
        size, passed = bound_passed(value, self._bounds)
        if passed is not None:
            raise error(*passed, index=index, path=path)
        return size

    def _state_delta(self, event: Any, index: int) -> None:
        if not self._state_owned:
            self.state = copy_json(self.state)
            self._state_owned = True
        try:
            self.state, self._state_size = patch_in_place(
                self.state, self._state_size, event.delta, self._bounds
            )
        except PatchConflict as conflict:
            self._warn(f"event {index} /delta: STATE_DELTA does not apply, state kept: {conflict}")
        except PatchRefused as refused:
            raise _refusal(refused, index, "/delta") from None

    # --- activity ------------------------------------------------------------------------

    def _activity_snapshot(self, event: Any, index: int) -> None:
        serial = self._latest.get(event.message_id)  # looked up once: the id map is the largest
        if serial is not None and not event.replace:
            return  # replace: false leaves an existing message, of any role, as it stands
        self._measured(event.content, index, "/content", ProtocolViolation)  # bound as state is
        message = self._b.ActivityMessage(
            id=event.message_id,
            activity_type=event.activity_type,
            content=event.content,
            subagent_run_id=event.subagent_run_id,
        )
        if serial is None:
            message.metadata = event.metadata
            self._add(message)
            return
        message.metadata = self._messages[serial].metadata  # metadata survives replacement
        _merge_metadata(message, event)
        self._replace_at(serial, message, keep_calls=True)

    def _activity_delta(self, event: Any, index: int) -> None:
        target = self._message(event.message_id)
        if target is None or target.role != "activity":
            self._warn(
                f"event {index}: ACTIVITY_DELTA names no activity message {event.message_id!r}; skipped"
            )
            return
        owned = self._activity.get(target.id)
        if owned is None or owned[0] is not target.content:
            size = self._measured(target.content, index, "/patch", ProtocolViolation)
            owned = self._activity[target.id] = (copy_json(target.content), size)
            target.content = owned[0]
        try:
            content, size = patch_in_place(
                owned[0], owned[1], event.patch, self._bounds, object_root=True
            )
        except PatchConflict as conflict:
            self._warn(
                f"event {index} /patch: ACTIVITY_DELTA does not apply, content kept: {conflict}"
            )
            return
        except PatchRefused as refused:
            raise _refusal(refused, index, "/patch") from None
        self._activity[target.id] = (content, size)
        target.content = content
        target.activity_type = event.activity_type  # the delta's type replaces the message's
        _merge_metadata(target, event)


def _refusal(refused: PatchRefused, index: int, field: str) -> ProtocolViolation:
    return ProtocolViolation(
        refused.rule, refused.detail, index=index, path=f"{field}/{refused.operation}"
    )
