"""The HTTP + Protobuf binding: encoding, decoding, the frame reader, and its place in the
pipeline (AG-UI basic/transports/http-protobuf)."""

from __future__ import annotations

import json
import math
import random
import struct
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nesting import nested_lists
from node.parity import in_full
from strategies import valid_streams

import agui_msgspec as agui
from agui_msgspec import (
    Consumer,
    ProtobufReader,
    TransportError,
    UsageError,
    consume_body,
    encode_proto,
    proto_frame,
)
from agui_msgspec._wire.protobuf import decode_frame, wire_tables
from agui_msgspec._wire.protobuf import encode as _encode
from agui_msgspec._wire.protobuf.decode import GeneralDecoder, Malformed
from agui_msgspec._wire.protobuf.fast import FastDecoder

DATA = Path(__file__).parents[1] / "data" / "proto"
CORPUS = json.loads((DATA / "corpus-events.json").read_text(encoding="utf-8"))
FRAMES = {c["name"]: c["hex"] for c in json.loads((DATA / "corpus-frames.json").read_text())}

RUN = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "Hi"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def body_of(events: list[dict[str, Any]]) -> bytes:
    return b"".join(proto_frame(event) for event in events)


def sse_of(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + msgspec.json.encode(event) + b"\n\n" for event in events)


def frame_of(message: bytes) -> bytes:
    return len(message).to_bytes(4, "big") + message


# --------------------------------------------------------------------------- the corpus


def test_the_corpus_covers_every_event_type() -> None:
    types = {case["event"]["type"] for case in CORPUS}
    assert types == set(agui.v1_1.EVENT_TYPES) == set(agui.v1_0.EVENT_TYPES)
    assert set(FRAMES) == {case["name"] for case in CORPUS}


@pytest.mark.parametrize("version", ["1.0", "1.1"])
@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_encoding_reproduces_the_reference_bytes(case: dict[str, Any], version: str) -> None:
    # the corpus events keep each open object's members in the order @ag-ui/proto wrote
    # them: that order is on the wire (a map's entries), and the spec lets encoders differ
    # on it for the same semantic value, so parity is pinned for this order only
    assert encode_proto(case["event"], version).hex() == FRAMES[case["name"]]


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_decoding_the_reference_bytes_gives_the_event_back(case: dict[str, Any]) -> None:
    assert decode_frame(bytes.fromhex(FRAMES[case["name"]])) == case["event"]


@pytest.mark.parametrize("case", CORPUS, ids=[c["name"] for c in CORPUS])
def test_a_struct_encodes_as_its_event_written_in_full(case: dict[str, Any]) -> None:
    # a Struct cannot tell a field at its schema default from one never given: it writes the
    # default (role "assistant", replace true), as the reference writes that event in full
    event = msgspec.convert(case["event"], agui.Event)
    full = in_full(case["event"])
    assert encode_proto(event) == encode_proto(full)
    if full == case["event"]:
        assert encode_proto(event).hex() == FRAMES[case["name"]]


def test_a_struct_at_a_default_writes_the_default() -> None:
    start = agui.TextMessageStartEvent(message_id="m")
    assert agui.encode(start) == b'{"type":"TEXT_MESSAGE_START","messageId":"m"}'  # JSON omits it
    assert encode_proto(start) == encode_proto({**msgspec.to_builtins(start), "role": "assistant"})
    assert encode_proto(start) != encode_proto(msgspec.to_builtins(start))
    snapshot = agui.ActivitySnapshotEvent(message_id="m", activity_type="a", content={})
    assert encode_proto(snapshot) == encode_proto(
        {**msgspec.to_builtins(snapshot), "replace": True}
    )
    # given as a dict, an event is written as given, as @ag-ui/proto writes it
    assert encode_proto({"type": "TEXT_MESSAGE_START", "messageId": "m"}).hex() == "0a050a0012016d"


def test_the_frame_is_the_big_endian_length_then_the_message() -> None:
    event = agui.TextMessageContentEvent(message_id="m", delta="x" * 300)
    frame = proto_frame(event)
    assert frame[:4] == len(encode_proto(event)).to_bytes(4, "big")
    assert frame[4:] == encode_proto(event)


