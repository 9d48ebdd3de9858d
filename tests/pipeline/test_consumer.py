"""The consumer: ``consume_body`` and ``Consumer.receive`` reading a response body, whole or
in chunks, through the reader its media type names or its first bytes look like; the shortcuts
(repeated deltas, batches) that change nothing a user can see; and the memory a consumer and a
whole body cost."""

from __future__ import annotations

import gc
import weakref
from itertools import pairwise
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from measure import MiB, peak_bytes
from payloads import in_run, wire_event
from strategies import valid_streams

import agui_msgspec as agui
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
from agui_msgspec._pipeline.lifecycle import Lifecycle, StreamState

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


# --- the consumer's shortcuts change nothing a user can see --------------------------------------
# What must not differ: the verdict, its rule, index and path, the warnings, the messages,
# the state and the events delivered.

Event = dict[str, Any]
START: Event = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH: Event = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def content(message_id: str, delta: str, **extra: Any) -> Event:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": delta, **extra}


# --- repeats -------------------------------------------------------------------------------------
# Most of a stream is TEXT_MESSAGE_CONTENT, TOOL_CALL_ARGS or REASONING_MESSAGE_CONTENT naming
# the same item as the event before. The verifier says such an event would pass unchanged and
# the reducer says where its delta goes, so the consumer skips both calls for it.


def outcome(events: list[Event]) -> tuple[Any, ...]:
    """What a user reads of a whole stream fed at once and fed event by event."""
    payloads = [msgspec.json.encode(event) for event in events]
    whole = consume(payloads)
    consumer = Consumer()
    delivered: list[Any] = []
    verdict: tuple[Any, ...] = ("completed",)
    try:
        for payload in payloads:
            delivered += consumer.feed(payload)
        consumer.close()
    except (ProtocolViolation, TransportError) as failure:
        verdict = (type(failure).__name__, failure.rule, failure.index)
    violation = whole.violation
    return (
        whole.outcome,
        None if violation is None else (violation.rule, violation.index, violation.path),
        whole.warnings,
        msgspec.to_builtins(whole.messages),
        msgspec.to_builtins(whole.events),
        verdict,
        consumer.warnings,
        msgspec.to_builtins(consumer.messages),
        msgspec.to_builtins(delivered),
    )


def every_stage_on_every_event(events: list[Event]) -> tuple[Any, ...]:
    """The same, with the verifier never reporting a repeatable delta: no event is skipped."""
    receive = Lifecycle.receive

    def receive_without_repeats(self: Lifecycle, event: Any, index: int) -> None:
        receive(self, event, index)

    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(Lifecycle, "receive", receive_without_repeats)
        return outcome(events)


def test_repeated_deltas_assemble_the_message() -> None:
    events = [
        START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        content("m", "Hel"),
        content("m", "lo"),
        content("m", "!", metadata={"k": 1}),
        content("m", "!"),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        FINISH,
    ]
    result = consume(msgspec.json.encode(event) for event in events)
    assert result.outcome == "completed"
    [message] = msgspec.to_builtins(result.messages)
    assert message["content"] == "Hello!!"
    assert message["metadata"] == {"k": 1}
    assert len(result.events) == len(events)
    assert outcome(events) == every_stage_on_every_event(events)


@pytest.mark.parametrize(
    ("second", "rule"),
    [
        (content("other", "x", subagentRunId="sa1"), "text-message-not-open"),
        (content("m", "x", subagentRunId="sa2"), "attribution-mismatch"),
    ],
    ids=["another-item", "another-owner"],
)
def test_a_delta_not_repeating_the_one_before_is_checked(second: Event, rule: str) -> None:
    events = [
        START,
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa1", "name": "helper"},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa2", "name": "helper"},
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "m",
            "role": "assistant",
            "subagentRunId": "sa1",
        },
        content("m", "a", subagentRunId="sa1"),
        content("m", "b", subagentRunId="sa1"),
        second,
    ]
    result = consume(msgspec.json.encode(event) for event in events)
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == (rule, 6)
    assert outcome(events) == every_stage_on_every_event(events)


