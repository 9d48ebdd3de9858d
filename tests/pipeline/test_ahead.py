"""A batch from a producer one version ahead, through the twins of ``_pipeline/ahead``.

The twins are a shortcut: every batch they take must come out as the exact path makes it
payload by payload (the same events, of the event types themselves, the same warnings, the
same verdict), and every batch they refuse must fall back to that path. What a stream can
make them cost is bounded: they are made once per stream, after enough payloads, for a few
short names, and a stream stops trying them after repeated refusals.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import valid_streams

from agui_msgspec import Consumer, MalformedEvent, ProtocolViolation, v1_0, v1_1
from agui_msgspec._pipeline import ahead, enforce
from agui_msgspec._pipeline.decode import Decoder

Wire = dict[str, Any]

START: Wire = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
CONTENT: Wire = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"}
STREAMS = Path(__file__).resolve().parents[2] / ".." / "shared" / "agui" / "conformance" / "1.1"


def encode(event: Wire) -> bytes:
    return msgspec.json.encode(event)


def with_extras(events: list[Wire], **extras: Any) -> list[bytes]:
    return [encode({**event, **extras}) for event in events]


@pytest.fixture
def twins_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twins made by the first batch one version ahead, none kept from other tests."""
    monkeypatch.setattr(enforce, "_TWINS_AFTER", 0)
    monkeypatch.setattr(ahead, "_MADE", {})


@pytest.fixture
def no_twins_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "_MADE", {})


def one_by_one(payloads: list[bytes], version: str = "1.1") -> tuple[Any, ...]:
    """Each payload through ``Decoder.decode``, the exact path: events, warnings, or the
    rule, index and path of the MalformedEvent that stopped it."""
    decoder = Decoder(version)
    try:
        events = [event for event in map(decoder.decode, payloads) if event is not None]
    except MalformedEvent as refused:
        return (refused.rule, refused.index, refused.path)
    return events, decoder.warnings


def in_batches(payloads: list[bytes], version: str = "1.1", size: int = 64) -> tuple[Any, ...]:
    decoder = Decoder(version)
    events: list[Any] = []
    try:
        for start in range(0, len(payloads), size):
            events += decoder.decode_many(payloads[start : start + size])
    except MalformedEvent as refused:
        return (refused.rule, refused.index, refused.path)
    return events, decoder.warnings


