"""Reliability: model-based properties of the whole consumer over generated streams.

- Valid streams (``strategies.valid_streams``) are accepted without a warning, and
  the reducer's messages, state and runs equal what :class:`Model` — a plain
  assembly written here from the specification's prose — makes of the same
  events.
- One mutation of a valid stream gets the verdict the mutation implies where
  the specification determines it (a cut inside a run is truncated, a second
  ``RUN_STARTED`` inside a run is a nested run, an unknown field or event is
  stripped or dropped with a warning that names it, a wrong type or a ``null``
  on a known field is malformed at that event). Where the verdict is not
  determined (drops, duplicates, swaps), only the invariants are asserted:
  ``consume`` never raises, ``Consumer.feed``/``close`` raise nothing but
  ``ProtocolViolation``, and both deliver the same events.
- A stream rejected at event ``i`` delivers what its first ``i`` events deliver,
  unchanged; the failing event itself adds at most the ``*_END`` events of chunk
  streams it closed before failing: they passed verification before the failure,
  so, like everything else that passed, they are delivered, not lost.
- The same bytes get the same verdict, warnings and result however they are
  framed (SSE or JSON lines, any line ends, comments, split ``data`` lines) and
  however the body is cut into chunks.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import Any, cast

import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from payloads import in_run, wire_event
from strategies import (
    THREAD,
    Wire,
    apply_patch,
    json_values,
    pointer,
    valid_streams,
)

from agui_msgspec import (
    Consumer,
    ProtocolViolation,
    Result,
    TransportError,
    consume,
    consume_body,
    v1_1,
)
from agui_msgspec._errors import inert
from agui_msgspec._wire.text import JSONLinesReader, PayloadReader, SSEReader

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FEW = settings(EXAMPLES, max_examples=30)

# Optional properties that older producers sent as null, which the compatibility
# boundary reads as absent with a warning (README: "legacy nulls"; src/_compat.py).
LEGACY_NULLS = {
    ("TOOL_CALL_START", "parentMessageId"),
    ("TOOL_CALL_CHUNK", "parentMessageId"),
    ("RUN_FINISHED", "outcome"),
    ("RUN_FINISHED", "result"),
    ("SUBAGENT_FINISHED", "result"),
}


# --- helpers -------------------------------------------------------------------------------


def encode(events: Sequence[Wire]) -> list[bytes]:
    return [msgspec.json.encode(event) for event in events]


def wire(value: Any) -> Any:
    """Structs (and lists of them) as wire-named builtins, absent fields omitted."""
    return msgspec.to_builtins(value)


def runs_of(result: Result | Consumer) -> list[tuple[Any, ...]]:
    return [(run.run_id, run.status, wire(run.usage), wire(run.interrupts)) for run in result.runs]


def verdict(result: Result) -> tuple[str, int | None, str] | None:
    violation = result.violation
    return None if violation is None else (violation.rule, violation.index, violation.path)


def outcome_of(result: Result) -> tuple[Any, ...]:
    """Everything a user sees of a result, comparable with ``==``."""
    return (
        verdict(result),
        list(result.warnings),
        runs_of(result),
        msgspec.json.encode(result.messages),
        msgspec.json.encode(result.state),
        msgspec.json.encode(result.events),
    )


def feed_all(
    payloads: Sequence[bytes],
) -> tuple[list[msgspec.Struct], ProtocolViolation | None, list[msgspec.Struct]]:
    """``Consumer.feed`` then ``close``: (every event delivered, the violation, the events of
    the failing payload that got out). Anything but a ProtocolViolation escapes (and fails)."""
    consumer = Consumer()
    delivered: list[msgspec.Struct] = []
    rejected: ProtocolViolation | None = None
    partial: list[msgspec.Struct] = []
    try:
        for payload in payloads:
            delivered += consumer.feed(payload)
        consumer.close()
    except (ProtocolViolation, TransportError) as violation:
        rejected = violation
        partial = cast("list[msgspec.Struct]", list(violation.delivered))
    if rejected is not None:
        with pytest.raises(ProtocolViolation) as again:  # a rejected stream stays rejected
            consumer.feed(b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}')
        assert again.value is rejected
    return delivered + partial, rejected, partial


def active_after(events: Sequence[Wire]) -> list[bool]:
    """``active[k]``: a run is active once ``events[:k]`` have been consumed."""
    active, flags = False, [False]
    for event in events:
        if event["type"] == "RUN_STARTED":
            active = True
        elif event["type"] in ("RUN_FINISHED", "RUN_ERROR"):
            active = False
        flags.append(active)
    return flags


def assert_prefix_kept(result: Result, events: Sequence[Wire], index: int) -> None:
    """Rejected at ``index``: what ``events[:index]`` delivered is delivered unchanged, the
    messages and state are theirs, and the failing payload added at most the ends of the
    chunk streams it closed before it failed (see test_a_failing_payload_delivers_nothing)."""
    before = consume(encode(events[:index]))
    kept = result.events[: len(before.events)]
    assert msgspec.json.encode(kept) == msgspec.json.encode(before.events)
    assert all(map(_synthesized_end, result.events[len(before.events) :]))
    assert wire(result.messages) == wire(before.messages)
    assert result.state == before.state


def _synthesized_end(event: msgspec.Struct) -> bool:
    return str(type(event).__struct_config__.tag).endswith("_END")


# --- the reference model -------------------------------------------------------------------


@dataclass
class Model:
    """What the specification says an application holds after a valid stream.

    Text is assembled per ``messageId``, tool-call arguments per ``toolCallId``,
    state by snapshot and the plain patch applier in ``strategies``. Chunks are
    read directly (the model never expands them): an id-less chunk continues the
    last item its lane named. A tool call without ``parentMessageId`` gets a new
    assistant message named after the call (the README's decision); a reopened
    call joins nothing new.
    """

    messages: list[Wire] = field(default_factory=list)
    state: Any = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)
    lanes: dict[tuple[str | None, str], str] = field(default_factory=dict)

    def by_id(self, message_id: str) -> Wire | None:
        return next((m for m in self.messages if m["id"] == message_id), None)

    def call(self, call_id: str) -> Wire | None:
        for message in self.messages:
            for call in message.get("toolCalls", ()):
                if call["id"] == call_id:
                    return call  # type: ignore[no-any-return]
        return None

    @staticmethod
    def merge(target: Wire, event: Wire) -> None:
        if "metadata" in event:
            target["metadata"] = {**target.get("metadata", {}), **event["metadata"]}

    def open_text(self, event: Wire, message_id: str, role: str, owner: str | None) -> Wire:
        message = self.by_id(message_id)
        if message is None:
            message = {"id": message_id, "role": role, "content": ""}
            if event.get("name") is not None and role != "reasoning":
                message["name"] = event["name"]
            if owner is not None:
                message["subagentRunId"] = owner
            self.messages.append(message)
        return message

    def open_call(self, event: Wire, call_id: str, owner: str | None) -> Wire:
        call = self.call(call_id)
        if call is not None:
            return call
        parent_id = event.get("parentMessageId") or call_id
        parent = self.by_id(parent_id)
        if parent is None or parent["role"] != "assistant":
            parent = {"id": parent_id, "role": "assistant"}
            if owner is not None:
                parent["subagentRunId"] = owner
            self.messages.append(parent)
        call = {"id": call_id, "type": "function", "function": {"name": "", "arguments": ""}}
        call["function"]["name"] = event["toolCallName"]
        parent.setdefault("toolCalls", []).append(call)
        return call

    def apply(self, event: Wire) -> None:
        kind = event["type"]
        owner = event.get("subagentRunId")
        if kind == "RUN_STARTED":
            self.runs.append({"runId": event["runId"], "status": "active", "usage": []})
        elif kind == "RUN_FINISHED":
            run = self.runs[-1]
            outcome = event.get("outcome", {}).get("type")
            statuses = {"interrupt": "interrupted", "cancelled": "cancelled"}
            run["status"] = statuses.get(outcome, "completed")
            run["interrupts"] = event["outcome"]["interrupts"] if outcome == "interrupt" else []
            run["usage"] = event.get("usage", [])
        elif kind == "RUN_ERROR":
            if not self.runs or self.runs[-1]["status"] == "failed":
                self.runs.append({"runId": None, "usage": []})
            self.runs[-1]["status"] = "failed"
            self.runs[-1]["usage"] = event.get("usage") or self.runs[-1]["usage"]
        elif kind in ("TEXT_MESSAGE_START", "REASONING_MESSAGE_START"):
            role = "reasoning" if kind.startswith("REASONING") else event.get("role", "assistant")
            self.merge(self.open_text(event, event["messageId"], role, owner), event)
        elif kind in ("TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"):
            message = self.by_id(event["messageId"])
            assert message is not None
            message["content"] += event["delta"]
            self.merge(message, event)
        elif kind in ("TEXT_MESSAGE_END", "REASONING_MESSAGE_END"):
            message = self.by_id(event["messageId"])
            assert message is not None
            self.merge(message, event)
        elif kind in ("TEXT_MESSAGE_CHUNK", "REASONING_MESSAGE_CHUNK"):
            message_id = event.get("messageId") or self.lanes[(owner, kind)]
            self.lanes[(owner, kind)] = message_id
            role = "reasoning" if kind.startswith("REASONING") else event.get("role", "assistant")
            message = self.open_text(event, message_id, role, owner)
            message["content"] += event.get("delta", "")
            self.merge(message, event)
        elif kind == "TOOL_CALL_START":
            self.merge(self.open_call(event, event["toolCallId"], owner), event)
        elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_END"):
            call = self.call(event["toolCallId"])
            assert call is not None
            call["function"]["arguments"] += event.get("delta", "")
            self.merge(call, event)
        elif kind == "TOOL_CALL_CHUNK":
            call_id = event.get("toolCallId") or self.lanes[(owner, kind)]
            self.lanes[(owner, kind)] = call_id
            call = self.open_call({**event, "toolCallId": call_id}, call_id, owner)
            call["function"]["arguments"] += event.get("delta", "")
            self.merge(call, event)
        elif kind == "TOOL_CALL_RESULT":
            message = {
                "id": event["messageId"],
                "role": "tool",
                "content": event["content"],
                "toolCallId": event["toolCallId"],
            }
            for key in ("subagentRunId", "metadata"):
                if key in event:
                    message[key] = event[key]
            self.messages.append(message)
        elif kind == "REASONING_ENCRYPTED_VALUE":
            target = (
                self.call(event["entityId"])
                if event["subtype"] == "tool-call"
                else self.by_id(event["entityId"])
            )
            assert target is not None
            target["encryptedValue"] = event["encryptedValue"]
            target.pop("encryptedValueType", None)
            if "encryptedValueType" in event:
                target["encryptedValueType"] = event["encryptedValueType"]
        elif kind == "STATE_SNAPSHOT":
            self.state = copy.deepcopy(event["snapshot"])
        elif kind == "STATE_DELTA":
            self.state = apply_patch(self.state, event["delta"])
        elif kind == "MESSAGES_SNAPSHOT":
            self.messages_snapshot(event["messages"])
        elif kind == "ACTIVITY_SNAPSHOT":
            message = {
                "id": event["messageId"],
                "role": "activity",
                "activityType": event["activityType"],
                "content": copy.deepcopy(event["content"]),
            }
            for key in ("subagentRunId", "metadata"):
                if key in event:
                    message[key] = event[key]
            self.messages.append(message)
        elif kind == "ACTIVITY_DELTA":
            message = self.by_id(event["messageId"])
            assert message is not None
            message["content"] = apply_patch(message["content"], event["patch"])
            message["activityType"] = event["activityType"]
            self.merge(message, event)

    def messages_snapshot(self, snapshot: list[Wire]) -> None:
        """events/state: replace in place by id, append the new in order, drop the rest
        except activity and reasoning messages when the snapshot carries none of that role."""
        incoming = {message["id"]: copy.deepcopy(message) for message in snapshot}
        carried = {message["role"] for message in snapshot}
        kept = []
        for message in self.messages:
            if message["id"] in incoming:
                kept.append(incoming.pop(message["id"]))
            elif message["role"] in ("activity", "reasoning") and message["role"] not in carried:
                kept.append(message)
        self.messages = [*kept, *incoming.values()]

    def close(self) -> None:
        if self.runs and self.runs[-1]["status"] == "active":
            self.runs[-1]["status"] = "truncated"

    def expected_runs(self) -> list[tuple[Any, ...]]:
        return [
            (run["runId"], run["status"], run["usage"], run.get("interrupts", []))
            for run in self.runs
        ]


def model_of(events: Sequence[Wire]) -> Model:
    model = Model()
    for event in events:
        model.apply(event)
    model.close()
    return model


def assert_matches_model(result: Result, events: Sequence[Wire]) -> None:
    model = model_of(events)
    assert wire(result.messages) == model.messages
    assert result.state == model.state
    assert runs_of(result) == model.expected_runs()


# --- 1. valid streams ------------------------------------------------------------------------


@EXAMPLES
@given(valid_streams())
def test_valid_streams_are_accepted_quietly_and_reduce_as_the_model_says(
    events: list[Wire],
) -> None:
    payloads = encode(events)
    result = consume(payloads)
    assert result.violation is None
    assert result.outcome == "completed"
    assert result.warnings == []
    assert_matches_model(result, events)
    consumer = Consumer()
    for payload in payloads:
        consumer.feed(payload)
    consumer.close()
    assert consumer.slow_path_count == 0  # conformant traffic is one strict decode per event


@FEW
@given(valid_streams())
def test_dicts_and_bytes_get_the_same_result(events: list[Wire]) -> None:
    assert outcome_of(consume(copy.deepcopy(events))) == outcome_of(consume(encode(events)))


def test_the_generator_covers_every_event_type() -> None:
    """A generator that never draws some family would make the properties above vacuous."""
    seen: set[str] = set()

    @settings(
        max_examples=150,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(valid_streams())
    def collect(events: list[Wire]) -> None:
        seen.update(event["type"] for event in events)

    collect()
    assert seen == set(v1_1.EVENT_TYPES)


# --- 2. mutations ----------------------------------------------------------------------------


@EXAMPLES
@given(valid_streams(), st.data())
def test_a_cut_inside_a_run_is_truncated_and_keeps_what_was_delivered(
    events: list[Wire], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(0, len(events)), label="cut")
    prefix = events[:cut]
    result = consume(encode(prefix))
    if cut == 0 or active_after(events)[cut]:
        assert verdict(result) == ("truncated", None, "")
        assert result.outcome == "failed"
        if cut:
            assert result.runs[-1].status == "truncated"
    else:
        assert verdict(result) is None
    assert result.warnings == []
    assert_matches_model(result, prefix)  # nothing delivered before the cut is lost


@EXAMPLES
@given(valid_streams(), st.data())
def test_run_started_inside_a_run_is_a_nested_run(events: list[Wire], data: st.DataObject) -> None:
    active = active_after(events)
    at = data.draw(st.sampled_from([k for k in range(len(events) + 1) if active[k]]), label="at")
    nested = {"type": "RUN_STARTED", "threadId": THREAD, "runId": "run-nested"}
    mutated = [*events[:at], nested, *events[at:]]
    result = consume(encode(mutated))
    assert verdict(result) == ("nested-run", at, "")
    assert_prefix_kept(result, mutated, at)


def _struct_positions(event: Wire) -> list[tuple[tuple[str, ...], Any]]:
    """Closed objects inside ``event`` where an unknown member is stripped: (path, Struct)."""
    positions: list[tuple[tuple[str, ...], Any]] = [((), v1_1.EVENT_TYPES[event["type"]])]
    for position, _ in enumerate(event.get("usage", [])):
        positions.append((("usage", str(position)), v1_1.TokenUsage))
    outcome = event.get("outcome")
    if event["type"] == "RUN_FINISHED" and outcome is not None:
        struct = {
            "success": v1_1.RunFinishedSuccessOutcome,
            "interrupt": v1_1.RunFinishedInterruptOutcome,
            "cancelled": v1_1.RunFinishedCancelledOutcome,
        }[outcome["type"]]
        positions.append((("outcome",), struct))
        for position, _ in enumerate(outcome.get("interrupts", [])):
            positions.append((("outcome", "interrupts", str(position)), v1_1.Interrupt))
    return positions


def _known_names(struct: Any) -> set[str]:
    config = struct.__struct_config__
    return {f.encode_name for f in msgspec.structs.fields(struct)} | {config.tag_field or ""}


def _at(document: Any, path: Sequence[str]) -> Any:
    for token in path:
        document = document[int(token)] if isinstance(document, list) else document[token]
    return document


@EXAMPLES
@given(valid_streams(), st.data())
def test_an_unknown_field_is_stripped_with_a_warning_at_its_pointer(
    events: list[Wire], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(events) - 1), label="index")
    path, struct = data.draw(st.sampled_from(_struct_positions(events[index])), label="where")
    known = _known_names(struct)
    key = data.draw(st.text(max_size=8).filter(lambda k: k not in known), label="key")
    mutated = copy.deepcopy(events)
    _at(mutated[index], path)[key] = data.draw(json_values, label="value")
    result = consume(encode(mutated))
    assert verdict(result) is None
    assert result.warnings == [  # one line: a control character in the key is shown escaped
        inert(f"event {index} {pointer([*path, key])}: removed unrecognised property")
    ]
    assert outcome_of(result)[2:] == outcome_of(consume(encode(events)))[2:]


@EXAMPLES
@given(valid_streams(), st.data())
def test_an_unknown_event_is_dropped_with_a_warning_naming_its_type(
    events: list[Wire], data: st.DataObject
) -> None:
    at = data.draw(st.integers(0, len(events)), label="at")
    name = data.draw(
        st.text(min_size=1, max_size=12).filter(
            lambda n: n not in v1_1.EVENT_TYPES and not n.startswith("THINKING_")
        ),
        label="type",
    )
    extra = data.draw(st.dictionaries(st.text(max_size=5), json_values, max_size=3), label="body")
    unknown = {**extra, "type": name}
    result = consume(encode([*events[:at], unknown, *events[at:]]))
    assert verdict(result) is None
    assert result.warnings == [f"event {at}: dropped event of unrecognised type {name!r}"]
    assert outcome_of(result)[2:] == outcome_of(consume(encode(events)))[2:]


_SAMPLES: dict[str, Any] = {
    "str": "x",
    "int": 7,
    "float": 1.5,
    "bool": True,
    "list": ["x"],
    "dict": {"x": 1},
    "null": None,
}


def _kinds(info: mi.Type) -> set[str]:
    """The JSON kinds a declared type can accept at all (the value may still fail)."""
    if isinstance(info, mi.AnyType):
        return set(_SAMPLES)
    if isinstance(info, mi.StrType | mi.LiteralType):
        return (
            {"str"}
            if not isinstance(info, mi.LiteralType)
            else {type(v).__name__ for v in info.values}
        )
    if isinstance(info, mi.BoolType):
        return {"bool"}
    if isinstance(info, mi.IntType):
        return {"int"}
    if isinstance(info, mi.FloatType):
        return {"int", "float"}
    if isinstance(info, mi.ListType):
        return {"list"}
    if isinstance(info, mi.DictType | mi.StructType):
        return {"dict"}
    if isinstance(info, mi.NoneType):
        return {"null"}
    if isinstance(info, mi.UnionType):
        return set().union(*(_kinds(member) for member in info.types))
    raise AssertionError(f"no kinds for {info!r}")


def _fields(event_type: str) -> dict[str, mi.Field]:
    info = mi.type_info(v1_1.EVENT_TYPES[event_type])
    assert isinstance(info, mi.StructType)
    return {f.encode_name: f for f in info.fields}


@EXAMPLES
@given(valid_streams(), st.data())
def test_a_wrong_type_on_a_known_field_is_malformed_at_that_event(
    events: list[Wire], data: st.DataObject
) -> None:
    candidates = []
    for index, event in enumerate(events):
        fields = _fields(event["type"])
        for name in event:
            if name != "type":
                kinds = set(_SAMPLES) - _kinds(fields[name].type) - {"null"}
                if kinds:
                    candidates.append((index, name, sorted(kinds)))
    index, name, wrong = data.draw(st.sampled_from(candidates), label="field")
    kind = data.draw(st.sampled_from(wrong), label="kind")
    mutated = copy.deepcopy(events)
    mutated[index][name] = _SAMPLES[kind]
    result = consume(encode(mutated))
    assert verdict(result) == ("malformed-event", index, f"/{name}")
    assert_prefix_kept(result, mutated, index)


@EXAMPLES
@given(valid_streams(), st.data())
def test_null_on_an_optional_field_is_malformed_at_that_event(
    events: list[Wire], data: st.DataObject
) -> None:
    candidates = [
        (index, name)
        for index, event in enumerate(events)
        for name, spec in _fields(event["type"]).items()
        if not spec.required and "null" not in _kinds(spec.type)
    ]
    index, name = data.draw(st.sampled_from(candidates), label="field")
    mutated = copy.deepcopy(events)
    mutated[index][name] = None
    result = consume(encode(mutated))
    if (events[index]["type"], name) in LEGACY_NULLS or name == "rawEvent":
        assert verdict(result) is None  # a registered compatibility shim: read as absent
        assert f"event {index} /{name}: legacy null" in "\n".join(result.warnings)
    else:
        assert verdict(result) == ("malformed-event", index, f"/{name}")


@st.composite
def structural_mutations(draw: st.DrawFn) -> list[Wire]:
    """A valid stream with one event dropped, duplicated, or swapped with another."""
    events = draw(valid_streams())
    kind = draw(st.sampled_from(["drop", "duplicate", "swap"]))
    at = draw(st.integers(0, len(events) - 1))
    if kind == "drop":
        return events[:at] + events[at + 1 :]
    if kind == "duplicate":
        return [*events[: at + 1], *events[at:]]
    other = draw(st.integers(0, len(events) - 1))
    events[at], events[other] = events[other], events[at]
    return events


@st.composite
def any_mutation(draw: st.DrawFn) -> list[Wire]:
    """Structural mutations, or a stream with one event's payload replaced by junk."""
    events = draw(structural_mutations())
    if draw(st.booleans()):
        return events
    at = draw(st.integers(0, len(events) - 1))
    fixed: list[Wire] = [{"type": 7}, {"type": "RUN_FINISHED"}, {"type": "TEXT_MESSAGE_END"}]
    keys = st.sampled_from(["type", "messageId", "delta", "x"])
    junk = draw(st.sampled_from(fixed) | st.dictionaries(keys, json_values))
    return [*events[:at], junk, *events[at + 1 :]]


@EXAMPLES
@given(any_mutation())
def test_invariants_hold_whatever_the_mutation(events: list[Wire]) -> None:
    payloads = encode(events)
    result = consume(payloads)  # never raises
    delivered, violation, _ = feed_all(payloads)  # raises nothing but ProtocolViolation
    assert (result.outcome == "failed") == (result.violation is not None)
    assert verdict(result) == (
        None if violation is None else (violation.rule, violation.index, violation.path)
    )
    assert msgspec.json.encode(delivered) == msgspec.json.encode(result.events)
    if violation is not None and violation.index is not None:
        assert 0 <= violation.index < len(events)


# --- 3. prefix ---------------------------------------------------------------------------------


@EXAMPLES
@given(any_mutation())
def test_a_rejected_stream_delivers_what_its_prefix_delivers(events: list[Wire]) -> None:
    payloads = encode(events)
    delivered, violation, partial = feed_all(payloads)
    if violation is None or violation.index is None:
        return
    before = consume(payloads[: violation.index])
    result = consume(payloads)
    # nothing accepted before the failure is lost or changed ...
    assert msgspec.json.encode(delivered[: len(before.events)]) == msgspec.json.encode(
        before.events
    )
    assert wire(result.messages) == wire(before.messages)
    assert result.state == before.state
    # ... and of the failing payload itself, at most the ends its chunk synthesized got out
    extra = delivered[len(before.events) :]
    assert msgspec.json.encode(extra) == msgspec.json.encode(partial)
    assert all(map(_synthesized_end, extra))


def test_feeding_a_rejected_consumer_again_keeps_the_violations_delivered_events() -> None:
    events: list[Wire] = [
        {"type": "RUN_STARTED", "threadId": THREAD, "runId": "r1"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "hi"},
        {"type": "STEP_FINISHED", "stepName": "never-started"},  # closes m1's chunk stream first
    ]
    consumer = Consumer()
    consumer.feed(encode(events)[0])
    consumer.feed(encode(events)[1])
    with pytest.raises(ProtocolViolation) as first:
        consumer.feed(encode(events)[2])
    assert [type_name(e) for e in first.value.delivered] == ["TEXT_MESSAGE_END"]
    with pytest.raises(ProtocolViolation):
        consumer.feed(encode(events)[0])
    assert [type_name(e) for e in first.value.delivered] == ["TEXT_MESSAGE_END"]


def type_name(event: object) -> str:
    return str(type(event).__struct_config__.tag)  # type: ignore[attr-defined]


# --- 4. determinism ----------------------------------------------------------------------------


def _frame_sse(data: st.DataObject, payloads: Sequence[bytes]) -> bytes:
    eol = data.draw(st.sampled_from([b"\n", b"\r\n", b"\r"]), label="eol")
    lines: list[bytes] = []
    for payload in payloads:
        if data.draw(st.integers(0, 5)) == 0:
            lines.append(
                data.draw(st.sampled_from([b": keep-alive", b"event: agui", b"id: 7", b"retry: 9"]))
            )
        style = data.draw(st.integers(0, 3))
        if style == 3:  # one data line per line of an indented rendering: LF-joined, same JSON
            pretty = json.dumps(json.loads(payload), indent=1).encode()
            lines += [b"data: " + line for line in pretty.split(b"\n")]
        else:
            lines.append((b"data:" if style == 0 else b"data: ") + payload)
        lines.append(b"")
    body = eol.join(lines) + eol
    if data.draw(st.booleans(), label="bom"):
        body = b"\xef\xbb\xbf" + body
    return body


def _frame_jsonl(data: st.DataObject, payloads: Sequence[bytes]) -> bytes:
    eol = data.draw(st.sampled_from([b"\n", b"\r\n"]), label="eol")
    body = eol.join(payloads)
    return body + eol if data.draw(st.booleans(), label="final eol") else body


def _chunks(data: st.DataObject, body: bytes) -> list[bytes]:
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=12), label="cuts")
    points = sorted({0, len(body), *cuts})
    return [body[a:b] for a, b in pairwise(points)]


