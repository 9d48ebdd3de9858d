"""The reducer: the messages, state and activity an application shows (AG-UI 1.1).

Spec pages: events/text-messages, events/tool-calls, events/reasoning,
events/state, events/activity, basic/patterns/snapshots and basic/metadata;
RULES.md sections A (malformed patches), J (tolerated failures).

Most tests feed a whole stream (wire-named dicts, encoded to bytes) to
``consume`` and read what an application would read: ``Result.messages`` as
wire-named dicts, ``Result.state``, the warnings, and the verdict. The last section
measures what one event costs after a long stream: lines of the library run and bytes
allocated, never the clock.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Sequence
from typing import Any

import msgspec
import pytest
from measure import MiB, peak_bytes
from payloads import in_run, wire_event
from verdicts import FINISH, START, as_dicts, completed, consumed

import agui_msgspec as agui
from agui_msgspec import Consumer, Result, consume

Event = dict[str, Any]


def run_started(run_id: str = "r1") -> Event:
    return {"type": "RUN_STARTED", "threadId": "t", "runId": run_id}


def run_finished(run_id: str = "r1") -> Event:
    return {"type": "RUN_FINISHED", "threadId": "t", "runId": run_id}


def one_run(*events: Event) -> list[Event]:
    return [run_started(), *events, run_finished()]


def text(message_id: str, *deltas: str, **start: Any) -> list[Event]:
    """A whole explicit text message: start, one content per delta, end."""
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, **start},
        *({"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": d} for d in deltas),
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def tool_call(call_id: str, name: str, *deltas: str, **start: Any) -> list[Event]:
    return [
        {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name, **start},
        *({"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": d} for d in deltas),
        {"type": "TOOL_CALL_END", "toolCallId": call_id},
    ]


def thought(message_id: str, *deltas: str) -> list[Event]:
    return [
        {"type": "REASONING_MESSAGE_START", "messageId": message_id, "role": "reasoning"},
        *(
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": message_id, "delta": d}
            for d in deltas
        ),
        {"type": "REASONING_MESSAGE_END", "messageId": message_id},
    ]


def activity(message_id: str, kind: str, content: Event, **extra: Any) -> Event:
    return {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": message_id,
        "activityType": kind,
        "content": content,
        **extra,
    }


def activity_delta(message_id: str, kind: str, *patch: Event, **extra: Any) -> Event:
    return {
        "type": "ACTIVITY_DELTA",
        "messageId": message_id,
        "activityType": kind,
        "patch": list(patch),
        **extra,
    }


def state_delta(*operations: Event) -> Event:
    return {"type": "STATE_DELTA", "delta": list(operations)}


def make_input(messages: Sequence[Event] = (), **extra: Any) -> Event:
    return {"threadId": "t", "runId": "r1", "messages": list(messages), **extra}


def run(events: Sequence[Event], input: Any = None) -> Result:
    return consume([msgspec.json.encode(event) for event in events], input=input)


def accepted(events: Sequence[Event], input: Any = None) -> Result:
    result = run(events, input)
    assert result.violation is None, result.violation
    assert result.outcome == "completed"
    return result


def messages(result: Result) -> list[Event]:
    held: list[Event] = msgspec.to_builtins(result.messages)
    return held


def by_id(result: Result) -> dict[str, Event]:
    return {message["id"]: message for message in messages(result)}


def warned(result: Result, *fragments: str) -> bool:
    return any(all(f in warning for f in fragments) for warning in result.warnings)


# --- text messages --------------------------------------------------------------------------


def test_triad_assembles_an_assistant_message_by_default() -> None:
    result = accepted(one_run(*text("m1", "Hello, ", "world.")))
    assert messages(result) == [{"role": "assistant", "id": "m1", "content": "Hello, world."}]
    assert result.warnings == []


@pytest.mark.parametrize("role", ["developer", "system", "user", "assistant"])
def test_triad_assembles_a_message_of_its_role(role: str) -> None:
    result = accepted(one_run(*text("m1", "a", "b", role=role, name="speaker")))
    assert messages(result) == [{"role": role, "id": "m1", "name": "speaker", "content": "ab"}]


def test_interleaved_messages_assemble_independently() -> None:
    events = [
        {"type": "TEXT_MESSAGE_START", "messageId": "a"},
        {"type": "TEXT_MESSAGE_START", "messageId": "b", "role": "user"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "1"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "b", "delta": "x"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "2"},
        {"type": "TEXT_MESSAGE_END", "messageId": "b"},
        {"type": "TEXT_MESSAGE_END", "messageId": "a"},
    ]
    result = accepted(one_run(*events))
    assert [(m["id"], m["role"], m["content"]) for m in messages(result)] == [
        ("a", "assistant", "12"),
        ("b", "user", "x"),
    ]


def test_reopened_message_appends_to_its_content() -> None:
    result = accepted(one_run(*text("m1", "first"), *text("m1", " then more")))
    assert messages(result) == [{"role": "assistant", "id": "m1", "content": "first then more"}]


def test_message_reopened_in_a_later_run_appends() -> None:
    events = [
        *one_run(*text("m1", "one")),
        run_started("r2"),
        *text("m1", " two"),
        run_finished("r2"),
    ]
    result = accepted(events)
    assert [m["content"] for m in messages(result)] == ["one two"]


def test_partial_message_is_visible_while_it_streams() -> None:
    consumer = Consumer()
    for event in [run_started(), *text("m1", "Hel", "lo")[:-1]]:
        consumer.feed(msgspec.json.encode(event))
    assert msgspec.to_builtins(consumer.messages) == [
        {"role": "assistant", "id": "m1", "content": "Hello"}
    ]


# --- tool calls and results ----------------------------------------------------------------


def test_tool_calls_land_on_their_parent_message_with_arguments_assembled() -> None:
    events = [
        *text("a1", "Let me look."),
        *tool_call("c1", "search", '{"q":', '"cats"}', parentMessageId="a1"),
        *tool_call("c2", "fetch", "{}", parentMessageId="a1"),
    ]
    result = accepted(one_run(*events))
    (message,) = messages(result)
    assert message["content"] == "Let me look."
    assert message["toolCalls"] == [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "search", "arguments": '{"q":"cats"}'},
        },
        {"id": "c2", "type": "function", "function": {"name": "fetch", "arguments": "{}"}},
    ]


def test_tool_call_arguments_are_kept_as_text_even_when_not_json() -> None:
    result = accepted(
        one_run(*text("a1"), *tool_call("c1", "f", "{not json", parentMessageId="a1"))
    )
    assert messages(result)[0]["toolCalls"][0]["function"]["arguments"] == "{not json"


@pytest.mark.parametrize(
    "content",
    [
        pytest.param("3 results found.", id="string"),
        pytest.param(
            [
                {"type": "text", "text": "Invoice attached."},
                {
                    "type": "document",
                    "source": {
                        "type": "url",
                        "value": "https://example.com/inv.pdf",
                        "mimeType": "application/pdf",
                    },
                    "metadata": {"title": "INV"},
                },
            ],
            id="content-parts",
        ),
    ],
)
def test_tool_call_result_mints_a_tool_message(content: Any) -> None:
    events = [
        *text("a1"),
        *tool_call("c1", "search", "{}", parentMessageId="a1"),
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "t1",
            "toolCallId": "c1",
            "content": content,
            "metadata": {"vendor.ms": 12},
        },
    ]
    result = accepted(one_run(*events))
    assistant, tool = messages(result)
    assert tool == {
        "role": "tool",
        "id": "t1",
        "content": content,
        "toolCallId": "c1",
        "metadata": {"vendor.ms": 12},
    }
    # the result does not reopen or alter the call it answers
    assert assistant["toolCalls"][0]["function"] == {"name": "search", "arguments": "{}"}


# --- MESSAGES_SNAPSHOT ------------------------------------------------------------------------


def held_before_snapshot() -> list[Event]:
    """u1 (user), r1 (reasoning), act1 (activity), a1 (assistant), in that order."""
    return [
        *text("u1", "hi", role="user"),
        *thought("r1", "hmm"),
        activity("act1", "search", {"found": 0}),
        *text("a1", "old answer"),
    ]


def test_messages_snapshot_reconciles_by_id_in_place() -> None:
    snapshot = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"role": "user", "id": "u2", "content": "new"},
            {"role": "assistant", "id": "a1", "content": "restated"},
        ],
    }
    result = accepted(one_run(*held_before_snapshot(), snapshot))
    # u1 is dropped (absent, and not client-only); reasoning and activity stay where they
    # were; a1 is replaced where it stood; u2 is new and appended.
    assert [(m["id"], m.get("content")) for m in messages(result)] == [
        ("r1", "hmm"),
        ("act1", {"found": 0}),
        ("a1", "restated"),
        ("u2", "new"),
    ]


def test_messages_snapshot_does_not_reorder_known_messages() -> None:
    snapshot = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"role": "assistant", "id": "b", "content": "B"},
            {"role": "assistant", "id": "a", "content": "A"},
        ],
    }
    result = accepted(one_run(*text("a", "a"), *text("b", "b"), snapshot))
    assert [(m["id"], m["content"]) for m in messages(result)] == [("a", "A"), ("b", "B")]


@pytest.mark.parametrize(
    ("carried", "dropped"),
    [
        pytest.param({"role": "reasoning", "id": "r2", "content": "x"}, "r1", id="reasoning"),
        pytest.param(
            {"role": "activity", "id": "act2", "activityType": "s", "content": {}},
            "act1",
            id="activity",
        ),
    ],
)
def test_messages_snapshot_carrying_a_client_only_role_declares_that_set(
    carried: Event, dropped: str
) -> None:
    snapshot = {"type": "MESSAGES_SNAPSHOT", "messages": [carried]}
    result = accepted(one_run(*held_before_snapshot(), snapshot))
    held = [m["id"] for m in messages(result)]
    assert dropped not in held
    assert carried["id"] in held
    kept = {"r1", "act1"} - {dropped}
    assert kept <= set(held)  # the other client-only role is still exempt


def test_messages_snapshot_replaces_the_whole_message() -> None:
    events = [
        *text("a1", "x"),
        *tool_call("c1", "f", "{}", parentMessageId="a1"),
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [{"role": "assistant", "id": "a1", "content": "y"}],
        },
    ]
    result = accepted(one_run(*events))
    assert messages(result) == [{"role": "assistant", "id": "a1", "content": "y"}]


def test_messages_snapshot_restating_an_open_message_is_continued_from() -> None:
    events: list[Event] = [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "a"},
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [{"role": "assistant", "id": "m1", "content": "restated"}],
        },
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "b"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    ]
    result = accepted(one_run(*events))
    assert messages(result) == [{"role": "assistant", "id": "m1", "content": "restatedb"}]


def test_messages_snapshot_omitting_an_open_message_does_not_crash() -> None:
    events: list[Event] = [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
        {"type": "MESSAGES_SNAPSHOT", "messages": []},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "b"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    ]
    result = run(one_run(*events))
    assert result.outcome == "completed"


def test_stream_rejected_during_tool_arguments_still_reports() -> None:
    events = [
        run_started(),
        *text("a1"),
        *tool_call("c1", "f", "{", "}", parentMessageId="a1")[:-1],
        {"type": "TOOL_CALL_ARGS", "toolCallId": "nope", "delta": "x"},
    ]
    result = run(events)
    assert result.violation is not None
    assert result.violation.rule == "tool-call-not-open"


def test_reading_messages_mid_call_does_not_corrupt_the_message() -> None:
    consumer = Consumer()
    events = [run_started(), *tool_call("c1", "f", '{"a"', ":1}"), run_finished()]
    for event in events[:-2]:  # up to the second TOOL_CALL_ARGS
        consumer.feed(msgspec.json.encode(event))
    _ = consumer.messages  # an application rendering progress
    for event in events[-2:]:
        consumer.feed(msgspec.json.encode(event))
    (message,) = msgspec.to_builtins(consumer.messages)
    assert message["toolCalls"][0]["function"]["arguments"] == '{"a":1}'
    assert message.get("content") in (None, "")


# --- state --------------------------------------------------------------------------------


def test_state_snapshot_replaces_without_merging() -> None:
    result = accepted(
        one_run({"type": "STATE_SNAPSHOT", "snapshot": {"b": 2}}),
        input=make_input(state={"a": 1}),
    )
    assert result.state == {"b": 2}


@pytest.mark.parametrize(
    "value",
    [None, 0, False, [], "", {}, 1.5, [1, {"x": None}]],
    ids=repr,
)
def test_state_snapshot_accepts_any_json_value(value: Any) -> None:
    result = accepted(one_run({"type": "STATE_SNAPSHOT", "snapshot": value}))
    assert result.state == value
    assert type(result.state) is type(value)


def test_state_delta_applies_rfc6902_operations_in_order() -> None:
    delta = state_delta(
        {"op": "add", "path": "/items/-", "value": "c"},
        {"op": "replace", "path": "/count", "value": 3},
        {"op": "remove", "path": "/stale"},
        {"op": "copy", "from": "/items/0", "path": "/first"},
        {"op": "move", "from": "/tmp", "path": "/kept"},
        {"op": "test", "path": "/count", "value": 3},
        {"op": "add", "path": "/a~1b", "value": True},
    )
    result = accepted(
        one_run(delta),
        input=make_input(state={"items": ["a", "b"], "count": 2, "stale": 1, "tmp": {"x": 1}}),
    )
    assert result.state == {
        "items": ["a", "b", "c"],
        "count": 3,
        "first": "a",
        "kept": {"x": 1},
        "a/b": True,
    }
    assert result.warnings == []


@pytest.mark.parametrize(
    "failing",
    [
        pytest.param({"op": "remove", "path": "/missing"}, id="remove-missing"),
        pytest.param({"op": "test", "path": "/n", "value": 99}, id="failed-test"),
        pytest.param({"op": "replace", "path": "/list/7", "value": 0}, id="index-out-of-range"),
    ],
)
def test_unappliable_state_delta_keeps_the_prior_state_with_a_warning(failing: Event) -> None:
    start = {"n": 1, "list": [0]}
    events = [
        state_delta({"op": "replace", "path": "/n", "value": 2}, failing),  # atomic: neither
        state_delta({"op": "add", "path": "/after", "value": True}),  # the stream goes on
    ]
    result = accepted(one_run(*events), input=make_input(state=start))
    assert result.state == {**start, "after": True}
    assert warned(result, "event 1", "/delta")


def test_unknown_patch_op_is_dropped_with_a_warning_and_the_rest_applies() -> None:
    events = [
        state_delta(
            {"op": "add", "path": "/a", "value": 1},
            {"op": "merge", "path": "/b", "value": 2},
            {"op": "add", "path": "/c", "value": 3},
        )
    ]
    result = accepted(one_run(*events))
    assert result.state == {"a": 1, "c": 3}
    assert warned(result, "/delta/1", "merge")


@pytest.mark.parametrize(
    ("delta", "path"),
    [
        pytest.param([{"op": "add", "path": "a", "value": 1}], "/delta/0/path", id="bad-pointer"),
        pytest.param([{"op": "add", "path": "/~2", "value": 1}], "/delta/0/path", id="bad-escape"),
        pytest.param([{"op": "add", "path": "/a"}], "/delta/0", id="missing-value"),
        pytest.param([{"op": "move", "path": "/a"}], "/delta/0", id="missing-from"),
        pytest.param({"op": "add", "path": "/a", "value": 1}, "/delta", id="not-an-array"),
    ],
)
def test_malformed_state_delta_is_fatal(delta: Any, path: str) -> None:
    result = run(one_run({"type": "STATE_DELTA", "delta": delta}), input=make_input(state={"k": 0}))
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("malformed-event", 1)
    assert result.violation.path.startswith(path)
    assert result.state == {"k": 0}


def test_state_delta_baseline_is_the_input_state() -> None:
    result = accepted(
        one_run(state_delta({"op": "replace", "path": "/step", "value": 2})),
        input=make_input(state={"step": 1, "plan": ["x"]}),
    )
    assert result.state == {"step": 2, "plan": ["x"]}


def test_state_without_input_starts_as_the_empty_object() -> None:
    result = accepted(one_run(state_delta({"op": "add", "path": "/n", "value": 1})))
    assert result.state == {"n": 1}


def test_state_and_messages_persist_across_runs() -> None:
    events = [
        *one_run({"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}, *text("m1", "first")),
        run_started("r2"),
        state_delta({"op": "add", "path": "/m", "value": 2}),
        *text("m2", "second"),
        run_finished("r2"),
    ]
    result = accepted(events)
    assert result.state == {"n": 1, "m": 2}
    assert [m["id"] for m in messages(result)] == ["m1", "m2"]


def test_input_messages_seed_the_conversation() -> None:
    history = [
        {"role": "user", "id": "u1", "content": "hi"},
        {"role": "assistant", "id": "a1", "content": "hello"},
    ]
    result = accepted(one_run(*text("a2", "again")), input=make_input(history))
    assert [m["id"] for m in messages(result)] == ["u1", "a1", "a2"]
    assert by_id(result)["u1"] == history[0]


def test_input_message_reopened_by_the_stream_appends() -> None:
    history = [{"role": "assistant", "id": "a1", "content": "hello"}]
    result = accepted(one_run(*text("a1", ", again")), input=make_input(history))
    assert messages(result) == [{"role": "assistant", "id": "a1", "content": "hello, again"}]


@pytest.mark.parametrize(
    "history",
    [
        pytest.param([("reasoning", "hmm"), ("user", "hi")], id="latest-removed"),
        pytest.param([("user", "hi"), ("reasoning", "hmm")], id="earlier-removed"),
        pytest.param(
            [("reasoning", "so"), ("reasoning", "hmm"), ("user", "hi")], id="latest-of-three"
        ),
    ],
)
def test_an_id_input_messages_share_names_the_latest_one_left(
    history: list[tuple[str, str]],
) -> None:
    shared = [{"role": role, "id": "m", "content": content} for role, content in history]
    # The snapshot removes the user message and leaves the reasoning ones: the id then
    # names the latest of those, which the stream continues.
    snapshot = {"type": "MESSAGES_SNAPSHOT", "messages": []}
    result = accepted(one_run(snapshot, *thought("m", ", then")), input=make_input(shared))
    kept = [content for role, content in history if role == "reasoning"]
    assert [m["content"] for m in messages(result)] == [*kept[:-1], f"{kept[-1]}, then"]


def test_an_id_input_messages_share_is_replaced_at_its_latest() -> None:
    history = [
        {"role": "user", "id": "m", "content": "first"},
        {"role": "user", "id": "m", "content": "second"},
    ]
    result = accepted(
        one_run({"type": "TOOL_CALL_RESULT", "messageId": "m", "toolCallId": "c", "content": "ok"}),
        input=make_input(history),
    )
    assert [(m["role"], m["content"]) for m in messages(result)] == [
        ("user", "first"),
        ("tool", "ok"),
    ]


# --- activity -----------------------------------------------------------------------------


def test_activity_snapshot_creates_a_message_at_its_point_of_arrival() -> None:
    events = [*text("m1", "a"), activity("act", "search", {"found": 0}), *text("m2", "b")]
    result = accepted(one_run(*events))
    assert [m["id"] for m in messages(result)] == ["m1", "act", "m2"]
    assert by_id(result)["act"] == {
        "role": "activity",
        "id": "act",
        "activityType": "search",
        "content": {"found": 0},
    }


def test_activity_snapshot_replaces_content_and_type_in_place() -> None:
    events = [
        activity("act", "search", {"found": 0, "q": "x"}),
        *text("m1", "a"),
        activity("act", "results", {"hits": 3}),
    ]
    result = accepted(one_run(*events))
    assert [m["id"] for m in messages(result)] == ["act", "m1"]
    assert by_id(result)["act"]["activityType"] == "results"
    assert by_id(result)["act"]["content"] == {"hits": 3}  # replaced, not merged


def test_activity_snapshot_replace_false_keeps_the_existing_message() -> None:
    events = [
        activity("act", "search", {"found": 0}),
        activity("act", "other", {"found": 9}, replace=False),
    ]
    result = accepted(one_run(*events))
    assert by_id(result)["act"]["activityType"] == "search"
    assert by_id(result)["act"]["content"] == {"found": 0}


def test_activity_snapshot_replace_false_creates_a_missing_message() -> None:
    result = accepted(one_run(activity("act", "search", {"found": 1}, replace=False)))
    assert by_id(result)["act"]["content"] == {"found": 1}


def test_activity_metadata_survives_replacement() -> None:
    events = [
        activity("act", "search", {}, metadata={"vendor.a": 1, "shared": "old"}),
        activity("act", "search", {"n": 1}, metadata={"shared": "new"}),
        activity_delta(
            "act", "search", {"op": "add", "path": "/m", "value": 2}, metadata={"vendor.d": 3}
        ),
    ]
    result = accepted(one_run(*events))
    assert by_id(result)["act"]["metadata"] == {"vendor.a": 1, "shared": "new", "vendor.d": 3}


def test_replacing_activity_snapshot_re_mints_attribution() -> None:
    events = [
        activity("act", "search", {}, subagentRunId="s1"),
        activity("act", "search", {"n": 1}),
    ]
    result = accepted(one_run(*events))
    assert "subagentRunId" not in by_id(result)["act"]


def test_activity_delta_patches_the_content() -> None:
    events = [
        activity("act", "search", {"found": 0, "results": []}),
        activity_delta(
            "act",
            "search",
            {"op": "replace", "path": "/found", "value": 1},
            {"op": "add", "path": "/results/0", "value": {"title": "hit"}},
        ),
    ]
    result = accepted(one_run(*events))
    assert by_id(result)["act"]["content"] == {"found": 1, "results": [{"title": "hit"}]}


def test_activity_delta_retypes_the_activity() -> None:
    events = [
        activity("act", "search", {"found": 0}),
        activity_delta("act", "search-done", {"op": "replace", "path": "/found", "value": 3}),
    ]
    result = accepted(one_run(*events))
    assert by_id(result)["act"]["activityType"] == "search-done"


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param([], id="missing-message"),
        pytest.param(text("act", "I am text"), id="non-activity-message"),
    ],
)
def test_activity_delta_without_an_activity_target_is_skipped_with_a_warning(
    setup: list[Event],
) -> None:
    events = [
        *setup,
        activity_delta("act", "search", {"op": "add", "path": "/n", "value": 1}),
        *text("after", "the run goes on"),
    ]
    result = accepted(one_run(*events))
    assert warned(result, "ACTIVITY_DELTA", "'act'")
    assert [m["role"] for m in messages(result)] == [
        *(["assistant"] if setup else []),
        "assistant",
    ]
    if setup:
        assert by_id(result)["act"]["content"] == "I am text"


def test_untagged_activity_delta_continues_a_subagents_activity() -> None:
    events = [
        activity("act", "search", {}, subagentRunId="s1"),
        activity_delta("act", "search", {"op": "add", "path": "/n", "value": 1}),
    ]
    result = accepted(one_run(*events))
    assert by_id(result)["act"]["content"] == {"n": 1}
    assert by_id(result)["act"]["subagentRunId"] == "s1"


def test_activity_delta_tagged_with_another_owner_is_rejected() -> None:
    events = [
        activity("act", "search", {}, subagentRunId="s1"),
        activity_delta(
            "act", "search", {"op": "add", "path": "/n", "value": 1}, subagentRunId="s2"
        ),
    ]
    result = run(one_run(*events))
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("attribution-mismatch", 2)


def test_unappliable_activity_delta_keeps_the_content_with_a_warning() -> None:
    events = [
        activity("act", "search", {"found": 0}),
        activity_delta(
            "act",
            "search",
            {"op": "replace", "path": "/found", "value": 5},
            {"op": "remove", "path": "/missing"},
        ),
    ]
    result = accepted(one_run(*events))
    assert by_id(result)["act"]["content"] == {"found": 0}
    assert warned(result, "event 2", "/patch")


# --- metadata -----------------------------------------------------------------------------


def test_metadata_merges_per_key_last_write_wins_not_recursively() -> None:
    events = [
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "m1",
            "metadata": {"vendor.obj": {"x": 1}, "keep": 1, "nullable": "set"},
        },
        {
            "type": "TEXT_MESSAGE_CONTENT",
            "messageId": "m1",
            "delta": "hi",
            "metadata": {"vendor.obj": {"y": 2}},
        },
        {"type": "TEXT_MESSAGE_END", "messageId": "m1", "metadata": {"nullable": None}},
    ]
    result = accepted(one_run(*events))
    assert by_id(result)["m1"]["metadata"] == {
        "vendor.obj": {"y": 2},  # replaced wholesale, not blended with {"x": 1}
        "keep": 1,
        "nullable": None,  # a null under a key is data
    }


def test_tool_call_metadata_lands_on_the_call_not_its_message() -> None:
    events = [
        *text("a1", "x"),
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c1",
            "toolCallName": "f",
            "parentMessageId": "a1",
            "metadata": {"n": 1, "start": True},
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}", "metadata": {"n": 2}},
        {"type": "TOOL_CALL_END", "toolCallId": "c1", "metadata": {"finish": "stop"}},
    ]
    result = accepted(one_run(*events))
    message = by_id(result)["a1"]
    assert "metadata" not in message
    assert message["toolCalls"][0]["metadata"] == {"n": 2, "start": True, "finish": "stop"}


def test_reasoning_metadata_lands_on_the_reasoning_message() -> None:
    events = [
        {
            "type": "REASONING_MESSAGE_START",
            "messageId": "r1",
            "role": "reasoning",
            "metadata": {"a": 1},
        },
        {"type": "REASONING_MESSAGE_END", "messageId": "r1", "metadata": {"b": 2}},
    ]
    result = accepted(one_run(*events))
    assert by_id(result)["r1"]["metadata"] == {"a": 1, "b": 2}


def test_metadata_of_events_that_build_nothing_lands_nowhere() -> None:
    events = [
        *text("m1", "x"),
        {"type": "STATE_SNAPSHOT", "snapshot": {}, "metadata": {"vendor.s": 1}},
        {"type": "CUSTOM", "name": "n", "value": 1, "metadata": {"vendor.c": 1}},
    ]
    result = accepted(one_run(*events))
    assert "metadata" not in by_id(result)["m1"]


# --- reasoning ----------------------------------------------------------------------------


def test_reasoning_messages_assemble_inside_a_span() -> None:
    events = [
        {"type": "REASONING_START", "messageId": "span"},
        *thought("r1", "first, ", "think"),
        *thought("r2", "again"),
        {"type": "REASONING_END", "messageId": "span"},
        *text("a1", "answer"),
    ]
    result = accepted(one_run(*events))
    # the span itself is no message
    assert [(m["role"], m["id"], m["content"]) for m in messages(result)] == [
        ("reasoning", "r1", "first, think"),
        ("reasoning", "r2", "again"),
        ("assistant", "a1", "answer"),
    ]


def encrypted(subtype: str, entity: str, value: str, **extra: Any) -> Event:
    return {
        "type": "REASONING_ENCRYPTED_VALUE",
        "subtype": subtype,
        "entityId": entity,
        "encryptedValue": value,
        **extra,
    }


@pytest.mark.parametrize(
    "setup",
    [
        pytest.param(thought("m1", "x"), id="reasoning-message"),
        pytest.param(text("m1", "x"), id="assistant-message"),
    ],
)
def test_encrypted_value_is_stored_on_the_message(setup: list[Event]) -> None:
    events = [*setup, encrypted("message", "m1", "OPAQUE==", encryptedValueType="vendor.sig")]
    result = accepted(one_run(*events))
    message = by_id(result)["m1"]
    assert (message["encryptedValue"], message["encryptedValueType"]) == ("OPAQUE==", "vendor.sig")


def test_encrypted_value_is_stored_on_the_tool_call() -> None:
    events = [
        *text("a1", "x"),
        *tool_call("c1", "f", "{}", parentMessageId="a1"),
        encrypted("tool-call", "c1", "CALL==", encryptedValueType="vendor.c"),
    ]
    result = accepted(one_run(*events))
    message = by_id(result)["a1"]
    assert "encryptedValue" not in message
    call = message["toolCalls"][0]
    assert (call["encryptedValue"], call["encryptedValueType"]) == ("CALL==", "vendor.c")


def test_new_encrypted_value_without_a_type_clears_the_old_type() -> None:
    events = [
        *thought("m1", "x"),
        encrypted("message", "m1", "FIRST", encryptedValueType="vendor.a"),
        encrypted("message", "m1", "SECOND"),
    ]
    message = by_id(accepted(one_run(*events)))["m1"]
    assert message["encryptedValue"] == "SECOND"
    assert "encryptedValueType" not in message


def test_encrypted_value_type_is_new_in_1_1() -> None:
    events = [*thought("m1", "x"), encrypted("message", "m1", "V", encryptedValueType="vendor.a")]
    result = consume([msgspec.json.encode(e) for e in one_run(*events)], version="1.0")
    assert result.violation is None
    (message,) = msgspec.to_builtins(result.messages)
    assert message["encryptedValue"] == "V"
    assert "encryptedValueType" not in message  # unknown to 1.0: stripped, with a warning
    assert warned(result, "event 4", "/encryptedValueType")


@pytest.mark.parametrize(
    ("setup", "event"),
    [
        pytest.param([], encrypted("message", "ghost", "V"), id="unknown-message"),
        pytest.param([], encrypted("tool-call", "ghost", "V"), id="unknown-tool-call"),
        pytest.param(
            [activity("act", "s", {})], encrypted("message", "act", "V"), id="activity-message"
        ),
        pytest.param(text("m1", "x"), encrypted("tool-call", "m1", "V"), id="message-as-call"),
    ],
)
def test_encrypted_value_for_an_unknown_entity_warns_and_is_not_fatal(
    setup: list[Event], event: Event
) -> None:
    result = accepted(one_run(*setup, event, *text("after", "more")))
    assert warned(result, "REASONING_ENCRYPTED_VALUE", repr(event["entityId"]))
    assert all("encryptedValue" not in m for m in messages(result))


def text_event(
    kind: str, message_id: str, owner: str | None = None, **fields: Any
) -> dict[str, Any]:
    event = {"type": f"TEXT_MESSAGE_{kind}", "messageId": message_id, **fields}
    if kind == "START":
        event.setdefault("role", "assistant")
    if owner is not None:
        event["subagentRunId"] = owner
    return event


def tool_event(kind: str, call_id: str, owner: str | None = None, **fields: Any) -> dict[str, Any]:
    event = {"type": f"TOOL_CALL_{kind}", "toolCallId": call_id, **fields}
    if kind == "START":
        event.setdefault("toolCallName", "search")
    if kind == "ARGS":
        event.setdefault("delta", "{}")
    if owner is not None:
        event["subagentRunId"] = owner
    return event


def binary_input(*parts: dict[str, Any]) -> dict[str, Any]:
    content = [{"type": "text", "text": "Describe it."}, *parts]
    return {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u1", "role": "user", "content": content}],
    }


def consumed_in_a_run(*events: dict[str, Any], **options: Any) -> agui.Result:
    return agui.consume([msgspec.json.encode(e) for e in (START, *events, FINISH)], **options)


# --- text streamed at an id another kind of message holds ----------------------------------------


def test_a_reasoning_message_reusing_a_text_message_id_keeps_the_text() -> None:
    result = consumed_in_a_run(
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hello"},
        {"type": "REASONING_MESSAGE_START", "messageId": "m", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "m", "delta": "THINK"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": " world"},
        {"type": "REASONING_MESSAGE_END", "messageId": "m"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    )
    assert result.outcome == "completed"
    assert [(type(m).__name__, m.content) for m in result.messages] == [
        ("AssistantMessage", "hello world")
    ]
    assert any("REASONING_MESSAGE_START" in w and "'m'" in w for w in result.warnings)


def test_text_streamed_at_an_activity_id_leaves_the_activity_intact() -> None:
    result = consumed_in_a_run(
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "a",
            "activityType": "plan",
            "content": {"k": 1},
        },
        {"type": "TEXT_MESSAGE_START", "messageId": "a"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a", "delta": "oops"},
        {"type": "TEXT_MESSAGE_END", "messageId": "a"},
    )
    assert [msgspec.to_builtins(m) for m in result.messages] == [
        {"id": "a", "role": "activity", "activityType": "plan", "content": {"k": 1}}
    ]


# --- ACTIVITY_SNAPSHOT with replace: false leaves any existing message (events/activity) ---------


def plan_activity(message_id: str, replace: bool) -> dict[str, Any]:
    return {
        "type": "ACTIVITY_SNAPSHOT",
        "messageId": message_id,
        "activityType": "plan",
        "content": {"steps": 1},
        "replace": replace,
    }


def test_activity_snapshot_without_replace_leaves_a_non_activity_message() -> None:
    user = {"id": "u1", "role": "user", "content": "hi"}
    result = completed(
        consumed(
            START,
            plan_activity("u1", replace=False),
            FINISH,
            input={**binary_input(), "messages": [user]},
        )
    )
    assert as_dicts(result.messages) == [user]


def test_activity_snapshot_with_replace_replaces_a_non_activity_message() -> None:
    user = {"id": "u1", "role": "user", "content": "hi"}
    result = completed(
        consumed(
            START,
            plan_activity("u1", replace=True),
            FINISH,
            input={**binary_input(), "messages": [user]},
        )
    )
    assert [m["role"] for m in as_dicts(result.messages)] == ["activity"]


# --- the decisions where the specification leaves room (README) ----------------------------------


def test_run_started_input_echo_brings_the_messages_a_consumer_lacks() -> None:
    echoed = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [
            {"id": "u0", "role": "user", "content": "the echo's copy"},
            {"id": "u1", "role": "user", "content": "asked"},
        ],
    }
    held = {
        "threadId": "t1",
        "runId": "r1",
        "messages": [{"id": "u0", "role": "user", "content": "mine"}],
    }
    result = completed(
        consumed(
            {**START, "input": echoed},
            text_event("START", "m1"),
            text_event("END", "m1"),
            FINISH,
            input=held,
        )
    )
    assert [(m["id"], m.get("content")) for m in as_dicts(result.messages)] == [
        ("u0", "mine"),  # held: the consumer's own copy stands
        ("u1", "asked"),  # lacked: joins, before what the run streams
        ("m1", ""),
    ]
    observer = completed(consumed({**START, "input": echoed}, FINISH))  # made no request at all
    assert [m["id"] for m in as_dicts(observer.messages)] == ["u0", "u1"]


def test_tool_call_without_parent_message_gets_a_message_of_its_own() -> None:
    result = completed(
        consumed(
            START,
            text_event("START", "m1"),
            text_event("CONTENT", "m1", delta="Let me look."),
            text_event("END", "m1"),
            tool_event("START", "tc1"),
            tool_event("END", "tc1"),
            FINISH,
        )
    )
    messages = as_dicts(result.messages)
    assert [(m["id"], m.get("content")) for m in messages] == [
        ("m1", "Let me look."),
        ("tc1", None),
    ]
    assert messages[1]["toolCalls"][0]["id"] == "tc1"


def test_tool_result_is_appended_where_it_arrives() -> None:
    result = completed(
        consumed(
            START,
            tool_event("START", "tc1", parentMessageId="a1"),
            tool_event("END", "tc1"),
            text_event("START", "m2"),
            text_event("END", "m2"),
            {"type": "TOOL_CALL_RESULT", "messageId": "r1", "toolCallId": "tc1", "content": "ok"},
            FINISH,
        )
    )
    assert [(m["id"], m["role"]) for m in as_dicts(result.messages)] == [
        ("a1", "assistant"),
        ("m2", "assistant"),
        ("r1", "tool"),
    ]


# --- per-event cost that does not grow with the stream -------------------------------------------
# Work is counted structurally: the lines of the library's Python run for one event, and the
# memory it allocates, after a short and after a long prefix of the same stream.


def test_the_default_bound_applies_to_a_snapshot_too() -> None:
    # Over 2 million values: past the default 16 MiB, as every value counts at least 8.
    body = in_run(wire_event(type="STATE_SNAPSHOT", snapshot=[0] * (2 * MiB + 1)))
    result = consume(body, keep_events=False)
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"
    assert (result.violation.index, result.violation.path) == (1, "/snapshot")
    assert consume(body, keep_events=False, max_state_size=32 * MiB).violation is None


def library_lines(action: Callable[[], Any]) -> int:
    """How many lines of agui_msgspec's Python ``action`` runs (each loop turn counts)."""
    import sys  # noqa: PLC0415

    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if "agui_msgspec" not in frame.f_code.co_filename:
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        action()
    finally:
        sys.settrace(None)
    return count


