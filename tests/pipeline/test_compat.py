"""The compatibility boundary, version negotiation and middleware (AG-UI 1.1).

Spec pages: basic/versioning (retired shapes translated as middleware before
enforcement, lossy translations warn, producer version declarations compared as
MAJOR.MINOR: newer or uninterpretable → proceed and warn), basic/processing
(pipeline order: boundary → middleware → enforcement → expansion → verification),
basic/index ("absent means absent": no ``null`` for optional fields), and the era
shims for a peer of a given version (``Consumer``, ``build_run_input``, ``HttpAgent``).
RULES.md sections A (nulls), J (versions).
"""

from __future__ import annotations

import contextlib
import http.server
import json
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec
import pytest
from serving import serve_handler
from verdicts import FINISH, START, as_dicts, completed, consumed, rejected_at, text

import agui_msgspec as agui
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


def snapshot(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


# --- retired optional nulls are translated, with a warning (DEPRECATIONS.md, basic/versioning) ---

IMAGE = {"type": "image", "source": {"type": "url", "value": "https://example.com/a.png"}}


def legacy_input() -> dict[str, Any]:
    return {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": [{**IMAGE, "metadata": None}]}],
        "tools": [{"name": "f", "description": "d", "parameters": None}],
        "resume": [{"interruptId": "i1", "status": "cancelled", "payload": None}],
        "forwardedProps": None,
    }


LEGACY_INPUT_PATHS = [
    "/forwardedProps",
    "/tools/0/parameters",
    "/resume/0/payload",
    "/messages/0/content/0/metadata",
]


@pytest.mark.parametrize(
    ("event", "path"),
    [
        pytest.param(text("START", "m1", rawEvent=None), "/rawEvent", id="rawEvent"),
        pytest.param({**FINISH, "result": None}, "/result", id="RUN_FINISHED.result"),
        pytest.param(
            {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1", "result": None},
            "/result",
            id="SUBAGENT_FINISHED.result",
        ),
    ],
)
def test_retired_null_on_an_event_reads_as_absent(event: dict[str, Any], path: str) -> None:
    events = [START, event]
    if event["type"] == "TEXT_MESSAGE_START":
        events.append(text("END", "m1"))
    if event["type"] == "SUBAGENT_FINISHED":
        events.insert(1, {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "n"})
    if event is not events[-1] or event["type"] != "RUN_FINISHED":
        events.append(FINISH)
    result = completed(consumed(*events))
    index = events.index(event)
    assert f"event {index} {path}: legacy null read as absent" in result.warnings
    assert path[1:] not in msgspec.to_builtins(result.events[index])


def test_retired_nulls_in_run_started_input_read_as_absent() -> None:
    result = completed(consumed({**START, "input": legacy_input()}, FINISH))
    echoed = msgspec.to_builtins(result.events[0])["input"]
    assert "forwardedProps" not in echoed
    assert "parameters" not in echoed["tools"][0]
    for path in LEGACY_INPUT_PATHS:
        assert any(f"event 0 /input{path}: legacy null" in w for w in result.warnings), path


def test_retired_nulls_in_the_seeding_input_read_as_absent() -> None:
    result = completed(consumed(START, FINISH, input=legacy_input()))
    assert as_dicts(result.messages)[0]["content"] == [IMAGE]
    for path in LEGACY_INPUT_PATHS:
        assert f"input {path}: legacy null read as absent" in result.warnings, path


def test_retired_null_metadata_in_a_snapshot_part_reads_as_absent() -> None:
    user = {"id": "u1", "role": "user", "content": [{**IMAGE, "metadata": None}]}
    result = completed(consumed(START, snapshot(user), FINISH))
    assert as_dicts(result.messages)[0]["content"] == [IMAGE]


@pytest.mark.parametrize(
    ("event", "path"),
    [
        pytest.param(text("START", "m1", name=None), "/name", id="unlisted-field"),
        pytest.param(
            snapshot(
                {
                    "id": "u",
                    "role": "user",
                    "content": [{"type": "text", "text": "x", "metadata": None}],
                }
            ),
            "/messages/0/content/0/metadata",
            id="text-part-metadata",
        ),
        pytest.param(
            {**START, "runId": "r2", "parentRunId": None}, "/parentRunId", id="parentRunId"
        ),
    ],
)
def test_nulls_the_registry_does_not_list_stay_malformed(event: dict[str, Any], path: str) -> None:
    rejected_at(
        consumed(START, event) if event["type"] != "RUN_STARTED" else consumed(event),
        "malformed-event",
        1 if event["type"] != "RUN_STARTED" else 0,
        path,
    )


# --- the retired binary part is upgraded, not stripped (DEPRECATIONS.md, era-0-0-47) -------------

BINARY = {"type": "binary", "mimeType": "image/png", "url": "https://example.com/legacy.png"}


UPGRADED = {
    "type": "image",
    "source": {"type": "url", "value": "https://example.com/legacy.png", "mimeType": "image/png"},
}


def binary_input(*parts: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": "Describe it."}, *parts]
    return {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": content}],
    }


def test_binary_part_in_the_seeding_input_is_upgraded() -> None:
    result = completed(consumed(START, FINISH, input=binary_input(BINARY)))
    assert as_dicts(result.messages)[0]["content"][1] == UPGRADED
    assert result.warnings == []  # the consumer's own input: nothing lost, nothing to say


def test_binary_part_in_the_outgoing_input_is_upgraded() -> None:
    warnings: list[str] = []
    request = msgspec.to_builtins(
        agui.build_run_input(binary_input(BINARY), on_warning=warnings.append)
    )
    assert request["messages"][0]["content"][1] == UPGRADED
    assert warnings == []  # DEPRECATIONS.md: outbound, only a lossy conversion warns


@pytest.mark.parametrize(
    ("legacy", "upgraded"),
    [
        pytest.param(
            {"type": "binary", "mimeType": "audio/wav", "data": "AAAA"},
            {"type": "audio", "source": {"type": "data", "value": "AAAA", "mimeType": "audio/wav"}},
            id="inline-audio",
        ),
        pytest.param(
            {"type": "binary", "mimeType": "application/pdf", "id": "file-1", "filename": "a.pdf"},
            {
                "type": "document",
                "source": {"type": "file", "value": "file-1", "mimeType": "application/pdf"},
                "metadata": {"filename": "a.pdf"},
            },
            id="file-document",
        ),
        pytest.param(  # media types are case-insensitive (RFC 9110 §8.3.1)
            {"type": "binary", "mimeType": "Image/PNG", "url": "https://example.com/a.png"},
            {
                "type": "image",
                "source": {
                    "type": "url",
                    "value": "https://example.com/a.png",
                    "mimeType": "Image/PNG",
                },
            },
            id="image-in-capitals",
        ),
    ],
)
def test_binary_part_in_events_is_upgraded(
    legacy: dict[str, Any], upgraded: dict[str, Any]
) -> None:
    user = {"id": "u1", "role": "user", "content": [legacy]}
    result = completed(consumed({**START, "input": binary_input(legacy)}, snapshot(user), FINISH))
    assert msgspec.to_builtins(result.events[0])["input"]["messages"][0]["content"][1] == upgraded
    assert as_dicts(result.messages)[0]["content"] == [upgraded]
    assert "event 0 /input/messages/0/content/1: upgraded retired binary part" in "".join(
        result.warnings
    )
    assert any("event 1 /messages/0/content/0: upgraded" in w for w in result.warnings)


# A binary part malformed in its own era is upgraded as it is, then rejected where the upgrade
# put the bad value (basic/versioning: "A downgrade MUST NOT repair a malformed value").
MALFORMED_BINARY = [
    pytest.param({"mimeType": "image/png", "data": {}}, "/source/value", id="data-not-a-string"),
    pytest.param({"mimeType": "image/png", "url": 7}, "/source/value", id="url-not-a-string"),
    pytest.param({"mimeType": "image/png"}, "", id="no-source"),
    pytest.param({"url": "https://example.com/a"}, "/source/mimeType", id="no-mime-type"),
    pytest.param({"mimeType": 5, "id": "file-1"}, "/source/mimeType", id="mime-type-not-a-string"),
]


@pytest.mark.parametrize(("members", "where"), MALFORMED_BINARY)
def test_malformed_binary_part_in_a_snapshot_is_rejected_not_stripped(
    members: dict[str, Any], where: str
) -> None:
    user = {"id": "u1", "role": "user", "content": [{"type": "binary", **members}]}
    result = consumed(START, snapshot(user), FINISH)
    rejected_at(result, "malformed-event", 1, "/messages/0/content/0" + where)
    assert any(
        "event 1 /messages/0/content/0: upgraded retired binary" in w for w in result.warnings
    )
    assert not any("unrecognised type 'binary'" in w for w in result.warnings)


@pytest.mark.parametrize(("members", "where"), MALFORMED_BINARY)
def test_malformed_binary_part_in_run_started_input_is_rejected(
    members: dict[str, Any], where: str
) -> None:
    result = consumed({**START, "input": binary_input({"type": "binary", **members})}, FINISH)
    rejected_at(result, "malformed-event", 0, "/input/messages/0/content/1" + where)


@pytest.mark.parametrize(("members", "where"), MALFORMED_BINARY)
def test_malformed_binary_part_in_the_seeding_input_is_rejected(
    members: dict[str, Any], where: str
) -> None:
    result = consumed(START, FINISH, input=binary_input({"type": "binary", **members}))
    assert result.violation is not None, "the input was accepted"
    assert result.violation.rule == "malformed-input"
    assert result.violation.path == "/messages/0/content/1" + (where or "/source")
    assert result.messages == []


@pytest.mark.parametrize(("members", "where"), MALFORMED_BINARY)
def test_malformed_binary_part_in_a_request_body_is_rejected(
    members: dict[str, Any], where: str
) -> None:
    body = msgspec.json.encode(binary_input({"type": "binary", **members}))
    with pytest.raises(agui.MalformedEvent) as raised:
        agui.parse_run_input(body)
    assert (raised.value.rule, raised.value.path) == (
        "malformed-input",
        "/messages/0/content/1" + (where or "/source"),  # the input names a missing field
    )


def test_binary_part_in_a_request_body_is_upgraded() -> None:
    warnings: list[str] = []
    request = agui.parse_run_input(
        msgspec.json.encode(binary_input(BINARY)), on_warning=warnings.append
    )
    assert msgspec.to_builtins(request)["messages"][0]["content"][1] == UPGRADED
    assert warnings == []


def test_binary_part_keeps_its_unrecognised_members_for_enforcement_to_strip() -> None:
    legacy = {**BINARY, "xVendor": 1}
    user = {"id": "u1", "role": "user", "content": [legacy]}
    result = completed(consumed(START, snapshot(user), FINISH))
    assert as_dicts(result.messages)[0]["content"] == [UPGRADED]
    assert "event 1 /messages/0/content/0/xVendor: removed unrecognised property" in result.warnings


# --- THINKING_* translation mints ids unique per run; a foreign messageId is stripped --------


def test_a_retired_thinking_event_s_own_message_id_is_stripped_and_ids_are_minted() -> None:
    result = completed(
        consumed(
            START,
            {"type": "THINKING_START", "messageId": "span-7"},
            {"type": "THINKING_TEXT_MESSAGE_START", "messageId": "th-7"},
            {"type": "THINKING_TEXT_MESSAGE_CONTENT", "messageId": "elsewhere", "delta": "hm"},
            {"type": "THINKING_TEXT_MESSAGE_END"},
            {"type": "THINKING_END", "messageId": "span-8"},
            FINISH,
        )
    )
    delivered = [msgspec.to_builtins(e) for e in result.events]
    span, message = delivered[1]["messageId"], delivered[2]["messageId"]
    assert span.startswith("thinking-")
    assert message.startswith("thinking-")
    assert [e.get("messageId") for e in delivered[1:6]] == [span, message, message, message, span]
    assert as_dicts(result.messages) == [{"id": message, "role": "reasoning", "content": "hm"}]
    for index, retired in [
        (1, "THINKING_START"),
        (2, "THINKING_TEXT_MESSAGE_START"),
        (3, "THINKING_TEXT_MESSAGE_CONTENT"),
        (5, "THINKING_END"),
    ]:
        assert (
            f"event {index} /messageId: removed unrecognised property (the retired {retired} has none)"
            in result.warnings
        )


THINKING_THOUGHT = [
    {"type": "THINKING_START"},
    {"type": "THINKING_TEXT_MESSAGE_START"},
    {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "thought"},
    {"type": "THINKING_TEXT_MESSAGE_END"},
    {"type": "THINKING_END"},
]


def test_minted_thinking_ids_differ_between_runs_of_a_thread() -> None:
    second = [{**START, "runId": "r2"}, *THINKING_THOUGHT, {**FINISH, "runId": "r2"}]
    result = completed(consumed(START, *THINKING_THOUGHT, FINISH, *second))
    thoughts = [m for m in as_dicts(result.messages) if m["role"] == "reasoning"]
    assert [m["content"] for m in thoughts] == ["thought", "thought"]
    assert len({m["id"] for m in thoughts}) == 2


@contextlib.contextmanager
def loopback_agent(
    answer: list[dict[str, Any]], requests: list[dict[str, Any]]
) -> Iterator[agui.HttpAgent]:
    """An agent on 127.0.0.1 answering every request with ``answer`` between the boundary
    events of the requested run; the request bodies land in ``requests``."""

    class Agent(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            ids = {"threadId": body["threadId"], "runId": body["runId"]}
            events = [{"type": "RUN_STARTED", **ids}, *answer, {"type": "RUN_FINISHED", **ids}]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events))

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Agent) as url:
        yield agui.HttpAgent(url)


def test_second_turn_through_one_http_agent_keeps_its_own_reasoning() -> None:
    """Two runs of one thread through one HttpAgent, the producer sending THINKING_* both
    times: the second run's reasoning is a message of its own, and among its new messages."""
    with loopback_agent(THINKING_THOUGHT, []) as agent:
        user = {"id": "u1", "role": "user", "content": "think"}
        first = agent.run_sync({"threadId": "t1", "runId": "r1", "messages": [user]})
        again = {"id": "u2", "role": "user", "content": "again"}
        history = [*first.messages, again]
        second = agent.run_sync({"threadId": "t1", "runId": "r2", "messages": history})
    (new,) = second.new_messages
    assert (new.role, new.content) == ("reasoning", "thought")
    assert [m.content for m in second.messages if m.role == "reasoning"] == ["thought"] * 2


# --- era shims, with the peer's version given (basic/versioning, DEPRECATIONS.md) ----------------

SUBAGENT_RUN = [
    START,
    {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "researcher"},
    text("START", "m1", "s1"),
    text("CONTENT", "m1", "s1", delta="Found it."),
    text("END", "m1", "s1"),
    {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"},
    FINISH,
]


def test_a_peer_from_before_subagents_has_its_subagent_events_dropped() -> None:
    payloads = [msgspec.json.encode(e) for e in SUBAGENT_RUN]
    result = completed(agui.consume(payloads, peer_version="0.0.57"))
    assert [e.type for e in result.events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert any("dropping SUBAGENT_STARTED" in w for w in result.warnings)
    assert as_dicts(result.messages) == [{"id": "m1", "role": "assistant", "content": "Found it."}]


@pytest.mark.parametrize("peer", [None, "0.0.58", "1.0"])
def test_a_current_peer_keeps_its_subagent_events(peer: str | None) -> None:
    payloads = [msgspec.json.encode(e) for e in SUBAGENT_RUN]
    result = completed(agui.consume(payloads, peer_version=peer))
    assert len(result.events) == len(SUBAGENT_RUN)
    assert result.warnings == []
    assert as_dicts(result.messages)[0]["subagentRunId"] == "s1"


def test_http_agent_talks_down_to_a_peer_of_the_version_it_is_given() -> None:
    requests: list[dict[str, Any]] = []
    with loopback_agent(SUBAGENT_RUN[1:-1], requests) as agent:
        agent.peer_version = "0.0.39"
        given = binary_input(IMAGE)
        result = agent.run_sync(given)
        agent.peer_version = None
        modern = agent.run_sync(given)
    old, new = requests
    assert "protocolVersion" not in old
    assert old["messages"][0]["content"] == "Describe it."
    assert any("DROPS non-text parts" in w for w in result.warnings)
    assert any("dropping SUBAGENT_STARTED" in w for w in result.warnings)
    assert {m.role for m in result.new_messages} == {"assistant"}
    assert "subagentRunId" not in msgspec.to_builtins(result.new_messages[0])
    assert new["protocolVersion"] == "1.1"
    assert new["messages"][0]["content"][1] == IMAGE
    assert msgspec.to_builtins(modern.new_messages[0])["subagentRunId"] == "s1"


def test_http_agent_refuses_an_unreadable_peer_version() -> None:
    with pytest.raises(agui.UsageError):
        agui.HttpAgent("http://127.0.0.1:1/agent", peer_version="old")


def test_a_peer_from_before_content_parts_gets_flattened_text() -> None:
    warnings: list[str] = []
    given = binary_input(IMAGE, {"type": "text", "text": " Please."})
    request = msgspec.to_builtins(
        agui.build_run_input(given, peer_version="0.0.39", on_warning=warnings.append)
    )
    assert request["messages"][0]["content"] == "Describe it. Please."
    assert "protocolVersion" not in request
    assert any("DROPS non-text parts" in w for w in warnings)


@pytest.mark.parametrize(
    ("part", "path"),
    [
        ({"type": "text", "text": 5}, "/messages/0/content/0/text"),
        (None, "/messages/0/content/0"),
        ({"text": "no type"}, "/messages/0/content/0/type"),
    ],
    ids=["text-not-a-string", "null-part", "no-type"],
)
def test_flattening_for_an_old_peer_does_not_hide_a_malformed_part(part: Any, path: str) -> None:
    """The input is judged as given, then flattened: a malformed part is refused for every
    peer, not silently turned into an empty string for a 0.0.39 one."""
    given = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": [part]}],
    }
    for peer in (None, "0.0.39"):
        with pytest.raises(agui.MalformedEvent) as refused:
            agui.build_run_input(given, peer_version=peer)
        assert (refused.value.rule, refused.value.path) == ("malformed-input", path)


def test_a_peer_from_before_subagents_gets_no_attribution_in_its_input() -> None:
    assistant = {"id": "a1", "role": "assistant", "content": "x", "subagentRunId": "s0"}
    given = {"threadId": "t", "runId": "r", "messages": [assistant]}
    for peer, kept in (("0.0.57", False), ("0.0.58", True)):
        warnings: list[str] = []
        request = msgspec.to_builtins(
            agui.build_run_input(given, peer_version=peer, on_warning=warnings.append)
        )
        assert ("subagentRunId" in request["messages"][0]) is kept
        assert bool(warnings) is not kept


def test_a_peer_with_content_parts_gets_them() -> None:
    warnings: list[str] = []
    given = binary_input(IMAGE)
    request = msgspec.to_builtins(
        agui.build_run_input(given, peer_version="0.0.40", on_warning=warnings.append)
    )
    assert request["messages"][0]["content"][1] == IMAGE
    assert warnings == []


@pytest.mark.parametrize("peer", ["0..0", "x", "1", "0.0.39-beta", "\u0660.\u0660.\u0663\u0669"])
def test_an_unreadable_peer_version_is_a_usage_error(peer: str) -> None:
    with pytest.raises(agui.UsageError):
        agui.Consumer(peer_version=peer)
