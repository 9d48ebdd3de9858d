"""ag-ui-langgraph as a producer: LangGraph graphs over a scripted chat model (``langgraph_app``),
served by its FastAPI endpoint on loopback, each scenario run through ``HttpAgent`` and
``agui-msgspec run``.

ag-ui-langgraph passes every LangChain callback on as a ``RAW`` event, so event indexes
count those too; the tests look at the other events through ``typed()``.
"""

from __future__ import annotations

import pytest
from interop_harness import (
    FRONTEND_TOOLS,
    Turn,
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

require("ag_ui_langgraph", "langgraph")

from agui_msgspec import HttpAgent  # noqa: E402

base = app_fixture("langgraph_app")


def typed(turn: Turn) -> list[str]:
    """The events delivered, without RAW, STATE_SNAPSHOT and the step markers."""
    noise = {"RAW", "STATE_SNAPSHOT", "STEP_STARTED", "STEP_FINISHED"}
    return [event for event in turn.events if event not in noise]


def test_plain_text(base: str) -> None:
    http, cli = first_turn(f"{base}/plain", "t-plain", "Hi")
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert typed(http) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "MESSAGES_SNAPSHOT",
        "RUN_FINISHED",
    ]
    assert [(role_of(m), text_of(m)) for m in http.new_messages] == [("assistant", "Hello, world")]
    assert [text_of(m) for m in cli.new_messages] == ["Hello, world"]


def streamed_args(turn: Turn) -> list[tuple[str, str]]:
    return [(e.tool_call_id, e.delta) for e in turn.delivered if e.type == "TOOL_CALL_ARGS"]


def test_backend_tool_drops_the_first_chunks_arguments(base: str) -> None:
    http, _ = first_turn(f"{base}/backend_tool", "t-tool", "Weather?")
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert typed(http)[:4] == ["RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"]
    # The model streamed '{"city":' then '"Paris"}'; only the second delta is sent, so the
    # call streams as '"Paris"}' until MESSAGES_SNAPSHOT restates it.
    if streamed_args(http) != [("call-w", '"Paris"}')]:
        pytest.fail(
            "ag-ui-langgraph now streams the first tool-call chunk's arguments: update the "
            "README's Real producers and this test"
        )
    call_message = http.new_messages[0]
    assert [(c.id, c.function.arguments) for c in call_message.tool_calls] == [
        ("call-w", '{"city": "Paris"}')
    ]
    # The result streams with messageId "call-w" (TOOL_CALL_RESULT); MESSAGES_SNAPSHOT
    # restates it under another id, so reconciling by id drops the streamed one.
    (streamed,) = [e for e in http.delivered if e.type == "TOOL_CALL_RESULT"]
    (result,) = [m for m in http.new_messages if role_of(m) == "tool"]
    if result.id == streamed.message_id:
        pytest.fail(
            "ag-ui-langgraph now gives a tool result one message id: update the README's "
            "Real producers and this test"
        )
    assert (streamed.message_id, result.tool_call_id, result.content) == (
        "call-w",
        "call-w",
        "18 C in Paris",
    )
    assert sorted((role_of(m), text_of(m)) for m in http.new_messages) == [
        ("assistant", ""),
        ("assistant", "It is 18 C in Paris."),
        ("tool", "18 C in Paris"),
    ]


def test_parallel_tool_calls_are_misattributed_but_break_no_rule(base: str) -> None:
    http, _ = first_turn(f"{base}/parallel_tools", "t-parallel", "Weather and time?")
    # ag-ui-langgraph closes the first call when the second starts and sends the first call's
    # later delta as the second call's: no rule is broken, the content is wrong until
    # MESSAGES_SNAPSHOT restates both calls.
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert typed(http)[1:7] == [
        "TOOL_CALL_START",
        "TOOL_CALL_END",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_ARGS",
        "TOOL_CALL_END",
    ]
    if streamed_args(http) != [("call-t", '"Paris"}'), ("call-t", '"CET"}')]:
        pytest.fail(
            "ag-ui-langgraph now streams interleaved parallel tool calls differently: update "
            "the README's Real producers and this test"
        )
    (call_message,) = [m for m in http.new_messages if getattr(m, "tool_calls", None)]
    assert [(c.id, c.function.arguments) for c in call_message.tool_calls] == [
        ("call-w", '{"city": "Paris"}'),
        ("call-t", '{"zone": "CET"}'),
    ]


