"""Chunk expansion (AG-UI 1.1, basic/patterns/streaming.mdx; RULES.md section F, and E's
rule on mixing the spellings).

Every ``*_CHUNK`` stream is judged by what the application receives: the explicit
``*_START`` / content / ``*_END`` events it expands to, the messages assembled
from them, and, for a rejected stream, the rule id, the index of the offending
chunk in the stream as sent, and the events delivered before it.

==================================================== ===============================
 rule (streaming.mdx)                                  tests
==================================================== ===============================
 first chunk carries its ids                           test_first_chunk_with_its_ids_opens_the_item,
 (``chunk-missing-first-field``)                       test_first_chunk_missing_a_required_field_is_rejected
 a chunk stream expands to the triad                   test_text_chunks_are_delivered_as_the_explicit_triad,
                                                       test_text_chunk_without_role_opens_an_assistant_message,
                                                       test_tool_call_chunks_are_delivered_as_the_explicit_triad,
                                                       test_reasoning_chunks_are_delivered_as_the_explicit_triad,
                                                       test_subagent_chunks_keep_their_attribution,
                                                       test_any_split_of_the_text_reassembles
 closing a chunk stream                                test_chunk_with_another_id_closes_the_previous_item,
                                                       test_event_in_the_lane_closes_the_stream,
                                                       test_chunk_of_another_kind_closes_the_stream,
                                                       test_run_boundary_closes_the_stream,
                                                       test_run_error_closes_the_stream,
                                                       test_messages_snapshot_closes_every_lane,
                                                       test_subagent_terminal_event_closes_its_lane,
                                                       test_event_that_stands_aside_does_not_close_the_stream,
                                                       test_parent_event_does_not_close_a_subagent_stream
 chunk-opened items end with the run                   test_run_finished_closes_chunk_opened_items,
                                                       test_run_error_closes_chunk_opened_items,
                                                       test_explicit_item_left_open_is_still_rejected
 mixing spellings (RULES.md E)                         test_explicit_continuation_after_a_chunk_names_no_open_item,
                                                       test_chunk_naming_an_explicitly_opened_item_is_an_open
 conflicting repeats (``chunk-conflicting-repeat``)    test_conflicting_repeat_is_rejected,
                                                       test_identical_repeat_is_accepted
 metadata-only continuation                            test_metadata_only_continuation_reaches_the_item,
                                                       test_metadata_only_tool_continuation_reaches_the_call
 ambiguity across lanes (``chunk-ambiguous``)          test_untagged_continuation_with_several_subagent_streams_is_ambiguous,
                                                       test_untagged_continuation_with_one_subagent_stream_continues_it,
                                                       test_untagged_continuation_prefers_the_parent_stream,
                                                       test_tagged_or_named_continuation_is_never_ambiguous
==================================================== ===============================
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agui_msgspec as agui
from agui_msgspec import Result, consume

Event = dict[str, Any]

RUN_STARTED: Event = {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}
RUN_FINISHED: Event = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}


def text_chunk(**fields: Any) -> Event:
    return {"type": "TEXT_MESSAGE_CHUNK", **fields}


def tool_chunk(**fields: Any) -> Event:
    return {"type": "TOOL_CALL_CHUNK", **fields}


def thought_chunk(**fields: Any) -> Event:
    return {"type": "REASONING_MESSAGE_CHUNK", **fields}


def run(events: Sequence[Event]) -> Result:
    return consume([msgspec.json.encode(event) for event in events])


def types(result: Result) -> list[str]:
    return [str(type(event).__struct_config__.tag) for event in result.events]


def wire(result: Result) -> list[Event]:
    delivered: list[Event] = msgspec.to_builtins(result.events)
    return delivered


def messages(result: Result) -> list[Event]:
    held: list[Event] = msgspec.to_builtins(result.messages)
    return held


def accepted(events: Sequence[Event]) -> Result:
    result = run(events)
    assert result.violation is None, result.violation
    assert result.outcome == "completed"
    return result


def rejected(
    events: Sequence[Event], rule: str, index: int, delivered: Sequence[str] | None = None
) -> Result:
    """The stream is rejected for ``rule`` at ``index``; ``delivered`` is what got through."""
    result = run(events)
    violation = result.violation
    assert violation is not None, f"expected {rule} at event {index}; the stream was accepted"
    assert (violation.rule, violation.index) == (rule, index), violation
    assert result.outcome == "failed"
    if delivered is not None:
        assert types(result) == list(delivered)
    return result


# --- the first chunk ---------------------------------------------------------------------


FIRST_CHUNKS = [
    pytest.param(text_chunk(messageId="m1", delta="hi"), id="text"),
    pytest.param(thought_chunk(messageId="m1", delta="hi"), id="reasoning"),
    pytest.param(tool_chunk(toolCallId="m1", toolCallName="search", delta="{}"), id="tool"),
]


@pytest.mark.parametrize("chunk", FIRST_CHUNKS)
def test_first_chunk_with_its_ids_opens_the_item(chunk: Event) -> None:
    result = accepted([RUN_STARTED, chunk, RUN_FINISHED])
    assert len(result.messages) == 1


MISSING_FIRST_FIELDS = [
    pytest.param(text_chunk(delta="hi"), "/messageId", id="text-without-messageId"),
    pytest.param(text_chunk(role="user", delta="hi"), "/messageId", id="text-with-only-role"),
    pytest.param(thought_chunk(delta="hi"), "/messageId", id="reasoning-without-messageId"),
    pytest.param(
        tool_chunk(toolCallName="search", delta="{}"), "/toolCallId", id="tool-without-toolCallId"
    ),
    pytest.param(
        tool_chunk(toolCallId="c1", delta="{}"), "/toolCallName", id="tool-without-toolCallName"
    ),
]


@pytest.mark.parametrize(("chunk", "path"), MISSING_FIRST_FIELDS)
def test_first_chunk_missing_a_required_field_is_rejected(chunk: Event, path: str) -> None:
    result = rejected([RUN_STARTED, chunk, RUN_FINISHED], "chunk-missing-first-field", 1)
    assert result.violation is not None
    assert result.violation.path == path
    assert types(result) == ["RUN_STARTED"]  # no identifier was invented
    assert result.messages == []


# --- what a chunk stream delivers ----------------------------------------------------------


def test_text_chunks_are_delivered_as_the_explicit_triad() -> None:
    result = accepted(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", role="user", name="ada", delta="Hel"),
            text_chunk(delta="lo"),
            RUN_FINISHED,
        ]
    )
    assert wire(result)[1:-1] == [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "user", "name": "ada"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hel"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "lo"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    ]
    assert messages(result) == [{"role": "user", "id": "m1", "name": "ada", "content": "Hello"}]


def test_text_chunk_without_role_opens_an_assistant_message() -> None:
    result = accepted([RUN_STARTED, text_chunk(messageId="m1", delta="x"), RUN_FINISHED])
    assert [m["role"] for m in messages(result)] == ["assistant"]


def test_tool_call_chunks_are_delivered_as_the_explicit_triad() -> None:
    result = accepted(
        [
            RUN_STARTED,
            {"type": "TEXT_MESSAGE_START", "messageId": "a1"},
            {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
            tool_chunk(toolCallId="c1", toolCallName="search", parentMessageId="a1", delta='{"q"'),
            tool_chunk(delta=':"x"}'),
            RUN_FINISHED,
        ]
    )
    assert wire(result)[3:-1] == [
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c1",
            "toolCallName": "search",
            "parentMessageId": "a1",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"q"'},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": ':"x"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    ]
    (message,) = messages(result)
    assert message["toolCalls"] == [
        {"id": "c1", "type": "function", "function": {"name": "search", "arguments": '{"q":"x"}'}}
    ]


def test_reasoning_chunks_are_delivered_as_the_explicit_triad() -> None:
    result = accepted(
        [
            RUN_STARTED,
            thought_chunk(messageId="r1", delta="let me "),
            thought_chunk(delta="think"),
            RUN_FINISHED,
        ]
    )
    assert wire(result)[1:-1] == [
        {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "let me "},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r1", "delta": "think"},
        {"type": "REASONING_MESSAGE_END", "messageId": "r1"},
    ]
    assert messages(result) == [{"role": "reasoning", "id": "r1", "content": "let me think"}]


def test_subagent_chunks_keep_their_attribution() -> None:
    result = accepted(
        [RUN_STARTED, text_chunk(messageId="m1", delta="x", subagentRunId="s1"), RUN_FINISHED]
    )
    assert [event.get("subagentRunId") for event in wire(result)[1:-1]] == ["s1", "s1", "s1"]
    assert messages(result)[0]["subagentRunId"] == "s1"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=5), min_size=1, max_size=6))
def test_any_split_of_the_text_reassembles(deltas: list[str]) -> None:
    first, *rest = deltas
    events = [
        RUN_STARTED,
        text_chunk(messageId="m1", delta=first),
        *(text_chunk(delta=delta) for delta in rest),
        RUN_FINISHED,
    ]
    result = accepted(events)
    assert messages(result) == [{"role": "assistant", "id": "m1", "content": "".join(deltas)}]
    assert types(result).count("TEXT_MESSAGE_END") == 1


# --- closing a chunk stream ----------------------------------------------------------------


def test_chunk_with_another_id_closes_the_previous_item() -> None:
    result = accepted(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", delta="one"),
            text_chunk(messageId="m2", delta="two"),
            text_chunk(delta=" more"),  # continues m2, the open one
            RUN_FINISHED,
        ]
    )
    assert [(e["type"], e.get("messageId")) for e in wire(result)[1:-1]] == [
        ("TEXT_MESSAGE_START", "m1"),
        ("TEXT_MESSAGE_CONTENT", "m1"),
        ("TEXT_MESSAGE_END", "m1"),
        ("TEXT_MESSAGE_START", "m2"),
        ("TEXT_MESSAGE_CONTENT", "m2"),
        ("TEXT_MESSAGE_CONTENT", "m2"),
        ("TEXT_MESSAGE_END", "m2"),
    ]
    assert [m["content"] for m in messages(result)] == ["one", "two more"]


# (closer, how many events it is delivered as): each arrives in the parent lane.
CLOSERS = [
    pytest.param({"type": "TEXT_MESSAGE_START", "messageId": "other"}, id="TEXT_MESSAGE_START"),
    pytest.param(
        {"type": "TOOL_CALL_START", "toolCallId": "c9", "toolCallName": "f"}, id="TOOL_CALL_START"
    ),
    pytest.param(
        {"type": "TOOL_CALL_RESULT", "messageId": "t9", "toolCallId": "c9", "content": "ok"},
        id="TOOL_CALL_RESULT",
    ),
    pytest.param({"type": "STEP_STARTED", "stepName": "plan"}, id="STEP_STARTED"),
    pytest.param({"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}, id="STATE_SNAPSHOT"),
    pytest.param(
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": 1}]},
        id="STATE_DELTA",
    ),
    pytest.param({"type": "CUSTOM", "name": "ping", "value": 1}, id="CUSTOM"),
    pytest.param({"type": "REASONING_START", "messageId": "span"}, id="REASONING_START"),
    pytest.param(
        {"type": "REASONING_MESSAGE_START", "messageId": "r9", "role": "reasoning"},
        id="REASONING_MESSAGE_START",
    ),
    pytest.param({"type": "MESSAGES_SNAPSHOT", "messages": []}, id="MESSAGES_SNAPSHOT"),
]
CHUNK_KINDS = [
    pytest.param(text_chunk(messageId="m1", delta="a"), text_chunk(delta="b"), id="text"),
    pytest.param(
        tool_chunk(toolCallId="c1", toolCallName="f", delta="{"),
        tool_chunk(delta="}"),
        id="tool",
    ),
    pytest.param(
        thought_chunk(messageId="m1", delta="a"), thought_chunk(delta="b"), id="reasoning"
    ),
]
START_OF = {
    "TEXT_MESSAGE_CHUNK": "TEXT_MESSAGE_START",
    "TOOL_CALL_CHUNK": "TOOL_CALL_START",
    "REASONING_MESSAGE_CHUNK": "REASONING_MESSAGE_START",
}
END_OF = {
    "TEXT_MESSAGE_CHUNK": "TEXT_MESSAGE_END",
    "TOOL_CALL_CHUNK": "TOOL_CALL_END",
    "REASONING_MESSAGE_CHUNK": "REASONING_MESSAGE_END",
}
MISSING_ID = {
    "TEXT_MESSAGE_CHUNK": "/messageId",
    "TOOL_CALL_CHUNK": "/toolCallId",
    "REASONING_MESSAGE_CHUNK": "/messageId",
}


@pytest.mark.parametrize(("opener", "continuation"), CHUNK_KINDS)
@pytest.mark.parametrize("closer", CLOSERS)
def test_event_in_the_lane_closes_the_stream(
    opener: Event, continuation: Event, closer: Event
) -> None:
    result = rejected(
        [RUN_STARTED, opener, closer, continuation, RUN_FINISHED], "chunk-missing-first-field", 3
    )
    assert result.violation is not None
    assert result.violation.path == MISSING_ID[opener["type"]]
    delivered = types(result)
    # the synthesized end comes before the closer, which is itself delivered
    assert delivered[-2:] == [END_OF[opener["type"]], closer["type"]]


@pytest.mark.parametrize(("opener", "continuation"), CHUNK_KINDS)
def test_chunk_of_another_kind_closes_the_stream(opener: Event, continuation: Event) -> None:
    other = (
        text_chunk(messageId="x9", delta="?")
        if opener["type"] != "TEXT_MESSAGE_CHUNK"
        else tool_chunk(toolCallId="x9", toolCallName="f")
    )
    rejected([RUN_STARTED, opener, other, continuation], "chunk-missing-first-field", 3)


def test_run_boundary_closes_the_stream() -> None:
    # RUN_FINISHED closes it; RUN_STARTED of the next run finds nothing to continue
    rejected(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", delta="a"),
            RUN_FINISHED,
            {**RUN_STARTED, "runId": "r2"},
            text_chunk(delta="b"),
        ],
        "chunk-missing-first-field",
        4,
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "RUN_FINISHED",
            "RUN_STARTED",
        ],
    )


def test_run_error_closes_the_stream() -> None:
    rejected(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", delta="a"),
            {"type": "RUN_ERROR", "message": "boom"},
            {**RUN_STARTED, "runId": "r2"},
            text_chunk(delta="b"),
        ],
        "chunk-missing-first-field",
        4,
    )


def test_messages_snapshot_closes_every_lane() -> None:
    rejected(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", delta="a", subagentRunId="s1"),
            {"type": "MESSAGES_SNAPSHOT", "messages": []},
            text_chunk(delta="b", subagentRunId="s1"),
        ],
        "chunk-missing-first-field",
        3,
        [
            "RUN_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",
            "MESSAGES_SNAPSHOT",
        ],
    )


@pytest.mark.parametrize(
    "terminal",
    [
        pytest.param({"type": "SUBAGENT_FINISHED", "subagentRunId": "s1"}, id="SUBAGENT_FINISHED"),
        pytest.param(
            {"type": "SUBAGENT_ERROR", "subagentRunId": "s1", "message": "gave up"},
            id="SUBAGENT_ERROR",
        ),
    ],
)
def test_subagent_terminal_event_closes_its_lane(terminal: Event) -> None:
    rejected(
        [
            RUN_STARTED,
            {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "helper"},
            text_chunk(messageId="m1", delta="a", subagentRunId="s1"),
            terminal,
            text_chunk(delta="b", subagentRunId="s1"),
        ],
        "chunk-missing-first-field",
        4,
        [
            "RUN_STARTED",
            "SUBAGENT_STARTED",
            "TEXT_MESSAGE_START",
            "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END",  # the stream does not outlive its owner
            terminal["type"],
        ],
    )


BYSTANDERS = [
    pytest.param([{"type": "RAW", "event": {"x": 1}}], id="RAW"),
    pytest.param(
        [
            {"type": "ACTIVITY_SNAPSHOT", "messageId": "act", "activityType": "s", "content": {}},
            {
                "type": "ACTIVITY_DELTA",
                "messageId": "act",
                "activityType": "s",
                "patch": [{"op": "add", "path": "/n", "value": 1}],
            },
        ],
        id="ACTIVITY_SNAPSHOT-and-DELTA",
    ),
    pytest.param(
        [
            {
                "type": "REASONING_ENCRYPTED_VALUE",
                "subtype": "message",
                "entityId": "m1",
                "encryptedValue": "opaque",
            }
        ],
        id="REASONING_ENCRYPTED_VALUE",
    ),
    pytest.param(
        [{"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "helper"}],
        id="SUBAGENT_STARTED",
    ),
    pytest.param(
        [{"type": "CUSTOM", "name": "ping", "value": 1, "subagentRunId": "s9"}],
        id="CUSTOM-in-another-lane",
    ),
    pytest.param(
        [{"type": "STATE_SNAPSHOT", "snapshot": {}, "subagentRunId": "s9"}],
        id="STATE_SNAPSHOT-in-another-lane",
    ),
    pytest.param(
        [text_chunk(messageId="s9-m", delta="z", subagentRunId="s9")],
        id="chunk-in-another-lane",
    ),
    pytest.param(
        [
            {"type": "SUBAGENT_STARTED", "subagentRunId": "s9", "name": "helper"},
            {"type": "SUBAGENT_FINISHED", "subagentRunId": "s9"},
        ],
        id="another-subagent-terminates",
    ),
    pytest.param([{"type": "SOMETHING_NEW", "x": 1}], id="unknown-event-dropped"),
]


@pytest.mark.parametrize("bystanders", BYSTANDERS)
def test_event_that_stands_aside_does_not_close_the_stream(bystanders: list[Event]) -> None:
    announced = {e["subagentRunId"] for e in bystanders if e["type"] == "SUBAGENT_STARTED"}
    ended = {e["subagentRunId"] for e in bystanders if e["type"] == "SUBAGENT_FINISHED"}
    result = accepted(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", delta="a"),
            *bystanders,
            text_chunk(delta="b"),
            *({"type": "SUBAGENT_FINISHED", "subagentRunId": s} for s in sorted(announced - ended)),
            RUN_FINISHED,
        ]
    )
    parent = [m for m in messages(result) if m["id"] == "m1"]
    assert [m["content"] for m in parent] == ["ab"]
    # one START and one END for m1: the bystanders did not split it
    m1 = [e["type"] for e in wire(result) if e.get("messageId") == "m1"]
    assert m1.count("TEXT_MESSAGE_START") == m1.count("TEXT_MESSAGE_END") == 1


def test_parent_event_does_not_close_a_subagent_stream() -> None:
    result = accepted(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", delta="a", subagentRunId="s1"),
            {"type": "CUSTOM", "name": "ping", "value": 1},
            {"type": "STEP_STARTED", "stepName": "p"},
            {"type": "STEP_FINISHED", "stepName": "p"},
            text_chunk(delta="b", subagentRunId="s1"),
            RUN_FINISHED,
        ]
    )
    assert messages(result) == [
        {"role": "assistant", "id": "m1", "subagentRunId": "s1", "content": "ab"}
    ]


# --- chunk-opened items and the end of the run ------------------------------------------------


def test_run_finished_closes_chunk_opened_items() -> None:
    result = accepted(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", delta="a"),
            tool_chunk(toolCallId="c1", toolCallName="f", delta="{}", subagentRunId="s1"),
            thought_chunk(messageId="r1", delta="hm", subagentRunId="s2"),
            RUN_FINISHED,
        ]
    )
    delivered = types(result)
    assert delivered[-1] == "RUN_FINISHED"
    assert sorted(delivered[-4:-1]) == [
        "REASONING_MESSAGE_END",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_END",
    ]
    assert [run.status for run in result.runs] == ["completed"]


def test_run_error_closes_chunk_opened_items() -> None:
    result = accepted(
        [RUN_STARTED, text_chunk(messageId="m1", delta="a"), {"type": "RUN_ERROR", "message": "x"}]
    )
    assert types(result)[-2:] == ["TEXT_MESSAGE_END", "RUN_ERROR"]
    assert [run.status for run in result.runs] == ["failed"]


def test_explicit_item_left_open_is_still_rejected() -> None:
    # the contrast: only the chunk form has its end synthesized
    rejected(
        [RUN_STARTED, {"type": "TEXT_MESSAGE_START", "messageId": "m1"}, RUN_FINISHED],
        "open-at-run-finished",
        2,
    )


# --- mixing the spellings ---------------------------------------------------------------------


MIXED = [
    pytest.param(
        text_chunk(messageId="m1", delta="a"),
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "b"},
        "text-message-not-open",
        id="TEXT_MESSAGE_CONTENT",
    ),
    pytest.param(
        text_chunk(messageId="m1", delta="a"),
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        "text-message-not-open",
        id="TEXT_MESSAGE_END",
    ),
    pytest.param(
        tool_chunk(toolCallId="m1", toolCallName="f", delta="{"),
        {"type": "TOOL_CALL_ARGS", "toolCallId": "m1", "delta": "}"},
        "tool-call-not-open",
        id="TOOL_CALL_ARGS",
    ),
    pytest.param(
        thought_chunk(messageId="m1", delta="a"),
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "m1", "delta": "b"},
        "reasoning-message-not-open",
        id="REASONING_MESSAGE_CONTENT",
    ),
]


@pytest.mark.parametrize(("chunk", "explicit", "rule"), MIXED)
def test_explicit_continuation_after_a_chunk_names_no_open_item(
    chunk: Event, explicit: Event, rule: str
) -> None:
    result = rejected([RUN_STARTED, chunk, explicit, RUN_FINISHED], rule, 2)
    # the explicit event ended the shorthand first: the synthesized end was delivered
    assert types(result)[-1] == END_OF[chunk["type"]]


def test_chunk_naming_an_explicitly_opened_item_is_an_open() -> None:
    rejected(
        [
            RUN_STARTED,
            {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
            text_chunk(messageId="m1", delta="a"),
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            RUN_FINISHED,
        ],
        "text-message-already-open",
        2,
        ["RUN_STARTED", "TEXT_MESSAGE_START"],
    )


# --- continuation chunks repeating opener fields -------------------------------------------


# Tool-call openers carry no argument text: see two_subagent_streams.
CONFLICTS = [
    pytest.param(
        text_chunk(messageId="m1", role="user", delta="a"),
        text_chunk(role="assistant", delta="b"),
        "/role",
        id="text-role",
    ),
    pytest.param(
        text_chunk(messageId="m1", delta="a"),
        text_chunk(role="user", delta="b"),
        "/role",
        id="text-role-after-opener-without-role",
    ),
    pytest.param(
        text_chunk(messageId="m1", delta="a"),
        text_chunk(messageId="m1", role="system", delta="b"),
        "/role",
        id="text-role-with-repeated-id",
    ),
    pytest.param(
        text_chunk(messageId="m1", name="ada", delta="a"),
        text_chunk(name="bob", delta="b"),
        "/name",
        id="text-name",
    ),
    pytest.param(
        tool_chunk(toolCallId="c1", toolCallName="search"),
        tool_chunk(toolCallName="delete", delta="}"),
        "/toolCallName",
        id="tool-name",
    ),
    pytest.param(
        tool_chunk(toolCallId="c1", toolCallName="search", parentMessageId="a1"),
        tool_chunk(parentMessageId="a2", delta="}"),
        "/parentMessageId",
        id="tool-parent",
    ),
]


@pytest.mark.parametrize(("opener", "continuation", "path"), CONFLICTS)
def test_conflicting_repeat_is_rejected(opener: Event, continuation: Event, path: str) -> None:
    result = rejected(
        [RUN_STARTED, opener, continuation, RUN_FINISHED],
        "chunk-conflicting-repeat",
        2,
    )
    assert result.violation is not None
    assert result.violation.path == path
    delivered = types(result)
    assert delivered[:2] == ["RUN_STARTED", START_OF[opener["type"]]]
    assert END_OF[opener["type"]] not in delivered  # the rejected chunk was not expanded


IDENTICAL = [
    pytest.param(
        text_chunk(messageId="m1", role="user", name="ada", delta="a"),
        text_chunk(messageId="m1", role="user", name="ada", delta="b"),
        id="text-role-and-name",
    ),
    pytest.param(
        text_chunk(messageId="m1", delta="a"),
        text_chunk(role="assistant", delta="b"),
        id="text-assistant-after-opener-without-role",
    ),
    pytest.param(
        tool_chunk(toolCallId="c1", toolCallName="search", parentMessageId="a1", delta="a"),
        tool_chunk(toolCallId="c1", toolCallName="search", parentMessageId="a1", delta="b"),
        id="tool-name-and-parent",
    ),
]


@pytest.mark.parametrize(("opener", "continuation"), IDENTICAL)
def test_identical_repeat_is_accepted(opener: Event, continuation: Event) -> None:
    result = accepted([RUN_STARTED, opener, continuation, RUN_FINISHED])
    (message,) = messages(result)
    if opener["type"] == "TOOL_CALL_CHUNK":
        assert message["toolCalls"][0]["function"]["arguments"] == "ab"
    else:
        assert message["content"] == "ab"
    assert types(result).count(END_OF[opener["type"]]) == 1


# --- metadata-only continuation -----------------------------------------------------------


def test_metadata_only_continuation_reaches_the_item() -> None:
    result = accepted(
        [
            RUN_STARTED,
            text_chunk(messageId="m1", delta="Hi", metadata={"vendor.model": "x", "n": 1}),
            text_chunk(metadata={"n": 2, "vendor.finish": "stop"}),
            RUN_FINISHED,
        ]
    )
    (message,) = messages(result)
    assert message["content"] == "Hi"  # no content added
    assert message["metadata"] == {"vendor.model": "x", "n": 2, "vendor.finish": "stop"}


def test_metadata_only_tool_continuation_reaches_the_call() -> None:
    result = accepted(
        [
            RUN_STARTED,
            tool_chunk(toolCallId="c1", toolCallName="f", delta="{}"),
            tool_chunk(metadata={"vendor.usage": 7}),
            RUN_FINISHED,
        ]
    )
    (message,) = messages(result)
    (call,) = message["toolCalls"]
    assert call["metadata"] == {"vendor.usage": 7}
    assert call["function"]["arguments"] == "{}"
    assert "metadata" not in message


# --- which lane an untagged, id-less continuation belongs to ---------------------------------


def two_subagent_streams(chunk: Any, id_field: str, **opener: Any) -> list[Event]:
    # Tool-call openers carry no argument text here: a rejected stream holding a call
    # with buffered arguments trips the reducer bug pinned in test_reduce.py.
    one, two = ({} if chunk is tool_chunk else {"delta": d} for d in ("1", "2"))
    return [
        chunk(**{id_field: "s1-item"}, subagentRunId="s1", **one, **opener),
        chunk(**{id_field: "s2-item"}, subagentRunId="s2", **two, **opener),
    ]


LANE_KINDS = [
    pytest.param(text_chunk, "messageId", {}, id="text"),
    pytest.param(tool_chunk, "toolCallId", {"toolCallName": "f"}, id="tool"),
    pytest.param(thought_chunk, "messageId", {}, id="reasoning"),
]


@pytest.mark.parametrize(("chunk", "id_field", "opener"), LANE_KINDS)
def test_untagged_continuation_with_several_subagent_streams_is_ambiguous(
    chunk: Any, id_field: str, opener: dict[str, Any]
) -> None:
    events = [RUN_STARTED, *two_subagent_streams(chunk, id_field, **opener), chunk(delta="?")]
    result = rejected(events, "chunk-ambiguous", 3)
    delivered = types(result)
    assert delivered.count(START_OF[chunk(delta="")["type"]]) == 2
    assert not any(t.endswith("_END") for t in delivered)  # neither stream was closed


@pytest.mark.parametrize(("chunk", "id_field", "opener"), LANE_KINDS)
def test_untagged_continuation_with_one_subagent_stream_continues_it(
    chunk: Any, id_field: str, opener: dict[str, Any]
) -> None:
    result = accepted(
        [
            RUN_STARTED,
            chunk(**{id_field: "s1-item"}, subagentRunId="s1", delta="1", **opener),
            chunk(delta="+"),
            RUN_FINISHED,
        ]
    )
    continuation = wire(result)[3]
    assert continuation[id_field] == "s1-item"
    assert continuation["subagentRunId"] == "s1"
    assert continuation["delta"] == "+"


def test_untagged_continuation_prefers_the_parent_stream() -> None:
    result = accepted(
        [
            RUN_STARTED,
            text_chunk(messageId="p", delta="parent"),
            *two_subagent_streams(text_chunk, "messageId"),
            text_chunk(delta="!"),
            RUN_FINISHED,
        ]
    )
    contents = {m["id"]: m["content"] for m in messages(result)}
    assert contents == {"p": "parent!", "s1-item": "1", "s2-item": "2"}


@pytest.mark.parametrize(
    "continuation",
    [
        pytest.param(text_chunk(delta="!", subagentRunId="s2"), id="tagged"),
        pytest.param(text_chunk(messageId="s2-item", delta="!"), id="named"),
    ],
)
def test_tagged_or_named_continuation_is_never_ambiguous(continuation: Event) -> None:
    result = accepted(
        [
            RUN_STARTED,
            *two_subagent_streams(text_chunk, "messageId"),
            continuation,
            RUN_FINISHED,
        ]
    )
    contents = {m["id"]: m["content"] for m in messages(result)}
    assert contents == {"s1-item": "1", "s2-item": "2!"}


# --- no empty content events ---------------------------------------------------------------------

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def consumed_in_a_run(*events: dict[str, Any], **options: Any) -> agui.Result:
    return agui.consume([msgspec.json.encode(e) for e in (START, *events, FINISH)], **options)


def test_chunk_expansion_emits_no_empty_content() -> None:
    result = consumed_in_a_run(
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "metadata": {"k": 1}},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "hi"},
    )
    types = [type(e).__name__ for e in result.events]
    assert types == [
        "RunStartedEvent",
        "TextMessageStartEvent",
        "TextMessageContentEvent",
        "TextMessageEndEvent",
        "RunFinishedEvent",
    ]
    assert [msgspec.to_builtins(m) for m in result.messages] == [
        {"id": "m", "role": "assistant", "content": "hi", "metadata": {"k": 1}}
    ]
