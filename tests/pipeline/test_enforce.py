"""Enforcement: what the consumer strips, drops or rejects before anything is delivered.

Spec page: basic/processing (AG-UI 1.1). Unrecognised material is not an error:
an unknown event type is dropped, an unknown property or union member is
stripped, each with a warning naming the type or the JSON Pointer removed. A
malformed known value is fatal (``MalformedEvent``, rule ``malformed-event``,
``path`` a JSON Pointer), never coerced. Conformant traffic costs one strict
decode: it never takes the slow path.

Every payload here is JSON bytes built with ``msgspec.json.encode`` from a dict
with the wire's camelCase names, wrapped in a valid run unless a test says so.
"""

from __future__ import annotations

import contextlib
import json
from typing import Annotated, Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import valid_streams

import agui_msgspec as agui
from agui_msgspec import (
    Consumer,
    MalformedEvent,
    ProtocolViolation,
    Result,
    consume,
    v1_0,
    v1_1,
)
from agui_msgspec._pipeline.enforce import Enforcer, _pattern_free

Wire = dict[str, Any]

THREAD = "thread-1"
RUN = "run-1"
START: Wire = {"type": "RUN_STARTED", "threadId": THREAD, "runId": RUN}
FINISH: Wire = {"type": "RUN_FINISHED", "threadId": THREAD, "runId": RUN}
MAX_SAFE_INTEGER = 2**53 - 1


# --- helpers -------------------------------------------------------------------------------


def encode(event: Wire) -> bytes:
    return msgspec.json.encode(event)


def in_run(*events: Wire, start: Wire = START, finish: Wire = FINISH) -> list[bytes]:
    """The events wrapped in one valid run, as wire bytes."""
    return [encode(start), *(encode(event) for event in events), encode(finish)]


def run(*events: Wire, start: Wire = START, finish: Wire = FINISH, version: str = "1.1") -> Result:
    return consume(in_run(*events, start=start, finish=finish), version=version)


def wire(event: msgspec.Struct) -> Wire:
    """A delivered event as the wire would spell it (absent fields omitted)."""
    built = msgspec.to_builtins(event)
    assert isinstance(built, dict)
    return built


def type_of(event: msgspec.Struct) -> str:
    return str(type(event).__struct_config__.tag)


def types(result: Result) -> list[str]:
    return [type_of(event) for event in result.events]


def only(result: Result, event_type: str) -> msgspec.Struct:
    """The single delivered event of ``event_type``."""
    found = [event for event in result.events if type_of(event) == event_type]
    assert len(found) == 1, types(result)
    return found[0]


def accepted(result: Result) -> None:
    assert result.outcome == "completed", result.violation
    assert result.violation is None


def quiet(result: Result) -> None:
    accepted(result)
    assert result.warnings == []


def warned_once(result: Result, *fragments: str) -> str:
    """The stream was accepted with exactly one warning, which names every fragment."""
    accepted(result)
    assert len(result.warnings) == 1, result.warnings
    warning = result.warnings[0]
    for fragment in fragments:
        assert fragment in warning, (fragment, warning)
    return warning


def fatal(result: Result, path: str, *, index: int = 1) -> MalformedEvent:
    """The stream was rejected as malformed at ``index``/``path``; the prefix was kept."""
    assert result.outcome == "failed"
    violation = result.violation
    assert isinstance(violation, MalformedEvent), violation
    assert violation.rule == "malformed-event", violation
    assert violation.index == index, violation
    assert violation.path == path, violation
    assert len(result.events) == index, types(result)  # only what came before it
    return violation


def rejected_for(result: Result, rule: str, *, index: int = 1) -> MalformedEvent:
    assert result.outcome == "failed"
    violation = result.violation
    assert isinstance(violation, MalformedEvent), violation
    assert violation.rule == rule, violation
    assert violation.index == index, violation
    assert len(result.events) == index, types(result)  # only what came before it
    return violation


# --- conformant traffic: the fast path only --------------------------------------------------