def cost_of_next(prefix: list[bytes], payload: bytes) -> int:
    """Lines of the library run by one more payload after ``prefix``."""
    consumer = Consumer()
    consumer.feed_many(prefix)
    return library_lines(lambda: consumer.feed(payload))


START_PAYLOAD = wire_event(type="RUN_STARTED", threadId="t", runId="r")


def activities(count: int) -> list[bytes]:
    return [
        wire_event(type="ACTIVITY_SNAPSHOT", messageId=f"a{n}", activityType="p", content={"n": n})
        for n in range(count)
    ]


def subagent_chunks(count: int) -> list[bytes]:
    return [
        payload
        for n in range(count)
        for payload in (
            wire_event(type="SUBAGENT_STARTED", subagentRunId=f"s{n}", name="helper"),
            wire_event(
                type="TEXT_MESSAGE_CHUNK", subagentRunId=f"s{n}", messageId=f"m{n}", delta="x"
            ),
        )
    ]


def open_reasoning_messages(count: int) -> list[bytes]:
    return [
        wire_event(type="REASONING_MESSAGE_START", messageId=f"r{n}", role="reasoning")
        for n in range(count)
    ]


SCENARIOS: dict[str, tuple[Callable[[int], list[bytes]], Callable[[int], bytes]]] = {
    "messages-snapshot-over-open-reasoning": (
        open_reasoning_messages,
        lambda n: wire_event(type="MESSAGES_SNAPSHOT", messages=[]),
    ),
    "replace-a-message": (
        activities,
        lambda n: wire_event(
            type="ACTIVITY_SNAPSHOT",
            messageId=f"a{n - 1}",
            activityType="p",
            content={},
            replace=True,
        ),
    ),
    "messages-snapshot": (activities, lambda n: wire_event(type="MESSAGES_SNAPSHOT", messages=[])),
    "subagent-chunks": (
        subagent_chunks,
        lambda n: wire_event(
            type="TEXT_MESSAGE_CHUNK", subagentRunId="s0", messageId="m0", delta="y"
        ),
    ),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_one_event_runs_the_same_code_however_long_the_stream(scenario: str) -> None:
    build, last = SCENARIOS[scenario]
    short = cost_of_next([START_PAYLOAD, *build(50)], last(50))
    long = cost_of_next([START_PAYLOAD, *build(2000)], last(2000))
    assert long <= short + 10, (short, long)


@pytest.mark.parametrize("feed", ["feed_many", "feed", "consume"])
def test_an_open_message_held_unread_costs_about_its_text(feed: str) -> None:
    deltas = 100_000
    payloads = [
        START_PAYLOAD,
        wire_event(type="TEXT_MESSAGE_START", messageId="m", role="assistant"),
        *[wire_event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="ab")] * deltas,
    ]
    consumer = Consumer()
    tracemalloc.start()
    try:
        if feed == "feed_many":
            consumer.feed_many(payloads)
        elif feed == "feed":
            for payload in payloads:
                consumer.feed(payload)
        else:
            consume(iter(payloads), keep_events=False)
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < 2 * 2 * deltas  # the text is 2 bytes a delta; a part per delta took 60
    if feed != "consume":
        assert consumer.messages[0].content == "ab" * deltas


