"""The events Decoder and Consumer return are the version's own union, as a user's type
checker sees them.

``nox -s typecheck`` runs ``mypy --strict`` over this file: each annotated assignment fails
to type-check if the return type is wider (``Struct``, ``Any`` would pass silently, so each
``type: ignore`` below fails, as an unused ignore, if the narrowing is lost).
"""

from __future__ import annotations

import msgspec

from agui_msgspec import Consumer, VerifyingConsumer, parse_run_input, v1_0, v1_1
from agui_msgspec._pipeline.decode import Decoder, decode, decode_message

START = msgspec.json.encode({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})


def test_the_default_version_returns_v1_1_events() -> None:
    events: list[v1_1.Event] = Decoder().decode_many([START])
    delivered: list[v1_1.Event] = Consumer().feed(START)
    one: v1_1.Event | None = decode(START)
    assert events == delivered == [one]
    event = events[0]
    if event.type == "RUN_STARTED":  # narrows the union by its tag
        assert event.thread_id == "t"
    wrong: list[v1_0.Event] = Consumer().feed(START)  # type: ignore[assignment]
    assert isinstance(wrong[0], msgspec.Struct)


def test_version_1_0_returns_v1_0_events() -> None:
    events: list[v1_0.Event] = Decoder("1.0").decode_many([START])
    delivered: list[v1_0.Event] = Consumer("1.0").feed(START)
    assert type(events[0]) is v1_0.RunStartedEvent
    assert delivered == events


def test_a_verifying_consumer_returns_the_versions_events() -> None:
    delivered: list[v1_1.Event] = VerifyingConsumer().feed(START)
    older: list[v1_0.Event] = VerifyingConsumer("1.0").feed(START)
    assert type(delivered[0]) is v1_1.RunStartedEvent
    assert type(older[0]) is v1_0.RunStartedEvent
    wrong: list[v1_0.Event] = VerifyingConsumer().feed(START)  # type: ignore[assignment]
    assert isinstance(wrong[0], msgspec.Struct)


def test_inputs_and_messages_are_typed() -> None:
    body = b'{"threadId":"t","runId":"r","messages":[],"tools":[],"context":[]}'
    typed: v1_1.RunAgentInput = parse_run_input(body)
    message: v1_1.Message | None = decode_message(b'{"id":"m","role":"user","content":"hi"}')
    assert typed.thread_id == "t"
    assert message is not None
    assert message.role == "user"