def _rich_stream() -> list[Wire]:
    """Five runs touching every event type, every message role, part, source and outcome."""
    usage = {
        "provider": "acme",
        "model": "acme-1",
        "inputTokens": 120,
        "outputTokens": 30,
        "totalTokens": 150,
        "reasoningTokens": 10,
        "cachedInputTokens": 0,
        "cacheWriteInputTokens": 5,
    }
    messages = [
        {"id": "s-dev", "role": "developer", "content": "Be terse.", "name": "ops"},
        {"id": "s-sys", "role": "system", "content": "You are helpful."},
        {
            "id": "s-user",
            "role": "user",
            "content": [
                {"type": "text", "text": "Look at these", "metadata": {"k": None}},
                {"type": "image", "source": {"type": "url", "value": "https://x/i.png"}},
                {
                    "type": "audio",
                    "source": {"type": "data", "value": "UklGRg==", "mimeType": "audio/wav"},
                },
                {
                    "type": "video",
                    "source": {"type": "file", "value": "file-1", "provider": "acme"},
                },
                {
                    "type": "document",
                    "id": "doc-1",
                    "source": {
                        "type": "url",
                        "value": "https://x/d.pdf",
                        "mimeType": "application/pdf",
                    },
                },
            ],
        },
        {
            "id": "s-asst",
            "role": "assistant",
            "content": "Calling a tool.",
            "toolCalls": [
                {
                    "id": "s-call",
                    "type": "function",
                    "function": {"name": "lookup", "arguments": '{"q": 1}'},
                    "metadata": {"acme/x": 1},
                }
            ],
        },
        {"id": "s-tool", "role": "tool", "content": "42", "toolCallId": "s-call"},
        {
            "id": "s-act",
            "role": "activity",
            "activityType": "progress",
            "content": {"pct": 5},
        },
        {
            "id": "s-think",
            "role": "reasoning",
            "content": "hmm",
            "encryptedValue": "opaque",
            "encryptedValueType": "acme/v1",
        },
    ]
    return [
        {
            **START,
            "timestamp": 1_700_000_000_000,
            "protocolVersion": "1.1",
            "metadata": {"acme/trace": "t-1"},
            "input": {
                "threadId": THREAD,
                "runId": RUN,
                "messages": [{"id": "in-1", "role": "user", "content": "hi"}],
                "tools": [
                    {"name": "lookup", "description": "Looks up", "parameters": {"type": "object"}}
                ],
                "context": [{"description": "locale", "value": "en"}],
                "state": {"count": 0},
                "forwardedProps": {"acme": True},
            },
        },
        {"type": "MESSAGES_SNAPSHOT", "messages": messages},
        {"type": "STEP_STARTED", "stepName": "plan"},
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "m-1",
            "role": "assistant",
            "name": "helper",
            "metadata": {"acme/trace": "t-2", "acme/parent": None},
        },
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m-1", "delta": "Hello"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m-1", "delta": ""},
        {"type": "TEXT_MESSAGE_END", "messageId": "m-1"},
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "call-1",
            "toolCallName": "lookup",
            "parentMessageId": "m-1",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "call-1", "delta": '{"q":'},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "call-1", "delta": " 1}"},
        {"type": "TOOL_CALL_END", "toolCallId": "call-1"},
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "tr-1",
            "toolCallId": "call-1",
            "content": "42",
            "role": "tool",
        },
        {
            "type": "TOOL_CALL_CHUNK",
            "toolCallId": "call-2",
            "toolCallName": "render",
            "delta": "{}",
        },
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "tr-2",
            "toolCallId": "call-2",
            "content": [
                {"type": "text", "text": "rendered"},
                {
                    "type": "image",
                    "source": {"type": "data", "value": "iVBORw==", "mimeType": "image/png"},
                },
            ],
        },
        {"type": "STATE_SNAPSHOT", "snapshot": {"count": 0, "items": []}},
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "replace", "path": "/count", "value": 1},
                {"op": "add", "path": "/items/-", "value": "a"},
                {"op": "test", "path": "/count", "value": 1},
                {"op": "copy", "from": "/count", "path": "/copy"},
                {"op": "move", "from": "/copy", "path": "/moved"},
                {"op": "remove", "path": "/moved", "value": "a leftover member"},
            ],
        },
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "act-1",
            "activityType": "progress",
            "content": {"pct": 10, "acme/note": None},
        },
        {
            "type": "ACTIVITY_DELTA",
            "messageId": "act-1",
            "activityType": "progress",
            "patch": [{"op": "replace", "path": "/pct", "value": 50}],
        },
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "act-1",
            "activityType": "progress",
            "content": {"pct": 60},
            "replace": False,
        },
        {"type": "REASONING_START", "messageId": "span-1"},
        {"type": "REASONING_MESSAGE_START", "messageId": "think-1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "think-1", "delta": "thinking"},
        {"type": "REASONING_MESSAGE_END", "messageId": "think-1"},
        {"type": "REASONING_MESSAGE_CHUNK", "messageId": "think-2", "delta": "more"},
        {"type": "REASONING_END", "messageId": "span-1"},
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "think-1",
            "encryptedValue": "opaque",
            "encryptedValueType": "acme/v1",
        },
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "tool-call",
            "entityId": "call-1",
            "encryptedValue": "opaque",
        },
        {
            "type": "SUBAGENT_STARTED",
            "subagentRunId": "sub-1",
            "name": "researcher",
            "description": "digs",
            "parentToolCallId": "call-1",
        },
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "m-2",
            "role": "assistant",
            "subagentRunId": "sub-1",
        },
        {
            "type": "TEXT_MESSAGE_CONTENT",
            "messageId": "m-2",
            "delta": "found",
            "subagentRunId": "sub-1",
        },
        {"type": "TEXT_MESSAGE_END", "messageId": "m-2", "subagentRunId": "sub-1"},
        {
            "type": "SUBAGENT_FINISHED",
            "subagentRunId": "sub-1",
            "outcome": {"type": "success"},
            "result": {"ok": True},
        },
        {
            "type": "SUBAGENT_STARTED",
            "subagentRunId": "sub-2",
            "name": "approver",
            "parentSubagentRunId": "sub-1",
        },
        {
            "type": "SUBAGENT_FINISHED",
            "subagentRunId": "sub-2",
            "outcome": {"type": "suspended", "interruptIds": ["int-1"]},
        },
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sub-3", "name": "flaky"},
        {"type": "SUBAGENT_ERROR", "subagentRunId": "sub-3", "message": "boom", "code": "E1"},
        {"type": "CUSTOM", "name": "acme.progress", "value": {"step": 1}},
        {"type": "RAW", "event": {"provider": "native", "n": [1, None]}, "source": "acme"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m-3", "role": "assistant", "delta": "tail"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": " end"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {
            **FINISH,
            "outcome": {"type": "success"},
            "result": {"answer": 42},
            "usage": [usage],
        },
        {"type": "RUN_STARTED", "threadId": THREAD, "runId": "run-2", "parentRunId": RUN},
        {
            "type": "RUN_FINISHED",
            "threadId": THREAD,
            "runId": "run-2",
            "outcome": {
                "type": "interrupt",
                "interrupts": [
                    {
                        "id": "int-1",
                        "reason": "approval",
                        "message": "Approve?",
                        "toolCallId": "call-1",
                        "responseSchema": {"type": "boolean"},
                        "expiresAt": "2030-01-01T00:00:00Z",
                        "metadata": {"acme/x": None},
                    }
                ],
            },
        },
        {
            "type": "RUN_STARTED",
            "threadId": THREAD,
            "runId": "run-3",
            "input": {
                "threadId": THREAD,
                "runId": "run-3",
                "messages": [],
                "resume": [{"interruptId": "int-1", "status": "resolved", "payload": True}],
            },
        },
        {
            "type": "RUN_FINISHED",
            "threadId": THREAD,
            "runId": "run-3",
            "outcome": {"type": "cancelled"},
        },
        {"type": "RUN_STARTED", "threadId": THREAD, "runId": "run-4"},
        {"type": "RUN_ERROR", "message": "upstream failed", "code": "E500", "usage": [usage]},
        {"type": "RUN_STARTED", "threadId": THREAD, "runId": "run-5"},
        {"type": "RUN_FINISHED", "threadId": THREAD, "runId": "run-5"},
    ]


def test_rich_conformant_stream_never_takes_the_slow_path() -> None:
    stream = _rich_stream()
    assert {event["type"] for event in stream} == set(v1_1.EVENT_TYPES)  # the fixture is rich

    consumer = Consumer("1.1")
    delivered: list[msgspec.Struct] = []
    for event in stream:
        delivered.extend(consumer.feed(encode(event)))
    consumer.close()

    assert consumer.slow_path_count == 0
    assert consumer.warnings == []
    assert consumer.violation is None
    assert [run.status for run in consumer.runs] == [
        "completed",
        "interrupted",
        "cancelled",
        "failed",
        "completed",
    ]
    # Nothing of the conformant traffic went missing on the way through.
    snapshot = next(e for e in delivered if type_of(e) == "MESSAGES_SNAPSHOT")
    assert wire(snapshot) == stream[1]
    finished = next(e for e in delivered if type_of(e) == "RUN_FINISHED")
    assert wire(finished) == next(e for e in stream if e["type"] == "RUN_FINISHED")


def test_only_the_payload_with_unrecognised_material_takes_the_slow_path() -> None:
    consumer = Consumer("1.1")
    consumer.feed(encode(START))
    consumer.feed(encode({"type": "CUSTOM", "name": "n", "value": 1}))
    assert consumer.slow_path_count == 0
    consumer.feed(encode({"type": "CUSTOM", "name": "n", "value": 1, "futureProp": True}))
    assert consumer.slow_path_count == 1
    consumer.feed(encode(FINISH))
    consumer.close()
    assert consumer.slow_path_count == 1


# --- unknown event types ----------------------------------------------------------------------


def test_known_event_is_delivered() -> None:
    result = run({"type": "CUSTOM", "name": "n", "value": 1})
    quiet(result)
    assert types(result) == ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]


def test_unknown_event_type_is_dropped_with_a_warning_naming_it() -> None:
    result = run(
        {"type": "FUTURE_EVENT", "payload": {"whatever": [1, 2]}},
        {"type": "CUSTOM", "name": "n", "value": 1},
    )
    warned_once(result, "FUTURE_EVENT")
    assert types(result) == ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]
    assert result.runs[0].status == "completed"


# --- unknown properties -----------------------------------------------------------------------