def test_reopening_a_long_message_does_not_copy_its_text() -> None:
    prefix = [
        START_PAYLOAD,
        wire_event(type="TEXT_MESSAGE_START", messageId="m", role="assistant"),
        wire_event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="x" * (4 * MiB)),
        wire_event(type="TEXT_MESSAGE_END", messageId="m"),
    ]
    consumer = Consumer()
    consumer.feed_many(prefix)
    again = [
        wire_event(type="TEXT_MESSAGE_START", messageId="m", role="assistant"),
        wire_event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="y"),
        wire_event(type="TEXT_MESSAGE_END", messageId="m"),
    ]
    _, peak = peak_bytes(lambda: [consumer.feed_many(again) for _ in range(3)])
    assert peak < MiB
    assert consumer.messages[0].content == "x" * (4 * MiB) + "yyy"


def test_a_delta_does_not_copy_the_whole_state() -> None:
    snapshot = {f"key{n}": {"n": n} for n in range(50_000)}
    consumer = Consumer()
    consumer.feed_many([START_PAYLOAD, wire_event(type="STATE_SNAPSHOT", snapshot=snapshot)])
    first = wire_event(
        type="STATE_DELTA", delta=[{"op": "replace", "path": "/key1/n", "value": -1}]
    )
    consumer.feed(first)  # the first delta after a snapshot copies it: the event stays as it was
    delta = wire_event(
        type="STATE_DELTA", delta=[{"op": "replace", "path": "/key2/n", "value": -2}]
    )
    _, peak = peak_bytes(lambda: consumer.feed(delta))
    assert peak < 64 * 1024
    assert consumer.state["key1"] == {"n": -1}
    assert consumer.state["key2"] == {"n": -2}