def test_an_event_type_the_wire_lacks_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="FUTURE_EVENT"):
        encode_proto({"type": "FUTURE_EVENT"})
    with pytest.raises(UsageError, match="object"):
        encode_proto(object())  # type: ignore[arg-type]


def nested_objects(depth: int) -> dict[str, Any]:
    outer: dict[str, Any] = {}
    inner = outer
    for _ in range(depth - 1):
        inner["k"] = {}
        inner = inner["k"]
    return outer


@pytest.mark.parametrize(
    "event_of",
    [
        lambda value: {"type": "STATE_SNAPSHOT", "snapshot": value},
        lambda value: {"type": "CUSTOM", "name": "n", "value": value},
        lambda value: {"type": "RAW", "event": {"a": value}, "rawEvent": value},
        lambda value: {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [
                {"id": "m", "role": "activity", "activityType": "a", "content": {"a": value}}
            ],
        },
    ],
    ids=["snapshot", "custom", "raw", "activity-message"],
)
@pytest.mark.parametrize("nested", [nested_lists, nested_objects])
def test_what_encode_proto_writes_the_reader_reads_however_deep(event_of: Any, nested: Any) -> None:
    """The encoder refuses, as a UsageError, what the reader would refuse for nesting, and
    never overflows the stack; up to that bound the frame decodes."""
    written = 0
    refusals: list[str] = []
    for depth in [*range(1, 260, 3), 600, 5000]:
        try:
            message = encode_proto(event_of(nested(depth)))
        except UsageError as refused:
            refusals.append(str(refused))
            continue
        written = depth
        assert decode_frame(message) is not None  # a malformed-frame TransportError if not
    assert 90 < written < 260  # an object level is two on the wire (Value, Struct)
    assert refusals
    assert all("nests deeper" in refusal for refusal in refusals)


# --------------------------------------------------------------------------- the reader


def test_a_protobuf_body_reads_as_its_sse_body_does() -> None:
    from_proto = consume_body(body_of(RUN))
    from_sse = consume_body(sse_of(RUN))
    assert from_proto.outcome == "completed"
    assert msgspec.to_builtins(from_proto.events) == msgspec.to_builtins(from_sse.events)
    assert msgspec.to_builtins(from_proto.messages) == msgspec.to_builtins(from_sse.messages)


def test_payloads_are_the_events_json() -> None:
    reader = ProtobufReader()
    payloads = reader.feed(body_of(RUN))
    assert [msgspec.json.decode(p) for p in payloads] == RUN
    assert reader.close() == []
    assert not reader.discarded_partial


def test_frames_split_anywhere_and_several_per_chunk_read_the_same() -> None:
    body = body_of(RUN)
    reader = ProtobufReader()
    payloads = [p for i in range(len(body)) for p in reader.feed(body[i : i + 1])]
    assert [msgspec.json.decode(p) for p in payloads] == RUN


@settings(max_examples=30, deadline=None)
@given(data=st.data())
def test_any_chunking_of_a_valid_stream_gives_its_sse_verdict(data: st.DataObject) -> None:
    events = data.draw(valid_streams())
    body = body_of(events)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=8)))
    chunks = [body[a:b] for a, b in pairwise([0, *cuts, len(body)])]
    from_proto, from_sse = consume_body(iter(chunks)), consume_body(sse_of(events))
    assert summary(from_proto) == summary(from_sse)


def summary(result: agui.Result) -> tuple[Any, ...]:
    """The verdict, warnings, messages, state and runs, compared as values: a JSON number
    is a double on the binary wire, so 60.0 may come back as 60 (equal, not identical)."""
    violation = result.violation
    return (
        result.outcome,
        None if violation is None else (violation.rule, violation.index),
        tuple(result.warnings),
        msgspec.to_builtins(result.messages),
        msgspec.to_builtins(result.state),
        [run.status for run in result.runs],
    )


def test_a_frame_longer_than_max_event_size_fails_before_its_bytes_arrive() -> None:
    reader = ProtobufReader(max_event_size=100)
    first = proto_frame(RUN[0])
    # the header alone announces 101 bytes: the reader refuses without waiting for them
    payloads = reader.feed(first + (101).to_bytes(4, "big"))
    assert len(payloads) == 1  # the frame before it is delivered first
    with pytest.raises(TransportError) as caught:
        reader.feed(b"")
    assert caught.value.rule == "event-too-large"
    assert caught.value.index == 1


