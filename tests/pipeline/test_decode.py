"""The tolerant decode on its own: the consumer-side enforcement (spec: basic/processing,
basic/versioning), without the run lifecycle, the reducer or chunk expansion.

What a version does not recognise is stripped or dropped with a warning naming its JSON
Pointer; a retired shape is translated; a malformed known value raises MalformedEvent
with its rule, path and the event index given. ``Consumer`` decodes through the same
``Decoder``: the agreement tests below feed both the conformance streams and fuzzed ones.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import valid_streams

from agui_msgspec import (
    Consumer,
    LifecycleViolation,
    MalformedEvent,
    ProtocolViolation,
    UsageError,
    parse_run_input,
    v1_0,
    v1_1,
)
from agui_msgspec._pipeline.decode import Decoder, decode, decode_message
from agui_msgspec._pipeline.expand import Expander

Wire = dict[str, Any]

CONTENT: Wire = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"}
RUN_START: Wire = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
STREAMS = Path(__file__).resolve().parents[2] / ".." / "shared" / "agui" / "conformance" / "1.1"


def encode(event: Wire) -> bytes:
    return msgspec.json.encode(event)


def decoded(payload: Any, version: str = "1.1", **options: Any) -> tuple[Any, list[str]]:
    warnings: list[str] = []
    event = Decoder(version, warnings.append, **options).decode(payload)
    return event, warnings


# --- the rules ---------------------------------------------------------------------------


def test_a_lone_delta_decodes_without_a_lifecycle() -> None:
    event, warnings = decoded(encode(CONTENT))
    assert event == v1_1.TextMessageContentEvent(message_id="m1", delta="hi")
    assert warnings == []


def test_a_chunk_comes_back_as_the_typed_chunk_event() -> None:
    event, _ = decoded(encode({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "a"}))
    assert type(event) is v1_1.TextMessageChunkEvent


def test_an_unknown_property_is_stripped_with_its_path() -> None:
    event, warnings = decoded(encode({**CONTENT, "traceId": "t"}))
    assert event == v1_1.TextMessageContentEvent(message_id="m1", delta="hi")
    assert warnings == ["event 0 /traceId: removed unrecognised property"]


def test_an_unknown_nested_union_member_is_stripped_with_its_path() -> None:
    snapshot = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"id": "a", "role": "oracle", "content": "?"},
            {"id": "b", "role": "user", "content": "x"},
        ],
    }
    event, warnings = decoded(encode(snapshot))
    assert [message.id for message in event.messages] == ["b"]
    assert warnings == ["event 0 /messages/0: removed unrecognised role 'oracle'"]


def test_an_unknown_event_type_is_dropped() -> None:
    event, warnings = decoded(encode({"type": "HEARTBEAT"}))
    assert event is None
    assert warnings == ["event 0: dropped event of unrecognised type 'HEARTBEAT'"]


def test_an_unknown_closed_set_value_is_stripped() -> None:
    start = {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "oracle"}
    event, warnings = decoded(encode(start))
    assert event == v1_1.TextMessageStartEvent(message_id="m1")  # the role's default
    assert warnings == ["event 0 /role: removed unrecognised value 'oracle'"]
    with pytest.raises(MalformedEvent):  # not a string: malformed, not unrecognised
        decoded(encode({**start, "role": 7}))


def test_an_unknown_outcome_is_absent() -> None:
    finished = {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "paused"},
    }
    event, warnings = decoded(encode(finished))
    assert event.outcome is msgspec.UNSET
    assert warnings == ["event 0 /outcome: removed unrecognised type 'paused'"]


def test_a_retired_shape_is_translated() -> None:
    event, warnings = decoded(encode({"type": "THINKING_START"}))
    assert type(event) is v1_1.ReasoningStartEvent
    assert warnings == ["event 0: translated retired THINKING_START to REASONING_START"]


def test_a_peer_from_before_subagents_has_its_subagent_events_dropped() -> None:
    subagent = {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n"}
    event, warnings = decoded(encode(subagent), peer_version="0.0.57")
    assert event is None
    assert "from before subagents" in warnings[0]
    assert decoded(encode(subagent))[0] is not None


def test_a_malformed_value_raises_with_rule_path_and_the_index_given() -> None:
    decoder = Decoder()
    with pytest.raises(MalformedEvent) as raised:
        decoder.decode(encode({**CONTENT, "delta": 7}), 41)
    assert (raised.value.rule, raised.value.path, raised.value.index) == (
        "malformed-event",
        "/delta",
        41,
    )
    assert decoder.event_index == 42


def test_the_decoder_counts_the_payloads_it_decodes() -> None:
    decoder = Decoder()
    decoder.decode_many([encode(CONTENT), encode({"type": "HEARTBEAT"})])
    with pytest.raises(MalformedEvent) as raised:
        decoder.decode(b"{")
    assert raised.value.index == 2


def test_decode_many_leaves_dropped_events_out() -> None:
    payloads = [encode(CONTENT), encode({"type": "HEARTBEAT"}), encode(CONTENT).decode()]
    assert Decoder().decode_many(payloads) == [decode(encode(CONTENT))] * 2
    assert Decoder().decode_many(iter(payloads)) == [decode(encode(CONTENT))] * 2


def test_every_payload_form_decodes_alike() -> None:
    expected = decode(encode(CONTENT))
    assert decode(CONTENT) == decode(encode(CONTENT).decode()) == expected
    assert decode(expected) is expected  # a Struct of the version is trusted as it is
    assert decode(v1_0.TextMessageContentEvent(message_id="m1", delta="hi")) == expected


class _Text(str):
    """JSON text as an application's own ``str`` subclass (msgspec refuses such a str)."""