def test_metadata_is_merged_key_by_key() -> None:
    big = {f"k{n}": n for n in range(50_000)}
    consumer = Consumer()
    consumer.feed_many(
        [
            START_PAYLOAD,
            wire_event(type="TEXT_MESSAGE_START", messageId="m", role="assistant", metadata=big),
            wire_event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="a", metadata={"x": 1}),
        ]
    )
    more = wire_event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="b", metadata={"y": 2})
    _, peak = peak_bytes(lambda: consumer.feed(more))
    assert peak < 64 * 1024
    merged = consumer.messages[0].metadata
    assert merged == {**big, "x": 1, "y": 2}


def test_reading_the_messages_costs_what_changed_not_the_conversation() -> None:
    """A live UI reads ``Consumer.messages`` after every event: with 20,000 messages, a read
    after nothing, after a new message or after a delta allocates nothing like the list."""
    consumer = Consumer()
    consumer.feed_many([START_PAYLOAD, *activities(20_000)])
    consumer.messages  # noqa: B018
    start = wire_event(type="TEXT_MESSAGE_START", messageId="m", role="assistant")
    delta = wire_event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="hello")
    for payload in (None, start, delta, delta):
        if payload is not None:
            consumer.feed(payload)
        messages, peak = peak_bytes(lambda: consumer.messages)
        assert peak < 4 * 1024, (payload, peak)
    assert len(messages) == 20_001
    assert messages[-1].content == "hellohello"