_USER_WITH_PARTS: Wire = {
    "id": "u-1",
    "role": "user",
    "content": [
        {"type": "text", "text": "see"},
        {"type": "image", "source": {"type": "url", "value": "https://x/i.png"}},
    ],
}
_ASSISTANT_WITH_CALL: Wire = {
    "id": "a-1",
    "role": "assistant",
    "toolCalls": [{"id": "c-1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}


def _with(value: Any, pointer: str, key: str, extra: Any) -> Any:
    """A deep copy of ``value`` with ``key: extra`` added inside the object at ``pointer``."""
    copied = json.loads(json.dumps(value))
    target = copied
    for token in filter(None, pointer.split("/")):
        target = target[int(token)] if isinstance(target, list) else target[token]
    target[key] = extra
    return copied


UNKNOWN_PROPERTY_CASES = [
    pytest.param({"type": "CUSTOM", "name": "n", "value": 1}, "", "/futureProp", id="top-level"),
    pytest.param(
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u", "role": "user", "content": "x"}]},
        "/messages/0",
        "/messages/0/futureProp",
        id="in-a-message",
    ),
    pytest.param(
        {"type": "MESSAGES_SNAPSHOT", "messages": [_USER_WITH_PARTS]},
        "/messages/0/content/1/source",
        "/messages/0/content/1/source/futureProp",
        id="in-a-part-source",
    ),
    pytest.param(
        {"type": "MESSAGES_SNAPSHOT", "messages": [_ASSISTANT_WITH_CALL]},
        "/messages/0/toolCalls/0/function",
        "/messages/0/toolCalls/0/function/futureProp",
        id="in-a-tool-call",
    ),
    pytest.param(
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "r",
            "toolCallId": "c",
            "content": [
                {"type": "text", "text": "a"},
                {"type": "text", "text": "b"},
            ],
        },
        "/content/1",
        "/content/1/futureProp",
        id="in-a-list-element",
    ),
]


@pytest.mark.parametrize(("event", "where", "pointer"), UNKNOWN_PROPERTY_CASES)
def test_unknown_property_is_stripped_where_it_sits(event: Wire, where: str, pointer: str) -> None:
    clean = run(event)
    quiet(clean)

    result = run(_with(event, where, "futureProp", {"nested": True}))
    warned_once(result, pointer)
    stripped = only(result, event["type"])
    assert wire(stripped) == wire(only(clean, event["type"]))  # the rest survives intact


def test_unknown_property_in_a_usage_entry_is_stripped() -> None:
    usage = [{"inputTokens": 1}, {"outputTokens": 2}]
    result = run(finish={**FINISH, "usage": [usage[0], {**usage[1], "futureProp": 3}]})
    warned_once(result, "/usage/1/futureProp")
    assert wire(only(result, "RUN_FINISHED"))["usage"] == usage


def test_unknown_property_pointer_escapes_slash_and_tilde() -> None:
    result = run({"type": "CUSTOM", "name": "n", "value": 1, "acme/x~y": 1})
    warned_once(result, "/acme~1x~0y")
    assert wire(only(result, "CUSTOM")) == {"type": "CUSTOM", "name": "n", "value": 1}


# --- unknown union members --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "status"),
    [
        ({"type": "success", "pendingToolCallIds": []}, "completed"),
        ({"type": "cancelled"}, "cancelled"),
        ({"type": "interrupt", "interrupts": [{"id": "i", "reason": "why"}]}, "interrupted"),
    ],
)
def test_known_outcome_is_delivered(outcome: Wire, status: str) -> None:
    result = run(finish={**FINISH, "outcome": outcome})
    quiet(result)
    assert wire(only(result, "RUN_FINISHED"))["outcome"] == outcome
    assert result.runs[0].status == status


def test_unknown_outcome_is_stripped_and_the_run_completes() -> None:
    result = run(finish={**FINISH, "outcome": {"type": "timeout", "after": 30}})
    warned_once(result, "/outcome")
    assert wire(only(result, "RUN_FINISHED")) == FINISH  # delivered, without the outcome
    assert result.runs[0].status == "completed"
    assert result.runs[0].outcome is None


@pytest.mark.parametrize(
    ("outcome", "path"),
    [
        pytest.param([1], "/outcome", id="array"),
        pytest.param("success", "/outcome", id="string"),
        pytest.param({}, "/outcome", id="no-type"),
        pytest.param(
            {"interrupts": [{"id": "i", "reason": "r"}]}, "/outcome", id="no-type-but-members"
        ),
        pytest.param({"type": 5}, "/outcome/type", id="non-string-type"),
    ],
)
def test_outcome_that_is_not_an_outcome_object_is_fatal(outcome: Any, path: str) -> None:
    fatal(run(finish={**FINISH, "outcome": outcome}), path)


def test_unknown_message_role_removes_that_message_only() -> None:
    kept = [
        {"id": "u-1", "role": "user", "content": "hi"},
        {"id": "a-1", "role": "assistant", "content": "hello"},
    ]
    narrator = {"id": "n-1", "role": "narrator", "content": "meanwhile"}
    result = run({"type": "MESSAGES_SNAPSHOT", "messages": [kept[0], narrator, kept[1]]})
    warned_once(result, "/messages/1", "narrator")
    assert wire(only(result, "MESSAGES_SNAPSHOT"))["messages"] == kept


def test_unknown_content_part_removes_that_part_only() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    message = {"id": "u-1", "role": "user", "content": [parts[0], {"type": "hologram"}, parts[1]]}
    result = run({"type": "MESSAGES_SNAPSHOT", "messages": [message]})
    warned_once(result, "/messages/0/content/1", "hologram")
    (delivered,) = wire(only(result, "MESSAGES_SNAPSHOT"))["messages"]
    assert delivered["content"] == parts


def test_known_part_source_is_delivered() -> None:
    part = {"type": "image", "source": {"type": "file", "value": "file-9"}}
    message = {"id": "u-1", "role": "user", "content": [part]}
    result = run({"type": "MESSAGES_SNAPSHOT", "messages": [message]})
    quiet(result)
    assert wire(only(result, "MESSAGES_SNAPSHOT"))["messages"] == [message]


def test_unknown_source_takes_its_part_with_it() -> None:
    text = {"type": "text", "text": "still here"}
    image = {"type": "image", "source": {"type": "telepathy", "value": "x"}}
    message = {"id": "u-1", "role": "user", "content": [image, text]}
    result = run({"type": "MESSAGES_SNAPSHOT", "messages": [message]})
    warned_once(result, "/messages/0/content/0", "source", "telepathy")
    (delivered,) = wire(only(result, "MESSAGES_SNAPSHOT"))["messages"]
    assert delivered["content"] == [text]


def test_unknown_part_in_a_tool_result_removes_that_part_only() -> None:
    text = {"type": "text", "text": "ok"}
    event = {
        "type": "TOOL_CALL_RESULT",
        "messageId": "r-1",
        "toolCallId": "c-1",
        "content": [{"type": "hologram"}, text],
    }
    result = run(event)
    warned_once(result, "/content/0", "hologram")
    assert wire(only(result, "TOOL_CALL_RESULT"))["content"] == [text]


def test_unknown_patch_op_removes_that_operation_only() -> None:
    add = {"op": "add", "path": "/a", "value": 1}
    replace = {"op": "replace", "path": "/a", "value": 2}
    result = run({"type": "STATE_DELTA", "delta": [add, {"op": "frob", "path": "/a"}, replace]})
    warned_once(result, "/delta/1", "frob")
    assert wire(only(result, "STATE_DELTA"))["delta"] == [add, replace]


def test_unknown_op_in_an_activity_patch_removes_that_operation_only() -> None:
    snapshot = {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": "act-1",
        "activityType": "progress",
        "content": {"pct": 1},
    }
    replace = {"op": "replace", "path": "/pct", "value": 2}
    delta = {
        "type": "ACTIVITY_DELTA",
        "messageId": "act-1",
        "activityType": "progress",
        "patch": [{"op": "frob"}, replace],
    }
    result = run(snapshot, delta)
    warned_once(result, "/patch/0", "frob")
    assert wire(only(result, "ACTIVITY_DELTA"))["patch"] == [replace]


PATCH_WITH_EXTRAS = [
    {"op": "add", "path": "/a", "value": 1, "acme/trace": "t-1"},
    {"op": "remove", "path": "/a", "value": "a leftover member"},
]


def test_extra_members_on_a_patch_op_are_preserved() -> None:
    consumer = Consumer("1.1")
    delivered: list[msgspec.Struct] = []
    for payload in in_run({"type": "STATE_DELTA", "delta": PATCH_WITH_EXTRAS}):
        delivered.extend(consumer.feed(payload))
    consumer.close()
    assert consumer.warnings == []
    assert consumer.slow_path_count == 0
    (delta,) = [event for event in delivered if type_of(event) == "STATE_DELTA"]
    assert wire(delta)["delta"] == PATCH_WITH_EXTRAS


def test_extra_members_on_a_patch_op_survive_the_slow_path() -> None:
    event = {"type": "STATE_DELTA", "delta": PATCH_WITH_EXTRAS, "futureProp": 1}
    result = run(event)
    warned_once(result, "/futureProp")
    assert wire(only(result, "STATE_DELTA"))["delta"] == PATCH_WITH_EXTRAS


@pytest.mark.parametrize(
    ("delta", "path"),
    [
        pytest.param({"op": "add", "path": "/a"}, "/delta/0", id="missing-value"),
        pytest.param({"op": "add", "path": "a", "value": 1}, "/delta/0/path", id="not-a-pointer"),
        pytest.param({"op": "move", "path": "/a"}, "/delta/0", id="missing-from"),
        pytest.param({"op": "add", "path": 7, "value": 1}, "/delta/0/path", id="wrong-type"),
        pytest.param({"path": "/a", "value": 1}, "/delta/0", id="no-op"),
    ],
)
def test_malformed_known_patch_op_is_fatal(delta: Wire, path: str) -> None:
    fatal(run({"type": "STATE_DELTA", "delta": [delta]}), path)


def test_patch_that_is_not_a_list_is_fatal() -> None:
    fatal(run({"type": "STATE_DELTA", "delta": {"op": "add", "path": "/a", "value": 1}}), "/delta")


# Open objects: whatever they hold is data, never unrecognised material.
OPEN_METADATA = {"acme/trace": "t-1", "acme/parent": None, "futureProp": {"type": "NOT_AN_EVENT"}}
OPEN_OBJECT_EVENTS = [
    pytest.param({"type": "CUSTOM", "name": "n", "value": 1, "metadata": OPEN_METADATA}, id="meta"),
    pytest.param(
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [{"id": "u", "role": "user", "content": "x", "metadata": OPEN_METADATA}],
        },
        id="message-metadata",
    ),
    pytest.param(
        {"type": "STATE_SNAPSHOT", "snapshot": {"futureProp": None, "role": "narrator"}},
        id="state",
    ),
    pytest.param(
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "act-1",
            "activityType": "progress",
            "content": {"futureProp": None, "type": "hologram"},
        },
        id="activity-content",
    ),
    pytest.param(
        {"type": "CUSTOM", "name": "n", "value": {"type": "FUTURE_EVENT", "futureProp": None}},
        id="custom-value",
    ),
    pytest.param({"type": "RAW", "event": {"type": "FUTURE_EVENT", "x": None}}, id="raw-event"),
]


