"""The binary wire bounded as the text wire is: its warnings in the same log (collapsed,
``max_warnings``), what a frame decodes into within ``max_event_size``, and memory measured
against SSE for the same byte count (a ratio of tracemalloc peaks, never a time); and the
envelope with no arm, dropped with a warning as an unknown arm is."""

from __future__ import annotations

import asyncio
import gzip
import json
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
from measure import peak_bytes
from test_protobuf import RUN, body_of, chunkings, frame_of, sse_of, summary

from agui_msgspec import (
    PROTOBUF_MEDIA_TYPE,
    SSE_MEDIA_TYPE,
    Consumer,
    HttpAgent,
    ProtobufReader,
    ProtocolViolation,
    TransportError,
    consume_body,
    proto_frame,
)
from agui_msgspec._wire.protobuf import decode_frame

DATA = Path(__file__).parents[1] / "data" / "proto"
FRAMES = {c["name"]: c["hex"] for c in json.loads((DATA / "corpus-frames.json").read_text())}
UNKNOWN_ARM = frame_of(b"\xc2\x3e\x00")  # Event field 1000, an empty message: 7 bytes
UNKNOWN_TYPE_SSE = b'data: {"type":"X"}\n\n'  # the same over SSE: an event of a type unknown
NO_ARM = frame_of(b"")  # what @ag-ui/proto writes for an event it cannot encode
START, FINISH = RUN[0], RUN[-1]


def chunks(body: bytes, size: int = 64 * 1024) -> list[bytes]:
    return [body[i : i + size] for i in range(0, len(body), size)]


def peak_of(body: bytes) -> tuple[Any, int]:
    return peak_bytes(lambda: consume_body(chunks(body), keep_events=False))


def within_twice_sse(proto: bytes, sse: bytes) -> tuple[Any, Any]:
    """Both bodies consumed; the protobuf one's peak at most twice the SSE one's."""
    assert len(sse) >= len(proto) * 0.9  # the same byte count, near enough
    from_proto, proto_peak = peak_of(proto)
    from_sse, sse_peak = peak_of(sse)
    assert proto_peak <= 2 * sse_peak, (proto_peak, sse_peak)
    return from_proto, from_sse


# --------------------------------------------------------------------------- warnings