def decoded_alone(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The indexes of the payloads each decoder takes one by one, not in a batch."""
    alone: list[int] = []
    decode = Decoder.decode

    def counted(self: Decoder[Any], payload: Any, index: int | None = None) -> Any:
        alone.append(self.event_index if index is None else index)
        return decode(self, payload, index)

    monkeypatch.setattr(Decoder, "decode", counted)
    return alone


# --- what the twins give ----------------------------------------------------------------------


@pytest.mark.usefixtures("twins_at_once")
def test_the_events_the_twins_take_are_the_event_types_themselves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    contents = [{**CONTENT, "delta": str(n), "timestamp": n} for n in range(200)]
    payloads = with_extras([START, *contents], traceId="00-ab-01")
    expected = one_by_one(payloads)
    alone = decoded_alone(monkeypatch)
    events, warnings = in_batches(payloads)
    assert alone == [0]  # the run's start, which tells the property; the rest in batches
    assert (events, warnings) == expected
    assert ahead.known_twins(v1_1, ("traceId",)) is not None
    exact = [
        v1_1.TextMessageContentEvent(message_id="m1", delta=str(n), timestamp=n) for n in range(200)
    ]
    assert events[1:] == exact
    assert all(type(event) is v1_1.TextMessageContentEvent for event in events[1:])
    assert all(event.metadata is msgspec.UNSET for event in events[1:])  # the field lent back
    assert [msgspec.json.encode(event) for event in events[1:]] == list(map(encode, contents))
    assert warnings == ["event 0 /traceId: removed unrecognised property (201 times in this run)"]


@pytest.mark.usefixtures("twins_at_once")
@pytest.mark.parametrize("version", ["1.1", "1.0"])
def test_several_properties_of_any_json_value_come_off_every_kind(version: str) -> None:
    kinds = [
        START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        CONTENT,
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{}"},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a", "value": {"b": [1]}}]},
        {"type": "CUSTOM", "name": "n", "value": None},
    ]
    stream = [START] + kinds[1:] * 20
    extras = {"xTrace": {"id": [1, None, {"deep": "x"}]}, "xNull": None, "xSpan": 1.5}
    payloads = with_extras(stream, **extras)
    assert in_batches(payloads, version) == one_by_one(payloads, version)


@pytest.mark.usefixtures("twins_at_once")
@pytest.mark.parametrize(
    "odd_one",
    [
        pytest.param({**CONTENT, "metadata": {"a": 1}}, id="the lent field sent as well"),
        pytest.param({**CONTENT, "rawEvent": "r", "metadata": {}}, id="two lent fields sent"),
        pytest.param({**CONTENT, "xOther": 2}, id="another property as well"),
        pytest.param({**CONTENT, "delta": 7}, id="a malformed value"),
        pytest.param({**CONTENT, "timestamp": 1.0}, id="an integral float"),
        pytest.param({"type": "HEARTBEAT"}, id="an unknown type"),
        pytest.param(
            {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "x", "role": "oracle"}]},
            id="an unknown nested member",
        ),
        pytest.param(
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/~2", "value": 1}]},
            id="a bad pointer",
        ),
        pytest.param({"type": "CUSTOM", "name": "n", "value": 1}, id="a kind that knows the name"),
    ],
)
def test_a_batch_the_twins_refuse_is_taken_as_one_by_one(odd_one: Wire) -> None:
    stream = [START] + [CONTENT] * 100 + [odd_one] + [CONTENT] * 100
    payloads = with_extras(stream, name="n", xTrace=1)  # ``name``: a CUSTOM event knows it
    payloads[101] = encode({**odd_one, "name": "n", "xTrace": 1})
    assert in_batches(payloads) == one_by_one(payloads)


@pytest.mark.usefixtures("twins_at_once")
def test_a_consumer_reads_a_stream_the_twins_take_as_it_reads_it_one_by_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    start = {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}
    end = {"type": "TEXT_MESSAGE_END", "messageId": "m1"}
    finish = {**START, "type": "RUN_FINISHED"}
    stream = [START, start, *({**CONTENT, "delta": str(n)} for n in range(300)), end, finish]
    payloads = with_extras(stream, xTrace="t")
    batched, each = Consumer(), Consumer()
    alone = decoded_alone(monkeypatch)
    delivered = batched.feed_many(payloads) + batched.close()
    assert alone == [0]
    assert (
        delivered == [event for payload in payloads for event in each.feed(payload)] + each.close()
    )
    assert batched.warnings == each.warnings
    assert batched.messages == each.messages


def _fixtures() -> list[Path]:
    return sorted((STREAMS / "streams").glob("*.json")) if STREAMS.is_dir() else []


@pytest.mark.usefixtures("twins_at_once")
@pytest.mark.skipif(not _fixtures(), reason="needs ../shared beside the checkout")
@pytest.mark.parametrize("fixture", _fixtures(), ids=lambda path: path.stem)
def test_the_conformance_streams_one_version_ahead_read_as_one_by_one(fixture: Path) -> None:
    stream = json.loads(fixture.read_text(encoding="utf-8"))["stream"]
    payloads = with_extras(stream, xTrace="t")
    assert in_batches(payloads, size=8) == one_by_one(payloads)
    assert consumed(payloads, one_by_one=False) == consumed(payloads)


def consumed(payloads: list[bytes], one_by_one: bool = True) -> tuple[Any, ...]:
    """A consumer's events, warnings and verdict over ``payloads``, fed one at a time or at once."""
    consumer = Consumer()
    delivered: list[Any] = []
    verdict = None
    try:
        for batch in [[payload] for payload in payloads] if one_by_one else [payloads]:
            delivered += consumer.feed_many(batch)
        delivered += consumer.close()
    except ProtocolViolation as violation:
        delivered += violation.delivered
        verdict = (violation.rule, violation.index, violation.path)
    return delivered, consumer.warnings, verdict


# What a fuzzed stream's events may also carry: each thing the twins must refuse or take.
_ODD = st.sampled_from(
    [
        lambda event: {**event, "metadata": {"k": 1}},
        lambda event: {**event, "rawEvent": [1]},
        lambda event: {**event, "xOther": 1},
        lambda event: {key: value for key, value in event.items() if key != "xTrace"},
        lambda event: {**event, "timestamp": "soon"},
        lambda event: {"type": "HEARTBEAT", "xTrace": 1},
        lambda event: {**event, "role": "oracle"},
    ]
)

EXAMPLES = int(os.environ.get("AGUI_AGREEMENT_EXAMPLES", "150"))
"""Fuzzed streams per run: a sample here; ``AGUI_AGREEMENT_EXAMPLES=100000`` by hand."""


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    valid_streams(),
    st.lists(st.tuples(st.integers(0, 400), _ODD), max_size=3),
    st.sampled_from([{"xTrace": 1}, {"xTrace": None, "xSpan": {"a": []}}, {"name": "n"}]),
    st.integers(1, 9),
)
def test_fuzzed_streams_one_version_ahead_read_as_one_by_one(
    stream: list[Wire], odd: list[Any], extras: Wire, size: int
) -> None:
    events = [{**event, **extras} for event in stream]
    for position, change in odd:
        where = position % len(events)
        events[where] = change(events[where])
    payloads = list(map(encode, events))
    with _twins_at_once():
        batched = in_batches(payloads, size=size), consumed(payloads, one_by_one=False)
    assert batched == (one_by_one(payloads), consumed(payloads))


class _twins_at_once:  # noqa: N801 (the fixture's context manager: hypothesis takes no fixture)
    def __enter__(self) -> None:
        self.saved = enforce._TWINS_AFTER, ahead._MADE
        enforce._TWINS_AFTER, ahead._MADE = 0, {}

    def __exit__(self, *exc: object) -> None:
        enforce._TWINS_AFTER, ahead._MADE = self.saved