def test_a_frame_that_decodes_into_exactly_max_event_size_of_json_passes() -> None:
    # the bound is the event's size on the text wire: its JSON, which the frame's bytes
    # are fewer than
    frame = proto_frame(RUN[0])
    (payload,) = ProtobufReader().feed(frame)
    assert len(frame) - 4 < len(payload)
    assert ProtobufReader(max_event_size=len(payload)).feed(frame) == [payload]
    with pytest.raises(TransportError, match="event-too-large"):
        ProtobufReader(max_event_size=len(payload) - 1).feed(frame)


@pytest.mark.parametrize("cut", [2, 4, 9])
def test_a_body_ending_inside_a_frame_is_truncated(cut: int) -> None:
    body = body_of(RUN)
    reader = ProtobufReader()
    reader.feed(body[: len(body) - cut])
    reader.close()
    assert reader.discarded_partial
    result = consume_body(body[: len(body) - cut])
    assert result.violation is not None
    assert result.violation.rule == "truncated"


def test_whole_frames_are_not_truncated() -> None:
    result = consume_body(body_of(RUN))
    assert result.violation is None


@pytest.mark.parametrize(
    "message",
    [
        b"\x0a\x05\x0a\x00",  # a length past the frame
        b"\x0a\x02\x0a\xff",  # a varint that never ends
        b"\x08\x01",  # a known arm as a varint
        b"\x0a\x04\x0a\x00\x12\x01" + b"\x0a\x00",  # text_message_start whose message_id runs out
        b"\x12\x06\x0a\x02\x08\x01\x12\x00" + b"\x1a\x04\x0a\x02\x08\x02",  # two event types
        b"\x0a\x06\x0a\x00\x12\x02\xc3\x28",  # message_id not UTF-8
        b"\x12\x04\x0a\x02\x08\x05",  # TEXT_MESSAGE_CONTENT's arm, base says TOOL_CALL_END
        b"\x0b\x0c",  # a group
    ],
)
def test_bytes_that_do_not_decode_are_fatal(message: bytes) -> None:
    body = proto_frame(RUN[0]) + frame_of(message)
    result = consume_body(body)
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("malformed-frame", 1)
    assert len(result.events) == 1  # what came before is kept
    with pytest.raises(TransportError, match="malformed-frame"):
        ProtobufReader().feed(frame_of(message))


def test_a_reader_that_failed_stays_failed() -> None:
    reader = ProtobufReader()
    with pytest.raises(TransportError):
        reader.feed(frame_of(b"\x08\x01"))
    with pytest.raises(TransportError):
        reader.close()


def test_a_closed_reader_refuses_more_bytes() -> None:
    reader = ProtobufReader()
    reader.close()
    with pytest.raises(UsageError):
        reader.feed(b"")


def test_an_event_type_this_build_does_not_know_is_dropped_with_a_warning() -> None:
    future = b"\xa2\x06\x04\x0a\x02\x08\x63"  # arm 100, a message: an event from a later protocol
    body = body_of(RUN[:2]) + frame_of(future) + body_of(RUN[2:])
    result = consume_body(body)
    assert result.outcome == "completed"
    assert [w for w in result.warnings if "protobuf frame" in w]
    assert msgspec.to_builtins(result.events) == msgspec.to_builtins(
        consume_body(sse_of(RUN)).events
    )


FUTURE_EVENT = frame_of(b"\xa2\x06\x04\x0a\x02\x08\x63")  # arm 100: a later protocol's event
CHUNKING_BODIES = sorted((DATA / "chunking").glob("*.bin"))  # the fuzzer's reproducers


def chunkings(body: bytes, seed: int) -> list[list[bytes]]:
    """The body whole, byte by byte, and in a few random splits."""
    rng = random.Random(seed)
    splits = [[body], [body[i : i + 1] for i in range(len(body))]]
    for _ in range(8):
        cuts = sorted(rng.sample(range(1, len(body)), rng.randint(1, min(12, len(body) - 1))))
        splits.append([body[a:b] for a, b in pairwise([0, *cuts, len(body)])])
    return splits


