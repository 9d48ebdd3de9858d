"""Behaviour pinned after a review of the pipeline: each test reproduces a reported defect.

- text and reasoning messages that share an id do not lose each other's text;
- ``check`` prints a message that has only tool calls, and reads a body that ends
  inside an event as truncated, as ``HttpAgent`` does;
- payloads given as Python values get the verdict of the JSON they stand for;
- the run input is read like outgoing input: unknown material stripped, any version's Struct;
- chunk expansion emits no empty content events.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

import agui_msgspec as agui
from agui_msgspec._tools.cli import main

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def run(*events: dict[str, Any], **options: Any) -> agui.Result:
    return agui.consume([msgspec.json.encode(e) for e in (START, *events, FINISH)], **options)


def test_a_reasoning_message_reusing_a_text_message_id_keeps_the_text() -> None:
    result = run(
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
    result = run(
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


def test_check_prints_a_message_that_has_only_tool_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        START,
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        FINISH,
    ]
    body = tmp_path / "calls.jsonl"
    body.write_bytes(b"\n".join(msgspec.json.encode(e) for e in events) + b"\n")
    assert main(["check", str(body)]) == 0
    assert "+1 tool call(s)" in capsys.readouterr().out


def test_check_reads_a_body_ending_inside_an_event_as_truncated(tmp_path: Path) -> None:
    frames = [b"data: " + msgspec.json.encode(e) + b"\n\n" for e in (START, FINISH)]
    body = tmp_path / "cut.sse"
    body.write_bytes(b"".join(frames) + b"data: " + msgspec.json.encode(START) + b"\n")
    assert main(["check", "--json", str(body)]) == 1


@pytest.mark.parametrize("value", [[], None, 5, True], ids=repr)  # a str is JSON text
def test_a_python_value_that_is_not_an_object_is_not_an_object(value: object) -> None:
    result = agui.consume([START, value, FINISH])  # type: ignore[list-item]
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("not-an-object", 1)


def test_event_structs_are_payloads_too() -> None:
    events = [
        agui.RunStartedEvent(thread_id="t", run_id="r"),
        agui.RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    result = agui.consume(events)
    assert result.outcome == "completed"
    assert result.events == events


def test_the_run_input_is_stripped_not_refused() -> None:
    seed = {
        "threadId": "t",
        "runId": "r",
        "messages": [{"id": "u", "role": "user", "content": "hi", "future": 1}],
    }
    result = run(input=seed)
    assert result.outcome == "completed"
    assert [msgspec.to_builtins(m) for m in result.messages] == [
        {"id": "u", "role": "user", "content": "hi"}
    ]
    assert any("input /messages/0/future" in w for w in result.warnings)


def test_a_newer_versions_input_seeds_an_older_consumer() -> None:
    seed = agui.RunAgentInput(
        thread_id="t", run_id="r", messages=[agui.UserMessage(id="u", content="hi")]
    )
    result = run(input=seed, version="1.0")
    assert result.outcome == "completed"
    assert [m.id for m in result.messages] == ["u"]


def test_a_malformed_run_input_is_a_failed_verdict_not_an_exception() -> None:
    result = run(input={"threadId": "t", "runId": 5, "messages": []})
    assert result.outcome == "failed"
    assert result.violation is not None
    assert result.violation.rule == "malformed-input"


def test_chunk_expansion_emits_no_empty_content() -> None:
    result = run(
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