def test_frontend_tool_ends_the_run_then_a_second_run_answers_it(base: str) -> None:
    agent = HttpAgent(f"{base}/frontend_tool", timeout=30)
    first = http_turn(agent, run_input("t-front", [user("Go?", "u1")], tools=FRONTEND_TOOLS))
    assert (first.verdict, first.status) == ("accepted", "completed")
    # A call in one chunk streams with no TOOL_CALL_ARGS at all (the first chunk's arguments
    # are dropped).
    assert "TOOL_CALL_ARGS" not in first.events
    no_pending_ids(first, "ag-ui-langgraph")
    (call_message,) = first.new_messages
    assert [(c.id, c.function.name) for c in call_message.tool_calls] == [("call-f", "confirm")]

    run = first.runs[-1]
    # What the application still has to answer, derived from the stream.
    assert (run.pending_tool_calls, run.pending_source) == (["call-f"], "stream")
    second = answer_the_frontend_call(agent, first)
    assert [text_of(m) for m in second.new_messages] == ["Thanks, you confirmed."]


def test_reasoning_then_the_snapshot_blanks_the_answer(base: str) -> None:
    http, cli = first_turn(f"{base}/reasoning", "t-reason", "Think")
    assert (http.verdict, http.status) == ("accepted", "completed")
    streamed = [e.delta for e in http.delivered if e.type == "TEXT_MESSAGE_CONTENT"]
    assert streamed == ["Answer 1"]
    # The model's message holds a thinking block and text; MESSAGES_SNAPSHOT restates it with
    # empty content, so the answer the user watched stream is replaced by "".
    final = [(role_of(m), text_of(m)) for m in http.new_messages]
    if final[-1] == ("assistant", "Answer 1"):
        pytest.fail(
            "ag-ui-langgraph's MESSAGES_SNAPSHOT now keeps the text of a message with "
            "reasoning: update the README's Real producers and this test"
        )
    assert final == [("reasoning", "Thinking about turn 1..."), ("assistant", "")]
    assert [(m["role"], m["content"]) for m in cli.new_messages] == final


def test_state_snapshots_across_turns(base: str) -> None:
    agent = HttpAgent(f"{base}/state", timeout=30)
    first = http_turn(agent, run_input("t-state", [user("Add milk", "u1")], state={"items": []}))
    assert (first.verdict, first.status) == ("accepted", "completed")
    assert first.state["items"] == ["milk"]
    second = http_turn(
        agent,
        run_input("t-state", [*first.wire_messages(), user("More", "u2")], state=first.state),
    )
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert second.state["items"] == ["milk", "milk"]
    assert [text_of(m) for m in second.new_messages] == ["Added."]


def test_an_exception_mid_run_is_a_failed_run(base: str) -> None:
    http, cli = first_turn(f"{base}/failing", "t-fail", "Hi")
    assert (http.verdict, http.status) == ("accepted", "failed")
    assert http.runs[-1].error.message == "the model fell over"
    assert [text_of(m) for m in http.new_messages] == ["Let me"]
    assert cli.runs[-1]["error"]["message"] == "the model fell over"


def test_interrupt_by_default_is_reported_as_success(base: str) -> None:
    # Spec, basic/patterns/interrupt-resume: "A producer MUST NOT report an interrupted run as
    # success: the interrupt outcome is the only conforming way to end a run that stopped to
    # ask". By default ag-ui-langgraph sends CUSTOM on_interrupt, then RUN_FINISHED without an
    # outcome, which a consumer must read as success.
    http, cli = first_turn(f"{base}/approval", "t-int", "Delete a.txt")
    if http.status == "interrupted":
        pytest.fail(
            "ag-ui-langgraph now ends an interrupted run with the interrupt outcome by default: "
            "update the README's Real producers and this test"
        )
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert typed(http)[-2:] == ["CUSTOM", "RUN_FINISHED"]
    assert http.runs[-1].interrupts == []
    assert cli.status == "completed"
    # Only its own convention resumes it: forwardedProps.command.resume on the next input.
    agent = HttpAgent(f"{base}/approval", timeout=30)
    first = http_turn(agent, run_input("t-int-legacy", [user("Delete a.txt", "u1")]))
    resumed = http_turn(
        agent,
        run_input(
            "t-int-legacy",
            first.wire_messages(),
            forwardedProps={"command": {"resume": "yes"}},
        ),
    )
    assert (resumed.verdict, resumed.status) == ("accepted", "completed")
    assert [text_of(m) for m in resumed.new_messages] == ["Deleted."]


def test_interrupt_outcome_and_resume(base: str) -> None:
    agent = HttpAgent(f"{base}/approval_outcome", timeout=30)
    first = http_turn(agent, run_input("t-int2", [user("Delete a.txt", "u1")]))
    assert (first.verdict, first.status) == ("accepted", "interrupted")
    (interrupt,) = first.runs[-1].interrupts
    assert interrupt.reason == "langgraph:interrupt"
    resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": "yes"}]
    second = http_turn(agent, run_input("t-int2", first.wire_messages(), resume=resume))
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert [text_of(m) for m in second.new_messages] == ["Deleted."]