@pytest.mark.parametrize("event", OPEN_OBJECT_EVENTS)
def test_open_object_keys_are_never_stripped(event: Wire) -> None:
    result = run(event)
    quiet(result)
    assert wire(only(result, event["type"])) == event


@pytest.mark.parametrize("event", OPEN_OBJECT_EVENTS)
def test_open_object_keys_survive_the_slow_path(event: Wire) -> None:
    result = run({**event, "futureProp": 1})
    warned_once(result, "/futureProp")
    assert wire(only(result, event["type"])) == event


# --- closed string sets -----------------------------------------------------------------------


def test_known_text_message_role_is_kept() -> None:
    result = run(
        {"type": "TEXT_MESSAGE_START", "messageId": "m-1", "role": "user"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m-1"},
    )
    quiet(result)
    start = only(result, "TEXT_MESSAGE_START")
    assert isinstance(start, v1_1.TextMessageStartEvent)
    assert start.role == "user"


def test_unknown_text_message_role_is_stripped_to_the_default() -> None:
    # The spec's rule over the reference client's admitted gap (conformance stream
    # unknown-enum-value-role-fatal pins the gap): the optional role is stripped.
    result = run(
        {"type": "TEXT_MESSAGE_START", "messageId": "m-1", "role": "narrator"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m-1", "delta": "once upon a time"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m-1"},
    )
    warned_once(result, "/role", "narrator")
    start = only(result, "TEXT_MESSAGE_START")
    assert isinstance(start, v1_1.TextMessageStartEvent)
    assert start.role == "assistant"
    assert result.runs[0].status == "completed"


def test_text_message_role_of_the_wrong_type_is_fatal() -> None:
    fatal(run({"type": "TEXT_MESSAGE_START", "messageId": "m-1", "role": 3}), "/role")


def test_reasoning_message_role_const_is_accepted() -> None:
    result = run(
        {"type": "REASONING_MESSAGE_START", "messageId": "t-1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_END", "messageId": "t-1"},
    )
    quiet(result)


def test_wrong_const_is_fatal_not_stripped() -> None:
    event = {"type": "REASONING_MESSAGE_START", "messageId": "t-1", "role": "assistant"}
    fatal(run(event, {"type": "REASONING_MESSAGE_END", "messageId": "t-1"}), "/role")


ENCRYPTED: Wire = {
    "type": "REASONING_ENCRYPTED_VALUE",
    "subtype": "message",
    "entityId": "m-1",
    "encryptedValue": "opaque",
}


@pytest.mark.parametrize("subtype", ["message", "tool-call"])
def test_known_encrypted_value_subtype_is_delivered(subtype: str) -> None:
    result = run({**ENCRYPTED, "subtype": subtype})
    accepted(result)
    assert wire(only(result, "REASONING_ENCRYPTED_VALUE"))["subtype"] == subtype


def test_unknown_encrypted_value_subtype_drops_the_event() -> None:
    result = run({**ENCRYPTED, "subtype": "activity"}, {"type": "CUSTOM", "name": "n", "value": 1})
    warned_once(result, "REASONING_ENCRYPTED_VALUE", "/subtype")
    assert types(result) == ["RUN_STARTED", "CUSTOM", "RUN_FINISHED"]


def test_encrypted_value_subtype_of_the_wrong_type_is_fatal() -> None:
    fatal(run({**ENCRYPTED, "subtype": 1}), "/subtype")


def test_unknown_resume_status_removes_that_entry_only() -> None:
    resolved = {"interruptId": "i-2", "status": "resolved"}
    run_input = {
        "threadId": THREAD,
        "runId": RUN,
        "messages": [],
        "resume": [{"interruptId": "i-1", "status": "deferred"}, resolved],
    }
    result = run(start={**START, "input": run_input})
    warned_once(result, "/input/resume/0", "deferred")
    assert wire(only(result, "RUN_STARTED"))["input"]["resume"] == [resolved]


# --- malformed known values: fatal, never coerced ---------------------------------------------

CUSTOM: Wire = {"type": "CUSTOM", "name": "n", "value": 1}
CONTENT: Wire = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m-1", "delta": "x"}

MALFORMED_CASES = [
    pytest.param({**CONTENT, "delta": 42}, "/delta", id="number-for-string"),
    pytest.param({**CONTENT, "messageId": 7}, "/messageId", id="number-for-id"),
    pytest.param({**CUSTOM, "name": ["n"]}, "/name", id="array-for-string"),
    pytest.param({**CUSTOM, "timestamp": MAX_SAFE_INTEGER + 1}, "/timestamp", id="ts-too-big"),
    pytest.param({**CUSTOM, "timestamp": -MAX_SAFE_INTEGER - 1}, "/timestamp", id="ts-too-small"),
    pytest.param({**CUSTOM, "timestamp": 1.5}, "/timestamp", id="ts-fraction"),
    pytest.param({**CUSTOM, "timestamp": "1700000000000"}, "/timestamp", id="ts-string"),
    pytest.param({**CUSTOM, "timestamp": True}, "/timestamp", id="ts-bool"),
    pytest.param(
        {**FINISH, "usage": [{"inputTokens": -1}]}, "/usage/0/inputTokens", id="neg-tokens"
    ),
    pytest.param(
        {**FINISH, "usage": [{"totalTokens": MAX_SAFE_INTEGER + 1}]},
        "/usage/0/totalTokens",
        id="huge-tokens",
    ),
    pytest.param({**CUSTOM, "metadata": None}, "/metadata", id="null-metadata"),
    pytest.param({**CUSTOM, "metadata": ["k"]}, "/metadata", id="array-metadata"),
    pytest.param({**CUSTOM, "subagentRunId": None}, "/subagentRunId", id="null-subagentRunId"),
    pytest.param(
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u", "role": "user", "content": 5}]},
        "/messages/0/content",
        id="nested-wrong-type",
    ),
    pytest.param(
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {
                    **_ASSISTANT_WITH_CALL,
                    "toolCalls": [
                        {"id": "c", "type": "mcp", "function": {"name": "f", "arguments": "{}"}}
                    ],
                }
            ],
        },
        "/messages/0/toolCalls/0/type",
        id="nested-wrong-const",
    ),
    pytest.param(
        {**FINISH, "outcome": {"type": "interrupt", "interrupts": []}},
        "/outcome/interrupts",
        id="empty-interrupts",
    ),
    pytest.param(
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "a",
            "activityType": "progress",
            "content": ["not", "an", "object"],
        },
        "/content",
        id="activity-content-array",
    ),
    pytest.param({**CUSTOM, "name": 42, "futureProp": 1}, "/name", id="unknown-does-not-mask"),
]