@pytest.mark.parametrize("restated_owner", [None, "sa1"])
def test_a_snapshot_between_repeats_ends_the_shortcut(restated_owner: Any) -> None:
    """A snapshot restating the open message establishes its owner (events/state): the next
    delta is checked against that owner, not waved through as a repeat of the one before."""
    tagged = {} if restated_owner is None else {"subagentRunId": restated_owner}
    restated = {"id": "m", "role": "assistant", "content": "p", **tagged}
    events = [
        START,
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa1", "name": "helper"},
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "m",
            "role": "assistant",
            "subagentRunId": "sa1",
        },
        content("m", "a", subagentRunId="sa1"),
        content("m", "b", subagentRunId="sa1"),
        {"type": "MESSAGES_SNAPSHOT", "messages": [restated]},
        content("m", "c", subagentRunId="sa1"),
        content("m", "d", subagentRunId="sa1"),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "sa1"},
        FINISH,
    ]
    result = consume([msgspec.json.encode(event) for event in events])
    if restated_owner is None:
        assert result.violation is not None
        assert (result.violation.rule, result.violation.index) == ("attribution-mismatch", 6)
    else:
        assert result.outcome == "completed", result.violation
        assert msgspec.to_builtins(result.messages)[0]["content"] == "pcd"
    assert outcome(events) == every_stage_on_every_event(events)


