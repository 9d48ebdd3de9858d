"""pydantic-ai's AG-UI integration (``pydantic-ai-slim[ag-ui]``) as a producer.

Served by uvicorn on loopback, driven by scripted ``FunctionModel``s (``pydantic_ai_app``),
each scenario run through ``HttpAgent`` and ``agui-msgspec run``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from interop_harness import (
    FRONTEND_TOOLS,
    answer_the_frontend_call,
    app_fixture,
    first_turn,
    http_turn,
    require,
    role_of,
    run_input,
    serve,
    text_of,
    user,
)

require("pydantic_ai.ui.ag_ui", "pydantic_ai")

from agui_msgspec import GuardReport, HttpAgent, ProducerGuard  # noqa: E402

base = app_fixture("pydantic_ai_app")


def test_plain_text(base: str) -> None:
    http, cli = first_turn(f"{base}/plain", "t-plain", "Hi")
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert http.events == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert [text_of(m) for m in http.new_messages] == ["Hello, world"]
    assert [text_of(m) for m in cli.new_messages] == ["Hello, world"]
    assert http.warnings == []


def test_backend_tool_and_its_result(base: str) -> None:
    http, _ = first_turn(f"{base}/backend_tool", "t-tool", "Weather?")
    assert (http.verdict, http.status) == ("accepted", "completed")
    call_message, result, answer = http.new_messages
    # pydantic-ai opens and closes an empty text message to parent the call.
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
    # Spec, basic/patterns/streaming: "A producer MUST NOT send a content or end event for an
    # identifier that is not open." pydantic-ai closes the first call (TOOL_CALL_END, event 5)
    # when the second starts, then sends the first call's next TOOL_CALL_ARGS (event 8).
    http, cli = first_turn(f"{base}/parallel_tools", "t-parallel", "Weather and time?")
    if http.verdict == "accepted":
        pytest.fail(
            "pydantic-ai now streams interleaved parallel tool calls without closing a call "
            "early: update the README's Real producers and this test"
        )
    assert (http.rule, http.index) == ("tool-call-not-open", 8)
    assert http.events[3:8] == [
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
    ]
    assert http.status == "active"  # rejected while the run was going
    # What was delivered stays: the first call with the arguments it had when it was closed.
    (call_message,) = http.new_messages
    assert [(c.id, c.function.arguments) for c in call_message.tool_calls] == [
        ("call-w", '{"city":'),
        ("call-t", '{"zone":'),
    ]
    assert cli.rule == "tool-call-not-open"


def test_the_producer_guard_reports_the_interleaved_calls_while_the_client_gets_the_bytes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pydantic_ai_app import app  # noqa: PLC0415

    reports: list[GuardReport] = []
    with serve(ProducerGuard(app(), on_violation=reports.append)) as url:
        http, cli = first_turn(f"{url}/parallel_tools", "t-guarded", "Weather and time?")
    # One report per response (HttpAgent's, then the CLI's), at the event the client rejects.
    assert [(r.violation.rule, r.violation.index, r.path) for r in reports] == [
        ("tool-call-not-open", 8, "/parallel_tools"),
        ("tool-call-not-open", 8, "/parallel_tools"),
    ]
    offending = json.loads(reports[0].event or b"null")
    assert (offending["type"], offending["toolCallId"]) == ("TOOL_CALL_ARGS", "call-w")
    # The guard observes: the client still received every byte and judged them itself.
    assert (http.rule, http.index, len(http.events)) == ("tool-call-not-open", 8, 8)
    assert (cli.rule, cli.index) == ("tool-call-not-open", 8)
    logged = [r for r in caplog.records if r.name == "agui_msgspec.guard"]
    assert [getattr(r, "agui_rule", None) for r in logged] == ["tool-call-not-open"] * 2


def test_the_enforcing_guard_ends_the_stream_with_run_error_instead() -> None:
    from pydantic_ai_app import app  # noqa: PLC0415

    reports: list[GuardReport] = []
    guarded = ProducerGuard(app(), on_violation=reports.append, end_with_run_error=True)
    with serve(guarded) as url:
        http, cli = first_turn(f"{url}/parallel_tools", "t-enforced", "Weather and time?")
    assert [(r.violation.rule, r.violation.index) for r in reports] == [
        ("tool-call-not-open", 8),
        ("tool-call-not-open", 8),
    ]
    # The client never sees the broken event: the run it gets failed, and the stream is
    # conformant.
    assert (http.verdict, http.status) == ("accepted", "failed")
    # Events 0-7 as sent, then the guard's RUN_ERROR in place of event 8.
    assert http.events[8:] == ["RUN_ERROR"]
    assert http.runs[-1].error.code == "agui-guard:tool-call-not-open"
    assert cli.runs[-1]["error"]["code"] == "agui-guard:tool-call-not-open"


def test_frontend_tool_ends_the_run_then_a_second_run_answers_it(base: str) -> None:
    agent = HttpAgent(f"{base}/frontend_tool", timeout=30)
    first = http_turn(agent, run_input("t-front", [user("Go?")], tools=FRONTEND_TOOLS))
    assert (first.verdict, first.status) == ("accepted", "completed")
    (run,) = first.runs
    assert run.outcome.pending_tool_call_ids == ["call-f"]
    (call_message,) = first.new_messages
    assert [c.function.name for c in call_message.tool_calls] == ["confirm"]

    # What the application still has to answer, as the producer named it.
    assert (run.pending_tool_calls, run.pending_source) == (["call-f"], "producer")
    second = answer_the_frontend_call(agent, first)
    assert [text_of(m) for m in second.new_messages] == ["Thanks, you confirmed."]
    assert [role_of(m) for m in second.messages] == ["user", "assistant", "tool", "assistant"]


def test_reasoning(base: str) -> None:
    http, cli = first_turn(f"{base}/reasoning", "t-reason", "Think")
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert "REASONING_MESSAGE_CONTENT" in http.events
    assert [(role_of(m), text_of(m)) for m in http.new_messages] == [
        ("reasoning", "Thinking about turn 1..."),
        ("assistant", "Answer 1"),
    ]
    assert [m["role"] for m in cli.new_messages] == ["reasoning", "assistant"]


def test_legacy_thinking_for_an_old_peer_is_translated(base: str) -> None:
    http, _ = first_turn(f"{base}/reasoning_legacy", "t-legacy", "Think")
    assert (http.verdict, http.status) == ("accepted", "completed")
    # The retired THINKING_* events arrive as REASONING_* after the compatibility boundary.
    assert "THINKING_TEXT_MESSAGE_CONTENT" not in http.events
    assert "REASONING_MESSAGE_CONTENT" in http.events
    assert [(role_of(m), text_of(m)) for m in http.new_messages] == [
        ("reasoning", "Thinking about turn 1..."),
        ("assistant", "Answer 1"),
    ]


def test_legacy_thinking_across_two_turns_keeps_each_runs_reasoning(base: str) -> None:
    # THINKING_* events carry no ids: the translated reasoning message of each run must be
    # its own (issue 13 item 6), not appended to the first run's.
    agent = HttpAgent(f"{base}/reasoning_legacy", timeout=30)
    first = http_turn(agent, run_input("t-legacy-2", [user("Think", "u1")]))
    second = http_turn(
        agent, run_input("t-legacy-2", [*first.wire_messages(), user("Again", "u2")])
    )
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert [(role_of(m), text_of(m)) for m in second.messages] == [
        ("user", "Think"),
        ("reasoning", "Thinking about turn 1..."),
        ("assistant", "Answer 1"),
        ("user", "Again"),
        ("reasoning", "Thinking about turn 2..."),
        ("assistant", "Answer 2"),
    ]
    assert [(role_of(m), text_of(m)) for m in second.new_messages] == [
        ("reasoning", "Thinking about turn 2..."),
        ("assistant", "Answer 2"),
    ]


def test_state_snapshot_and_delta_across_turns(base: str) -> None:
    agent = HttpAgent(f"{base}/state", timeout=30)
    first = http_turn(agent, run_input("t-state", [user("Add milk")], state={"items": ["eggs"]}))
    assert (first.verdict, first.status) == ("accepted", "completed")
    assert {"STATE_SNAPSHOT", "STATE_DELTA"} <= set(first.events)
    assert first.state == {"items": ["eggs", "milk"], "count": 1}

    second = http_turn(
        agent,
        run_input("t-state", [*first.wire_messages(), user("More milk")], state=first.state),
    )
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert second.state == {"items": ["eggs", "milk", "milk"], "count": 2}
    _, cli = first_turn(f"{base}/state", "t-state-cli", "Add milk")
    assert cli.state == {"items": ["milk"], "count": 1}


def test_an_exception_mid_run_is_a_failed_run(base: str) -> None:
    http, cli = first_turn(f"{base}/failing", "t-fail", "Hi")
    assert (http.verdict, http.status) == ("accepted", "failed")
    assert http.runs[-1].error.message == "the model fell over"
    assert [text_of(m) for m in http.new_messages] == ["Let me"]
    assert cli.runs[-1]["error"]["message"] == "the model fell over"


def test_interrupt_and_resume(base: str) -> None:
    agent = HttpAgent(f"{base}/approval", timeout=30)
    first = http_turn(agent, run_input("t-int", [user("Delete a.txt")]))
    assert (first.verdict, first.status) == ("accepted", "interrupted")
    (interrupt,) = first.runs[-1].interrupts
    assert (interrupt.id, interrupt.reason, interrupt.tool_call_id) == (
        "int-call-d",
        "tool_call",
        "call-d",
    )
    resume: list[dict[str, Any]] = [
        {"interruptId": "int-call-d", "status": "resolved", "payload": {"approved": True}}
    ]
    second = http_turn(agent, run_input("t-int", first.wire_messages(), resume=resume))
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert [(role_of(m), text_of(m)) for m in second.new_messages] == [
        ("tool", "deleted a.txt"),
        ("assistant", "Deleted."),
    ]
    _, cli = first_turn(f"{base}/approval", "t-int-cli", "Delete a.txt")
    assert cli.status == "interrupted"