@pytest.mark.parametrize(("event", "path"), MALFORMED_CASES)
def test_malformed_known_value_is_fatal(event: Wire, path: str) -> None:
    fatal(run(event), path)


@pytest.mark.parametrize(
    "event",
    [
        pytest.param({**CUSTOM, "timestamp": MAX_SAFE_INTEGER}, id="ts-max"),
        pytest.param({**CUSTOM, "timestamp": -MAX_SAFE_INTEGER}, id="ts-min"),
        pytest.param({**FINISH, "usage": [{"inputTokens": 0, "totalTokens": 0}]}, id="zero-tokens"),
        pytest.param({**CUSTOM, "rawEvent": False}, id="falsy-rawEvent"),
        pytest.param({**CUSTOM, "metadata": {}}, id="empty-metadata"),
        pytest.param({**FINISH, "result": 0}, id="falsy-result"),
        pytest.param({"type": "STATE_SNAPSHOT", "snapshot": None}, id="null-snapshot"),
        pytest.param({"type": "STATE_SNAPSHOT", "snapshot": False}, id="false-snapshot"),
        pytest.param({"type": "CUSTOM", "name": "n", "value": None}, id="null-custom-value"),
        pytest.param({"type": "RAW", "event": None}, id="null-raw-event"),
        pytest.param({**CONTENT, "delta": ""}, id="empty-delta"),
    ],
)
def test_boundary_and_any_valued_fields_are_accepted(event: Wire) -> None:
    if event["type"] == "RUN_FINISHED":
        result = run(finish=event)
    elif event["type"] == "TEXT_MESSAGE_CONTENT":
        message_id = event["messageId"]
        result = run(
            {"type": "TEXT_MESSAGE_START", "messageId": message_id},
            event,
            {"type": "TEXT_MESSAGE_END", "messageId": message_id},
        )
    else:
        result = run(event)
    quiet(result)
    assert wire(only(result, event["type"])) == event  # delivered as sent, not coerced


def test_timestamp_is_delivered_as_sent() -> None:
    result = run({**CUSTOM, "timestamp": MAX_SAFE_INTEGER})
    custom = only(result, "CUSTOM")
    assert isinstance(custom, v1_1.CustomEvent)
    assert custom.timestamp == MAX_SAFE_INTEGER


def test_integer_spelled_with_a_fraction_of_zero_is_an_integer() -> None:
    quiet(run({**CUSTOM, "timestamp": 1_700_000_000_000.0}))


@pytest.mark.parametrize(
    ("event", "field"),
    [
        pytest.param({"type": "CUSTOM", "name": "n"}, "value", id="custom-value"),
        pytest.param({"type": "CUSTOM", "value": 1}, "name", id="custom-name"),
        pytest.param({"type": "RAW"}, "event", id="raw-event"),
        pytest.param({"type": "TEXT_MESSAGE_START"}, "messageId", id="text-start-id"),
        pytest.param({"type": "SUBAGENT_STARTED", "subagentRunId": "s"}, "name", id="subagent"),
        pytest.param({"type": "STATE_SNAPSHOT"}, "snapshot", id="snapshot"),
        pytest.param(
            {"type": "MESSAGES_SNAPSHOT", "messages": [{"role": "user", "content": "x"}]},
            "id",
            id="nested-message-id",
        ),
    ],
)
def test_missing_required_field_is_fatal(event: Wire, field: str) -> None:
    result = run(event)
    assert result.outcome == "failed"
    violation = result.violation
    assert isinstance(violation, MalformedEvent), violation
    assert (violation.rule, violation.index) == ("malformed-event", 1)
    assert f"`{field}`" in str(violation)
    assert types(result) == ["RUN_STARTED"]