def through_reader(make: Callable[[], PayloadReader], chunks: Sequence[bytes]) -> tuple[Any, ...]:
    """The body through a reader and a Consumer, as ``outcome_of`` sees a result."""
    reader = make()
    consumer = Consumer()
    delivered: list[msgspec.Struct] = []
    try:
        for chunk in chunks:
            for payload in reader.feed(chunk):
                delivered += consumer.feed(payload)
        for payload in reader.close():
            delivered += consumer.feed(payload)
        consumer.close(inside_event=reader.discarded_partial)
    except (ProtocolViolation, TransportError) as violation:
        rejected: ProtocolViolation | None = violation
        delivered += cast("list[msgspec.Struct]", violation.delivered)
    else:
        rejected = None
    return outcome_of(
        Result(
            outcome="failed" if rejected else "completed",
            violation=rejected,
            events=delivered,
            warnings=consumer.warnings,
            runs=consumer.runs,
            messages=consumer.messages,
            state=consumer.state,
        )
    )


@EXAMPLES
@given(valid_streams() | any_mutation(), st.data())
def test_the_same_bytes_get_the_same_result_however_they_are_framed_and_chunked(
    events: list[Wire], data: st.DataObject
) -> None:
    payloads = encode(events)
    expected = outcome_of(consume(payloads))
    sse = _frame_sse(data, payloads)
    assert through_reader(SSEReader, [sse]) == expected
    assert through_reader(SSEReader, _chunks(data, sse)) == expected
    jsonl = _frame_jsonl(data, payloads)
    assert through_reader(JSONLinesReader, [jsonl]) == expected
    assert through_reader(JSONLinesReader, _chunks(data, jsonl)) == expected