def warned_in_order(chunks: list[bytes]) -> list[str]:
    return consume_body(iter(chunks)).warnings


def test_a_dropped_frame_is_warned_about_where_it_falls_however_the_body_is_chunked() -> None:
    newer = {**RUN[0], "protocolVersion": "1.9"}  # the consumer warns about this event
    body = proto_frame(newer) + FUTURE_EVENT + body_of(RUN[1:])
    for chunks in chunkings(body, 1):
        warnings = warned_in_order(chunks)
        assert len(warnings) == 2
        assert "'1.9'" in warnings[0]
        assert warnings[1].startswith("event 1: dropped a protobuf frame before this event")


def test_on_warning_before_names_the_payload_the_dropped_frame_comes_before() -> None:
    seen: list[tuple[int, str]] = []
    reader = ProtobufReader(on_warning_before=lambda index, message: seen.append((index, message)))
    assert len(reader.feed(body_of(RUN[:2]) + FUTURE_EVENT + body_of(RUN[2:3]))) == 3
    assert [index for index, _ in seen] == [2]
    assert reader.warnings == [message for _, message in seen]


def test_a_frame_past_the_rejected_event_is_not_warned_about_however_chunked() -> None:
    orphan = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nobody", "delta": "x"}
    body = body_of([RUN[0], orphan]) + FUTURE_EVENT + body_of(RUN[1:])
    for chunks in chunkings(body, 2):
        result = consume_body(iter(chunks))
        assert result.violation is not None
        assert result.violation.index == 1
        assert not [w for w in result.warnings if "protobuf frame" in w]


@pytest.mark.parametrize("path", CHUNKING_BODIES, ids=[p.name for p in CHUNKING_BODIES])
def test_a_fuzzed_body_gives_one_verdict_and_warnings_however_chunked(path: Path) -> None:
    body = path.read_bytes()
    whole = consume_body(body)
    assert any("protobuf frame" in w for w in whole.warnings) or whole.violation is not None
    expected = (summary(whole), msgspec.json.encode(whole.events))
    for chunks in chunkings(body, len(body)):
        result = consume_body(iter(chunks))
        assert (summary(result), msgspec.json.encode(result.events)) == expected


def test_an_unknown_arm_that_is_not_a_message_is_malformed() -> None:
    result = consume_body(body_of(RUN[:1]) + frame_of(b"\xa2\x06\x02\xff\xff"))
    assert result.violation is not None
    assert result.violation.rule == "malformed-frame"


def test_an_unknown_outcome_reaches_enforcement_and_is_stripped_with_a_warning() -> None:
    finished = {**RUN[-1], "outcome": {"type": "timeout"}}
    proto = consume_body(body_of([*RUN[:-1], finished]))
    sse = consume_body(sse_of([*RUN[:-1], finished]))
    assert proto.outcome == sse.outcome == "completed"
    assert proto.warnings == sse.warnings
    assert any("/outcome" in w for w in proto.warnings)
    assert proto.runs[0].status == sse.runs[0].status == "completed"


def _field(number: int, body: bytes) -> bytes:
    """One length-delimited protobuf field (bodies here stay under 128 bytes)."""
    return bytes([number << 3 | 2, len(body)]) + body


def test_a_content_part_this_build_does_not_know_is_dropped_with_a_warning() -> None:
    text_part = _field(8, _field(1, _field(1, b"a")))  # content_parts: {text: {text: "a"}}
    future_part = _field(8, _field(9, b""))  # content_parts: an arm (9) this build lacks
    message = _field(1, b"u") + _field(2, b"user") + text_part + future_part
    snapshot = _field(1, b"\x08\x08") + _field(2, message)  # base_event: MESSAGES_SNAPSHOT
    warnings: list[str] = []
    decoded = decode_frame(_field(9, snapshot), on_warning=warnings.append)
    assert decoded is not None
    assert decoded["messages"] == [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "a"}]}
    ]
    assert len(warnings) == 1
    assert "InputContent" in warnings[0]


