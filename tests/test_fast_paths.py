"""The consumer's shortcuts change nothing a user can see.

- Batches: a list or tuple of payloads (what a reader makes of one chunk) goes to the
  strict decoder in one call; only if some payload needs more is the batch decoded one
  by one, as a generator of payloads always is.
- Repeats: most of a stream is TEXT_MESSAGE_CONTENT, TOOL_CALL_ARGS or
  REASONING_MESSAGE_CONTENT naming the same item as the event before. The verifier says
  such an event would pass unchanged and the reducer says where its delta goes, so the
  consumer skips both calls for it.
- Unknown properties: on the slow path, an event whose only unrecognised material is
  properties of its own is converted without the full walk.

What must not differ: the verdict, its rule, index and path, the warnings, the messages,
the state and the events delivered.
"""

from __future__ import annotations

import contextlib
from itertools import pairwise
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import valid_streams

from agui_msgspec import Consumer, ProtocolViolation, consume
from agui_msgspec._pipeline.enforce import Enforcer
from agui_msgspec._pipeline.lifecycle import Lifecycle

Event = dict[str, Any]
START: Event = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH: Event = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}


def content(message_id: str, delta: str, **extra: Any) -> Event:
    return {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": delta, **extra}


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
    except ProtocolViolation as failure:
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


# --- batches ---------------------------------------------------------------------------------

BREAKERS: list[Event] = [
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "x", "xVendor": 1},  # stripped
    {"type": "X_VENDOR_EVENT"},  # dropped
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nowhere", "delta": "x"},  # not open
    {"type": "STATE_DELTA", "delta": [{"op": "move", "path": "/a"}]},  # malformed
    {"type": "RUN_STARTED", "threadId": "t", "runId": "again"},  # nested run
]


def summary(result: Any) -> tuple[Any, ...]:
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
    except ProtocolViolation as violation:
        delivered += violation.delivered
    return summary(consumer.result(delivered))


@settings(deadline=None, max_examples=120)
@given(st.data())
def test_batches_and_one_by_one_give_the_same_result(data: st.DataObject) -> None:
    events = data.draw(valid_streams(max_runs=2), label="stream")
    if data.draw(st.booleans(), label="break it"):
        position = data.draw(st.integers(0, len(events)), label="at")
        events.insert(position, data.draw(st.sampled_from(BREAKERS), label="breaker"))
    payloads = [msgspec.json.encode(event) for event in events]
    batched = summary(consume(payloads))
    assert summary(consume(iter(payloads))) == batched
    assert summary(consume(tuple(payloads))) == batched
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


# --- unknown properties ----------------------------------------------------------------------

EXTRA_VALUES = st.sampled_from([1, 2.0, "x", None, [], {"k": [1]}])


@st.composite
def with_extras(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with unknown properties added at random depths, and some integers as
    integral floats: material the walk removes or reads, or that makes the event malformed."""
    if isinstance(document, list):
        return [draw(with_extras(item)) for item in document]
    if not isinstance(document, dict):
        if type(document) is int and draw(st.integers(0, 3)) == 0:
            return float(document)
        return document
    result = {key: draw(with_extras(value)) for key, value in document.items()}
    for _ in range(draw(st.integers(0, 2))):
        result[draw(st.sampled_from(["xVendor", "x~y/z", "extra"]))] = draw(EXTRA_VALUES)
    return result


def walked_only(events: list[Event]) -> tuple[Any, ...]:
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(Enforcer, "_without_unknown_properties", lambda *arguments: None)
        return summary(consume([msgspec.json.encode(event) for event in events]))


@settings(deadline=None, max_examples=120)
@given(st.data())
def test_unknown_properties_without_the_walk_give_what_the_walk_gives(data: st.DataObject) -> None:
    events = data.draw(valid_streams(max_runs=1), label="stream")
    events = [data.draw(with_extras(event), label="event") for event in events]
    assert summary(consume([msgspec.json.encode(event) for event in events])) == walked_only(events)


def test_an_event_with_an_unknown_property_is_kept_without_it() -> None:
    events = [
        {**START, "xVendor": {"trace": 1}},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant", "x~y": 1},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        FINISH,
    ]
    result = consume([msgspec.json.encode(event) for event in events])
    assert result.outcome == "completed"
    assert result.warnings == [
        "event 0 /xVendor: removed unrecognised property",
        "event 1 /x~0y: removed unrecognised property",
    ]
    assert summary(result) == walked_only(events)


def test_an_event_with_open_unions_still_takes_the_walk() -> None:
    """JSON Patch operations stay dicts: an unknown op is the walk's to remove, not the reducer's."""
    events = [
        START,
        {
            "type": "STATE_DELTA",
            "xVendor": 1,
            "delta": [{"op": "frobnicate", "path": "/a"}, {"op": "add", "path": "/b", "value": 2}],
        },
        FINISH,
    ]
    result = consume([msgspec.json.encode(event) for event in events])
    assert result.state == {"b": 2}
    assert result.warnings[0] == "event 1 /xVendor: removed unrecognised property"
    assert "/delta/0" in result.warnings[1]
    assert summary(result) == walked_only(events)


def fed_one_by_one(events: list[Event]) -> Consumer:
    """One batch, which the vendor property sends to the enforcer payload by payload."""
    consumer = Consumer()
    with contextlib.suppress(ProtocolViolation):
        consumer.feed_many([msgspec.json.encode(event) for event in events])
    return consumer


def test_after_an_unknown_property_the_next_payload_is_judged_the_same() -> None:
    """A payload after one with a vendor property skips the strict decode; it still gets the
    verdict, the warnings and the count it would have got."""
    vendor = content("m", "a", xVendor=1)
    retired = {"type": "THINKING_START"}
    malformed = content("m", "b", timestamp="soon")
    opened = [START, {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}]
    for after, needs_slow_path in ((content("m", "b"), False), (retired, True), (vendor, True)):
        consumer = fed_one_by_one([*opened, vendor, after])
        assert consumer.slow_path_count == 1 + needs_slow_path
        assert consumer.violation is None
    consumer = fed_one_by_one([*opened, vendor, malformed])
    assert consumer.violation is not None
    assert (consumer.violation.rule, consumer.violation.index, consumer.violation.path) == (
        "malformed-event",
        3,
        "/timestamp",
    )
    translated = fed_one_by_one([*opened, vendor, retired, FINISH]).warnings
    assert [warning for warning in translated if "THINKING_START" in warning] == [
        "event 3: translated retired THINKING_START to REASONING_START"
    ]


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
        batched = summary(consume(payloads))
        assert batched[0] == "completed", kind
        assert summary(consume(iter(payloads))) == batched
        assert summary(consume([*payloads, msgspec.json.encode({**FINISH, "x": 1})])) == (
            summary(consume(iter([*payloads, msgspec.json.encode({**FINISH, "x": 1})])))
        )