def test_a_body_of_unknown_frames_costs_no_more_memory_than_its_sse_twin() -> None:
    count = 100_000
    proto = proto_frame(START) + UNKNOWN_ARM * count + proto_frame(FINISH)
    sse = sse_of([START]) + UNKNOWN_TYPE_SSE * (count * 7 // 20) + sse_of([FINISH])
    from_proto, from_sse = within_twice_sse(proto, sse)
    assert from_proto.outcome == from_sse.outcome == "completed"
    assert len(from_proto.warnings) <= 2
    assert f"({count - 1} more times)" in from_proto.warnings[-1]


def test_the_reader_keeps_each_kind_of_warning_once_with_a_count() -> None:
    reader = ProtobufReader()
    body = b"".join(proto_frame(event) + UNKNOWN_ARM for event in RUN)
    assert len(reader.feed(body)) == len(RUN)
    assert reader.warnings == [
        "event 1: dropped a protobuf frame before this event: its Event arm is one this "
        "build does not know (an event type from a later protocol) (5 times)"
    ]


def test_scattered_drops_collapse_in_the_consumer_s_log_as_sse_drops_do() -> None:
    delta = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x"}
    middle = [RUN[1], *[delta] * 3000, RUN[3]]
    proto = proto_frame(START) + b"".join(proto_frame(e) + UNKNOWN_ARM for e in middle)
    result = consume_body(proto + proto_frame(FINISH))
    assert result.outcome == "completed"
    assert len(result.warnings) == 1
    assert result.warnings[0].endswith(f"({len(middle)} times in this run)")


def test_max_warnings_bounds_the_protobuf_warnings_too() -> None:
    body = proto_frame(START) + UNKNOWN_ARM + NO_ARM + proto_frame(FINISH)  # two kinds
    result = consume_body(body, max_warnings=1)
    assert result.outcome == "completed"
    assert len(result.warnings) == 2
    assert "its Event arm is one this build does not know" in result.warnings[0]
    assert result.warnings[1] == "1 more warnings not kept (max_warnings=1)"


def test_repeats_are_said_before_the_event_they_come_before_however_chunked() -> None:
    body = proto_frame(START) + UNKNOWN_ARM * 3 + proto_frame(RUN[1]) + UNKNOWN_ARM * 2
    body += body_of(RUN[2:])
    seen: list[str] = []
    expected = consume_body(body, on_warning=seen.append).warnings
    assert [w[:8] for w in seen] == ["event 1:", "event 1:", "event 2:", "event 2:"]
    assert seen[1].endswith("(2 more times)")
    assert seen[3].endswith("(1 more times)")
    for pieces in chunkings(body, 3):
        assert consume_body(iter(pieces)).warnings == expected


# --------------------------------------------------------------------------- what a frame makes

LIMIT = 256 * 1024  # max_event_size in these tests: the bound bites at any size alike


def field(tag: int, body: bytes) -> bytes:
    """A length-delimited field of a one-byte tag, its length a varint."""
    length, size = bytearray(), len(body)
    while size >= 0x80:
        length.append(size & 0x7F | 0x80)
        size >>= 7
    return bytes([tag, *length, size]) + body


def one_event_of_empty_items(arm_tag: int, type_number: int, items_tag: int) -> bytes:
    """A frame of max_event_size bytes: one event whose list holds empty items, 2 bytes each
    (each an object of 20 bytes and more of JSON)."""
    base = field(0x0A, bytes([0x08, type_number]))
    count = (LIMIT - 16) // 2
    return frame_of(field(arm_tag, base + bytes([items_tag, 0]) * count))


def limited_peak(body: bytes) -> tuple[str | None, int]:
    """The rule a Consumer bounded to LIMIT refuses the body by (or None), and its peak."""

    def consume() -> ProtocolViolation | TransportError | None:
        consumer = Consumer(max_event_size=LIMIT)
        try:
            for piece in chunks(body):
                consumer.receive(piece)
            consumer.close()
        except (ProtocolViolation, TransportError) as violation:  # event-too-large: the reader's
            return violation
        return None

    violation, peak = peak_bytes(consume)
    assert violation is None or violation.index == 1
    return (None if violation is None else violation.rule), peak


def sse_event_of(kind: str, name: str, item: bytes) -> bytes:
    """The SSE twin: one event of ``item`` repeated, as many as fit in LIMIT bytes."""
    head = b'data: {"type":"' + kind.encode() + b'","' + name.encode() + b'":['
    items = (item + b",") * ((LIMIT - len(head) - 8) // (len(item) + 1))
    return sse_of([START]) + head + items[:-1] + b"]}\n\n" + sse_of([FINISH])


@pytest.mark.parametrize(
    ("proto", "sse"),
    [
        (
            one_event_of_empty_items(0x42, 7, 0x12),  # STATE_DELTA: operations
            sse_event_of("STATE_DELTA", "delta", b'{"op":"add","path":"","value":1}'),
        ),
        (
            one_event_of_empty_items(0x4A, 8, 0x12),  # MESSAGES_SNAPSHOT: messages
            sse_event_of("MESSAGES_SNAPSHOT", "messages", b'{"id":"","role":"user","content":""}'),
        ),
    ],
    ids=["state-delta-of-empty-operations", "messages-snapshot-of-empty-messages"],
)
def test_a_frame_of_empty_items_stops_at_max_event_size_of_json(proto: bytes, sse: bytes) -> None:
    # the frame is within max_event_size; what it decodes into is 10x that and more
    body = proto_frame(START) + proto + proto_frame(FINISH)
    assert len(sse) >= len(body) * 0.9
    rule, proto_peak = limited_peak(body)
    sse_rule, sse_peak = limited_peak(sse)
    assert rule == "event-too-large"
    assert sse_rule is None  # the largest event SSE takes: what the same bytes cost there
    assert proto_peak <= 2 * sse_peak, (proto_peak, sse_peak)


def test_the_decoded_json_is_bounded_even_where_the_frame_is_small() -> None:
    delta = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "\x01" * 1000}
    frame = proto_frame(delta)  # 1,000 bytes of delta escape to 6,000 of JSON
    assert len(frame) < 1100
    with pytest.raises(TransportError) as caught:
        ProtobufReader(max_event_size=5000).feed(frame)
    assert caught.value.rule == "event-too-large"
    assert len(ProtobufReader(max_event_size=7000).feed(frame)[0]) > 6000


def test_decode_frame_refuses_what_decodes_into_more_than_the_default_bound() -> None:
    base = field(0x0A, bytes([0x08, 7]))
    huge = field(0x42, base + b"\x12\x00" * 6_000_000)  # a STATE_DELTA of 6 M empty operations
    with pytest.raises(TransportError) as caught:
        decode_frame(huge)
    assert caught.value.rule == "event-too-large"


# --------------------------------------------------------------------------- arm-less envelopes


def test_a_zero_length_frame_is_dropped_with_a_warning() -> None:
    result = consume_body(body_of(RUN[:2]) + NO_ARM + body_of(RUN[2:]))
    assert result.outcome == "completed"
    assert result.warnings == [
        "event 2: dropped a protobuf frame before this event: it carries no Event arm (a "
        "zero-length frame: an event its producer could not encode, or of a type this build "
        "predates)"
    ]
    assert msgspec.to_builtins(result.events) == msgspec.to_builtins(
        consume_body(sse_of(RUN)).events
    )


def test_an_envelope_of_unknown_scalars_only_is_arm_less_and_dropped() -> None:
    seen: list[str] = []
    assert decode_frame(b"\xc8\x3e\x05", on_warning=seen.append) is None  # field 1001 = 5
    assert len(seen) == 1
    assert "no Event arm" in seen[0]


@pytest.mark.parametrize(
    "message",
    [
        b"\xc2\x3e\x02\xff\xff",  # an unknown arm whose bytes are not a message
        b"\xc2\x3e\x05\x0a",  # an unknown arm whose length runs past the frame
        b"\xc8",  # an envelope whose one tag never ends
        b"\x00",  # field number 0
    ],
)
def test_bytes_that_are_not_a_message_stay_fatal(message: bytes) -> None:
    result = consume_body(body_of(RUN[:1]) + frame_of(message) + body_of(RUN[1:]))
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("malformed-frame", 1)


def test_the_reference_encoder_s_zero_length_frame_is_dropped_between_its_frames() -> None:
    # @ag-ui/proto's own bytes for a run, with the empty frame it writes for an event it
    # cannot encode in the middle: the run reads as the same run over SSE, less that event
    names = ["run-started-minimal", "text-message-start", "text-message-end", "run-finished-plain"]
    messages = [bytes.fromhex(FRAMES[name]) for name in names]
    events = [decode_frame(message) for message in messages]
    body = (
        frame_of(messages[0])
        + frame_of(messages[1])
        + NO_ARM
        + b"".join(frame_of(message) for message in messages[2:])
    )
    expected = consume_body(sse_of(events))  # type: ignore[arg-type]  # none is None
    assert expected.outcome == "completed"
    for pieces in chunkings(body, 4):
        result = consume_body(iter(pieces))
        assert summary(result)[:2] == summary(expected)[:2]
        assert len(result.warnings) == 1
        assert result.warnings[0].startswith("event 2: dropped a protobuf frame")


# --------------------------------------------------------------------------- through HttpAgent


def agent_peak(body: bytes, media_type: str) -> tuple[str | None, int]:
    """A gzip reply of ``body`` to HttpAgent (max_event_size LIMIT): the rule it refuses the
    run by (or None), and the peak of memory on the way."""
    compressed = gzip.compress(body, 9)

    async def handler(request: httpx.Request) -> httpx.Response:
        headers = {"content-type": media_type, "content-encoding": "gzip"}
        return httpx.Response(200, headers=headers, content=compressed)

    async def run() -> str | None:
        client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        agent = HttpAgent("http://agent.test/run", client=client, max_event_size=LIMIT)
        try:
            await agent.run_agent({"threadId": "t", "runId": "r", "messages": []})
        except (ProtocolViolation, TransportError) as violation:
            return violation.rule
        finally:
            await client.aclose()
        return None

    return peak_bytes(lambda: asyncio.run(run()))


@pytest.mark.parametrize(
    ("proto", "sse", "rule"),
    [
        (
            UNKNOWN_ARM * 100_000,
            UNKNOWN_TYPE_SSE * (100_000 * 7 // 20),
            None,
        ),
        (
            one_event_of_empty_items(0x42, 7, 0x12),
            sse_event_of("STATE_DELTA", "delta", b'{"op":"add","path":"","value":1}')[
                len(sse_of([START])) : -len(sse_of([FINISH]))
            ],
            "event-too-large",
        ),
    ],
    ids=["unknown-frames", "state-delta-of-empty-operations"],
)
def test_a_gzip_reply_to_http_agent_is_bounded_as_its_sse_twin(
    proto: bytes, sse: bytes, rule: str | None
) -> None:
    proto_body = proto_frame(START) + proto + proto_frame(FINISH)
    sse_body = sse_of([START]) + sse + sse_of([FINISH])
    got, proto_peak = agent_peak(proto_body, PROTOBUF_MEDIA_TYPE)
    sse_rule, sse_peak = agent_peak(sse_body, SSE_MEDIA_TYPE)
    assert (got, sse_rule) == (rule, None)
    assert proto_peak <= 2 * sse_peak, (proto_peak, sse_peak)
