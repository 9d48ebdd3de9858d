# pyright: strict
"""What Decoder, Consumer, consume and the converters return is the version's own, as a
user's type checker sees it.

``nox -s typecheck`` runs ``mypy --strict`` over this file: each annotated assignment fails
to type-check if the return type is wider (``Struct``, ``Any`` would pass silently, so each
``type: ignore`` below fails, as an unused ignore, if the narrowing is lost).
"""

from __future__ import annotations

from collections.abc import Sequence

import ag_ui.core as official
import msgspec
import pytest

import agui_msgspec as agui
from agui_msgspec import (
    PROTOCOL_VERSION,
    SUPPORTED_VERSIONS,
    Consumer,
    Result,
    Run,
    UsageError,
    VerifyingConsumer,
    build_run_input,
    consume,
    consume_body,
    from_official,
    parse_run_input,
    to_official,
    v1_0,
    v1_1,
)
from agui_msgspec._pipeline.decode import Decoder, decode, decode_message

START = msgspec.json.encode({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})


def _asked_version() -> str:
    """A version known only at run time, as a client's request says it (a checker that
    narrows ``version: str = "1.0"`` to its literal would otherwise pick the 1.0 overload)."""
    return "1.0"


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


FINISHED = msgspec.json.encode({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
FAILED = msgspec.json.encode({"type": "RUN_ERROR", "message": "boom"})
HELLO = [
    msgspec.json.encode(event)
    for event in (
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    )
]


def test_a_results_events_messages_and_runs_are_the_versions() -> None:
    newest = consume([START, *HELLO, FINISHED])
    events: list[v1_1.Event] = newest.events
    messages: list[v1_1.Message] = newest.messages
    error: v1_1.RunErrorEvent | None = newest.runs[0].error
    assert type(events[0]) is v1_1.RunStartedEvent
    assert type(messages[0]) is v1_1.AssistantMessage
    assert error is None

    older = consume_body(b"".join(b"data: " + p + b"\n\n" for p in [START, FAILED]), "1.0")
    old_events: list[v1_0.Event] = older.events
    old_error: v1_0.RunErrorEvent | None = older.runs[0].error
    assert type(old_events[0]) is v1_0.RunStartedEvent
    assert type(old_error) is v1_0.RunErrorEvent
    wrong: v1_1.RunErrorEvent | None = older.runs[0].error  # type: ignore[assignment]
    assert not isinstance(wrong, v1_1.RunErrorEvent)  # what the old typing claimed it was


def test_a_consumers_messages_and_runs_are_the_versions() -> None:
    consumer = Consumer("1.0")
    consumer.feed_many([START, *HELLO, FINISHED])
    messages: Sequence[v1_0.Message] = consumer.messages
    runs: list[Run[v1_0.RunFinishedOutcome, v1_0.Interrupt, v1_0.RunErrorEvent, v1_0.TokenUsage]]
    runs = consumer.runs
    assert type(messages[0]) is v1_0.AssistantMessage
    assert runs[0].status == "completed"
    newest: Sequence[v1_1.Message] = Consumer().messages
    assert list(newest) == []


def test_a_bare_annotation_means_the_newest_version() -> None:
    consumer: Consumer = Consumer()
    result: Result = consume([START])
    run: Run = result.runs[0]
    older: Consumer = Consumer("1.0")  # type: ignore[assignment]
    assert consumer.feed(START)[0].type == "RUN_STARTED"
    assert run.outcome is None
    assert isinstance(older, Consumer)


def test_official_models_convert_to_the_versions_structs() -> None:
    model = official.RunAgentInput(
        thread_id="t",
        run_id="r",
        state=None,
        messages=[],
        tools=[],
        context=[],
        forwarded_props=None,
    )
    older: v1_0.RunAgentInput = from_official(model, "1.0")
    back: official.RunAgentInput = to_official(older)
    event: official.BaseEvent = official.RunStartedEvent(thread_id="t", run_id="r")
    typed: v1_1.Event = from_official(event)
    message: official.BaseMessage = official.UserMessage(id="u", content="hi")
    typed_message: v1_0.Message = from_official(message, "1.0")
    assert back.thread_id == older.thread_id == "t"
    assert type(typed) is v1_1.RunStartedEvent
    assert type(typed_message) is v1_0.UserMessage


def test_a_version_string_builds_one_of_the_shipped_inputs() -> None:
    version = _asked_version()
    built: v1_1.RunAgentInput | v1_0.RunAgentInput = build_run_input(
        {"threadId": "t", "runId": "r", "messages": []}, version
    )
    assert type(built) is v1_0.RunAgentInput


def test_the_version_constants_keep_the_versions_types() -> None:
    newest: list[v1_1.Event] = Consumer(PROTOCOL_VERSION).feed(START)
    older: list[v1_0.Event] = Consumer(SUPPORTED_VERSIONS[0]).feed(START)
    assert type(newest[0]) is v1_1.RunStartedEvent
    assert type(older[0]) is v1_0.RunStartedEvent


def test_what_the_runtime_takes_its_annotations_take() -> None:
    consumer = Consumer()
    events = consumer.receive(bytearray(b"data: " + START + b"\n\n"))
    events += consumer.receive(memoryview(b"data: " + FAILED + b"\n\n"))
    assert [event.type for event in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert len(Consumer().feed_many(payload for payload in [START, *HELLO])) == 4
    assert consume_body([bytearray(b"data: " + START + b"\n\n")]).events


def test_a_verifiers_messages_never_return() -> None:
    verifier = VerifyingConsumer()
    with pytest.raises(UsageError):
        print(verifier.messages)  # NoReturn: mypy --warn-unreachable flags code after it


def test_a_version_known_at_run_time_gives_either_versions_types() -> None:
    # A server that answers in the client's version: the types say "one of the shipped".
    version = _asked_version()
    delivered: list[v1_1.Event | v1_0.Event] = Consumer(version).feed(START)
    narrow: list[v1_0.Event] = Consumer(version).feed(START)  # type: ignore[assignment]
    result = consume([START, FAILED], version)
    error: v1_1.RunErrorEvent | v1_0.RunErrorEvent | None = result.runs[0].error
    one: v1_1.Event | v1_0.Event | None = decode(START, version)
    message: v1_1.Message | v1_0.Message | None = decode_message(
        {"id": "u", "role": "user", "content": "hi"}, version
    )
    model = official.RunStartedEvent(thread_id="t", run_id="r")
    converted: v1_1.Event | v1_0.Event = from_official(model, version)
    verified: list[v1_1.Event | v1_0.Event] = VerifyingConsumer(version).feed(START)
    assert type(delivered[0]) is type(narrow[0]) is type(one) is v1_0.RunStartedEvent
    assert type(error) is v1_0.RunErrorEvent
    assert type(message) is v1_0.UserMessage
    assert type(converted) is type(verified[0]) is v1_0.RunStartedEvent


def test_the_deprecated_input_functions_keep_the_versions_types() -> None:
    # Code not yet moved to the new names must not lose its types in the meantime.
    body = msgspec.json.encode({"threadId": "t", "runId": "r", "messages": []})
    with pytest.warns(DeprecationWarning, match="read_input"):
        read, said = agui.read_input(body, "1.0")
    with pytest.warns(DeprecationWarning, match="read_input"):
        newest, _ = agui.read_input(body)
    with pytest.warns(DeprecationWarning, match="prepare_input"):
        wrong: v1_0.RunAgentInput = agui.prepare_input(newest)  # type: ignore[assignment]
    older: v1_0.RunAgentInput = read
    kept: list[str] = said
    assert type(older) is v1_0.RunAgentInput
    assert type(newest) is v1_1.RunAgentInput
    assert wrong.thread_id == "t"
    assert kept == []


def test_a_bindings_module_is_a_version_to_every_checker() -> None:
    # Generated bindings are the user's module: any checker must take one as ``version=``.
    # The shipped 1.0 module stands in for one here.
    delivered = Consumer(version=v1_0).feed(START)
    result = consume([START, FAILED], v1_0)
    built = build_run_input({"threadId": "t", "runId": "r", "messages": []}, v1_0)
    one = decode(START, v1_0)
    assert type(delivered[0]) is type(one) is v1_0.RunStartedEvent
    assert type(result.runs[0].error) is v1_0.RunErrorEvent
    assert type(built) is v1_0.RunAgentInput
