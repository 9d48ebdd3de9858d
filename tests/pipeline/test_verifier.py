"""The verifying consumer: a Consumer's verdict without its conversation.

The same decode, expansion, lifecycle and rules, so the same violation at the same event;
the state and activity messages are kept (their bounds and patches are rules), the text,
arguments and results are not, so verifying costs memory bounded by what is open, not by
what was said. ProducerGuard runs one per response.
"""

from __future__ import annotations

import asyncio
import json
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import valid_streams

from agui_msgspec import Consumer, ProducerGuard, ProtocolViolation, UsageError
from agui_msgspec._pipeline.consumer import VerifyingConsumer

Wire = dict[str, Any]
STREAMS = Path(__file__).resolve().parents[2] / ".." / "shared" / "agui" / "conformance" / "1.1"
START: Wire = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH: Wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
DELTA = "x" * 1000


def encode(event: Wire) -> bytes:
    return msgspec.json.encode(event)


def verdict(consumer: Consumer[Any], payloads: list[Any]) -> tuple[Any, ...]:
    try:
        events = consumer.feed_many(payloads) + consumer.close()
    except ProtocolViolation as violation:
        return (violation.rule, violation.index, violation.path, violation.delivered)
    return (None, None, None, events)


def _fixtures() -> list[Path]:
    return sorted((STREAMS / "streams").glob("*.json")) if STREAMS.is_dir() else []


@pytest.mark.skipif(not _fixtures(), reason="needs ../shared beside the checkout")
@pytest.mark.parametrize("fixture", _fixtures(), ids=lambda path: path.stem)
def test_the_verdict_is_the_consumers_on_the_conformance_streams(fixture: Path) -> None:
    stream = json.loads(fixture.read_text(encoding="utf-8"))["stream"]
    payloads = [encode(event) for event in stream]
    assert verdict(VerifyingConsumer(), payloads) == verdict(Consumer(), payloads)


_BREAKS = st.sampled_from(
    [
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nowhere", "delta": "x"},
        {"type": "STATE_DELTA", "delta": [{"op": "remove", "path": "/missing"}]},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/a/b/c", "value": 1}]},
        {"type": "ACTIVITY_DELTA", "messageId": "a", "activityType": "t", "patch": []},
        FINISH,
    ]
)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(valid_streams(), st.lists(st.tuples(st.integers(0, 400), _BREAKS), max_size=2))
def test_the_verdict_is_the_consumers_on_fuzzed_streams(
    stream: list[Wire], breaks: list[Any]
) -> None:
    events = list(stream)
    for position, event in breaks:
        events.insert(position % (len(events) + 1), event)
    payloads = [encode(event) for event in events]
    assert verdict(VerifyingConsumer(), payloads) == verdict(Consumer(), payloads)


