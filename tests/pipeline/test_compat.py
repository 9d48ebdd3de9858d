"""The compatibility boundary, version negotiation and middleware (AG-UI 1.1).

Spec pages: basic/versioning (retired shapes translated as middleware before
enforcement, lossy translations warn, producer version declarations compared as
MAJOR.MINOR: newer or uninterpretable → proceed and warn), basic/processing
(pipeline order: boundary → middleware → enforcement → expansion → verification),
basic/index ("absent means absent": no ``null`` for optional fields).
RULES.md sections A (nulls), J (versions).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import pytest

from agui_msgspec import Consumer, Result, consume
from agui_msgspec._pipeline.consumer import Middleware
from agui_msgspec._versions import producer_version_notice

Event = dict[str, Any]

RUN_STARTED: Event = {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}
RUN_FINISHED: Event = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}


def one_run(*events: Event, started: Event = RUN_STARTED) -> list[Event]:
    return [started, *events, RUN_FINISHED]


def run(
    events: Sequence[Event], middleware: Sequence[Middleware] = (), version: str = "1.1"
) -> Result:
    payloads = [msgspec.json.encode(event) for event in events]
    return consume(payloads, version, middleware=middleware)


def types(result: Result) -> list[str]:
    return [str(type(event).__struct_config__.tag) for event in result.events]


def accepted(
    events: Sequence[Event], middleware: Sequence[Middleware] = (), version: str = "1.1"
) -> Result:
    result = run(events, middleware, version)
    assert result.violation is None, result.violation
    assert result.outcome == "completed"
    return result


# --- retired THINKING_* events -------------------------------------------------------------


THINKING: list[Event] = [
    {"type": "THINKING_START"},
    {"type": "THINKING_TEXT_MESSAGE_START"},
    {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "Let me "},
    {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "think."},
    {"type": "THINKING_TEXT_MESSAGE_END"},
    {"type": "THINKING_END"},
]


def test_thinking_events_are_translated_to_the_reasoning_family() -> None:
    result = accepted(one_run(*THINKING, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "a1"}))
    assert types(result)[1:7] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]
    assert not any(t.startswith("THINKING") for t in types(result))


def test_thinking_translation_warns_naming_each_retired_type() -> None:
    seen: list[str] = []
    result = consume(map(msgspec.json.encode, one_run(*THINKING)), on_warning=seen.append)
    for index, event in enumerate(THINKING, start=1):
        assert any(f"event {index}" in w and event["type"] in w for w in seen), (event, seen)
    # Kept once per kind within the run, with a count: the second delta is not a new line.
    assert len(result.warnings) == 5
    assert result.warnings[2] == (
        "event 3: translated retired THINKING_TEXT_MESSAGE_CONTENT to"
        " REASONING_MESSAGE_CONTENT (2 times in this run)"
    )


def test_thinking_message_is_assembled_as_a_reasoning_message() -> None:
    result = accepted(one_run(*THINKING))
    held = msgspec.to_builtins(result.messages)
    assert [(m["role"], m["content"]) for m in held] == [("reasoning", "Let me think.")]
    # the span and the message it contains are matched by their minted ids
    delivered = msgspec.to_builtins(result.events)
    assert delivered[1]["messageId"] == delivered[6]["messageId"]
    assert delivered[2]["messageId"] == delivered[5]["messageId"] == held[0]["id"]


def test_two_thinking_spans_get_distinct_ids() -> None:
    result = accepted(one_run(*THINKING, *THINKING))
    held = msgspec.to_builtins(result.messages)
    assert [m["content"] for m in held] == ["Let me think.", "Let me think."]
    assert held[0]["id"] != held[1]["id"]


def test_thinking_translation_that_drops_a_title_names_it() -> None:
    result = accepted(
        one_run({"type": "THINKING_START", "title": "Planning"}, {"type": "THINKING_END"})
    )
    assert any("title" in warning for warning in result.warnings), result.warnings


# --- legacy nulls --------------------------------------------------------------------------


def test_legacy_null_parent_message_id_reads_as_absent_with_a_warning() -> None:
    events: list[Event] = [
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c1",
            "toolCallName": "f",
            "parentMessageId": None,
        },
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {
            "type": "TOOL_CALL_CHUNK",
            "toolCallId": "c2",
            "toolCallName": "g",
            "parentMessageId": None,
        },
    ]
    seen: list[str] = []
    result = consume(map(msgspec.json.encode, one_run(*events)), on_warning=seen.append)
    assert result.violation is None
    assert "parentMessageId" not in msgspec.to_builtins(result.events[1])
    assert any("event 1" in w and "/parentMessageId" in w for w in seen)
    assert any("event 3" in w and "/parentMessageId" in w for w in seen)
    # kept once: the same kind of warning on the same path within a run, with a count
    assert result.warnings == [
        "event 1 /parentMessageId: legacy null read as absent (2 times in this run)"
    ]


def test_legacy_null_outcome_reads_as_a_success_with_a_warning() -> None:
    result = accepted([RUN_STARTED, {**RUN_FINISHED, "outcome": None}])
    assert [run.status for run in result.runs] == ["completed"]
    assert result.runs[0].outcome is None
    assert any("event 1" in w and "/outcome" in w for w in result.warnings)


OTHER_NULLS = [
    pytest.param(
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "name": None}, "/name", id="name"
    ),
    pytest.param(
        {"type": "CUSTOM", "name": "n", "value": 1, "metadata": None}, "/metadata", id="metadata"
    ),
    pytest.param(
        {"type": "STEP_STARTED", "stepName": "s", "subagentRunId": None},
        "/subagentRunId",
        id="subagentRunId",
    ),
    pytest.param(
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": None},
        "/toolCallName",
        id="required-toolCallName",
    ),
]


@pytest.mark.parametrize(("event", "path"), OTHER_NULLS)
def test_other_nulls_are_malformed(event: Event, path: str) -> None:
    result = run([RUN_STARTED, event, RUN_FINISHED])
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index, result.violation.path) == (
        "malformed-event",
        1,
        path,
    )
    assert types(result) == ["RUN_STARTED"]


# --- the producer's protocol version -------------------------------------------------------


@pytest.mark.parametrize(
    "declared",
    [
        pytest.param("1.2", id="newer-minor"),
        pytest.param("1.10", id="numeric-not-textual"),
        pytest.param("2.0", id="newer-major"),
        pytest.param("banana", id="uninterpretable"),
        pytest.param("", id="empty"),
    ],
)
def test_newer_or_uninterpretable_producer_version_warns_and_proceeds(declared: str) -> None:
    events = one_run(
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "ok"},
        started={**RUN_STARTED, "protocolVersion": declared},
    )
    result = accepted(events)
    assert [run.status for run in result.runs] == ["completed"]
    assert result.runs[0].protocol_version == declared
    assert len(result.messages) == 1
    # one warning, naming both versions
    (notice,) = result.warnings
    assert repr(declared) in notice
    assert "1.1" in notice.replace(repr(declared), "")


@pytest.mark.parametrize("declared", ["1.1", "1.0", "1.1.3", "0.9"])
def test_same_or_older_producer_version_is_quiet(declared: str) -> None:
    result = accepted([{**RUN_STARTED, "protocolVersion": declared}, RUN_FINISHED])
    assert result.warnings == []
    assert result.runs[0].protocol_version == declared


def test_absent_producer_version_is_quiet() -> None:
    result = accepted([RUN_STARTED, RUN_FINISHED])
    assert result.warnings == []
    assert result.runs[0].protocol_version is None


def test_version_is_judged_against_the_consumers_own() -> None:
    started = {**RUN_STARTED, "protocolVersion": "1.1"}
    result = accepted([started, RUN_FINISHED], version="1.0")
    assert any("'1.1'" in w and "1.0" in w for w in result.warnings), result.warnings


def test_each_run_declares_its_own_version() -> None:
    events = [
        {**RUN_STARTED, "protocolVersion": "1.0"},
        RUN_FINISHED,
        {**RUN_STARTED, "runId": "r2", "protocolVersion": "1.3"},
        {**RUN_FINISHED, "runId": "r2"},
    ]
    result = accepted(events)
    assert [run.protocol_version for run in result.runs] == ["1.0", "1.3"]
    assert len(result.warnings) == 1
    assert "'1.3'" in result.warnings[0]


@pytest.mark.parametrize(
    ("declared", "ours", "warns"),
    [("1.10", "1.9", True), ("1.9", "1.10", False), ("1.9", "1.9", False), ("x.1", "1.1", True)],
)
def test_versions_compare_numerically_component_by_component(
    declared: str, ours: str, warns: bool
) -> None:
    assert (producer_version_notice(declared, ours) is not None) is warns


def test_warnings_reach_on_warning_as_they_happen() -> None:
    heard: list[str] = []
    consumer = Consumer(on_warning=heard.append)
    consumer.feed(msgspec.json.encode({**RUN_STARTED, "protocolVersion": "1.2"}))
    assert len(heard) == 1
    assert heard == consumer.warnings


# --- middleware ----------------------------------------------------------------------------


def test_middleware_sees_wire_dicts_with_their_index_before_enforcement() -> None:
    seen: list[tuple[int, Event]] = []

    def spy(document: Event, index: int) -> Event:
        seen.append((index, dict(document)))
        return document

    events = one_run({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x", "vendorX": 1})
    result = accepted(events, [spy])
    assert [index for index, _ in seen] == [0, 1, 2]
    # camelCase wire names, and the unknown property enforcement is about to strip
    assert seen[1][1] == {
        "type": "TEXT_MESSAGE_CHUNK",
        "messageId": "m",
        "delta": "x",
        "vendorX": 1,
    }
    assert any("/vendorX" in w for w in result.warnings)
    # ...and a chunk as it was sent: expansion comes after middleware
    assert types(result)[1:4] == ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]


def test_middleware_can_change_an_event() -> None:
    def shout(document: Event, index: int) -> Event:
        if document["type"] == "TEXT_MESSAGE_CONTENT":
            return {**document, "delta": document["delta"].upper()}
        return document

    events = one_run(
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "quiet"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    )
    result = accepted(events, [shout])
    assert msgspec.to_builtins(result.messages)[0]["content"] == "QUIET"


def test_middleware_can_drop_an_event() -> None:
    def no_custom(document: Event, index: int) -> Event | None:
        return None if document["type"] == "CUSTOM" else document

    events = one_run({"type": "CUSTOM", "name": "noise", "value": 1}, {"type": "RAW", "event": 1})
    result = accepted(events, [no_custom])
    assert types(result) == ["RUN_STARTED", "RAW", "RUN_FINISHED"]
    assert result.warnings == []  # a dropped event is the application's choice, not stripped


def test_event_dropped_by_middleware_is_not_judged() -> None:
    # an event that would be fatal never reaches enforcement or verification
    def drop_second(document: Event, index: int) -> Event | None:
        return None if index == 1 else document

    events = one_run({"type": "TEXT_MESSAGE_CONTENT", "messageId": "nowhere", "delta": "x"})
    assert run(events).violation is not None  # the contrast
    accepted(events, [drop_second])


def test_what_middleware_produces_is_enforced() -> None:
    def breaks_delta(document: Event, index: int) -> Event:
        if document["type"] == "TEXT_MESSAGE_CONTENT":
            return {**document, "delta": 42}
        return document

    events = one_run(
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    )
    result = run(events, [breaks_delta])
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index, result.violation.path) == (
        "malformed-event",
        2,
        "/delta",
    )


def test_middleware_stages_run_in_order() -> None:
    def append(mark: str) -> Middleware:
        def stage(document: Event, index: int) -> Event:
            if document["type"] == "TEXT_MESSAGE_CHUNK":
                return {**document, "delta": document.get("delta", "") + mark}
            return document

        return stage

    events = one_run({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": ">"})
    result = accepted(events, [append("1"), append("2")])
    assert msgspec.to_builtins(result.messages)[0]["content"] == ">12"


def test_middleware_runs_after_the_compatibility_boundary() -> None:
    seen: list[str] = []

    def spy(document: Event, index: int) -> Event:
        seen.append(document["type"])
        return document

    accepted(one_run(*THINKING), [spy])
    assert seen[1:-1] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
    ]


def test_middleware_sees_legacy_nulls_already_translated() -> None:
    seen: list[Event] = []

    def spy(document: Event, index: int) -> Event:
        seen.append(dict(document))
        return document

    accepted([RUN_STARTED, {**RUN_FINISHED, "outcome": None}], [spy])
    assert "outcome" not in seen[1]


CONFORMANT: list[Event] = [
    RUN_STARTED,
    {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "hi"},
    {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "m"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},
    {"type": "TOOL_CALL_END", "toolCallId": "c"},
    {"type": "TOOL_CALL_RESULT", "messageId": "t", "toolCallId": "c", "content": "ok"},
    {"type": "STATE_SNAPSHOT", "snapshot": {"n": 0}},
    {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 1}]},
    {"type": "ACTIVITY_SNAPSHOT", "messageId": "a", "activityType": "s", "content": {}},
    {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r", "delta": "hm"},
    {"type": "CUSTOM", "name": "n", "value": None},
    {"type": "RAW", "event": {"anything": [1, 2]}},
    RUN_FINISHED,
]


def test_conformant_stream_without_middleware_takes_no_slow_path() -> None:
    consumer = Consumer()
    for event in CONFORMANT:
        consumer.feed(msgspec.json.encode(event))
    consumer.close()
    assert consumer.slow_path_count == 0
    assert consumer.warnings == []


def test_a_retired_shape_takes_the_slow_path() -> None:
    # the contrast: the counter moves when the boundary has to step in
    consumer = Consumer()
    for event in one_run({"type": "THINKING_START"}, {"type": "THINKING_END"}):
        consumer.feed(msgspec.json.encode(event))
    assert consumer.slow_path_count == 2