@pytest.mark.parametrize("last_owner", [None, "sa1", "sa2"])
def test_repeated_arguments_of_a_call_inheriting_its_messages_owner(last_owner: Any) -> None:
    """An untagged call takes its message's owner: repeats tagged with it pass, another fails."""

    def args(delta: str, owner: Any) -> Event:
        tagged = {} if owner is None else {"subagentRunId": owner}
        return {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": delta, **tagged}

    events = [
        START,
        {
            "type": "TEXT_MESSAGE_START",
            "messageId": "m",
            "role": "assistant",
            "subagentRunId": "sa1",
        },
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", "parentMessageId": "m"},
        args("{", "sa1"),
        args('"a"', "sa1"),
        args(":1", None),
        args("}", last_owner),
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        FINISH,
    ]
    result = consume([msgspec.json.encode(event) for event in events])
    if last_owner == "sa2":
        assert result.violation is not None
        assert (result.violation.rule, result.violation.index) == ("attribution-mismatch", 6)
    else:
        assert result.outcome == "completed", result.violation
    assert outcome(events) == every_stage_on_every_event(events)


@pytest.mark.parametrize("peer", [None, "0.0.57"])
def test_an_era_shim_on_every_event_changes_nothing_else(peer: Any) -> None:
    """With a peer from before subagents every event is a document first; the repeats and
    batches still give what every stage on every event gives."""
    events = [
        START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *(content("m", str(n)) for n in range(5)),
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        FINISH,
    ]
    payloads = [msgspec.json.encode(event) for event in events]
    with_shim = consume(payloads, peer_version=peer)
    plain = consume(payloads)
    assert msgspec.to_builtins(with_shim.messages) == msgspec.to_builtins(plain.messages)
    assert msgspec.to_builtins(with_shim.events) == msgspec.to_builtins(plain.events)
    assert with_shim.warnings == plain.warnings == []


def test_a_repeat_across_feed_calls_is_still_checked() -> None:
    consumer = Consumer()
    for event in [START, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]:
        consumer.feed(msgspec.json.encode(event))
    consumer.feed(msgspec.json.encode(content("m", "a")))
    consumer.feed(msgspec.json.encode({"type": "TEXT_MESSAGE_END", "messageId": "m"}))
    with pytest.raises(Exception, match="text-message-not-open"):
        consumer.feed(msgspec.json.encode(content("m", "b")))


ITEM_IDS = st.sampled_from(["m1", "m2"])
OWNERS = st.sampled_from([{}, {"subagentRunId": "sa1"}, {"subagentRunId": "sa2"}])


# Continuations are mostly untagged, as producers send them (legal whoever opened the item).
TAGS = st.sampled_from([{}, {}, {}, {"subagentRunId": "sa1"}, {"subagentRunId": "sa2"}])


EXTRAS = st.sampled_from([{}, {}, {"metadata": {"k": 1}}, {"metadata": {"k": 2}}])


@st.composite
def inner_events(draw: st.DrawFn) -> Event:
    """Events that open, continue and close items, owned or not, with snapshots between:
    many legal, some not."""
    item = draw(ITEM_IDS)
    owner = draw(TAGS)
    return draw(
        st.sampled_from(
            [
                content(item, "t", **owner, **draw(EXTRAS)),
                content(item, "t", **owner, **draw(EXTRAS)),
                content(item, "t", **owner, **draw(EXTRAS)),
                content(item, "t", **owner, **draw(EXTRAS)),
                {"type": "TEXT_MESSAGE_START", "messageId": item, "role": "assistant", **owner},
                {"type": "TEXT_MESSAGE_END", "messageId": item, **owner},
                {"type": "TOOL_CALL_START", "toolCallId": item, "toolCallName": "f", **owner},
                {"type": "TOOL_CALL_ARGS", "toolCallId": item, "delta": "{", **owner},
                {"type": "TOOL_CALL_END", "toolCallId": item},
                {"type": "REASONING_MESSAGE_START", "messageId": "r" + item, "role": "reasoning"},
                {
                    "type": "REASONING_MESSAGE_CONTENT",
                    "messageId": "r" + item,
                    "delta": "r",
                    **owner,
                },
                {"type": "REASONING_MESSAGE_END", "messageId": "r" + item},
                {"type": "TEXT_MESSAGE_CHUNK", "messageId": item, "delta": "c"},
                {
                    "type": "MESSAGES_SNAPSHOT",
                    "messages": [{"id": item, "role": "user", "content": "u"}],
                },
                {  # re-owns the open message and tool call of that id (events/state)
                    "type": "MESSAGES_SNAPSHOT",
                    "messages": [
                        {
                            "id": item,
                            "role": "assistant",
                            "toolCalls": [
                                {
                                    "id": item,
                                    "type": "function",
                                    "function": {"name": "f", "arguments": "{"},
                                }
                            ],
                            **owner,
                        }
                    ],
                },
                {"type": "SUBAGENT_STARTED", "subagentRunId": "sa1", "name": "helper"},
                {"type": "SUBAGENT_FINISHED", "subagentRunId": "sa1"},
            ]
        )
    )


@st.composite
def openers(draw: st.DrawFn) -> list[Event]:
    """Subagents, then one text message, tool call and reasoning message per id, each owned
    by a subagent or by the run: the items the drawn deltas continue."""
    events = [
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa1", "name": "helper"},
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa2", "name": "helper"},
    ]
    for item in ("m1", "m2"):
        owner = draw(OWNERS)
        events += [
            {"type": "TEXT_MESSAGE_START", "messageId": item, "role": "assistant", **owner},
            {"type": "TOOL_CALL_START", "toolCallId": item, "toolCallName": "f", **owner},
            {"type": "REASONING_MESSAGE_START", "messageId": "r" + item, "role": "reasoning"},
        ]
    return events


@settings(deadline=None, max_examples=300)
@given(openers(), st.lists(inner_events(), max_size=14))
def test_skipping_repeated_deltas_changes_nothing_a_user_sees(
    opened: list[Event], inner: list[Event]
) -> None:
    events = [START, *opened, *inner, FINISH]
    assert outcome(events) == every_stage_on_every_event(events)


# --- batches -------------------------------------------------------------------------------------
# A list or tuple of payloads (what a reader makes of one chunk) goes to the strict decoder in
# one call; only if some payload needs more is the batch decoded one by one, as a generator of
# payloads always is.

BREAKERS: list[Event] = [
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x", "xVendor": 1},  # stripped
    {"type": "X_VENDOR_EVENT"},  # dropped
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nowhere", "delta": "x"},  # not open
    {"type": "STATE_DELTA", "delta": [{"op": "move", "path": "/a"}]},  # malformed
    {"type": "RUN_STARTED", "threadId": "t", "runId": "again"},  # nested run
]


def user_view(result: Any) -> tuple[Any, ...]:
    violation = result.violation
    return (
        result.outcome,
        None if violation is None else (violation.rule, violation.index, violation.path),
        result.warnings,
        [(run.status, run.run_id) for run in result.runs],
        msgspec.to_builtins(result.messages),
        result.state,
        msgspec.to_builtins(result.events),
    )


def fed_in_pieces(payloads: list[bytes], cuts: list[int]) -> tuple[Any, ...]:
    consumer = Consumer()
    delivered: list[Any] = []
    edges = [0, *sorted(cuts), len(payloads)]
    try:
        for start, end in pairwise(edges):
            delivered += consumer.feed_many(payloads[start:end])
        consumer.close()
    except (ProtocolViolation, TransportError) as violation:
        delivered += violation.delivered
    return user_view(consumer.result(delivered))


@settings(deadline=None, max_examples=120)
@given(st.data())
def test_batches_and_one_by_one_give_the_same_result(data: st.DataObject) -> None:
    events = data.draw(valid_streams(max_runs=2), label="stream")
    if data.draw(st.booleans(), label="break it"):
        position = data.draw(st.integers(0, len(events)), label="at")
        events.insert(position, data.draw(st.sampled_from(BREAKERS), label="breaker"))
    payloads = [msgspec.json.encode(event) for event in events]
    batched = user_view(consume(payloads))
    assert user_view(consume(iter(payloads))) == batched
    assert user_view(consume(tuple(payloads))) == batched
    cuts = data.draw(st.lists(st.integers(0, len(payloads)), max_size=4), label="cuts")
    assert fed_in_pieces(payloads, cuts) == batched


def test_a_batch_is_decoded_whole_only_when_every_payload_is_conformant() -> None:
    """The slow path's warnings come from the events before a violation, never after it."""
    events = [
        START,
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nowhere", "delta": "x"},
        {"type": "X_VENDOR_EVENT"},
    ]
    result = consume([msgspec.json.encode(event) for event in events])
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("text-message-not-open", 1)
    assert result.warnings == []
    assert len(result.events) == 1


def test_more_payloads_than_one_batch_are_all_consumed() -> None:
    deltas = [content("m", str(number % 10)) for number in range(5000)]
    events = [
        START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        *deltas,
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        FINISH,
    ]
    result = consume([msgspec.json.encode(event) for event in events])
    assert result.outcome == "completed"
    assert msgspec.to_builtins(result.messages)[0]["content"] == "0123456789" * 500
    assert len(result.events) == len(events)


def test_a_callback_raising_during_decoding_does_not_reuse_the_event_index() -> None:
    """An application's warning handler may raise; the consumer goes on numbering events."""
    raised: list[str] = []

    def on_warning(message: str) -> None:
        if not raised:
            raised.append(message)
            raise RuntimeError("the application's handler failed")

    consumer = Consumer(on_warning=on_warning)
    consumer.feed(msgspec.json.encode(START))
    with pytest.raises(RuntimeError):
        consumer.feed(msgspec.json.encode({"type": "STEP_STARTED", "stepName": "s", "x": 1}))
    with pytest.raises(ProtocolViolation) as rejected:
        consumer.feed(msgspec.json.encode({"type": "STEP_FINISHED", "stepName": "s", "x": 2}))
    assert rejected.value.index == 2
    # Both kept (the same kind on the same path in one run: one line with a count).
    assert consumer.warnings == ["event 1 /x: removed unrecognised property (2 times in this run)"]


class Body(bytes):
    """A bytes subclass, as some HTTP libraries hand out."""


def test_payload_types_get_the_same_verdict_in_a_batch_and_one_by_one() -> None:
    events = [START, FINISH]
    for kind in (Body, bytearray, memoryview, lambda data: Body(data).decode()):
        payloads = [kind(msgspec.json.encode(event)) for event in events]
        batched = user_view(consume(payloads))
        assert batched[0] == "completed", kind
        assert user_view(consume(iter(payloads))) == batched
        assert user_view(consume([*payloads, msgspec.json.encode({**FINISH, "x": 1})])) == (
            user_view(consume(iter([*payloads, msgspec.json.encode({**FINISH, "x": 1})])))
        )


def test_event_structs_are_payloads_too() -> None:
    events = [
        agui.RunStartedEvent(thread_id="t", run_id="r"),
        agui.RunFinishedEvent(thread_id="t", run_id="r"),
    ]
    result = agui.consume(events)
    assert result.outcome == "completed"
    assert result.events == events


# --- memory: a dropped consumer, a whole body framed in slices -----------------------------------


def test_a_dropped_consumer_is_freed_at_once_without_the_cyclic_collector() -> None:
    """Its messages and state go with it: a server dropping a consumer per stream must not
    hold each conversation until the collector's next full pass."""
    consumer = Consumer(on_warning=lambda message: None)
    for payload in in_run(
        wire_event(type="TEXT_MESSAGE_START", messageId="m", role="assistant", vendor=1),
        wire_event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="x" * 10_000),
        wire_event(type="TEXT_MESSAGE_END", messageId="m"),
        wire_event(type="STATE_DELTA", delta=[{"op": "add", "path": "/a", "value": [1]}]),
    ):
        consumer.feed(payload)
    consumer.close()
    assert consumer.warnings  # the stages warned through it
    dropped = weakref.ref(consumer)
    gc.disable()
    try:
        del consumer
        assert dropped() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("wire", ["sse", "protobuf"])