# --- what a stream can make them cost ---------------------------------------------------------


def ahead_stream(events: int, **extras: Any) -> Iterator[list[bytes]]:
    """Batches of 1,024 payloads one version ahead, after a run's start."""
    payloads = with_extras([START] + [CONTENT] * events, **extras)
    for start in range(0, len(payloads), 1024):
        yield payloads[start : start + 1024]


@pytest.mark.usefixtures("no_twins_kept")
def test_a_stream_makes_twins_once_after_enough_payloads_one_version_ahead() -> None:
    decoder = Decoder()
    batches = ahead_stream(enforce._TWINS_AFTER + 2048, xTrace=1)
    for _ in range(enforce._TWINS_AFTER // 1024 + 1):  # the run's start counts for nothing
        decoder.decode_many(next(batches))
        assert ahead.known_twins(v1_1, ("xTrace",)) is None  # the generic decode until then
    decoder.decode_many(next(batches))
    assert ahead.known_twins(v1_1, ("xTrace",)) is not None
    for batch in ahead_stream(enforce._TWINS_AFTER + 2048, xOther=1):
        decoder.decode_many(batch)
    assert ahead.known_twins(v1_1, ("xOther",)) is None  # once per stream
    fresh = Decoder()  # a new stream takes the twins made: the first batch after its start
    for batch in ahead_stream(1024, xOther=1):
        fresh.decode_many(batch)
    assert ahead.known_twins(v1_1, ("xOther",)) is None
    assert list(ahead._MADE) == [(v1_1, ("xTrace",))]


@pytest.mark.usefixtures("twins_at_once")
@pytest.mark.parametrize(
    "extras",
    [
        pytest.param({f"x{n}": n for n in range(4)}, id="more names than fields to lend"),
        pytest.param({"x" * (ahead.MAX_NAME_CHARS + 1): 1}, id="too long a name"),
    ],
)
def test_names_too_many_or_too_long_make_no_twins(extras: Wire) -> None:
    payloads = with_extras([START] + [CONTENT] * 50, **extras)
    assert in_batches(payloads) == one_by_one(payloads)
    assert ahead._MADE == {}


@pytest.mark.usefixtures("twins_at_once")
@pytest.mark.parametrize("name", ['a"b', "a\\b", "\x00", "\x1f", "", "__class__", "é"])
def test_any_name_a_stream_sends_reads_as_one_by_one(name: str) -> None:
    payloads = with_extras([START] + [CONTENT] * 50, **{name: 1})
    assert in_batches(payloads) == one_by_one(payloads)


def test_twins_that_would_add_a_slot_are_not_made(monkeypatch: pytest.MonkeyPatch) -> None:
    defstruct = msgspec.defstruct

    def with_a_slot(name: str, fields: list[Any], bases: tuple[type, ...]) -> Any:
        return defstruct(name, [*fields, ("added", int, 0)], bases=bases)

    monkeypatch.setattr(ahead.msgspec, "defstruct", with_a_slot)
    monkeypatch.setattr(ahead, "_MADE", {})
    assert ahead.make_twins(v1_1, ("xTrace",)) is None


def test_the_twins_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "_MADE", {})
    for n in range(ahead.KEPT + 5):
        assert ahead.make_twins(v1_1, (f"x{n}",)) is not None
    assert list(ahead._MADE) == [(v1_1, (f"x{n}",)) for n in range(5, ahead.KEPT + 5)]


@pytest.mark.usefixtures("twins_at_once")
def test_a_stream_stops_trying_twins_it_keeps_refusing(monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[int] = []
    decode_ahead = ahead.decode_ahead

    def counted(twins: ahead.Twins, payloads: Any) -> Any:
        tried.append(len(payloads))
        return decode_ahead(twins, payloads)

    monkeypatch.setattr(enforce, "decode_ahead", counted)
    lent = {**CONTENT, "metadata": {}}  # the field the twins lend: they refuse it
    decoder = Decoder()
    decoder.decode_many(with_extras([START], xTrace=1))
    for _ in range(enforce._TWIN_REFUSALS + 10):
        decoder.decode_many(with_extras([lent, lent], xTrace=1))
    assert len(tried) == enforce._TWIN_REFUSALS


@pytest.mark.parametrize("bindings", [v1_1, v1_0])
def test_each_name_borrows_a_field_every_event_type_has(bindings: Any) -> None:
    lenders = ahead._lending_plan(bindings).lenders
    for kind in bindings.EVENT_TYPES.values():  # read from the class as msgspec reads it
        fields = msgspec.structs.fields(kind)
        absent = [field.name for field in fields if field.default is msgspec.UNSET]
        assert ahead._absent_when_unsent(kind) == absent
    assert "metadata" not in lenders or lenders[0] == "metadata"  # what streams send least
    names = tuple(f"x{n}" for n in range(len(lenders) + 1))
    with_fields = ahead.make_twins(bindings, names[:-1])
    assert with_fields is not None
    assert with_fields.borrowed == lenders
    assert ahead.make_twins(bindings, names) is None