def test_json_numbers_come_back_as_json_readers_read_them() -> None:
    snapshot = {"type": "STATE_SNAPSHOT", "snapshot": {"i": 3, "f": 0.5, "big": 2**60}}
    decoded = decode_frame(encode_proto(snapshot))
    assert decoded is not None
    assert decoded["snapshot"] == {"i": 3, "f": 0.5, "big": float(2**60)}
    assert type(decoded["snapshot"]["i"]) is int


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf], ids=str)
def test_a_json_value_of_nan_or_infinity_is_refused_as_its_readers_refuse_it(
    number: float,
) -> None:
    for snapshot in (number, [1, number], {"a": {"b": number}}):
        with pytest.raises(UsageError, match="no JSON number"):
            encode_proto({"type": "STATE_SNAPSHOT", "snapshot": snapshot})
    # the bytes it once wrote: a Value's number_value the decoders refuse
    written = encode_proto({"type": "STATE_SNAPSHOT", "snapshot": 1.5})
    not_json = written.replace(struct.pack("<d", 1.5), struct.pack("<d", number))
    with pytest.raises(TransportError, match=r"malformed-frame.*a number is not finite"):
        decode_frame(not_json)


def test_nesting_past_the_bound_is_malformed_not_a_crash() -> None:
    deep: Any = "leaf"
    for _ in range(400):
        deep = [deep]
    with pytest.MonkeyPatch.context() as patch:  # another encoder's frame: ours refuses it
        patch.setattr(_encode, "MAX_NESTING", 1000)
        frame = proto_frame({"type": "STATE_SNAPSHOT", "snapshot": deep})
    result = consume_body(frame)
    assert result.violation is not None
    assert result.violation.rule == "malformed-frame"


def test_a_consumer_fed_by_the_reader_sees_the_same_events() -> None:
    reader, consumer = ProtobufReader(), Consumer()
    delivered = consumer.feed_many(reader.feed(body_of(RUN)))
    consumer.close(inside_event=reader.discarded_partial)
    assert [type(e).__name__ for e in delivered] == [
        "RunStartedEvent",
        "TextMessageStartEvent",
        "TextMessageContentEvent",
        "TextMessageEndEvent",
        "RunFinishedEvent",
    ]


def test_middleware_sees_a_decoded_frame_as_it_sees_an_sse_event() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def spy(event: dict[str, Any], index: int) -> dict[str, Any]:
        seen.append(("x", event))
        return event

    consume_body(body_of(RUN), middleware=[spy])
    from_proto = [e for _, e in seen]
    seen.clear()
    consume_body(sse_of(RUN), middleware=[spy])
    assert from_proto == [e for _, e in seen]


def test_violations_name_the_rule() -> None:
    with pytest.raises(TransportError, match=r"\[malformed-frame\] event 0"):
        ProtobufReader().feed(frame_of(b"\x08\x01"))


def test_a_known_field_with_the_wrong_wire_type_is_malformed() -> None:
    # TEXT_MESSAGE_CONTENT whose message_id (field 2) arrives as a varint
    message = _field(2, _field(1, b"\x08\x01") + b"\x10\x05")
    with pytest.raises(TransportError, match="wrong wire type"):
        ProtobufReader().feed(frame_of(message))


def test_a_field_this_build_predates_is_skipped_silently() -> None:
    # TEXT_MESSAGE_CONTENT with a field 15 (a varint) and a field 14 (bytes) it does not know
    message = _field(2, _field(1, b"\x08\x01") + _field(2, b"m") + b"\x78\x01" + _field(14, b"x"))
    warnings: list[str] = []
    assert decode_frame(message, on_warning=warnings.append) == {
        "type": "TEXT_MESSAGE_CONTENT",
        "messageId": "m",
        "delta": "",
    }
    assert warnings == []


def test_a_singular_message_met_twice_merges_as_protobuf_does() -> None:
    # RUN_FINISHED whose result (a Value, field 4) is sent twice: the second wins
    base = _field(1, b"\x08\x0c") + _field(2, b"t") + _field(3, b"r")
    message = _field(13, base + _field(4, b"\x1a\x01a") + _field(4, b"\x1a\x01b"))
    decoded = decode_frame(message)
    assert decoded is not None
    assert decoded["result"] == "b"