def test_a_consumer_fed_bytes_is_freed_at_once_too(wire: str) -> None:
    """Its reader, which warns through it, holds it only weakly."""
    step = [wire_event(type=kind, stepName="s") for kind in ("STEP_STARTED", "STEP_FINISHED")]
    events = [msgspec.json.decode(p) for p in in_run(*step)]
    if wire == "sse":
        body = b"".join(b"data: " + msgspec.json.encode(e) + b"\n\n" for e in events)
    else:
        body = b"".join(proto_frame(e) for e in events)
    consumer = Consumer()
    consumer.receive(body)
    dropped = weakref.ref(consumer)
    gc.disable()
    try:
        del consumer
        assert dropped() is None
    finally:
        gc.enable()


def test_a_whole_body_of_short_lines_is_framed_in_bounded_memory() -> None:
    line = b'{"type":"STEP_STARTED","stepName":"s"}\n{"type":"STEP_FINISHED","stepName":"s"}\n'
    start = b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
    end = b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'
    body = start + line * (8 * MiB // len(line)) + end
    result, peak = peak_bytes(lambda: consume_body(body, keep_events=False))
    assert result.violation is None
    # Split at once, the lines of 8 MB took ~100 MB; in 64 KiB slices, a slice's worth.
    assert peak < 4 * MiB


def received(consumer: Consumer, chunks: list[bytes]) -> list[msgspec.Struct]:
    """What ``receive`` then ``close`` deliver, and what a violation carries."""
    delivered: list[msgspec.Struct] = []
    try:
        for chunk in chunks:
            delivered += consumer.receive(chunk)
        delivered += consumer.close()
    except (ProtocolViolation, TransportError) as violation:
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


@pytest.mark.parametrize(
    "option",
    ["max_open_items", "max_closed_items", "max_state_size", "max_state_depth", "max_warnings"],
)
@pytest.mark.parametrize("wrong", [-1, "10", 1.5, True, None])
def test_a_bound_that_is_not_an_int_of_at_least_0_is_a_usage_error(
    option: str, wrong: object
) -> None:
    """Refused when made: else it would fail mid-stream, as a TypeError or a bogus rule."""
    with pytest.raises(UsageError, match=option):
        Consumer(**{option: wrong})  # type: ignore[call-overload]
    with pytest.raises(UsageError, match=option):
        agui.consume([], **{option: wrong})  # type: ignore[arg-type]
    Consumer(**{option: 0})  # type: ignore[call-overload]  # nothing of it allowed: a bound still


def test_max_warnings_is_checked_wherever_it_is_taken() -> None:
    with pytest.raises(UsageError, match="max_warnings"):
        agui.Decoder(max_warnings=-1)
    with pytest.raises(UsageError, match="max_warnings"):
        agui.parse_run_input(b"{}", max_warnings="many")  # type: ignore[call-overload]


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