@FEW
@given(valid_streams(), st.data())
def test_event_too_large_does_not_depend_on_chunking(
    events: list[Wire], data: st.DataObject
) -> None:
    payloads = encode(events)
    limit = data.draw(st.integers(1, max(map(len, payloads)) + 8), label="max_event_size")
    body = b"".join(b"data: " + payload + b"\n\n" for payload in payloads)
    whole = through_reader(lambda: SSEReader(max_event_size=limit), [body])
    chunked = through_reader(lambda: SSEReader(max_event_size=limit), _chunks(data, body))
    assert whole == chunked
    too_large = [index for index, payload in enumerate(payloads) if len(payload) > limit]
    if too_large:
        assert whole[0] == ("event-too-large", too_large[0], "")
        assert whole[5] == msgspec.json.encode(consume(payloads[: too_large[0]]).events)
    else:
        assert whole[0] is None


def test_a_chunk_boundary_inside_a_data_field_name_does_not_change_the_verdict() -> None:
    body = b"data: 123456789\ndata:\n\n"  # one event of exactly 10 bytes: "123456789\n"
    reader = SSEReader(max_event_size=10)
    assert reader.feed(body) + reader.close() == [b"123456789\n"]
    for cut in range(1, len(body)):
        reader = SSEReader(max_event_size=10)
        assert reader.feed(body[:cut]) + reader.feed(body[cut:]) + reader.close() == [
            b"123456789\n"
        ], cut


