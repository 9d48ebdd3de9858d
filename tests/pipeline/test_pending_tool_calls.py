"""``Run.pending_tool_calls``: the tool calls a run left for the application to answer.

Spec (events/tool-calls, "Frontend tools"): "The success outcome's `pendingToolCallIds` names
the calls left unanswered, in the order they were made. ... when the list is absent or empty,
a consumer that needs to know derives it from the stream — every tool call the run started
that received no result — and MUST NOT read absence as "nothing pending". On an interrupted
run the pending calls are derived the same way."
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import agui_msgspec as agui
from agui_msgspec._tools.cli import main

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}


def call(call_id: str, name: str = "confirm") -> list[dict[str, Any]]:
    return [
        {"type": "TOOL_CALL_START", "toolCallId": call_id, "toolCallName": name},
        {"type": "TOOL_CALL_ARGS", "toolCallId": call_id, "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": call_id},
    ]


def answer(call_id: str) -> dict[str, Any]:
    return {
        "type": "TOOL_CALL_RESULT",
        "messageId": f"res-{call_id}",
        "toolCallId": call_id,
        "content": "ok",
    }


def finish(outcome: dict[str, Any] | None = None) -> dict[str, Any]:
    document: dict[str, Any] = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
    if outcome is not None:
        document["outcome"] = outcome
    return document


def last_run(events: list[dict[str, Any]]) -> agui.Run:
    result = agui.consume(events)
    assert result.violation is None, result.violation
    return result.runs[-1]


def test_the_producers_list_is_taken_when_it_sends_one() -> None:
    # The producer's list names c2 only: it is taken as stated (its exactness is the producer's duty).
    events = [
        START,
        *call("c1"),
        *call("c2"),
        finish({"type": "success", "pendingToolCallIds": ["c2", "c1"]}),
    ]
    run = last_run(events)
    assert run.pending_tool_calls == ["c2", "c1"]
    assert run.pending_source == "producer"


@pytest.mark.parametrize(
    "outcome",
    [None, {"type": "success"}, {"type": "success", "pendingToolCallIds": []}],
    ids=["no-outcome", "success-without-list", "empty-list"],
)
def test_without_a_list_the_calls_without_a_result_are_derived(
    outcome: dict[str, Any] | None,
) -> None:
    events = [START, *call("c1"), *call("c2", "search"), answer("c2"), *call("c3"), finish(outcome)]
    run = last_run(events)
    assert run.pending_tool_calls == ["c1", "c3"]  # in the order they were made; c2 was answered
    assert run.pending_source == "stream"


def test_an_interrupted_run_derives_its_pending_calls() -> None:
    interrupt = {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approval"}]}
    run = last_run([START, *call("c1"), finish(interrupt)])
    assert run.status == "interrupted"
    assert run.pending_tool_calls == ["c1"]


def test_a_run_whose_calls_were_all_answered_has_none_pending() -> None:
    run = last_run([START, *call("c1"), answer("c1"), finish()])
    assert run.pending_tool_calls == []
    assert run.pending_source == "stream"


def test_a_tool_message_in_a_snapshot_answers_the_call() -> None:
    snapshot = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {
                "id": "a1",
                "role": "assistant",
                "toolCalls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "done"},
        ],
    }
    run = last_run([START, *call("c1"), *call("c2"), snapshot, finish()])
    assert run.pending_tool_calls == ["c2"]


def test_each_run_has_its_own_pending_calls() -> None:
    second = {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"}
    result = agui.consume(
        [
            START,
            *call("c1"),
            finish(),
            second,
            *call("c2"),
            answer("c2"),
            {**finish(), "runId": "r2"},
        ]
    )
    assert [run.pending_tool_calls for run in result.runs] == [["c1"], []]


def test_chunked_calls_count_too() -> None:
    chunk = {"type": "TOOL_CALL_CHUNK", "toolCallId": "c1", "toolCallName": "f", "delta": "{}"}
    run = last_run([START, chunk, finish()])
    assert run.pending_tool_calls == ["c1"]


def test_a_reopened_call_is_pending_once_in_its_first_place() -> None:
    run = last_run([START, *call("c1"), *call("c2"), *call("c1"), finish()])
    assert run.pending_tool_calls == ["c1", "c2"]


def test_a_truncated_run_lists_what_it_left_unanswered() -> None:
    result = agui.consume([START, *call("c1")])
    assert result.violation is not None
    assert result.runs[-1].status == "truncated"
    assert result.runs[-1].pending_tool_calls == ["c1"]


def test_an_active_run_has_no_verdict_on_pending_calls_yet() -> None:
    consumer = agui.Consumer()
    for event in [START, *call("c1")]:
        consumer.feed(json.dumps(event).encode())
    assert consumer.runs[-1].pending_tool_calls == []
    assert consumer.runs[-1].pending_source is None


def test_the_cli_names_the_pending_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "frontend.sse"
    events = [START, *call("c1"), *call("c2"), finish()]
    body.write_bytes(b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events))
    assert main(["check", str(body)]) == 0
    assert "run r on thread t: completed; 2 tool call(s) pending: c1, c2" in capsys.readouterr().out
    assert main(["check", "--json", str(body)]) == 0
    assert json.loads(capsys.readouterr().out)["runs"][0]["pendingToolCalls"] == ["c1", "c2"]


def test_http_agent_results_carry_the_pending_calls() -> None:
    httpx = pytest.importorskip("httpx")
    body = b"".join(
        b"data: " + json.dumps(e).encode() + b"\n\n" for e in [START, *call("c1"), finish()]
    )

    async def handler(request: Any) -> Any:
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    agent = agui.HttpAgent("http://agent.test/", client=client)
    result = agent.run_sync({"threadId": "t", "runId": "r", "messages": []})
    assert result.run.pending_tool_calls == ["c1"]
    assert result.run.pending_source == "stream"