def test_the_state_is_kept_and_the_messages_are_not() -> None:
    verifier: VerifyingConsumer[Any] = VerifyingConsumer()
    verifier.feed_many(
        [
            encode(START),
            encode({"type": "STATE_SNAPSHOT", "snapshot": {"n": 1}}),
            encode({"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]}),
        ]
    )
    assert verifier.state == {"n": 2}
    with pytest.raises(UsageError):
        verifier.messages  # noqa: B018


def test_a_state_bound_is_still_a_violation() -> None:
    verifier: VerifyingConsumer[Any] = VerifyingConsumer(max_state_size=100)
    with pytest.raises(ProtocolViolation) as raised:
        verifier.feed_many(
            [encode(START), encode({"type": "STATE_SNAPSHOT", "snapshot": {"k": "v" * 200}})]
        )
    assert raised.value.rule == "state-too-large"


def held_after(consumer: Consumer[Any], deltas: int) -> int:
    """Bytes still allocated after ``deltas`` 1 KB text deltas of one message, the message open."""
    content = encode({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": DELTA})
    opening = [encode(START), encode({"type": "TEXT_MESSAGE_START", "messageId": "m"})]
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        consumer.feed_many(opening)
        for _ in range(deltas // 100):
            consumer.feed_many([content] * 100)
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def test_verifying_holds_memory_bounded_by_what_is_open() -> None:
    small, large = held_after(VerifyingConsumer(), 2_000), held_after(VerifyingConsumer(), 20_000)
    assert large < 256 * 1024  # 20 MB of text went through
    assert large < small + 64 * 1024  # ten times the stream, about the same memory
    assert held_after(Consumer(), 20_000) > 15 * 2**20  # the conversation: what a Consumer keeps


def held_by(consumer: Consumer[Any], batches: list[list[bytes]]) -> int:
    """Bytes still allocated after the consumer took ``batches``, one ``feed_many`` each."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for batch in batches:
            consumer.feed_many(batch)
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def runs(count: int) -> list[list[bytes]]:
    """``count`` runs, one after another, in batches of 100 runs."""
    one = [
        [encode({**START, "runId": f"r{n}"}), encode({**FINISH, "runId": f"r{n}"})]
        for n in range(count)
    ]
    return [
        [payload for run in one[at : at + 100] for payload in run] for at in range(0, count, 100)
    ]


def test_verifying_keeps_the_latest_run_only() -> None:
    verifier: VerifyingConsumer[Any] = VerifyingConsumer()
    small, large = held_by(VerifyingConsumer(), runs(2_000)), held_by(verifier, runs(20_000))
    assert [run.run_id for run in verifier.runs] == ["r19999"]
    assert large < small + 64 * 1024  # ten times the runs, about the same memory
    consumer: Consumer[Any] = Consumer()
    consumer.feed_many([payload for batch in runs(300) for payload in batch])
    assert len(consumer.runs) == 300  # a Consumer keeps every run


def closed_steps(count: int) -> list[list[bytes]]:
    """One run of ``count`` steps, each opened and closed, in batches of 1,000 events."""
    events = [encode(START)]
    for n in range(count):
        events += [
            encode({"type": "STEP_STARTED", "stepName": f"s{n}"}),
            encode({"type": "STEP_FINISHED", "stepName": f"s{n}"}),
        ]
    return [events[at : at + 1000] for at in range(0, len(events), 1000)]


def test_verifying_holds_nothing_of_a_closed_step() -> None:
    small = held_by(VerifyingConsumer(), closed_steps(2_000))
    large = held_by(VerifyingConsumer(), closed_steps(20_000))
    assert large < small + 64 * 1024


def test_verifying_remembers_closed_messages_up_to_max_closed_items() -> None:
    """A reopen's attribution needs each closed message's owner: a bounded memory."""
    events = [encode(START)]
    for n in range(2_000):
        events += [
            encode({"type": "TEXT_MESSAGE_START", "messageId": f"m{n}"}),
            encode({"type": "TEXT_MESSAGE_END", "messageId": f"m{n}"}),
        ]
    verifier: VerifyingConsumer[Any] = VerifyingConsumer(max_closed_items=1_000)
    with pytest.raises(ProtocolViolation) as refused:
        verifier.feed_many(events)
    assert (refused.value.rule, refused.value.index) == ("too-many-closed-items", 2_002)


def test_the_guard_holds_memory_bounded_by_what_is_open() -> None:
    held: list[int] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        frame = b"data: " + encode(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": DELTA}
        )
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        opening = (
            b"data: "
            + encode(START)
            + b"\n\ndata: "
            + encode({"type": "TEXT_MESSAGE_START", "messageId": "m"})
        )
        await send({"type": "http.response.body", "body": opening + b"\n\n", "more_body": True})
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(20_000):
            await send({"type": "http.response.body", "body": frame + b"\n\n", "more_body": True})
        held.append(tracemalloc.get_traced_memory()[0] - base)
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def receive() -> Any:
        return {"type": "http.request", "body": b""}

    async def send(message: Any) -> None:
        pass

    tracemalloc.start()
    try:
        asyncio.run(ProducerGuard(app)({"type": "http", "path": "/"}, receive, send))
    finally:
        tracemalloc.stop()
    assert held[0] < 256 * 1024  # 20 MB of text went through (a Consumer held 19 MB of it)
