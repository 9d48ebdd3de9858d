"""agent-framework-ag-ui as a producer: agent-framework agents over a scripted chat client
(``agent_framework_app``), served by its FastAPI endpoint on loopback, each scenario run
through ``HttpAgent`` and ``agui-msgspec run``.
"""

from __future__ import annotations

from typing import Any

import pytest
from interop_harness import (
    FRONTEND_TOOLS,
    answer_the_frontend_call,
    app_fixture,
    first_turn,
    http_turn,
    no_pending_ids,
    require,
    role_of,
    run_input,
    text_of,
    user,
)

require("agent_framework_ag_ui", "agent_framework")

from agui_msgspec import HttpAgent  # noqa: E402

base = app_fixture("agent_framework_app")


def test_plain_text(base: str) -> None:
    http, cli = first_turn(f"{base}/plain", "t-plain", "Hi")
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert http.events == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert [text_of(m) for m in http.new_messages] == ["Hello, world"]
    assert [text_of(m) for m in cli.new_messages] == ["Hello, world"]
    assert http.warnings == []


def test_backend_tool_and_its_result(base: str) -> None:
    http, _ = first_turn(f"{base}/backend_tool", "t-tool", "Weather?")
    assert (http.verdict, http.status) == ("accepted", "completed")
    call_message, result, answer = http.new_messages
    assert [(c.id, c.function.name, c.function.arguments) for c in call_message.tool_calls] == [
        ("call-w", "get_weather", '{"city":"Paris"}')
    ]
    assert (role_of(result), result.tool_call_id, result.content) == (
        "tool",
        "call-w",
        "18 C in Paris",
    )
    assert answer.content == "It is 18 C in Paris."


def test_parallel_tool_calls_with_interleaved_deltas_are_rejected(base: str) -> None:
    # Spec, basic/patterns/streaming: "A producer MUST NOT open an item whose identifier is
    # already open." agent-framework-ag-ui sends TOOL_CALL_START again (event 6) when the
    # first call's next delta follows the second call's.
    http, cli = first_turn(f"{base}/parallel_tools", "t-parallel", "Weather and time?")
    if http.verdict == "accepted":
        pytest.fail(
            "agent-framework-ag-ui now streams interleaved parallel tool calls without "
            "restarting an open call: update the README's Real producers and this test"
        )
    assert (http.rule, http.index) == ("tool-call-already-open", 6)
    assert http.events[2:6] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
    ]
    assert http.status == "active"
    (call_message,) = http.new_messages
    assert [(c.id, c.function.arguments) for c in call_message.tool_calls] == [
        ("call-w", '{"city":'),
        ("call-t", '{"zone":'),
    ]
    assert (cli.rule, cli.index) == ("tool-call-already-open", 6)


def test_frontend_tool_ends_the_run_then_a_second_run_answers_it(base: str) -> None:
    agent = HttpAgent(f"{base}/frontend_tool", timeout=30)
    first = http_turn(agent, run_input("t-front", [user("Go?")], tools=FRONTEND_TOOLS))
    assert (first.verdict, first.status) == ("accepted", "completed")
    no_pending_ids(first, "agent-framework-ag-ui")
    (call_message,) = first.new_messages
    assert [(c.id, c.function.name) for c in call_message.tool_calls] == [("call-f", "confirm")]

    run = first.runs[-1]
    # What the application still has to answer, derived from the stream.
    assert (run.pending_tool_calls, run.pending_source) == (["call-f"], "stream")
    second = answer_the_frontend_call(agent, first)
    assert [text_of(m) for m in second.new_messages] == ["Thanks, you confirmed."]
    assert [role_of(m) for m in second.messages] == ["user", "assistant", "tool", "assistant"]


def test_reasoning_across_two_turns(base: str) -> None:
    http, cli = first_turn(f"{base}/reasoning", "t-reason", "Think")
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert "REASONING_MESSAGE_CONTENT" in http.events
    assert [(role_of(m), text_of(m)) for m in http.new_messages] == [
        ("reasoning", "Thinking about turn 1..."),
        ("assistant", "Answer 1"),
    ]
    assert [m["role"] for m in cli.new_messages] == ["reasoning", "assistant"]
    agent = HttpAgent(f"{base}/reasoning", timeout=30)
    second = http_turn(agent, run_input("t-reason", [*http.wire_messages(), user("Again")]))
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert [(role_of(m), text_of(m)) for m in second.new_messages] == [
        ("reasoning", "Thinking about turn 2..."),
        ("assistant", "Answer 2"),
    ]


def test_predicted_state_snapshot_and_delta_across_turns(base: str) -> None:
    agent = HttpAgent(f"{base}/state", timeout=30)
    first = http_turn(agent, run_input("t-state", [user("Add milk")], state={"items": ["eggs"]}))
    assert (first.verdict, first.status) == ("accepted", "completed")
    assert {"STATE_SNAPSHOT", "STATE_DELTA"} <= set(first.events)
    assert first.state == {"items": ["eggs", "milk"]}
    second = http_turn(
        agent, run_input("t-state", [*first.wire_messages(), user("Again")], state=first.state)
    )
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert second.state == {"items": ["eggs", "milk"]}
    assert [text_of(m) for m in second.new_messages][-1] == "Added."


def test_an_exception_mid_run_is_a_failed_run(base: str) -> None:
    http, cli = first_turn(f"{base}/failing", "t-fail", "Hi")
    assert (http.verdict, http.status) == ("accepted", "failed")
    # The text message is left open: RUN_ERROR ends whatever the run had open.
    assert http.events == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "RUN_ERROR",
    ]
    error = http.runs[-1].error
    assert (error.message, error.code) == (
        "An internal error has occurred while streaming events.",
        "RuntimeError",
    )
    assert [text_of(m) for m in http.new_messages] == ["Let me"]
    assert cli.runs[-1]["error"]["code"] == "RuntimeError"


def test_interrupt_and_resume(base: str) -> None:
    agent = HttpAgent(f"{base}/approval", timeout=30)
    first = http_turn(agent, run_input("t-int", [user("Delete a.txt")]))
    assert (first.verdict, first.status) == ("accepted", "interrupted")
    (interrupt,) = first.runs[-1].interrupts
    assert (interrupt.reason, interrupt.tool_call_id) == ("tool_call", "call-d")
    resume: list[dict[str, Any]] = [
        {"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": True}}
    ]
    second = http_turn(agent, run_input("t-int", first.wire_messages(), resume=resume))
    assert (second.verdict, second.status) == ("accepted", "completed")
    # The result streams under one message id (TOOL_CALL_RESULT) and MESSAGES_SNAPSHOT
    # restates it under another ("approval-response-..."): the streamed one is dropped.
    (streamed,) = [e for e in second.delivered if e.type == "TOOL_CALL_RESULT"]
    (result,) = [m for m in second.messages if role_of(m) == "tool"]
    if result.id == streamed.message_id:
        pytest.fail(
            "agent-framework-ag-ui now gives an approved tool's result one message id: update "
            "the README's Real producers and this test"
        )
    assert (result.tool_call_id, result.content) == ("call-d", "deleted a.txt")
    assert [text_of(m) for m in second.new_messages if role_of(m) == "assistant"] == ["Deleted."]
    _, cli = first_turn(f"{base}/approval", "t-int-cli", "Delete a.txt")
    assert cli.status == "interrupted"
