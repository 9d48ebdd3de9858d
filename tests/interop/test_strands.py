"""ag-ui-strands as a producer: Strands agents over a scripted ``Model`` (``strands_app``),
served by its FastAPI endpoint on loopback, each scenario run through ``HttpAgent`` and
``agui-msgspec run``.

Strands' model stream (the Converse shape) holds one content block at a time, so parallel tool
calls arrive one after the other: there is no interleaving for it to get wrong.
"""

from __future__ import annotations

from typing import Any

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

require("ag_ui_strands", "strands")

from agui_msgspec import HttpAgent  # noqa: E402

base = app_fixture("strands_app")


def test_plain_text(base: str) -> None:
    http, cli = first_turn(f"{base}/plain", "t-plain", "Hi")
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert http.events == [
        "RUN_STARTED",
        "MESSAGES_SNAPSHOT",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "MESSAGES_SNAPSHOT",
        "STATE_SNAPSHOT",
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
    # The tool returned the text 18 C in Paris; Strands sends it JSON-encoded, quotes included.
    assert (role_of(result), result.tool_call_id, result.content) == (
        "tool",
        "call-w",
        '"18 C in Paris"',
    )
    assert answer.content == "It is 18 C in Paris."


def test_parallel_tool_calls_arrive_one_after_the_other(base: str) -> None:
    http, cli = first_turn(f"{base}/parallel_tools", "t-parallel", "Weather and time?")
    assert (http.verdict, http.status) == ("accepted", "completed")
    calls = [
        (role_of(m), [c.id for c in m.tool_calls])
        for m in http.new_messages
        if getattr(m, "tool_calls", None)
    ]
    # Each call is parented to its own assistant message.
    assert calls == [("assistant", ["call-w"]), ("assistant", ["call-t"])]
    results = {m.tool_call_id: m.content for m in http.new_messages if role_of(m) == "tool"}
    assert results == {"call-w": '"18 C in Paris"', "call-t": '"12:00 CET"'}
    assert text_of(http.new_messages[-1]) == "Paris: 18 C at noon."
    assert cli.status == "completed"


def test_frontend_tool_ends_the_run_then_a_second_run_answers_it(base: str) -> None:
    agent = HttpAgent(f"{base}/frontend_tool", timeout=30)
    first = http_turn(agent, run_input("t-front", [user("Go?")], tools=FRONTEND_TOOLS))
    assert (first.verdict, first.status) == ("accepted", "completed")
    no_pending_ids(first, "ag-ui-strands")
    (call_message,) = first.new_messages
    assert [(c.id, c.function.name) for c in call_message.tool_calls] == [("call-f", "confirm")]

    run = first.runs[-1]
    # What the application still has to answer, derived from the stream.
    assert (run.pending_tool_calls, run.pending_source) == (["call-f"], "stream")
    second = answer_the_frontend_call(agent, first)
    assert [text_of(m) for m in second.new_messages][-1] == "Thanks, you confirmed."


def test_reasoning(base: str) -> None:
    http, cli = first_turn(f"{base}/reasoning", "t-reason", "Think")
    assert (http.verdict, http.status) == ("accepted", "completed")
    streamed = [e.delta for e in http.delivered if e.type == "REASONING_MESSAGE_CONTENT"]
    assert streamed == ["Thinking about turn 1", "..."]
    final = [(role_of(m), text_of(m)) for m in http.new_messages]
    assert final == [("reasoning", "Thinking about turn 1..."), ("assistant", "Answer 1")]
    assert [(m["role"], m["content"]) for m in cli.new_messages] == final


def test_state_snapshots_across_turns(base: str) -> None:
    agent = HttpAgent(f"{base}/state", timeout=30)
    first = http_turn(agent, run_input("t-state", [user("Add milk")], state={"items": ["eggs"]}))
    assert (first.verdict, first.status) == ("accepted", "completed")
    assert first.state == {"items": ["eggs", "milk"]}
    second = http_turn(
        agent, run_input("t-state", [*first.wire_messages(), user("Again")], state=first.state)
    )
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert second.state == {"items": ["eggs", "milk", "milk"]}
    assert [text_of(m) for m in second.new_messages][-1] == "Added."


def test_an_exception_mid_run_is_a_failed_run(base: str) -> None:
    http, cli = first_turn(f"{base}/failing", "t-fail", "Hi")
    assert (http.verdict, http.status) == ("accepted", "failed")
    error = http.runs[-1].error
    assert (error.message, error.code) == ("the model fell over", "STRANDS_FORCE_STOP")
    assert [text_of(m) for m in http.new_messages] == ["Let me"]
    assert cli.runs[-1]["error"]["message"] == "the model fell over"


def test_interrupt_and_resume(base: str) -> None:
    agent = HttpAgent(f"{base}/approval", timeout=30)
    first = http_turn(agent, run_input("t-int", [user("Delete a.txt")]))
    assert (first.verdict, first.status) == ("accepted", "interrupted")
    (interrupt,) = first.runs[-1].interrupts
    assert interrupt.reason == "approval"
    resume: list[dict[str, Any]] = [
        {"interruptId": interrupt.id, "status": "resolved", "payload": "yes"}
    ]
    second = http_turn(agent, run_input("t-int", first.wire_messages(), resume=resume))
    assert (second.verdict, second.status) == ("accepted", "completed")
    results = [m.content for m in second.new_messages if role_of(m) == "tool"]
    assert results == ['"deleted a.txt"']
    assert text_of(second.new_messages[-1]) == "Deleted."
    _, cli = first_turn(f"{base}/approval", "t-int-cli", "Delete a.txt")
    assert cli.status == "interrupted"