# --- bytes that are not an event --------------------------------------------------------------

GOOD_CUSTOM = b'{"type":"CUSTOM","name":"n","value":1}'


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b'{"type":"CUSTOM","name":', id="truncated"),
        pytest.param(GOOD_CUSTOM + b" trailing", id="trailing-garbage"),
        pytest.param(GOOD_CUSTOM + GOOD_CUSTOM, id="two-events"),
        pytest.param(b"{'type': 'CUSTOM', 'name': 'n', 'value': 1}", id="single-quotes"),
        pytest.param(b'{"type":"CUSTOM","name":"n","value":NaN}', id="nan"),
    ],
)
def test_invalid_json_is_fatal(payload: bytes) -> None:
    result = consume([encode(START), payload, encode(FINISH)])
    rejected_for(result, "invalid-json")


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"[" + GOOD_CUSTOM + b"]", id="array"),
        pytest.param(b"42", id="number"),
        pytest.param(b'"CUSTOM"', id="string"),
        pytest.param(b"null", id="null"),
        pytest.param(b"true", id="boolean"),
    ],
)
def test_json_that_is_not_an_object_is_fatal(payload: bytes) -> None:
    result = consume([encode(START), payload, encode(FINISH)])
    rejected_for(result, "not-an-object")


def test_event_without_a_string_type_is_fatal() -> None:
    fatal(run({"name": "n", "value": 1}), "/type")
    fatal(run({"type": 7, "name": "n", "value": 1}), "/type")


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b"\xff\xfe" + GOOD_CUSTOM, id="leading-bytes"),
        pytest.param(
            b'{"type":"CUSTOM","name":"n","value":1,"futureProp":"\xe9"}', id="in-unknown-property"
        ),
    ],
)
def test_non_utf8_payload_is_fatal(payload: bytes) -> None:
    result = consume([encode(START), payload, encode(FINISH)])
    rejected_for(result, "invalid-utf8")


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(b'{"type":"CUSTOM","name":"caf\xe9","value":1}', id="latin-1"),
        pytest.param(b'{"type":"CUSTOM","name":"n","value":"\xed\xa0\x80"}', id="surrogate"),
    ],
)
def test_non_utf8_inside_a_known_string_is_fatal(payload: bytes) -> None:
    result = consume([encode(START), payload, encode(FINISH)])
    rejected_for(result, "invalid-utf8")


def test_str_payload_that_cannot_be_utf8_is_fatal() -> None:
    payload = b'{"type":"CUSTOM","name":"caf\xe9","value":1}'.decode("utf-8", "surrogateescape")
    result = consume([encode(START), payload, encode(FINISH)])
    assert result.outcome == "failed"
    assert isinstance(result.violation, MalformedEvent)
    assert result.violation.rule in {"invalid-utf8", "invalid-json"}
    assert result.violation.index == 1


@pytest.mark.parametrize(
    "payload",
    [
        pytest.param(GOOD_CUSTOM.decode(), id="str"),
        pytest.param(bytearray(GOOD_CUSTOM), id="bytearray"),
        pytest.param(memoryview(GOOD_CUSTOM), id="memoryview"),
        pytest.param({"type": "CUSTOM", "name": "n", "value": 1}, id="dict"),
    ],
)
def test_other_payload_forms_are_accepted(payload: Any) -> None:
    result = consume([encode(START), payload, encode(FINISH)])
    quiet(result)
    assert wire(only(result, "CUSTOM")) == CUSTOM


DICT_VS_BYTES_STREAMS = [
    pytest.param([CUSTOM], id="conformant"),
    pytest.param([{**CUSTOM, "futureProp": 1}], id="unknown-property"),
    pytest.param([{"type": "FUTURE_EVENT"}, CUSTOM], id="unknown-type"),
    pytest.param(
        [{"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "x", "role": "narrator"}]}],
        id="unknown-role",
    ),
    pytest.param([CUSTOM, {**CUSTOM, "timestamp": -1.5}], id="malformed"),
    pytest.param([{**CUSTOM, "metadata": None}], id="null-optional"),
]


@pytest.mark.parametrize("events", DICT_VS_BYTES_STREAMS)
def test_dict_payloads_get_the_same_verdict_as_bytes(events: list[Wire]) -> None:
    as_bytes = consume(in_run(*events))
    as_dicts = consume([START, *events, FINISH])
    assert as_dicts.outcome == as_bytes.outcome
    assert as_dicts.warnings == as_bytes.warnings
    assert [wire(e) for e in as_dicts.events] == [wire(e) for e in as_bytes.events]
    if as_bytes.violation is None:
        assert as_dicts.violation is None
    else:
        assert as_dicts.violation is not None
        got = (as_dicts.violation.rule, as_dicts.violation.index, as_dicts.violation.path)
        assert got == (as_bytes.violation.rule, as_bytes.violation.index, as_bytes.violation.path)


def test_dict_payload_that_is_not_json_is_fatal() -> None:
    result = consume([START, {**CUSTOM, "value": object()}, FINISH])
    rejected_for(result, "invalid-json")


def test_dict_payload_with_nan_gets_the_verdict_of_its_bytes() -> None:
    text = '{"type":"CUSTOM","name":"n","value":NaN}'
    as_bytes = consume([encode(START), text.encode(), encode(FINISH)])
    rejected_for(as_bytes, "invalid-json")
    as_dict = consume([START, json.loads(text), FINISH])
    rejected_for(as_dict, "invalid-json")


_TEXT = st.text(st.characters(codec="utf-8"), max_size=8)  # encodable str
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
    max_leaves=12,
)
_EVENT_KEYS = (
    "messageId",
    "delta",
    "name",
    "value",
    "snapshot",
    "messages",
    "outcome",
    "role",
    "subtype",
    "timestamp",
    "metadata",
    "futureProp",
)
_EVENTISH = st.fixed_dictionaries(
    {"type": st.sampled_from([*v1_1.EVENT_TYPES, "FUTURE_EVENT"])},
    optional=dict.fromkeys(_EVENT_KEYS, _JSON),
)


@settings(max_examples=300, deadline=None)
@given(payload=_JSON | _EVENTISH)
def test_any_json_value_gets_a_verdict_never_an_exception(payload: Any) -> None:
    result = consume([encode(START), encode(payload), encode(FINISH)])
    if result.violation is not None:
        assert isinstance(result.violation, ProtocolViolation)
        assert result.violation.index in (1, 2)
    if isinstance(result.violation, MalformedEvent):
        assert types(result) == ["RUN_STARTED"]


# --- protocol versions ------------------------------------------------------------------------


def test_encrypted_value_type_is_kept_in_1_1() -> None:
    event = {**ENCRYPTED, "encryptedValueType": "acme/v1"}
    result = run(event, version="1.1")
    accepted(result)
    assert not any("encryptedValueType" in warning for warning in result.warnings)
    assert wire(only(result, "REASONING_ENCRYPTED_VALUE")) == event


def test_encrypted_value_type_is_stripped_in_1_0() -> None:
    result = run({**ENCRYPTED, "encryptedValueType": "acme/v1"}, version="1.0")
    accepted(result)
    assert [w for w in result.warnings if "/encryptedValueType" in w], result.warnings
    delivered = only(result, "REASONING_ENCRYPTED_VALUE")
    assert isinstance(delivered, v1_0.ReasoningEncryptedValueEvent)
    assert wire(delivered) == ENCRYPTED


def test_encrypted_value_type_on_a_message_is_stripped_in_1_0() -> None:
    message = {"id": "s", "role": "system", "content": "x", "encryptedValue": "opaque"}
    event = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [{**message, "encryptedValueType": "acme/v1"}],
    }
    quiet(run(event, version="1.1"))
    result = run(event, version="1.0")
    warned_once(result, "/messages/0/encryptedValueType")
    assert wire(only(result, "MESSAGES_SNAPSHOT"))["messages"] == [message]