def test_the_messages_read_are_live_and_read_only() -> None:
    consumer = Consumer()
    consumer.feed_many([START_PAYLOAD, *activities(2)])
    messages = consumer.messages
    with pytest.raises(TypeError):
        messages.append(messages[0])  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        del messages[0]  # type: ignore[attr-defined]
    kept = list(messages)
    replace = wire_event(
        type="ACTIVITY_SNAPSHOT", messageId="a0", activityType="p", content={"n": 9}, replace=True
    )
    consumer.feed_many([*activities(3)[2:], replace])
    assert [m.content for m in consumer.messages] == [{"n": 9}, {"n": 1}, {"n": 2}]
    assert consumer.messages is messages  # the same list, following the stream
    assert [m.content for m in kept] == [{"n": 0}, {"n": 1}]
    assert msgspec.json.decode(msgspec.json.encode(messages))[0]["content"] == {"n": 9}
    assert consumer.result([]).messages == list(messages)
    assert type(consumer.result([]).messages) is list


def test_a_delta_never_changes_the_input_or_a_delivered_snapshot() -> None:
    seed = {"threadId": "t", "runId": "r", "messages": [], "state": {"n": [1]}}
    delta = [{"op": "add", "path": "/n/-", "value": 2}]
    result = consume(in_run(wire_event(type="STATE_DELTA", delta=delta)), input=seed)
    assert result.violation is None
    assert result.state == {"n": [1, 2]}
    assert seed["state"] == {"n": [1]}
    body = in_run(
        wire_event(type="STATE_SNAPSHOT", snapshot={"n": [1]}),
        wire_event(type="STATE_DELTA", delta=delta),
    )
    result = consume(body)
    assert result.state == {"n": [1, 2]}
    assert result.events[1].snapshot == {"n": [1]}