class _Bytes(bytes):
    pass


def test_text_of_a_str_or_bytes_subclass_decodes_as_its_text() -> None:
    expected = decode(encode(CONTENT))
    text, data = _Text(encode(CONTENT).decode()), _Bytes(encode(CONTENT))
    assert decode(text) == decode(data) == expected
    assert Decoder().decode_many([text, data, text]) == [expected] * 3
    assert Decoder().decode_many(iter([text])) == [expected]
    started = encode(RUN_START).decode()
    assert Consumer().feed_many([_Text(started)]) == [decode(RUN_START)]
    message = decode_message(_Text('{"role": "user", "id": "u", "content": "hi"}'))
    assert message == v1_1.UserMessage(id="u", content="hi")
    body = _Text('{"threadId": "t", "runId": "r", "messages": []}')
    assert parse_run_input(body).thread_id == "t"


def test_the_version_picks_the_bindings() -> None:
    event = decode(encode(CONTENT), "1.0")
    assert type(event) is v1_0.TextMessageContentEvent


def test_middleware_sees_each_document_first() -> None:
    def rename(document: Wire, index: int) -> Wire:
        return {**document, "delta": f"{index}:{document['delta']}"}

    event = Decoder(middleware=[rename]).decode(encode(CONTENT), 3)
    assert event is not None
    assert event.delta == "3:hi"


def test_warnings_are_kept_bounded() -> None:
    decoder = Decoder(max_warnings=1)
    decoder.decode_many([encode({"type": "HEARTBEAT"}), encode({"type": "PING"})])
    assert decoder.warnings == [
        "event 0: dropped event of unrecognised type 'HEARTBEAT'",
        "1 more warnings not kept (max_warnings=1)",
    ]


def state_delta(*operations: Wire) -> bytes:
    return encode({"type": "STATE_DELTA", "delta": list(operations)})


def test_a_batch_with_a_malformed_pointer_raises_at_its_event() -> None:
    good = state_delta({"op": "move", "from": "/a~1b/~0", "path": "/c"})
    decoder = Decoder()
    assert len(decoder.decode_many([good] * 3)) == 3  # its pointers now known to match
    with pytest.raises(MalformedEvent) as raised:
        decoder.decode_many([good, state_delta({"op": "add", "path": "/a~2", "value": 1}), good])
    assert (raised.value.rule, raised.value.index, raised.value.path) == (
        "malformed-event",
        4,
        "/delta/0/path",
    )


