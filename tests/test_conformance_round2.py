"""Issue 13, items 1-10: where the consumer disagreed with the specification.

Each test names the spec page that decides it. Conformant streams are accepted,
and each rule has its violating counterpart, rejected at the right index.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

import agui_msgspec as agui

START = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def run(*events: dict[str, Any], input: Any = None) -> agui.Result:
    return agui.consume([msgspec.json.encode(e) for e in events], input=input)


def accepted(result: agui.Result) -> agui.Result:
    assert result.outcome == "completed", result.violation
    return result


def rejected(result: agui.Result, rule: str, index: int, path: str | None = None) -> None:
    assert result.violation is not None, "the stream was accepted"
    assert (result.violation.rule, result.violation.index) == (rule, index), result.violation
    if path is not None:
        assert result.violation.path == path


def text(kind: str, message_id: str, owner: str | None = None, **fields: Any) -> dict[str, Any]:
    event = {"type": f"TEXT_MESSAGE_{kind}", "messageId": message_id, **fields}
    if kind == "START":
        event.setdefault("role", "assistant")
    if owner is not None:
        event["subagentRunId"] = owner
    return event


def tool(kind: str, call_id: str, owner: str | None = None, **fields: Any) -> dict[str, Any]:
    event = {"type": f"TOOL_CALL_{kind}", "toolCallId": call_id, **fields}
    if kind == "START":
        event.setdefault("toolCallName", "search")
    if kind == "ARGS":
        event.setdefault("delta", "{}")
    if owner is not None:
        event["subagentRunId"] = owner
    return event


def as_dicts(messages: list[Any]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(m) for m in messages]


# --- 1. a tool call inherits the attribution of the message that holds it (events/subagents)


def test_untagged_tool_call_inherits_its_messages_subagent() -> None:
    result = accepted(
        run(
            START,
            text("START", "m1", "s1"),
            tool("START", "tc1", parentMessageId="m1"),
            tool("ARGS", "tc1", "s1"),
            tool("END", "tc1", "s1"),
            text("END", "m1", "s1"),
            FINISH,
        )
    )
    (message,) = as_dicts(result.messages)
    assert message["subagentRunId"] == "s1"
    assert message["toolCalls"][0]["id"] == "tc1"


def test_inherited_tool_call_continued_by_another_owner_is_rejected() -> None:
    result = run(
        START,
        text("START", "m1", "s1"),
        tool("START", "tc1", parentMessageId="m1"),
        tool("ARGS", "tc1", "s2"),
    )
    rejected(result, "attribution-mismatch", 3, "/subagentRunId")


def test_tool_call_tagged_against_its_carrying_message_is_rejected() -> None:
    """Decision: a producer MUST NOT attribute a call against its message (events/subagents);
    accepting it would put one producer's call into another's message."""
    result = run(START, text("START", "m1", "s1"), tool("START", "tc1", "s2", parentMessageId="m1"))
    rejected(result, "attribution-mismatch", 2, "/subagentRunId")
    result = run(START, text("START", "m1"), tool("START", "tc1", "s1", parentMessageId="m1"))
    rejected(result, "attribution-mismatch", 2, "/subagentRunId")


def test_tool_call_tagged_like_its_message_is_accepted() -> None:
    accepted(
        run(
            START,
            text("START", "m1", "s1"),
            text("END", "m1"),
            tool("START", "tc1", "s1", parentMessageId="m1"),
            tool("END", "tc1"),
            FINISH,
        )
    )


def test_message_minted_by_a_tool_call_is_owned_like_the_call() -> None:
    """A call naming a message not seen yet mints it under the call's owner: text later
    streamed into that message by another owner is a mismatch."""
    events = [START, tool("START", "tc1", "s1", parentMessageId="m9"), tool("END", "tc1")]
    accepted(run(*events, text("START", "m9", "s1"), text("END", "m9"), FINISH))
    rejected(run(*events, text("START", "m9", "s2")), "attribution-mismatch", 3)


# --- 2. a MESSAGES_SNAPSHOT establishes each message's ownership (events/state, subagents)


def snapshot(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"type": "MESSAGES_SNAPSHOT", "messages": list(messages)}


def test_text_reopening_a_snapshot_message_under_another_owner_is_rejected() -> None:
    restated = snapshot({"id": "a1", "role": "assistant", "content": "parent's"})
    result = run(START, restated, text("START", "a1", "s1"))
    rejected(result, "attribution-mismatch", 2, "/subagentRunId")
    owned = snapshot({"id": "a1", "role": "assistant", "content": "x", "subagentRunId": "s1"})
    rejected(run(START, owned, text("START", "a1", "s2")), "attribution-mismatch", 2)


def test_text_reopening_a_snapshot_message_under_its_owner_appends() -> None:
    owned = snapshot({"id": "a1", "role": "assistant", "content": "one ", "subagentRunId": "s1"})
    result = accepted(
        run(
            START,
            owned,
            text("START", "a1"),
            text("CONTENT", "a1", "s1", delta="two"),
            text("END", "a1"),
            FINISH,
        )
    )
    assert as_dicts(result.messages)[0]["content"] == "one two"


def test_tool_call_reopened_after_a_snapshot_under_another_owner_is_rejected() -> None:
    carrier = {
        "id": "a1",
        "role": "assistant",
        "toolCalls": [
            {"id": "tc1", "type": "function", "function": {"name": "f", "arguments": "{"}}
        ],
    }
    result = run(START, snapshot(carrier), tool("START", "tc1", "s1"))
    rejected(result, "attribution-mismatch", 2)
    accepted(
        run(
            START,
            snapshot(carrier),
            tool("START", "tc1"),
            tool("ARGS", "tc1", delta="}"),
            tool("END", "tc1"),
            FINISH,
        )
    )


def test_reasoning_message_restated_by_a_snapshot_keeps_its_owner() -> None:
    thought = {"id": "th1", "role": "reasoning", "content": "", "subagentRunId": "s1"}
    result = run(
        START,
        snapshot(thought),
        {"type": "REASONING_MESSAGE_START", "messageId": "th1", "role": "reasoning", "subagentRunId": "s2"},
    )
    rejected(result, "attribution-mismatch", 2)


# --- 9. boundary identity (basic/run-input "Identity")


def test_run_finished_naming_another_run_is_rejected() -> None:
    result = run(START, {**FINISH, "runId": "r2"})
    rejected(result, "run-id-mismatch", 1, "/runId")


def test_run_finished_naming_another_thread_is_rejected() -> None:
    rejected(run(START, {**FINISH, "threadId": "t2"}), "thread-id-mismatch", 1, "/threadId")


def test_second_run_on_another_thread_is_rejected() -> None:
    second = {"type": "RUN_STARTED", "threadId": "t2", "runId": "r2"}
    rejected(run(START, FINISH, second), "thread-id-mismatch", 2, "/threadId")


def test_runs_on_one_thread_with_their_own_run_ids_are_accepted() -> None:
    second = [{**START, "runId": "r2"}, {**FINISH, "runId": "r2"}]
    result = accepted(run(START, FINISH, *second))
    assert [r.run_id for r in result.runs] == ["r1", "r2"]


def test_run_error_is_checked_against_neither_id() -> None:
    """RUN_ERROR carries no ids; the run it fails need not be named."""
    error = {"type": "RUN_ERROR", "message": "boom"}
    result = accepted(run(error, START, error, {**START, "runId": "r2"}, {**FINISH, "runId": "r2"}))
    assert [r.status for r in result.runs] == ["failed", "failed", "completed"]


def test_boundary_events_carry_the_inputs_thread() -> None:
    given = {"threadId": "t1", "runId": "r1", "messages": []}
    accepted(run(START, FINISH, input=given))
    other = {"threadId": "t0", "runId": "r1", "messages": []}
    rejected(run(START, FINISH, input=other), "thread-id-mismatch", 0, "/threadId")


def test_a_replayed_run_carries_its_own_run_id_on_the_inputs_thread() -> None:
    given = {"threadId": "t1", "runId": "r2", "messages": []}
    replayed = [START, FINISH, {**START, "runId": "r2"}, {**FINISH, "runId": "r2"}]
    accepted(run(*replayed, input=given))


# --- 10. duplicate interrupt ids (basic/patterns/interrupt-resume)


def interrupted(*ids: str) -> dict[str, Any]:
    interrupts = [{"id": i, "reason": "confirm"} for i in ids]
    return {**FINISH, "outcome": {"type": "interrupt", "interrupts": interrupts}}


def test_duplicate_interrupt_ids_are_rejected() -> None:
    result = run(START, interrupted("i1", "i2", "i1"))
    rejected(result, "duplicate-interrupt-id", 1, "/outcome/interrupts/2/id")
    assert result.runs[0].interrupts == []


def test_distinct_interrupt_ids_are_accepted() -> None:
    result = accepted(run(START, interrupted("i1", "i2")))
    assert [i.id for i in result.runs[0].interrupts] == ["i1", "i2"]


@pytest.mark.parametrize("given", [None, {"threadId": "t1", "runId": "r1", "messages": []}])
def test_identity_checks_hold_through_the_incremental_consumer(given: Any) -> None:
    consumer = agui.Consumer(input=given)
    consumer.feed(msgspec.json.encode(START))
    with pytest.raises(agui.LifecycleViolation) as caught:
        consumer.feed(msgspec.json.encode({**FINISH, "runId": "other"}))
    assert caught.value.rule == "run-id-mismatch"
