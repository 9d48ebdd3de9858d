"""The producer side: ``encode``, ``sse_frame`` and the strict writer.

The writer is the consumer's machine run before sending (one machine, both
sides), so most tests here state a verdict and check that the writer reaches it
on the event that breaks the rule, and before that event's frame exists.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from nesting import nested_lists

from agui_msgspec import v1_1
from agui_msgspec._errors import ProtocolViolation, TransportError
from agui_msgspec._pipeline.consumer import consume
from agui_msgspec._pipeline.warnings import MAX_WARNING_LENGTH
from agui_msgspec._serve.writer import REMOVALS_SHOWN, StrictWriter
from agui_msgspec._wire.protobuf import ProtobufReader, proto_frame
from agui_msgspec._wire.text import SSEReader, encode, sse_frame

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CONFORMANCE = (
    Path(__file__).resolve().parents[3] / "shared" / "agui" / "conformance" / "1.1" / "streams"
)

START = v1_1.RunStartedEvent(thread_id="t", run_id="r")
FINISH = v1_1.RunFinishedEvent(thread_id="t", run_id="r")


def events(*documents: dict[str, Any]) -> list[msgspec.Struct]:
    return [v1_1.event_decoder.decode(json.dumps(document)) for document in documents]


def send(stream: list[msgspec.Struct]) -> tuple[list[bytes], ProtocolViolation | None]:
    """A fresh writer over ``stream`` and ``close()``: the frames let out, and what it raised."""
    writer = StrictWriter()
    frames: list[bytes] = []
    try:
        for event in stream:
            frames.append(writer.frame(event))
        writer.close()
    except (ProtocolViolation, TransportError) as violation:
        return frames, violation
    return frames, None


def sse_payloads(body: bytes) -> list[bytes]:
    reader = SSEReader()
    return reader.feed(body) + reader.close()


# --- encode -----------------------------------------------------------------------------


def test_encode_leaves_out_absent_fields() -> None:
    event = v1_1.ToolCallStartEvent(tool_call_id="c1", tool_call_name="search")
    assert encode(event) == b'{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"search"}'


def test_encode_writes_a_set_optional_field_under_its_wire_name() -> None:
    event = v1_1.ToolCallStartEvent(
        tool_call_id="c1", tool_call_name="search", parent_message_id="m"
    )
    assert json.loads(encode(event))["parentMessageId"] == "m"


def test_encode_never_writes_null_for_an_absent_nested_field() -> None:
    usage = v1_1.TokenUsage(provider="p", input_tokens=3)
    event = v1_1.RunFinishedEvent(thread_id="t", run_id="r", usage=[usage])
    assert b"null" not in encode(event)
    assert json.loads(encode(event))["usage"] == [{"provider": "p", "inputTokens": 3}]


def test_encode_keeps_null_inside_open_objects() -> None:
    # basic/metadata: null values inside metadata and state are data, not absence.
    event = v1_1.StateSnapshotEvent(snapshot={"cursor": None}, metadata={"trace": None})
    assert json.loads(encode(event)) == {
        "type": "STATE_SNAPSHOT",
        "snapshot": {"cursor": None},
        "metadata": {"trace": None},
    }


ROUND_TRIP = [
    START,
    v1_1.RunStartedEvent(thread_id="t", run_id="r", protocol_version="1.1", parent_run_id="p"),
    v1_1.TextMessageStartEvent(message_id="m", role="user", name="ada"),
    v1_1.TextMessageContentEvent(message_id="m", delta="line one\nline two\r\n"),
    v1_1.TextMessageChunkEvent(message_id="m", delta=""),
    v1_1.ToolCallArgsEvent(tool_call_id="c", delta='{"q": "é"}'),
    v1_1.ToolCallResultEvent(message_id="m2", tool_call_id="c", content="42", role="tool"),
    v1_1.StateDeltaEvent(delta=[{"op": "add", "path": "/a", "value": None}]),
    v1_1.RunFinishedEvent(
        thread_id="t",
        run_id="r",
        outcome=v1_1.RunFinishedInterruptOutcome(
            interrupts=[v1_1.Interrupt(id="i", reason="approval", metadata={"k": [1, None]})]
        ),
        usage=[v1_1.TokenUsage(total_tokens=5)],
    ),
    v1_1.RunErrorEvent(message="boom", code="E1"),
    v1_1.CustomEvent(name="x", value=False),
]


@pytest.mark.parametrize("event", ROUND_TRIP, ids=lambda e: type(e).__name__)
def test_encode_then_decode_is_the_identity(event: msgspec.Struct) -> None:
    assert v1_1.event_decoder.decode(encode(event)) == event


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.sse")), ids=lambda p: p.name)
def test_decode_then_encode_gives_back_the_recorded_bytes(path: Path) -> None:
    for payload in sse_payloads(path.read_bytes()):
        assert encode(v1_1.event_decoder.decode(payload)) == payload


# --- sse_frame --------------------------------------------------------------------------


def test_sse_frame_is_one_data_line_and_a_blank_line() -> None:
    assert sse_frame(START) == b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'


def test_sse_frame_keeps_line_breaks_in_text_inside_one_event() -> None:
    event = v1_1.TextMessageContentEvent(message_id="m", delta="a\nb\rc\r\nd")
    frame = sse_frame(event)
    assert frame.count(b"\n") == 2
    assert sse_payloads(frame + frame) == [encode(event), encode(event)]


# --- the strict writer: legal streams ------------------------------------------------------


LEGAL = events(
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": "1.1"},
    {"type": "STEP_STARTED", "stepName": "plan"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
    {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "search"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Looking"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"},
    {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "TOOL_CALL_RESULT", "messageId": "m2", "toolCallId": "c1", "content": "found"},
    {"type": "STEP_FINISHED", "stepName": "plan"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"},
    {"type": "RUN_ERROR", "message": "quota"},
)


def test_writer_returns_each_frame_and_the_consumer_accepts_the_whole() -> None:
    frames, violation = send(LEGAL)
    assert violation is None
    assert frames == [sse_frame(event) for event in LEGAL]
    result = consume(sse_payloads(b"".join(frames)))
    assert result.violation is None
    assert result.events == LEGAL
    assert [run.status for run in result.runs] == ["completed", "failed"]


# --- the strict writer: illegal streams -------------------------------------------------


ILLEGAL: dict[str, tuple[list[msgspec.Struct], str]] = {
    "content before run": (events({"type": "TEXT_MESSAGE_START", "messageId": "m"}), "first-event"),
    "content for an unopened message": (
        [START, v1_1.TextMessageContentEvent(message_id="m", delta="x")],
        "text-message-not-open",
    ),
    "finish with a tool call open": (
        [START, v1_1.ToolCallStartEvent(tool_call_id="c", tool_call_name="f"), FINISH],
        "open-at-run-finished",
    ),
    "nested run": ([START, START], "nested-run"),
    "event after finish": (
        [START, FINISH, v1_1.StepStartedEvent(step_name="s")],
        "event-after-run-finished",
    ),
    "step finished twice": (
        [
            START,
            v1_1.StepStartedEvent(step_name="s"),
            v1_1.StepFinishedEvent(step_name="s"),
            v1_1.StepFinishedEvent(step_name="s"),
        ],
        "step-not-open",
    ),
    "null where the schema has none": (
        [START, v1_1.TextMessageStartEvent(message_id="m", name=None)],  # type: ignore[arg-type]
        "malformed-event",
    ),
    "a value of the wrong type": (
        [START, v1_1.TextMessageContentEvent(message_id="m", delta=7)],  # type: ignore[arg-type]
        "malformed-event",
    ),
}


@pytest.mark.parametrize(("stream", "rule"), ILLEGAL.values(), ids=ILLEGAL.keys())
def test_writer_raises_on_the_bad_event_before_its_frame_leaves(
    stream: list[msgspec.Struct], rule: str
) -> None:
    sent, violation = send(stream)
    assert violation is not None
    assert (violation.rule, violation.index) == (rule, len(stream) - 1)
    assert sent == [sse_frame(event) for event in stream[:-1]]
    verdict = consume([encode(event) for event in stream]).violation
    assert verdict is not None
    assert (verdict.rule, verdict.index) == (violation.rule, violation.index)


def _state_beyond_bounds() -> dict[str, tuple[list[msgspec.Struct], str, str]]:
    deep_path = "/" + "/".join(["a"] * 600)
    plan = v1_1.ActivitySnapshotEvent(message_id="p", activity_type="plan", content={})
    return {
        "a snapshot nested too deep": (
            [v1_1.StateSnapshotEvent(snapshot={"a": nested_lists(600)})],
            "too-deep",
            "/snapshot",
        ),
        "a snapshot too large": (
            [v1_1.StateSnapshotEvent(snapshot={"n": [0] * 2_200_000})],  # 4.4 MB of JSON
            "state-too-large",
            "/snapshot",
        ),
        "a pointer too deep": (
            [v1_1.StateDeltaEvent(delta=[{"op": "remove", "path": deep_path}])],
            "too-deep",
            "/delta/0",
        ),
        "a value that would nest too deep where it is added": (
            [
                v1_1.StateDeltaEvent(
                    delta=[
                        {"op": "test", "path": "", "value": {}},
                        {"op": "add", "path": "/a/b", "value": nested_lists(511)},
                    ]
                )
            ],
            "too-deep",
            "/delta/1",
        ),
        "activity content nested too deep": (
            [
                v1_1.ActivitySnapshotEvent(
                    message_id="p", activity_type="plan", content={"a": nested_lists(600)}
                )
            ],
            "too-deep",
            "/content",
        ),
        "an activity patch too deep": (
            [
                plan,
                v1_1.ActivityDeltaEvent(
                    message_id="p",
                    activity_type="plan",
                    patch=[{"op": "remove", "path": deep_path}],
                ),
            ],
            "too-deep",
            "/patch/0",
        ),
    }


@pytest.mark.parametrize("case", _state_beyond_bounds().keys())
def test_writer_refuses_state_a_consumer_refuses_by_its_default_bounds(case: str) -> None:
    events, rule, path = _state_beyond_bounds()[case]
    stream = [START, *events]
    _, violation = send(stream)
    assert violation is not None
    assert (violation.rule, violation.index, violation.path) == (rule, len(events), path)
    verdict = consume([encode(event) for event in stream]).violation
    assert verdict is not None
    assert (verdict.rule, verdict.index, verdict.path) == (rule, len(events), path)


def test_writer_passes_deep_state_within_the_bounds() -> None:
    within = [
        START,
        v1_1.StateSnapshotEvent(snapshot={"a": nested_lists(300)}),
        v1_1.StateDeltaEvent(delta=[{"op": "add", "path": "/b/c", "value": nested_lists(300)}]),
        FINISH,
    ]
    frames, violation = send(within)
    assert violation is None
    assert consume(sse_payloads(b"".join(frames))).violation is None


def test_malformed_event_names_the_field() -> None:
    _, violation = send(ILLEGAL["null where the schema has none"][0])
    assert violation is not None
    assert violation.path == "/name"


def test_writer_refuses_a_field_its_version_would_strip() -> None:
    # encryptedValueType is new in 1.1: a 1.0 consumer would strip it with a warning.
    event = v1_1.ReasoningEncryptedValueEvent(
        subtype="message", entity_id="m", encrypted_value="e", encrypted_value_type="kms"
    )
    assert send([START, event, FINISH])[1] is None  # a 1.1 writer knows the field
    writer = StrictWriter("1.0")
    writer.frame(START)
    with pytest.raises(ProtocolViolation) as raised:
        writer.frame(event)
    assert raised.value.rule == "unrecognised-content"
    assert "/encryptedValueType" in raised.value.detail


OVERSIZED_AND_WRONG = {
    "unrecognised property": {"messageId": "m", "delta": "x" * 300, "vendor": 1},
    "malformed": {"messageId": 5, "delta": "x" * 300},
}


@pytest.mark.parametrize("fields", OVERSIZED_AND_WRONG.values(), ids=OVERSIZED_AND_WRONG.keys())
def test_an_oversized_event_is_too_large_before_anything_inside_it_is_judged(
    fields: dict[str, Any],
) -> None:
    event = {"type": "TEXT_MESSAGE_CONTENT", **fields}
    writer = StrictWriter(max_event_size=200)
    writer.frame(START)
    writer.frame(v1_1.TextMessageStartEvent(message_id="m"))
    with pytest.raises(TransportError) as raised:
        writer.frame(event)
    assert (raised.value.rule, raised.value.index) == ("event-too-large", 2)
    with pytest.raises(TransportError) as received:  # what a consumer with that bound says
        SSEReader(max_event_size=200).feed(b"data: " + json.dumps(event).encode() + b"\n\n")
    assert received.value.rule == "event-too-large"


def test_a_protobuf_writer_bounds_the_json_a_frame_decodes_into_as_the_reader_does() -> None:
    """A control character is one byte of a frame and six of JSON: the reader refuses a
    small frame that decodes into more than max_event_size of JSON, so the writer does."""
    event = v1_1.TextMessageContentEvent(message_id="m", delta="\x01" * 200)
    frame = proto_frame(event, v1_1)
    assert len(frame) < 600 < len(encode(event))
    with pytest.raises(TransportError) as received:
        ProtobufReader(max_event_size=600).feed(frame)
    assert received.value.rule == "event-too-large"
    writer = StrictWriter(framing="protobuf", max_event_size=600)
    writer.frame(START)
    writer.frame(v1_1.TextMessageStartEvent(message_id="m"))
    with pytest.raises(TransportError) as raised:
        writer.frame(event)
    assert (raised.value.rule, raised.value.index) == ("event-too-large", 2)


def test_unrecognised_content_quotes_a_few_removals_cut_and_counts_the_rest() -> None:
    huge_name = "v" * 100_000
    event = {"type": "STEP_STARTED", "stepName": "s", huge_name: 0}
    event.update({f"vendor{number}": number for number in range(1000)})
    writer = StrictWriter()
    writer.frame(START)
    with pytest.raises(ProtocolViolation) as raised:
        writer.frame(event)
    refusal = raised.value
    assert (refusal.rule, refusal.path) == ("unrecognised-content", "/" + huge_name)
    assert len(refusal.detail) < (REMOVALS_SHOWN + 1) * MAX_WARNING_LENGTH
    assert "/vendor8:" in refusal.detail
    assert "/vendor9:" not in refusal.detail
    assert refusal.detail.endswith(f"; and {1001 - REMOVALS_SHOWN} more")


def test_unrecognised_content_points_at_the_removed_property() -> None:
    writer = StrictWriter()
    writer.frame(START)
    with pytest.raises(ProtocolViolation) as raised:
        writer.frame({"type": "STEP_STARTED", "stepName": "s", "a/b": 1})
    assert (raised.value.rule, raised.value.path) == ("unrecognised-content", "/a~1b")


@pytest.mark.parametrize("as_struct", [True, False], ids=["struct", "dict"])
def test_an_event_too_deep_to_encode_is_too_deep_not_a_recursion_error(as_struct: bool) -> None:
    snapshot = nested_lists(100_000)
    event = (
        v1_1.StateSnapshotEvent(snapshot=snapshot)
        if as_struct
        else {"type": "STATE_SNAPSHOT", "snapshot": snapshot}
    )
    writer = StrictWriter()
    writer.frame(START)
    with pytest.raises(ProtocolViolation) as raised:
        writer.frame(event)
    assert (raised.value.rule, raised.value.index) == ("too-deep", 1)
    assert writer.stream_state == "active"  # a RUN_ERROR may still end the stream


# Each value as a Struct and as a dict: msgspec does not check a Struct's values when it is made.
UNENCODABLE = {
    "lone surrogate": (
        v1_1.TextMessageContentEvent(message_id="m", delta="a\ud800"),
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "a\ud800"},
    ),
    "tuple key": (
        v1_1.StateSnapshotEvent(snapshot={(1, 2): 1}),
        {"type": "STATE_SNAPSHOT", "snapshot": {(1, 2): 1}},
    ),
    "object": (
        v1_1.StateSnapshotEvent(snapshot={"a": object()}),
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": object()}},
    ),
    # msgspec writes NaN and the infinities as null: a value changed, not refused
    "NaN": (
        v1_1.StateSnapshotEvent(snapshot={"a": [None, float("nan")]}),
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": [None, float("nan")]}},
    ),
    "infinity": (
        v1_1.StateSnapshotEvent(snapshot={"a": float("-inf")}),
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": float("-inf")}},
    ),
}


@pytest.mark.parametrize("given", UNENCODABLE.values(), ids=UNENCODABLE.keys())
@pytest.mark.parametrize("as_struct", [True, False], ids=["struct", "dict"])
def test_a_value_json_cannot_hold_is_invalid_json_as_a_struct_as_a_dict(
    given: tuple[msgspec.Struct, dict[str, Any]], as_struct: bool
) -> None:
    writer = StrictWriter()
    writer.frame(START)
    writer.frame(v1_1.TextMessageStartEvent(message_id="m"))
    with pytest.raises(ProtocolViolation) as raised:  # not msgspec's TypeError, say
        writer.frame(given[0] if as_struct else given[1])
    assert (raised.value.rule, raised.value.index) == ("invalid-json", 2)


def test_a_protobuf_writer_refuses_what_the_wire_cannot_carry_before_the_state_moves() -> None:
    """A RUN_ERROR whose rawEvent nests past the protobuf reader's bound would leave a frame
    no reader accepts; refused as malformed-frame, it leaves the run active, so another
    RUN_ERROR can still end the stream."""
    writer = StrictWriter(framing="protobuf")
    writer.frame(START)
    with pytest.raises(TransportError) as raised:
        writer.frame({"type": "RUN_ERROR", "message": "m", "rawEvent": nested_lists(300)})
    assert (raised.value.rule, raised.value.index) == ("malformed-frame", 1)
    assert writer.stream_state == "active"


def test_a_writer_that_raised_refuses_everything_after() -> None:
    writer = StrictWriter()
    writer.frame(START)
    with pytest.raises(ProtocolViolation) as first:
        writer.frame(v1_1.TextMessageEndEvent(message_id="m"))
    with pytest.raises(ProtocolViolation) as again:
        writer.frame(FINISH)
    assert again.value is first.value


@pytest.mark.parametrize(
    "stream",
    [[START], [START, v1_1.StepStartedEvent(step_name="s")], []],
    ids=["run", "step", "none"],
)
def test_close_without_a_terminal_event_is_truncated(stream: list[msgspec.Struct]) -> None:
    frames, violation = send(stream)
    assert violation is not None
    assert (violation.rule, violation.index) == ("truncated", None)
    assert len(frames) == len(stream)


@pytest.mark.parametrize(
    "terminal", [FINISH, v1_1.RunErrorEvent(message="x")], ids=["finished", "error"]
)
def test_close_after_a_terminal_event_passes(terminal: msgspec.Struct) -> None:
    assert send([START, terminal])[1] is None


# --- the strict writer: chunks judged as their triads -----------------------------------


def test_chunks_pass_and_leave_as_chunks() -> None:
    stream = events(
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "Hel"},
        {"type": "TEXT_MESSAGE_CHUNK", "delta": "lo"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "toolCallName": "f", "delta": "{}"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    )
    assert send(stream) == ([sse_frame(event) for event in stream], None)


CHUNK_ILLEGAL: dict[str, tuple[list[dict[str, Any]], str]] = {
    # The first chunk of an item must carry its id.
    "id-less first chunk": (
        [{"type": "TEXT_MESSAGE_CHUNK", "delta": "x"}],
        "chunk-missing-first-field",
    ),
    # A chunk opens its message with a synthesized TEXT_MESSAGE_START: already open.
    "chunk for an explicitly open message": (
        [
            {"type": "TEXT_MESSAGE_START", "messageId": "m"},
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x"},
        ],
        "text-message-already-open",
    ),
    # An explicit event in the lane ends the chunk stream (synthesized END) first.
    "explicit content after a chunk": (
        [
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "y"},
        ],
        "text-message-not-open",
    ),
    "chunk repeating another role": (
        [
            {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x"},
            {"type": "TEXT_MESSAGE_CHUNK", "role": "user", "delta": "y"},
        ],
        "chunk-conflicting-repeat",
    ),
    "tool chunk without a name": (
        [{"type": "TOOL_CALL_CHUNK", "toolCallId": "c", "delta": "{}"}],
        "chunk-missing-first-field",
    ),
}


@pytest.mark.parametrize(("body", "rule"), CHUNK_ILLEGAL.values(), ids=CHUNK_ILLEGAL.keys())
def test_chunks_are_judged_as_their_triads(body: list[dict[str, Any]], rule: str) -> None:
    stream = [START, *events(*body)]
    _, violation = send(stream)
    assert violation is not None
    assert (violation.rule, violation.index) == (rule, len(stream) - 1)


def test_run_finished_closes_an_open_chunk_stream() -> None:
    chunk = v1_1.TextMessageChunkEvent(message_id="m", delta="x")
    assert send([START, chunk, FINISH])[1] is None


# --- one machine: the upstream conformance streams --------------------------------------


def strictly_typed_streams() -> list[Any]:
    """Conformance streams built only of events the bindings decode strictly."""
    if not CONFORMANCE.is_dir():
        return []
    cases = []
    for path in sorted(CONFORMANCE.glob("*.json")):
        stream = json.loads(path.read_text(encoding="utf-8"))["stream"]
        try:
            typed = [v1_1.event_decoder.decode(json.dumps(event)) for event in stream]
        except msgspec.ValidationError:
            continue  # unknown or malformed material: the consumer strips, the writer refuses
        cases.append(pytest.param(typed, id=path.stem))
    return cases


@pytest.mark.parametrize("stream", strictly_typed_streams())
def test_writer_matches_the_consumer_on_conformance_streams(stream: list[msgspec.Struct]) -> None:
    consumed = consume([encode(event) for event in stream])
    _, violation = send(stream)
    if violation is not None and violation.rule == "unrecognised-content":
        # Stricter than the consumer by design: it refuses what the consumer strips.
        assert any(w.startswith(f"event {violation.index} ") for w in consumed.warnings)
        return
    verdict = consumed.violation
    assert (violation and (violation.rule, violation.index)) == (
        verdict and (verdict.rule, verdict.index)
    )


def test_conformance_streams_are_there_to_compare() -> None:
    if not CONFORMANCE.is_dir():
        pytest.skip(f"no conformance streams at {CONFORMANCE} (needs ../shared/agui)")
    assert len(strictly_typed_streams()) >= 20