@pytest.mark.parametrize(
    ("operation", "path"),
    [
        pytest.param({"op": "move", "from": "a", "path": "/b"}, "/delta/0/from", id="from"),
        pytest.param({"op": "remove", "path": "b"}, "/delta/0/path", id="path"),
    ],
)
def test_each_pointer_of_a_batch_is_matched(operation: Wire, path: str) -> None:
    batch = [state_delta({"op": "replace", "path": "/a", "value": 1})] * 2
    with pytest.raises(MalformedEvent) as raised:
        Decoder().decode_many([*batch, state_delta(operation)])
    assert (raised.value.index, raised.value.path) == (2, path)


def mixed_batch(deltas: int, bad_at: int | None) -> list[bytes]:
    """Text, a run's start and ``deltas`` state deltas spread through it; the delta
    ``bad_at`` (if any) has a malformed pointer."""
    payloads = [encode({**CONTENT, "delta": str(n)}) for n in range(40)]
    payloads.insert(5, encode(RUN_START))
    for n in range(deltas):
        path = "/a~2" if n == bad_at else f"/k{n}"
        payloads.insert(1 + n * 2, state_delta({"op": "add", "path": path, "value": n}))
    return payloads


@pytest.mark.parametrize(
    ("deltas", "bad_at"),
    [
        pytest.param(3, None, id="a few deltas"),
        pytest.param(3, 2, id="a few, the last malformed"),
        pytest.param(20, None, id="mostly deltas"),
        pytest.param(20, 19, id="mostly deltas, the last malformed"),
    ],
)
def test_a_batch_decodes_as_its_payloads_do_one_by_one(deltas: int, bad_at: int | None) -> None:
    # the batch's decoder refuses a run's start and every delta: each is taken alone, and
    # past 16 of them the batch takes the full decoder
    payloads = mixed_batch(deltas, bad_at)
    expected = outcome_of(lambda: one_by_one(payloads)[::2])
    decoder = Decoder()
    assert outcome_of(lambda: (decoder.decode_many(payloads), decoder.warnings)) == expected
    assert decoder.slow_path_count == (0 if bad_at is None else 1)


def test_batches_dense_and_sparse_in_turn_decode_as_one_by_one() -> None:
    # a batch of mostly deltas sends the next to the full decoder; a sparse one sends the
    # next back to the plain decoder
    batches = [mixed_batch(20, None), mixed_batch(3, None), mixed_batch(20, 7), mixed_batch(2, 1)]
    decoder = Decoder()
    for batch in batches:
        try:
            expected: Any = one_by_one(batch)[0]
        except MalformedEvent as refused:
            expected = (refused.index, refused.path)
        start = decoder.event_index
        try:
            got: Any = decoder.decode_many(batch)
        except MalformedEvent as refused:
            got = ((refused.index or 0) - start, refused.path)
        assert got == expected
        decoder = Decoder() if isinstance(got, tuple) else decoder


def test_a_member_an_operation_does_not_have_is_ignored_in_a_batch() -> None:
    # RFC 6902 section 4: members an operation does not define are ignored, whatever they hold
    odd = {"op": "add", "path": "/a", "value": 1, "from": "not a pointer"}
    events = Decoder().decode_many([state_delta(odd), state_delta({**odd, "from": [1]})])
    assert [event.delta[0]["from"] for event in events] == ["not a pointer", [1]]


def test_the_pointers_a_decoder_remembers_are_bounded() -> None:
    decoder = Decoder()
    for batch in range(40):  # 400,000 characters of distinct pointers, each matched once
        pointers = [f"/{batch}/{n}/" + "x" * 1000 for n in range(10)]
        decoder.decode_many([state_delta({"op": "remove", "path": p}) for p in pointers])
    remembered = decoder._enforcer._matched.values()
    assert 0 < sum(len(pointer or "") for known in remembered for pointer in known) <= 64 * 1024