# --- attribution on run-scoped events --------------------------------------------------------


def test_subagent_run_id_on_an_attributable_event_is_kept() -> None:
    event = {**CUSTOM, "subagentRunId": "sub-1"}
    result = run(event)
    quiet(result)
    assert wire(only(result, "CUSTOM")) == event


@pytest.mark.parametrize(
    ("start", "events", "finish", "event_type"),
    [
        pytest.param({**START, "subagentRunId": "sub-1"}, [], FINISH, "RUN_STARTED", id="start"),
        pytest.param(START, [], {**FINISH, "subagentRunId": "sub-1"}, "RUN_FINISHED", id="finish"),
        pytest.param(
            START,
            [{"type": "MESSAGES_SNAPSHOT", "messages": [], "subagentRunId": "sub-1"}],
            FINISH,
            "MESSAGES_SNAPSHOT",
            id="messages-snapshot",
        ),
    ],
)
def test_subagent_run_id_on_a_run_scoped_event_is_stripped(
    start: Wire, events: list[Wire], finish: Wire, event_type: str
) -> None:
    result = run(*events, start=start, finish=finish)
    warned_once(result, "/subagentRunId")
    assert "subagentRunId" not in wire(only(result, event_type))


def test_subagent_run_id_on_run_error_is_stripped() -> None:
    result = consume(
        [encode(START), encode({"type": "RUN_ERROR", "message": "x", "subagentRunId": "sub-1"})]
    )
    warned_once(result, "/subagentRunId")
    assert wire(only(result, "RUN_ERROR")) == {"type": "RUN_ERROR", "message": "x"}
    assert result.runs[0].status == "failed"


# --- what came before a fatal event ----------------------------------------------------------


def test_events_before_a_fatal_one_are_kept_and_the_index_counts_every_payload() -> None:
    stream = [
        START,
        CUSTOM,
        {"type": "FUTURE_EVENT"},  # index 2: dropped, still counted
        {**CUSTOM, "futureProp": 1},  # index 3: stripped, delivered
        {**CUSTOM, "name": None},  # index 4: fatal
        CUSTOM,
        FINISH,
    ]
    result = consume([encode(event) for event in stream])
    assert result.outcome == "failed"
    violation = result.violation
    assert isinstance(violation, MalformedEvent)
    assert (violation.rule, violation.index, violation.path) == ("malformed-event", 4, "/name")
    assert [wire(event) for event in result.events] == [START, CUSTOM, CUSTOM]
    assert len(result.warnings) == 2
    assert "FUTURE_EVENT" in result.warnings[0]
    assert "/futureProp" in result.warnings[1]


def test_consumer_raises_the_violation_and_keeps_raising_it() -> None:
    consumer = Consumer("1.1")
    assert [wire(e) for e in consumer.feed(encode(START))] == [START]
    with pytest.raises(MalformedEvent) as caught:
        consumer.feed(encode({**CUSTOM, "value": 1, "timestamp": "soon"}))
    assert (caught.value.index, caught.value.path) == (1, "/timestamp")
    assert consumer.violation is caught.value
    with pytest.raises(MalformedEvent) as again:
        consumer.feed(encode(CUSTOM))
    assert again.value is caught.value


def test_a_json_pointer_with_a_trailing_newline_is_malformed() -> None:
    # ECMA-262 `$` does not match before a final newline; Python's does, so codegen uses \Z.
    patch = [{"op": "add", "path": "\n", "value": 1}]
    result = consume(in_run({"type": "STATE_DELTA", "delta": patch}))
    rejected_for(result, "malformed-event")
    assert result.violation is not None
    assert result.violation.path == "/delta/0/path"


# --- violation.path indexes the event as received (basic/processing) -----------------------------


def consumed(*events: dict[str, Any], input: Any = None) -> agui.Result:
    return agui.consume([msgspec.json.encode(e) for e in events], input=input)


def rejected_at(result: agui.Result, rule: str, index: int, path: str | None = None) -> None:
    assert result.violation is not None, "the stream was accepted"
    assert (result.violation.rule, result.violation.index) == (rule, index), result.violation
    if path is not None:
        assert result.violation.path == path


