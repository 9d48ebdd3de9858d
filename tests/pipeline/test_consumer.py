"""``consume_body``: a response body, whole or in chunks, through the reader it looks like."""

from __future__ import annotations

from typing import Any

import msgspec

from agui_msgspec import consume, consume_body

EVENTS: list[dict[str, Any]] = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Hi"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]
PAYLOADS = [msgspec.json.encode(event) for event in EVENTS]
SSE = b"".join(b"data: " + payload + b"\n\n" for payload in PAYLOADS)
JSONL = b"".join(payload + b"\n" for payload in PAYLOADS)


def summary(result: Any) -> tuple[Any, ...]:
    violation = result.violation
    return (
        result.outcome,
        None if violation is None else (violation.rule, violation.index),
        msgspec.to_builtins(result.messages),
        msgspec.to_builtins(result.events),
    )


def test_an_sse_body_reads_as_its_payloads_would() -> None:
    assert summary(consume_body(SSE)) == summary(consume(PAYLOADS))
    assert consume_body(SSE).outcome == "completed"


def test_a_json_lines_body_is_told_by_its_first_brace_even_after_blank_chunks() -> None:
    chunks = [b"\xef\xbb\xbf", b" \n", b"\r\n", JSONL[:7], JSONL[7:]]
    assert summary(consume_body(chunks)) == summary(consume(PAYLOADS))


def test_chunks_read_as_the_whole_body() -> None:
    chunks = [SSE[start : start + 5] for start in range(0, len(SSE), 5)]
    assert summary(consume_body(iter(chunks))) == summary(consume_body(SSE))


def test_a_body_ending_inside_an_event_is_truncated() -> None:
    result = consume_body(SSE + b"data: {")
    assert result.violation is not None
    assert result.violation.rule == "truncated"
    assert [run.status for run in result.runs] == ["completed"]


def test_an_empty_body_is_truncated() -> None:
    assert [consume_body(body).violation.rule for body in (b"", [])] == ["truncated"] * 2  # type: ignore[union-attr]


def test_keep_events_false_keeps_the_messages_only() -> None:
    result = consume_body(SSE, keep_events=False)
    assert result.events == []
    assert msgspec.to_builtins(result.messages) == [
        {"id": "m", "role": "assistant", "content": "Hi"}
    ]


def test_a_bytearray_or_memoryview_body_is_one_body() -> None:
    expected = summary(consume_body(SSE))
    assert summary(consume_body(bytearray(SSE))) == expected
    assert summary(consume_body(memoryview(SSE))) == expected


def test_a_long_blank_start_stops_the_format_sniffing_and_reads_as_sse() -> None:
    """Blank keep-alive lines before the first event are not buffered without end: past
    4,096 blank bytes the body is read as SSE."""
    blank = [b"\n"] * 5000
    assert consume_body([*blank, SSE]).outcome == "completed"
    as_sse = consume_body([*blank, JSONL])
    assert as_sse.violation is not None
    assert as_sse.violation.rule == "truncated"  # JSON lines read as SSE: ignored fields
    assert consume_body([b"\n"] * 100 + [JSONL]).outcome == "completed"