def test_a_batch_of_dicts_decodes_as_its_text_does() -> None:
    documents = [CONTENT, {**CONTENT, "timestamp": 1.0}, {**CONTENT, "rawEvent": {"a": None}}]
    assert Decoder().decode_many(documents) == Decoder().decode_many(list(map(encode, documents)))


AHEAD = "xAhead"  # a property a producer one version ahead sends on every event


def ahead(document: Wire) -> Wire:
    return {**document, AHEAD: 1}


def outcome_of(decode: Callable[[], tuple[Any, ...]]) -> tuple[Any, ...]:
    """What ``decode`` returns, or the rule, index and path of the MalformedEvent it raises."""
    try:
        return decode()
    except MalformedEvent as refused:
        return (refused.rule, refused.index, refused.path)


def one_by_one(payloads: list[Any], **options: Any) -> tuple[list[Any], list[str], list[str]]:
    """Each payload through ``Decoder.decode``: the events, what the callback heard, what was kept."""
    told: list[str] = []
    decoder = Decoder(on_warning=told.append, **options)
    events = [decoder.decode(payload) for payload in payloads]
    return [event for event in events if event is not None], told, decoder.warnings


@pytest.mark.parametrize("max_warnings", [1000, 1])
def test_a_batch_of_a_producer_one_version_ahead_decodes_as_each_payload_does(
    max_warnings: int,
) -> None:
    stream = [{**CONTENT, "delta": str(n)} for n in range(50)]
    # a dropped event first: with max_warnings=1 its warning is the one kept
    payloads = [encode({"type": "HEARTBEAT"})] + [encode(ahead(document)) for document in stream]
    events, told, kept = one_by_one(payloads, max_warnings=max_warnings)
    decoder = Decoder(max_warnings=max_warnings)
    batched = decoder.decode_many(payloads[:2]) + decoder.decode_many(payloads[2:])
    assert decoder.slow_path_count == len(payloads)
    assert batched == events == [decode(encode(document)) for document in stream]
    assert decoder.warnings == kept
    assert kept[-1] == (
        "event 1 /xAhead: removed unrecognised property (50 times in this run)"
        if max_warnings > 1
        else "50 more warnings not kept (max_warnings=1)"
    )
    heard: list[str] = []
    decoder = Decoder(on_warning=heard.append, max_warnings=max_warnings)
    assert decoder.decode_many(payloads[:2]) + decoder.decode_many(payloads[2:]) == events
    assert heard == told  # a callback hears each warning, in each payload's own order
    assert len(told) == 51


def test_a_callback_hears_the_properties_in_each_payloads_own_order() -> None:
    first, second = {**CONTENT, "xA": 1, "xB": 2}, {**CONTENT, "xB": 2, "xA": 1}
    payloads = [encode(first)] + [encode(second), encode(first)] * 3
    heard: list[str] = []
    decoder = Decoder(on_warning=heard.append)
    decoder.decode_many(payloads[:1])
    decoder.decode_many(payloads[1:])
    assert heard == one_by_one(payloads)[1]
    assert heard[2:4] == [
        "event 1 /xB: removed unrecognised property",
        "event 1 /xA: removed unrecognised property",
    ]