def snapshot(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


def test_path_of_a_malformed_element_counts_the_elements_stripped_before_it() -> None:
    delta = [{"op": "frobnicate", "path": "/a"}, {"path": "/b", "value": 1}]
    result = consumed(START, {"type": "STATE_DELTA", "delta": delta})
    rejected_at(result, "malformed-event", 1, "/delta/1")
    assert any("/delta/0: removed" in w for w in result.warnings)


def test_path_into_a_nested_list_counts_stripped_siblings() -> None:
    parts = [{"type": "hologram"}, {"type": "text"}]
    result = consumed(START, snapshot({"id": "u", "role": "user", "content": parts}))
    rejected_at(result, "malformed-event", 1, "/messages/0/content/1")


def test_path_of_a_malformed_input_element_counts_stripped_ones() -> None:
    messages = [{"id": "x", "role": "narrator"}, {"id": 5, "role": "user", "content": "x"}]
    with pytest.raises(agui.MalformedEvent) as caught:
        agui.build_run_input({"threadId": "t", "runId": "r", "messages": messages})
    assert caught.value.path == "/messages/1/id"


# --- payloads given as Python values -------------------------------------------------------------


@pytest.mark.parametrize("value", [[], None, 5, True], ids=repr)  # a str is JSON text
def test_a_python_value_that_is_not_an_object_is_not_an_object(value: object) -> None:
    result = agui.consume([START, value, FINISH])  # type: ignore[list-item]
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("not-an-object", 1)


# --- unknown properties: the shortcut past the walk ----------------------------------------------
# On the slow path, an event whose only unrecognised material is properties of its own is
# converted without the full walk. What must not differ: the verdict, its rule, index and
# path, the warnings, the messages, the state and the events delivered.


def content(message_id: str, delta: str, **extra: Any) -> Wire:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": delta, **extra}


def summary(result: Any) -> tuple[Any, ...]:
    violation = result.violation
    return (
        result.outcome,
        None if violation is None else (violation.rule, violation.index, violation.path),
        result.warnings,
        [(run.status, run.run_id) for run in result.runs],
        msgspec.to_builtins(result.messages),
        result.state,
        msgspec.to_builtins(result.events),
    )


EXTRA_VALUES = st.sampled_from([1, 2.0, "x", None, [], {"k": [1]}])


@st.composite
def with_extras(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with unknown properties added at random depths, and some integers as
    integral floats: material the walk removes or reads, or that makes the event malformed."""
    if isinstance(document, list):
        return [draw(with_extras(item)) for item in document]
    if not isinstance(document, dict):
        if type(document) is int and draw(st.integers(0, 3)) == 0:
            return float(document)
        return document
    result = {key: draw(with_extras(value)) for key, value in document.items()}
    for _ in range(draw(st.integers(0, 2))):
        result[draw(st.sampled_from(["xVendor", "x~y/z", "extra"]))] = draw(EXTRA_VALUES)
    return result


def walked_only(events: list[Wire]) -> tuple[Any, ...]:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(Enforcer, "_without_unknown_properties", lambda *arguments: None)
        return summary(consume([msgspec.json.encode(event) for event in events]))


@settings(deadline=None, max_examples=120)
@given(st.data())
def test_unknown_properties_without_the_walk_give_what_the_walk_gives(data: st.DataObject) -> None:
    events = data.draw(valid_streams(max_runs=1), label="stream")
    events = [data.draw(with_extras(event), label="event") for event in events]
    assert summary(consume([msgspec.json.encode(event) for event in events])) == walked_only(events)


def test_an_event_with_an_unknown_property_is_kept_without_it() -> None:
    events = [
        {**START, "xVendor": {"trace": 1}},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "x~y": 1},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        FINISH,
    ]
    result = consume([msgspec.json.encode(event) for event in events])
    assert result.outcome == "completed"
    assert result.warnings == [
        "event 0 /xVendor: removed unrecognised property",
        "event 1 /x~0y: removed unrecognised property",
    ]
    assert summary(result) == walked_only(events)


def test_an_event_with_open_unions_still_takes_the_walk() -> None:
    """JSON Patch operations stay dicts: an unknown op is the walk's to remove, not the reducer's."""
    events = [
        START,
        {
            "type": "STATE_DELTA",
            "xVendor": 1,
            "delta": [{"op": "frobnicate", "path": "/a"}, {"op": "add", "path": "/b", "value": 2}],
        },
        FINISH,
    ]
    result = consume([msgspec.json.encode(event) for event in events])
    assert result.state == {"b": 2}
    assert result.warnings[0] == "event 1 /xVendor: removed unrecognised property"
    assert "/delta/0" in result.warnings[1]
    assert summary(result) == walked_only(events)


def fed_one_by_one(events: list[Wire]) -> Consumer:
    """One batch, which the vendor property sends to the enforcer payload by payload."""
    consumer = Consumer()
    with contextlib.suppress(ProtocolViolation):
        consumer.feed_many([msgspec.json.encode(event) for event in events])
    return consumer


def test_after_an_unknown_property_the_next_payload_is_judged_the_same() -> None:
    """A payload after one with a vendor property skips the strict decode; it still gets the
    verdict, the warnings and the count it would have got."""
    vendor = content("m", "a", xVendor=1)
    retired = {"type": "THINKING_START"}
    malformed = content("m", "b", timestamp="soon")
    opened = [START, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]
    for after, needs_slow_path in ((content("m", "b"), False), (retired, True), (vendor, True)):
        consumer = fed_one_by_one([*opened, vendor, after])
        assert consumer.slow_path_count == 1 + needs_slow_path
        assert consumer.violation is None
    consumer = fed_one_by_one([*opened, vendor, malformed])
    assert consumer.violation is not None
    assert (consumer.violation.rule, consumer.violation.index, consumer.violation.path) == (
        "malformed-event",
        3,
        "/timestamp",
    )
    translated = fed_one_by_one([*opened, vendor, retired, FINISH]).warnings
    assert [warning for warning in translated if "THINKING_START" in warning] == [
        "event 3: translated retired THINKING_START to REASONING_START"
    ]


def test_a_stream_one_version_ahead_reads_the_same_in_batches_as_event_by_event() -> None:
    """After the first payload, a batch whose events all carry the same new property takes
    one conversion; what the consumer delivers and keeps, warnings of later stages among
    them, is what it would be payload by payload."""
    events = [
        START,
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": 1}},
        {"type": "STATE_DELTA", "delta": [{"op": "test", "path": "/a", "value": 2}]},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *(content("m", str(n)) for n in range(5)),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        FINISH,
    ]
    payloads = [msgspec.json.encode({**event, "xVendor": 1}) for event in events]
    batched, each = Consumer(), Consumer()
    delivered = batched.feed_many(payloads[:1]) + batched.feed_many(payloads[1:]) + batched.close()
    one_by_one = [event for payload in payloads for event in each.feed(payload)] + each.close()
    assert batched.slow_path_count == each.slow_path_count == len(payloads)
    assert delivered == one_by_one
    assert batched.warnings == each.warnings
    assert (
        batched.warnings[0]
        == "event 0 /xVendor: removed unrecognised property (11 times in this run)"
    )
    assert any("/delta" in warning for warning in batched.warnings)  # the reducer's own
    assert (batched.messages, batched.state) == (each.messages, each.state)
    # the warnings of a batch are about the events it holds: the decoder counts as the consumer
    assert batched._decoder.event_index == batched.event_index == len(payloads)


# --- the batch check of open unions without their string patterns --------------------------

_Pointer = Annotated[str, msgspec.Meta(pattern=r"\A(?:/[^~]*)*\Z")]


class _Add(msgspec.Struct, tag_field="op", tag="add"):
    path: _Pointer
    value: Any


class _Maybe(msgspec.Struct, tag_field="op", tag="maybe"):
    path: _Pointer | msgspec.UnsetType = msgspec.UNSET


class _Other(msgspec.Struct, tag_field="op", tag="other"):
    path: Annotated[str, msgspec.Meta(pattern=r"\A[a-z]*\Z")]


class _Many(msgspec.Struct, tag_field="op", tag="many"):
    paths: list[_Pointer]


@pytest.mark.parametrize(
    ("union", "pattern_free"),
    [
        pytest.param(_Add, True, id="a member's own string"),
        pytest.param(_Add | _Maybe, True, id="an optional member's own string"),
        pytest.param(_Add | _Other, False, id="two patterns on one attribute"),
        pytest.param(_Add | _Many, False, id="a pattern in a list"),
    ],
)
def test_a_pattern_only_the_exact_check_can_place_keeps_that_check(
    union: Any, pattern_free: bool
) -> None:
    assert (_pattern_free(union) is not None) is pattern_free


def test_an_absent_optional_string_passes_the_batch_check() -> None:
    enforcer = Enforcer(v1_1, print)
    free = _pattern_free(_Add | _Maybe)
    assert free is not None
    enforcer._pattern_free = {free.holder: free}
    assert enforcer._members_valid(
        [{"op": "maybe"}, {"op": "add", "path": "/a", "value": 1}], free.holder
    )
    assert not enforcer._members_valid([{"op": "maybe", "path": "a"}], free.holder)


def test_the_batch_check_keeps_every_constraint_but_the_pattern() -> None:
    free = _pattern_free(v1_1.JsonPatchOperation)
    assert free is not None
    good = {"op": "copy", "from": "/a", "path": "/b"}
    assert msgspec.convert({"items": [good]}, free.holder)
    for bad in ({"op": "copy", "path": "/b"}, {**good, "from": 1}, {"op": "add", "path": "/a"}):
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert({"items": [bad]}, free.holder)
    assert sorted(check.attr for check in free.patterns) == ["from_", "path"]