# --- targeted findings ------------------------------------------------------------------------


_TEXTS_THEN_CALL: list[Wire] = [
    {"type": "RUN_STARTED", "threadId": THREAD, "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "a1"},
    {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
]
_REOPENS: dict[str, list[Wire]] = {
    "explicit": [
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"q":'},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TEXT_MESSAGE_START", "messageId": "u1", "role": "user"},
        {"type": "TEXT_MESSAGE_END", "messageId": "u1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "1}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    ],
    # The same through chunks: the user message closes c1's chunk stream, the next chunk
    # naming c1 reopens it.
    "chunks": [
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c1", "toolCallName": "f", "delta": '{"q":'},
        {"type": "TEXT_MESSAGE_START", "messageId": "u1", "role": "user"},
        {"type": "TEXT_MESSAGE_END", "messageId": "u1"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c1", "toolCallName": "f", "delta": "1}"},
    ],
}


@pytest.mark.parametrize("form", sorted(_REOPENS))
def test_reopening_a_tool_call_does_not_mint_an_empty_assistant_message(form: str) -> None:
    """tool-calls: a reopened call (same name, same absent parent) continues; it adds no message."""
    events = [
        *_TEXTS_THEN_CALL,
        *_REOPENS[form],
        {"type": "RUN_FINISHED", "threadId": THREAD, "runId": "r"},
    ]
    result = consume(encode(events))
    assert verdict(result) is None
    assert [m.id for m in result.messages] == ["a1", "c1", "u1"]  # c1: the call's own message
    assert result.messages[1].tool_calls[0].function.arguments == '{"q":1}'
    assert_matches_model(result, events)


_OPEN_AT_RUN_ERROR: list[Wire] = [
    {"type": "RUN_STARTED", "threadId": THREAD, "runId": "r1"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a"},
    {"type": "RUN_ERROR", "message": "boom"},  # a failed run may leave items open
    {"type": "RUN_STARTED", "threadId": THREAD, "runId": "r2"},
]


def test_a_message_left_open_by_run_error_is_not_streaming_in_the_next_run() -> None:
    events = [
        *_OPEN_AT_RUN_ERROR,
        {"type": "MESSAGES_SNAPSHOT", "messages": []},
        {"type": "RUN_FINISHED", "threadId": THREAD, "runId": "r2"},
    ]
    result = consume(encode(events))
    assert verdict(result) is None
    assert result.warnings == []  # the snapshot removes a message, not one "while it was streaming"


def test_reopening_a_message_left_open_by_run_error_keeps_its_text() -> None:
    events = [
        *_OPEN_AT_RUN_ERROR,
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "b"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": THREAD, "runId": "r2"},
    ]
    shown = consume(encode(_OPEN_AT_RUN_ERROR)).messages[0].content
    assert shown == "a"  # what the application was shown after the failed run
    result = consume(encode(events))
    assert verdict(result) is None
    assert result.messages[0].content == "ab"  # a reopened message appends


# --- 6. the fuzz target over its seeds ---------------------------------------------------------


def _fuzz_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_consume", ROOT / "fuzz" / "fuzz_consume.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_fuzz_target_passes_over_its_seed_corpus() -> None:
    fuzz = _fuzz_module()
    seeds: list[bytes] = fuzz.seed_inputs()
    assert len(seeds) >= 2 * len(fuzz.BUILTIN_STREAMS)
    for seed in seeds:
        fuzz.check_one(seed)
    for seed in seeds[-len(fuzz.BUILTIN_STREAMS) :]:  # and every cut of a few of them
        for cut in range(0, len(seed), 7):
            fuzz.check_one(seed[:cut])


def test_the_fuzz_target_reports_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    """The target is not vacuous: an exception escaping the pipeline is raised to the fuzzer."""
    fuzz = _fuzz_module()

    def broken(body: bytes) -> Result:
        raise KeyError(body[:1])

    monkeypatch.setattr(fuzz, "consume_body", broken)
    with pytest.raises(KeyError):
        fuzz.check_one(b"data: {}\n\n")


# --- the fuzzer: its seeds from anywhere, its resource target, what it found ---------------------


def doubling(count: int, key: str = "k") -> list[dict[str, Any]]:
    """Each operation copies the whole document into itself: 2**count values from a short patch."""
    return [{"op": "copy", "from": "", "path": f"/{key}{n}"} for n in range(count)]


def _load_fuzzer(path: Path) -> Any:
    spec = importlib.util.spec_from_file_location("fuzz_consume", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SHARED = ROOT.parent / "shared"


@pytest.mark.skipif(not (SHARED / "agui").is_dir(), reason="needs ../shared/agui")
def test_the_fuzzer_finds_the_conformance_seeds_from_a_checkout_further_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shared").symlink_to(SHARED.resolve())
    script = tmp_path / "ci" / "checkout" / "fuzz" / "fuzz_consume.py"
    script.parent.mkdir(parents=True)
    script.write_bytes((ROOT / "fuzz" / "fuzz_consume.py").read_bytes())
    monkeypatch.chdir(tmp_path / "ci")
    fuzz = _load_fuzzer(script)
    streams = len(list((SHARED / "agui" / "conformance" / "1.1" / "streams").glob("*.json")))
    assert len(fuzz.seed_inputs()) >= 2 * (len(fuzz.BUILTIN_STREAMS) + streams) - 10


def test_the_fuzzer_counts_a_slow_or_large_input_as_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fuzz = _load_fuzzer(ROOT / "fuzz" / "fuzz_consume.py")
    body = b"data: " + wire_event(type="RUN_STARTED", threadId="t", runId="r") + b"\n\n"
    fuzz.check_bounded(body)
    monkeypatch.setattr(fuzz, "RESOURCE_CPU_SECONDS", -1.0)
    with pytest.raises(fuzz.ResourceExceeded, match="time"):
        fuzz.check_bounded(body)
    monkeypatch.setattr(fuzz, "RESOURCE_CPU_SECONDS", 1e9)
    monkeypatch.setattr(fuzz, "RESOURCE_MEMORY_BYTES", -(1 << 40))
    with pytest.raises(fuzz.ResourceExceeded, match="memory"):
        fuzz.check_bounded(body)
    fuzz.check_bounded(b"x" * (64 * 1024 + 1))  # larger inputs are not held to the target


def test_the_amplification_input_meets_the_fuzzers_resource_target() -> None:
    fuzz = _load_fuzzer(ROOT / "fuzz" / "fuzz_consume.py")
    body = b"".join(
        b"data: " + payload + b"\n\n"
        for payload in in_run(wire_event(type="STATE_DELTA", delta=doubling(30)))
    )
    fuzz.check_bounded(body)


@pytest.mark.parametrize(
    "body",
    [
        # Found by the fuzzer: a tool result replacing the message that holds an open call.
        b'data:{"type":"RUN_STARTED","threadId":"","runId":"","":""}\n\n'
        b'data:{"type":"TOOL_CALL_START","toolCallId":"","toolCallName":"","parentMessageId":"msg-1"}\n\n'
        b'data:{"type":"TOOL_CALL_RESULT","messageId":"msg-1","toolCallId":"","content":"\\"\\"","":""}\n\n',
        b'data:{"type":"RUN_STARTED","threadId":"","runId":"","":""}\n\n'
        b'data:{"type":"TEXT_MESSAGE_START","messageId":"msg-1"}\n\n'
        b'data:{"type":"TOOL_CALL_START","toolCallId":"call-1","toolCallName":"","":""}\n\n'
        b'data:{"type":"TOOL_CALL_RESULT","messageId":"msg-1","toolCallId":"","content":"","":""}\n\n'
        b'data:{"type":"TOOL_CALL_ARGS","toolCallId":"call-1","delta":""}\n\n',
    ],
    ids=["result-replaces-the-calls-message", "args-after-the-replacement"],
)
def test_a_replaced_message_keeps_its_open_tool_call_addressable(body: bytes) -> None:
    fuzz = _load_fuzzer(ROOT / "fuzz" / "fuzz_consume.py")
    fuzz.check_bounded(body)
    result = consume_body(body)
    assert result.violation is not None
    assert result.violation.rule == "truncated"