CORPUS_FRAMES = [bytes.fromhex(h) for h in FRAMES.values()]


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(CORPUS_FRAMES),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
    cut=st.integers(0, 10_000),
    noise=st.binary(max_size=64),
)
def test_mangled_frames_are_decoded_or_refused_never_crash(
    base: bytes, flips: list[tuple[int, int]], cut: int, noise: bytes
) -> None:
    message = bytearray(base)
    for position, value in flips:
        message[position % len(message)] = value
    message = message[: max(1, cut % (len(message) + 1))] + noise
    rules: list[str] = []
    payloads: list[bytes] = []
    try:
        payloads = ProtobufReader().feed(frame_of(bytes(message)))
    except TransportError as refused:
        rules.append(refused.rule)
    assert rules in ([], ["malformed-frame"])
    for payload in payloads:  # whatever decodes is one JSON object with a type
        assert isinstance(msgspec.json.decode(payload)["type"], str)
    result = consume_body(proto_frame(RUN[0]) + frame_of(bytes(message)))
    assert result.outcome in ("completed", "failed")


# --------------------------------------------------------------------------- the two decoders

# The single-pass decoder must read every frame as the general decoder does, each run alone:
# the same event and warnings, or the same refusal.
SHARED = Path(__file__).resolve().parents[3] / "shared"  # ../shared beside the repository
STREAMS = SHARED / "agui" / "conformance" / "1.1" / "streams"


def reading_by(decoder: type[GeneralDecoder | FastDecoder], message: bytes) -> tuple[Any, ...]:
    """What one decoder makes of a frame: its event (as JSON with sorted keys, so 1 and 1.0
    differ) and its warnings, or the class and message of what it raised."""
    warnings: list[str] = []
    try:
        event = decoder(wire_tables(), warnings.append).event(message)
    except Exception as refused:
        return ("refused", type(refused), str(refused), warnings)
    return ("read", msgspec.json.encode(event, order="sorted"), warnings)


def assert_read_alike(message: bytes) -> None:
    assert reading_by(FastDecoder, message) == reading_by(GeneralDecoder, message), message.hex()


@settings(max_examples=40, deadline=None)
@given(events=valid_streams())
def test_the_decoders_read_generated_events_alike(events: list[dict[str, Any]]) -> None:
    for event in events:
        message = encode_proto(event)
        assert reading_by(GeneralDecoder, message)[0] == "read"
        assert_read_alike(message)


@pytest.mark.parametrize("message", CORPUS_FRAMES, ids=list(FRAMES))
def test_the_decoders_read_a_corpus_frame_and_its_one_byte_changes_alike(message: bytes) -> None:
    assert reading_by(GeneralDecoder, message)[0] == "read"
    assert_read_alike(message)
    if len(message) > 48:  # the time is quadratic in the length: these are mangled below
        return
    for position in range(len(message)):
        assert_read_alike(message[:position])
        for value in (0x00, 0x01, 0x08, 0x0A, 0x10, 0x12, 0x7F, 0x80, 0xFF, message[position] ^ 1):
            assert_read_alike(message[:position] + bytes([value]) + message[position + 1 :])


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(CORPUS_FRAMES),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
    cut=st.integers(0, 10_000),
    noise=st.binary(max_size=16),
)
def test_the_decoders_read_mangled_corpus_frames_alike(
    base: bytes, flips: list[tuple[int, int]], cut: int, noise: bytes
) -> None:
    message = bytearray(base)
    for position, value in flips:
        message[position % len(message)] = value
    assert_read_alike(bytes(message[: cut % (len(message) + 1)] + noise))


def conformance_streams() -> list[Any]:
    if not STREAMS.is_dir():
        reason = f"the conformance corpus is absent ({STREAMS})"
        return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=reason))]
    return [pytest.param(path, id=path.stem) for path in sorted(STREAMS.glob("*.json"))]


@pytest.mark.parametrize("path", conformance_streams())
def test_the_decoders_read_a_conformance_streams_events_alike(path: Path) -> None:
    for event in json.loads(path.read_text(encoding="utf-8"))["stream"]:
        try:
            message = encode_proto(event)
        except UsageError:
            continue  # an event the binary wire has no form for (an unknown type, say)
        assert_read_alike(message)