@pytest.mark.parametrize(
    "odd_one",
    [
        pytest.param(CONTENT, id="one without the property"),
        pytest.param({**ahead(CONTENT), "xOther": 2}, id="one with another as well"),
        pytest.param(ahead({"type": "HEARTBEAT"}), id="an unknown event type"),
        pytest.param({**ahead(CONTENT), "delta": 7}, id="a malformed value"),
        pytest.param(
            {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", AHEAD: 1},
            id="a kind that knows no more",
        ),
    ],
)
def test_a_batch_that_differs_anywhere_is_decoded_one_by_one(odd_one: Wire) -> None:
    payloads = [encode(ahead(CONTENT))] * 3 + [encode(odd_one)] + [encode(ahead(CONTENT))] * 3
    expected = outcome_of(lambda: one_by_one(payloads)[::2])
    decoder = Decoder()
    batched = outcome_of(
        lambda: (
            decoder.decode_many(payloads[:2]) + decoder.decode_many(payloads[2:]),
            decoder.warnings,
        )
    )
    assert batched == expected


def ahead_from_the_start(events: int) -> list[bytes]:
    """A stream of a producer one version ahead: the property on every event, its start too."""
    stream = [RUN_START] + [{**CONTENT, "delta": str(n)} for n in range(events)]
    return [encode(ahead(document)) for document in stream]


def test_a_batch_one_version_ahead_from_its_first_payload_on_is_taken_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    payloads = ahead_from_the_start(30)
    events, _, kept = one_by_one(payloads)
    decoder = Decoder()
    alone: list[Any] = []
    decode_one = decoder.decode
    monkeypatch.setattr(decoder, "decode", lambda *args: alone.append(args) or decode_one(*args))
    assert decoder.decode_many(payloads) == events
    assert decoder.warnings == kept
    assert len(alone) == 1  # the run's start alone; the 30 after it in one batch


@pytest.mark.parametrize(
    "first",
    [
        pytest.param(encode(ahead({"type": "HEARTBEAT"})), id="dropped"),
        pytest.param(encode(CONTENT), id="conformant"),
        pytest.param(encode({**ahead(CONTENT), "xOther": 2}), id="another property as well"),
    ],
)
def test_a_first_payload_alone_that_tells_nothing_leaves_the_rest_one_by_one(first: bytes) -> None:
    payloads = [first, *ahead_from_the_start(5)[1:], encode({**CONTENT, "xOther": 1})]
    events, _, kept = one_by_one(payloads)
    decoder = Decoder()
    assert decoder.decode_many(payloads) == events
    assert decoder.warnings == kept


def test_a_consumer_takes_a_stream_one_version_ahead_as_it_takes_it_one_by_one() -> None:
    start = {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}
    end = {"type": "TEXT_MESSAGE_END", "messageId": "m1"}
    finish = {**RUN_START, "type": "RUN_FINISHED"}
    first, *contents = ahead_from_the_start(40)
    payloads = [first, encode(ahead(start)), *contents, *(encode(ahead(e)) for e in (end, finish))]
    by_one = Consumer()
    one_events = [event for payload in payloads for event in by_one.feed(payload)]
    one_events += by_one.close()
    batched = Consumer()
    assert batched.feed_many(payloads) + batched.close() == one_events
    assert batched.warnings == by_one.warnings
    assert batched.warnings == [
        "event 0 /xAhead: removed unrecognised property (44 times in this run)"
    ]


@pytest.mark.parametrize("rejected", [1, 2, 6])
def test_a_consumer_stopped_inside_a_batch_one_version_ahead_warns_as_one_by_one(
    rejected: int,
) -> None:
    # fuzz-found: the batch said the property's warning for the events after the one the
    # lifecycle rejected, which one by one never decodes
    start = {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}
    stream = [RUN_START, start, *([CONTENT] * 8)]
    stream[rejected] = {**CONTENT, "messageId": "not-open"}
    payloads = [encode(ahead(document)) for document in stream]
    by_one = Consumer()
    with pytest.raises(LifecycleViolation):
        list(map(by_one.feed, payloads))
    batched = Consumer()
    with pytest.raises(LifecycleViolation) as raised:
        batched.feed_many(payloads)
    assert raised.value.index == rejected
    assert batched.warnings == by_one.warnings
    assert batched.warnings[0] == (
        f"event 0 /xAhead: removed unrecognised property ({rejected + 1} times in this run)"
    )


def test_a_property_one_kind_knows_is_not_stripped_from_it_in_a_batch() -> None:
    # parentMessageId is unknown to TEXT_MESSAGE_CONTENT and known to TOOL_CALL_START
    extra = {"parentMessageId": "m0"}
    start = {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f", **extra}
    payloads = [encode({**CONTENT, **extra})] * 3 + [encode(start)]
    decoder = Decoder()
    events = decoder.decode_many(payloads[:1]) + decoder.decode_many(payloads[1:])
    assert events == one_by_one(payloads)[0]
    assert events[-1].parent_message_id == "m0"


# --- inputs and messages -------------------------------------------------------------------


def test_decode_message_strips_and_types() -> None:
    warnings: list[str] = []
    message = decode_message(
        {"id": "m", "role": "user", "content": "hi", "mood": 1}, on_warning=warnings.append
    )
    assert message == v1_1.UserMessage(id="m", content="hi")
    assert warnings == ["message /mood: removed unrecognised property"]


def test_decode_message_upgrades_a_retired_binary_part() -> None:
    part = {"type": "binary", "mimeType": "image/png", "url": "https://x/y.png"}
    message = decode_message({"id": "m", "role": "user", "content": [part]})
    assert message is not None
    assert type(message.content[0]) is v1_1.ImagePart


def test_decode_message_drops_an_unknown_role() -> None:
    warnings: list[str] = []
    assert decode_message({"id": "m", "role": "oracle"}, on_warning=warnings.append) is None
    assert warnings == ["message: dropped message of unrecognised role 'oracle'"]


def test_decode_message_rejects_a_malformed_value_with_its_path() -> None:
    with pytest.raises(MalformedEvent) as raised:
        decode_message(b'{"id": "m", "role": "user", "content": 5}')
    assert (raised.value.rule, raised.value.path) == ("malformed-message", "/content")


# --- agreement with Consumer ---------------------------------------------------------------


def agree(payloads: list[Any], **options: Any) -> None:
    """The decoder's events, expanded, are what the consumer delivers; its warnings are the
    consumer's, less what later stages say; a decode violation is the consumer's verdict. And
    a consumer fed the payloads at once keeps what one fed them one at a time does."""
    decoder_warnings: list[str] = []
    decoder = Decoder(on_warning=decoder_warnings.append, **options)
    events: list[Any] = []
    failure: MalformedEvent | None = None
    for index, payload in enumerate(payloads):
        try:
            event = decoder.decode(payload)
        except MalformedEvent as violation:
            failure = violation
            break
        if event is not None:
            events += [(index, event)]
    consumer_warnings: list[str] = []
    consumer = Consumer(on_warning=consumer_warnings.append, **options)
    delivered: list[Any] = []
    verdict: ProtocolViolation | None = None
    try:
        delivered = consumer.feed_many(payloads) + consumer.close()
    except ProtocolViolation as violation:
        verdict, delivered = violation, violation.delivered
    if isinstance(verdict, MalformedEvent):
        assert failure is not None
        assert (failure.rule, failure.index, failure.path) == (
            verdict.rule,
            verdict.index,
            verdict.path,
        )
    elif failure is not None:  # the consumer stopped earlier, at a later stage's rule
        assert verdict is not None
        assert verdict.index is not None
        assert verdict.index < (failure.index or 0)
    seen = consumer.event_index if verdict is not None else len(payloads)
    expander, expanded = Expander(decoder.bindings), []
    for index, event in events:
        if index < seen:
            try:
                expanded += expander.expand(event, index)
            except ProtocolViolation:  # the consumer's verdict, at the expansion
                break
    assert expanded[: len(delivered)] == delivered
    said = iter(consumer_warnings)
    before = [w for w in decoder_warnings if _event_of(w) < seen]
    assert all(warning in said for warning in before), (before, consumer_warnings)
    assert consumed(payloads, one_by_one=False, **options) == consumed(payloads, **options)


def consumed(payloads: list[Any], one_by_one: bool = True, **options: Any) -> tuple[Any, ...]:
    """What a consumer with no callback (so its batches take every shortcut) keeps of
    ``payloads`` fed one at a time or all at once: events, warnings, verdict."""
    consumer = Consumer(**options)
    delivered: list[Any] = []
    verdict = None
    try:
        for batch in [[payload] for payload in payloads] if one_by_one else [payloads]:
            delivered += consumer.feed_many(batch)
        delivered += consumer.close()
    except ProtocolViolation as violation:  # what the failing call delivered before it
        delivered += violation.delivered
        verdict = (violation.rule, violation.index, violation.path)
    return delivered, consumer.warnings, verdict


def _event_of(warning: str) -> int:
    number = warning.removeprefix("event ").partition(" ")[0].rstrip(":")
    return int(number) if number.isdigit() else -1


def _fixtures() -> list[Path]:
    return sorted((STREAMS / "streams").glob("*.json")) if STREAMS.is_dir() else []


@pytest.mark.skipif(not _fixtures(), reason="needs ../shared beside the checkout")
@pytest.mark.parametrize("fixture", _fixtures(), ids=lambda path: path.stem)
def test_decode_agrees_with_consumer_on_the_conformance_streams(fixture: Path) -> None:
    stream = json.loads(fixture.read_text(encoding="utf-8"))["stream"]
    agree([encode(event) for event in stream])
    agree(stream)  # as dicts: the slow path's own route


# What a fuzzed stream's events may be mutated into: each kind of thing the decode judges.
_MUTATIONS = st.sampled_from(
    [
        lambda event: {**event, "xTrace": 1},
        lambda event: {"type": "HEARTBEAT"},
        lambda event: {**event, "timestamp": "soon"},
        lambda event: {**event, "type": "THINKING_START"},
        lambda event: {**event, "rawEvent": None},
        lambda event: {**event, "role": "oracle"},
        lambda event: {**event, "outcome": {"type": "paused"}},
        lambda event: {**event, "messages": [{"id": "x", "role": "oracle"}]},
        lambda event: {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/~2", "value": 1}]},
        lambda event: {"type": "STATE_DELTA", "delta": [{"op": "merge", "path": "/a"}]},
        lambda event: {"type": "STATE_DELTA", "delta": [{"op": "test", "path": "/a", "from": 1}]},
    ]
)

EXAMPLES = int(os.environ.get("AGUI_AGREEMENT_EXAMPLES", "150"))
"""Fuzzed streams per run: a sample here; ``AGUI_AGREEMENT_EXAMPLES=100000`` by hand."""


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    valid_streams(),
    st.lists(st.tuples(st.integers(0, 400), _MUTATIONS), max_size=4),
    st.booleans(),
    st.booleans(),
)
def test_decode_agrees_with_consumer_on_fuzzed_streams(
    stream: list[Wire], mutations: list[Any], as_text: bool, one_version_ahead: bool
) -> None:
    events = [ahead(event) for event in stream] if one_version_ahead else list(stream)
    for position, mutate in mutations:
        if events:
            where = position % len(events)
            events[where] = mutate(events[where])
    agree([encode(event) for event in events] if as_text else events)


def _strided(payload: bytes) -> memoryview:
    """The same bytes as a view that is not contiguous: every other byte of a padded copy."""
    return memoryview(b"".join(bytes([byte, 32]) for byte in payload))[::2]


def _released(payload: bytes) -> memoryview:
    view = memoryview(payload)
    view.release()
    return view


def test_a_memoryview_of_any_layout_reads_as_its_bytes_and_a_released_one_is_misuse() -> None:
    start = encode(RUN_START)
    message = b'{"id":"m","role":"user","content":"x"}'
    body = b'{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[],"state":{}}'
    entry_points: list[Callable[[Callable[[bytes], Any]], Any]] = [
        lambda view: decode(view(start)),
        lambda view: Decoder().decode_many([view(start), view(encode(CONTENT))]),
        lambda view: Decoder(middleware=[lambda document, _: document]).decode(view(start)),
        lambda view: decode_message(view(message)),
        lambda view: parse_run_input(view(body)),
        lambda view: Consumer().feed_many([view(start)]),
    ]
    for entry in entry_points:
        assert entry(_strided) == entry(bytes)
        with pytest.raises(UsageError, match="released memoryview"):
            entry(_released)
