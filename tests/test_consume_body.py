"""``consume_body`` and ``Consumer.receive``: a response body, whole or in chunks, through
the reader its media type names or its first bytes look like."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agui_msgspec import (
    Consumer,
    MalformedEvent,
    ProtocolViolation,
    TransportError,
    UsageError,
    consume,
    consume_body,
    proto_frame,
)
from agui_msgspec._pipeline.lifecycle import StreamState

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
PROTOBUF = b"".join(proto_frame(event) for event in EVENTS)


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


def received(consumer: Consumer, chunks: list[bytes]) -> list[msgspec.Struct]:
    """What ``receive`` then ``close`` deliver, and what a violation carries."""
    delivered: list[msgspec.Struct] = []
    try:
        for chunk in chunks:
            delivered += consumer.receive(chunk)
        delivered += consumer.close()
    except ProtocolViolation as violation:
        delivered += violation.delivered  # type: ignore[arg-type]
    return delivered


@pytest.mark.parametrize("body", [SSE, JSONL, PROTOBUF], ids=["sse", "jsonl", "protobuf"])
def test_receive_byte_by_byte_delivers_what_consume_body_does(body: bytes) -> None:
    consumer = Consumer()
    events = received(consumer, [body[i : i + 1] for i in range(len(body))])
    assert consumer.violation is None
    assert consumer.stream_state is StreamState.CLOSED
    assert msgspec.to_builtins(events) == msgspec.to_builtins(consume_body(body).events)


def test_close_delivers_the_last_json_line_without_a_line_end() -> None:
    consumer = Consumer()
    events = consumer.receive(JSONL.rstrip(b"\n"))
    assert [event.type for event in events] == [event["type"] for event in EVENTS[:-1]]
    assert [event.type for event in consumer.close()] == ["RUN_FINISHED"]


def test_a_body_cut_inside_an_event_is_truncated_at_close() -> None:
    consumer = Consumer()
    assert len(consumer.receive(SSE + b"data: {")) == len(EVENTS)
    with pytest.raises(ProtocolViolation) as caught:
        consumer.close()
    assert (caught.value.rule, caught.value.index) == ("truncated", None)
    assert consumer.violation is caught.value
    assert [run.status for run in consumer.runs] == ["completed"]


def test_a_protobuf_body_cut_inside_a_frame_is_truncated_at_close() -> None:
    consumer = Consumer()
    assert len(consumer.receive(PROTOBUF + PROTOBUF[:3])) == len(EVENTS)  # the run ended
    with pytest.raises(ProtocolViolation, match="inside an event") as caught:
        consumer.close()
    assert caught.value.rule == "truncated"


def test_receive_after_a_violation_raises_it_again_with_what_passed_before_it() -> None:
    orphan = b'data: {"type":"TEXT_MESSAGE_END","messageId":"nobody"}\n\n'
    consumer = Consumer()
    with pytest.raises(ProtocolViolation) as caught:
        consumer.receive(b"data: " + PAYLOADS[0] + b"\n\n" + orphan)
    assert (caught.value.rule, caught.value.index) == ("text-message-not-open", 1)
    assert [event.type for event in caught.value.delivered] == ["RUN_STARTED"]  # type: ignore[attr-defined]
    assert consumer.event_index == 2
    for later in (lambda: consumer.receive(SSE), consumer.close):
        with pytest.raises(ProtocolViolation) as again:
            later()
        assert again.value is caught.value


def test_a_reader_error_rejects_the_stream() -> None:
    consumer = Consumer(max_event_size=8)
    with pytest.raises(TransportError) as caught:
        consumer.receive(SSE)
    assert caught.value.rule == "event-too-large"
    assert consumer.violation is caught.value


def test_the_media_type_is_chosen_over_the_first_bytes() -> None:
    as_sse = Consumer()
    as_sse.set_media_type("Text/Event-Stream; charset=utf-8")
    assert received(as_sse, [JSONL]) == []  # JSON lines read as SSE: fields it ignores
    assert as_sse.violation is not None
    assert as_sse.violation.rule == "truncated"
    as_json_lines = Consumer()
    as_json_lines.set_media_type("application/x-ndjson")
    events = received(as_json_lines, [b"\n", JSONL])  # a blank start is no SSE either
    assert len(events) == len(EVENTS)
    assert as_json_lines.violation is None


def test_a_media_type_without_a_reader_or_named_too_late_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no reader for media type 'application/json'"):
        Consumer().set_media_type("application/json")
    started = Consumer()
    started.receive(b"\n")  # blank: the format is not told yet, but the body has begun
    with pytest.raises(UsageError, match="before receive"):
        started.set_media_type("text/event-stream")
    with pytest.raises(UsageError, match="max_event_size"):
        Consumer(max_event_size=0)


def test_a_protobuf_body_is_told_by_its_first_nul_byte_and_malformed_frames_rejected() -> None:
    consumer = Consumer()
    assert len(consumer.receive(PROTOBUF)) == len(EVENTS)
    with pytest.raises(TransportError) as caught:
        consumer.receive(b"\x00\x00\x00\x02\xff\xff")
    assert (caught.value.rule, caught.value.index) == ("malformed-frame", len(EVENTS))


def test_event_index_counts_the_payloads_taken_dropped_ones_too() -> None:
    unknown = b'data: {"type":"FROM_THE_FUTURE"}\n\n'
    consumer = Consumer()
    assert (consumer.event_index, consumer.stream_state) == (0, StreamState.IDLE)
    assert len(consumer.receive(b"data: " + PAYLOADS[0] + b"\n\n" + unknown)) == 1
    assert (consumer.event_index, consumer.stream_state) == (2, StreamState.ACTIVE)


def test_warn_joins_the_stream_warnings_in_order_and_the_callback() -> None:
    seen: list[str] = []
    consumer = Consumer(on_warning=seen.append)
    consumer.warn("the transport said something")
    consumer.receive(b'data: {"type":"FROM_THE_FUTURE"}\n\n')
    assert seen == consumer.warnings
    assert consumer.warnings[0] == "the transport said something"
    assert "FROM_THE_FUTURE" in consumer.warnings[1]


def test_too_deep_an_event_through_receive_is_malformed_not_a_recursion_error() -> None:
    deep = b'{"type":"STATE_SNAPSHOT","snapshot":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    consumer = Consumer()
    consumer.receive(b"data: " + PAYLOADS[0] + b"\n\n")
    with pytest.raises(MalformedEvent) as caught:
        consumer.receive(b"data: " + deep + b"\n\n")
    assert (caught.value.rule, caught.value.index) == ("too-deep", 1)
