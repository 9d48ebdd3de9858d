"""A stream of wire-named event dicts consumed as given, and its verdict checked."""

from __future__ import annotations

from typing import Any

import msgspec

import agui_msgspec as agui

START = {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1"}


def consumed(*events: dict[str, Any], input: Any = None) -> agui.Result:
    return agui.consume([msgspec.json.encode(e) for e in events], input=input)


def completed(result: agui.Result) -> agui.Result:
    assert result.outcome == "completed", result.violation
    return result


def rejected_at(result: agui.Result, rule: str, index: int, path: str | None = None) -> None:
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


def as_dicts(messages: list[Any]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(m) for m in messages]