def test_a_part_that_warns_warns_once_when_the_frame_is_read_again() -> None:
    # MESSAGES_SNAPSHOT with a content part this build lacks, then a second base_event with
    # metadata: a singular message met twice, which the single pass hands on whole
    future_part = _field(8, _field(9, b""))
    message = _field(1, b"u") + _field(2, b"user") + future_part
    base = _field(1, b"\x08\x08" + _field(4, b""))
    frame = _field(9, base + _field(2, message) + base)
    warnings: list[str] = []
    assert decode_frame(frame, on_warning=warnings.append) is not None
    assert len(warnings) == 1
    assert_read_alike(frame)


# The reader's hot path (events of strings alone, in their usual spelling) must read every
# frame as the general decoder does: the same event, or the same refusal.
HOT_FRAMES = [
    proto_frame(event)[4:]
    for event in (
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "msg-1", "delta": " hi", "timestamp": 7},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "", "timestamp": 2**20},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": 'ü "q" \\ \n' * 40},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "t", "delta": "{", "timestamp": 2**55},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "r", "delta": "x", "timestamp": 1},
        {"type": "TEXT_MESSAGE_END", "messageId": "m", "subagentRunId": "s", "timestamp": 0},
        {"type": "TEXT_MESSAGE_END", "messageId": "", "timestamp": 2**30},
        {"type": "STEP_STARTED", "stepName": "plan", "timestamp": 1_700_000_000_000},
    )
]


def general_reading(message: bytes) -> list[dict[str, Any]] | str:
    """What the general decoder alone makes of one frame: its event (none if dropped), or the
    rule (``decode_frame`` and the reader take the single-pass decoder first)."""
    try:
        event = GeneralDecoder(wire_tables(), lambda _: None).event(message)
    except Malformed:
        return "malformed-frame"
    return [] if event is None else [event]


def reader_reading(message: bytes) -> list[dict[str, Any]] | str:
    """The same through the reader, the frame followed by bytes a frame must not read: the
    start of the next one."""
    try:
        body = frame_of(message) + b"\x80\x80\x00"
        return [msgspec.json.decode(p) for p in ProtobufReader().feed(body)]
    except TransportError as refused:
        return refused.rule


@pytest.mark.parametrize("message", HOT_FRAMES, ids=lambda m: str(len(m)))
def test_the_hot_path_reads_any_one_byte_change_as_the_general_decoder(message: bytes) -> None:
    assert reader_reading(message) == general_reading(message) != "malformed-frame"
    for position in range(len(message)):
        for value in (0x00, 0x01, 0x08, 0x0A, 0x10, 0x12, 0x7F, 0x80, 0xFF, message[position] ^ 1):
            mangled = message[:position] + bytes([value]) + message[position + 1 :]
            assert reader_reading(mangled) == general_reading(mangled), (position, value)
        assert reader_reading(message[:position]) == general_reading(message[:position])


@settings(max_examples=300, deadline=None)
@given(
    base=st.sampled_from(HOT_FRAMES),
    flips=st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=4),
    extra=st.binary(max_size=16),
)
def test_the_hot_path_reads_mangled_frames_as_the_general_decoder(
    base: bytes, flips: list[tuple[int, int]], extra: bytes
) -> None:
    message = bytearray(base)
    for position, value in flips:
        message[position % len(message)] = value
    message += extra
    assert reader_reading(bytes(message)) == general_reading(bytes(message))


def test_the_hot_path_does_not_read_a_base_event_past_its_frame() -> None:
    # TEXT_MESSAGE_END with its only string at the default (not written): the frame ends with
    # the timestamp; the base_event's length now claims the next frame's bytes for it.
    message = bytearray(
        encode_proto({"type": "TEXT_MESSAGE_END", "messageId": "", "timestamp": 2**30})
    )
    message[3] += 3  # the base_event's length
    message[-1] |= 0x80  # the timestamp's varint goes on
    assert reader_reading(bytes(message)) == general_reading(bytes(message)) == "malformed-frame"
