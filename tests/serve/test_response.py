"""The producer's response helper: media type negotiation and EventStream.

A stream the writer refuses, or that the agent's code breaks off, must still reach
the consumer well formed: it ends with RUN_ERROR, which the lifecycle admits while
items are open (spec: events/lifecycle).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Iterator
from types import ModuleType
from typing import Any

import msgspec
import pytest
from nesting import nested_lists

from agui_msgspec import (
    PROTOBUF_MEDIA_TYPE,
    SSE_MEDIA_TYPE,
    EventStream,
    StrictWriter,
    TransportError,
    UsageError,
    consume_body,
    negotiate_media_type,
    proto_frame,
    v1_0,
    v1_1,
)
from agui_msgspec._pipeline.warnings import MAX_WARNING_LENGTH
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE

START = v1_1.RunStartedEvent(thread_id="t", run_id="r")
FINISH = v1_1.RunFinishedEvent(thread_id="t", run_id="r")
OPEN_TEXT = v1_1.TextMessageStartEvent(message_id="m")
SOME_TEXT = v1_1.TextMessageContentEvent(message_id="m", delta="Hi")


def body_of(stream: EventStream) -> bytes:
    async def collect() -> bytes:
        return b"".join([chunk async for chunk in stream])

    return asyncio.run(collect())


def types_in(body: bytes) -> list[str]:
    return [str(type(event).__struct_config__.tag) for event in consume_body(body).events]


# --- negotiation -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        (None, SSE_MEDIA_TYPE),
        ("", SSE_MEDIA_TYPE),
        ("text/event-stream", SSE_MEDIA_TYPE),
        ("application/json", SSE_MEDIA_TYPE),
        ("text/event-stream, application/vnd.ag-ui.event+proto", PROTOBUF_MEDIA_TYPE),
        ("application/vnd.ag-ui.event+proto", PROTOBUF_MEDIA_TYPE),
        ("APPLICATION/VND.AG-UI.EVENT+PROTO", PROTOBUF_MEDIA_TYPE),
        # relative qualities are not consulted: any positive quality admits it
        ("text/event-stream;q=1, application/vnd.ag-ui.event+proto;q=0.001", PROTOBUF_MEDIA_TYPE),
        ("application/vnd.ag-ui.event+proto;q=0", SSE_MEDIA_TYPE),
        ("application/vnd.ag-ui.event+proto; q=0.000", SSE_MEDIA_TYPE),
        # wildcards admit it too
        ("*/*", PROTOBUF_MEDIA_TYPE),
        ("application/*", PROTOBUF_MEDIA_TYPE),
        ("text/*", SSE_MEDIA_TYPE),
        ("text/event-stream, */*;q=0.1", PROTOBUF_MEDIA_TYPE),
        # the most specific range decides
        ("*/*, application/vnd.ag-ui.event+proto;q=0", SSE_MEDIA_TYPE),
        ("application/*;q=0, */*", SSE_MEDIA_TYPE),
        ("application/*;q=0, application/vnd.ag-ui.event+proto;q=0.5", PROTOBUF_MEDIA_TYPE),
        # a qvalue that is not one matches nothing
        ("application/vnd.ag-ui.event+proto;q=2", SSE_MEDIA_TYPE),
        ("application/vnd.ag-ui.event+proto;q=high", SSE_MEDIA_TYPE),
        ("application/vnd.ag-ui.event+proto;q=0.5555", SSE_MEDIA_TYPE),
        ("application/vnd.ag-ui.event+proto;charset=x;Q=1.0", PROTOBUF_MEDIA_TYPE),
        (",,;;,", SSE_MEDIA_TYPE),
    ],
)
def test_negotiation(accept: str | None, expected: str) -> None:
    assert negotiate_media_type(accept) == expected


@pytest.mark.parametrize("accept", [PROTOBUF_MEDIA_TYPE, "*/*", None])
def test_a_producer_not_offering_protobuf_answers_sse_whatever_the_accept(
    accept: str | None,
) -> None:
    assert negotiate_media_type(accept, offer_protobuf=False) == SSE_MEDIA_TYPE
    stream = EventStream([START, FINISH], accept, offer_protobuf=False)
    assert stream.media_type == stream.headers["Content-Type"] == SSE_MEDIA_TYPE
    assert types_in(body_of(stream)) == ["RUN_STARTED", "RUN_FINISHED"]
    # the default is the spec's: a client admitting protobuf gets it
    if accept is not None:
        assert EventStream([START, FINISH], accept).media_type == PROTOBUF_MEDIA_TYPE


def test_bindings_without_a_protobuf_wire_answer_every_client_with_sse() -> None:
    wireless = ModuleType("agui_draft")  # bindings generated from a schema with no wire schema
    wireless.__dict__.update(vars(v1_1))
    wireless.PROTOCOL_VERSION = "0.9"
    stream = EventStream([START, FINISH], "application/vnd.ag-ui.event+proto", version=wireless)
    assert stream.media_type == stream.headers["Content-Type"] == SSE_MEDIA_TYPE
    assert types_in(body_of(stream)) == ["RUN_STARTED", "RUN_FINISHED"]


def test_the_negotiated_binding_frames_the_body() -> None:
    stream = EventStream([START, FINISH], "application/vnd.ag-ui.event+proto")
    assert stream.media_type == stream.headers["Content-Type"] == PROTOBUF_MEDIA_TYPE
    assert body_of(stream) == proto_frame(START) + proto_frame(FINISH)


@pytest.mark.parametrize(
    ("depth", "accept", "rule"),
    [
        (300, PROTOBUF_MEDIA_TYPE, "malformed-frame"),
        (100_000, PROTOBUF_MEDIA_TYPE, "too-deep"),
        (100_000, SSE_MEDIA_TYPE, "too-deep"),
    ],
)
def test_an_event_too_deep_for_the_wire_ends_the_stream_with_run_error(
    depth: int, accept: str, rule: str
) -> None:
    """A snapshot too deep to encode (too-deep), or that nests past the protobuf reader's
    bound (malformed-frame: the reader's verdict on such a frame), is refused before it
    leaves: the client gets a failed run, not a frame it cannot read, and no RecursionError
    escapes the body."""
    deep = v1_1.StateSnapshotEvent(snapshot=nested_lists(depth))
    stream = EventStream([START, deep, FINISH], accept)
    result = consume_body(body_of(stream))
    assert result.violation is None
    assert [run.status for run in result.runs] == ["failed"]
    assert stream.violation is not None
    assert (stream.violation.rule, stream.violation.index) == (rule, 1)


def test_headers() -> None:
    assert EventStream([]).headers == {
        "Content-Type": "text/event-stream",
        "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no",
    }


# --- the body --------------------------------------------------------------------------------


def test_a_conformant_run_is_framed_one_write_per_event() -> None:
    events: list[Any] = [
        START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        SOME_TEXT,
        v1_1.TextMessageEndEvent(message_id="m"),
        FINISH,
    ]
    stream = EventStream(events)
    chunks = list(stream)
    assert chunks[0] == b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
    assert chunks[1] == b'data: {"type":"TEXT_MESSAGE_START","messageId":"m"}\n\n'
    assert len(chunks) == 5
    result = consume_body(b"".join(chunks))
    assert result.outcome == "completed"
    assert [run.status for run in result.runs] == ["completed"]
    assert stream.violation is None


@pytest.mark.parametrize("iterate", ["sync", "async-over-sync", "async"])
def test_a_refused_event_ends_the_stream_with_run_error(iterate: str) -> None:
    sent: list[str] = []

    def agent() -> Iterator[Any]:
        for event in (
            START,
            OPEN_TEXT,
            SOME_TEXT,
            v1_1.TextMessageContentEvent(message_id="x", delta="!"),
            FINISH,
        ):
            sent.append(type(event).__name__)
            yield event

    async def async_agent() -> AsyncIterator[Any]:
        for event in agent():
            yield event

    if iterate == "sync":
        stream = EventStream(agent())
        body = b"".join(stream)
    else:
        stream = EventStream(async_agent() if iterate == "async" else agent())
        body = body_of(stream)
    result = consume_body(body)
    assert result.outcome == "completed"  # well formed: the run failed, the stream did not
    assert types_in(body) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "RUN_ERROR",
    ]
    [run] = result.runs
    assert run.status == "failed"
    assert run.error.code == "text-message-not-open"
    assert run.error.message.startswith("[text-message-not-open] event 3")
    assert stream.violation is not None
    assert stream.violation.rule == "text-message-not-open"
    assert "RunFinishedEvent" not in sent  # the agent's iterable was closed, not drained


def test_unrecognised_content_is_refused_before_it_leaves() -> None:
    stream = EventStream([START, {"type": "STEP_STARTED", "stepName": "s", "vendor": 1}])
    body = b"".join(stream)
    assert b"vendor" not in body.split(b"RUN_ERROR")[0]
    assert consume_body(body).runs[0].error.code == "unrecognised-content"


def test_a_run_error_for_unrecognised_content_stays_short_however_much_was_refused() -> None:
    event = {"type": "STEP_STARTED", "stepName": "s", "v" * 100_000: 0}
    event.update({f"vendor{number}": number for number in range(1000)})
    body = b"".join(EventStream([START, event]))
    run_error = body.split(b"\n\n")[1]
    assert run_error.startswith(b'data: {"type":"RUN_ERROR"')
    assert len(run_error) < 2 * MAX_WARNING_LENGTH
    error = consume_body(body).runs[0].error
    assert error is not None
    assert error.code == "unrecognised-content"


def test_a_malformed_dict_is_refused() -> None:
    body = b"".join(EventStream([START, {"type": "STEP_STARTED", "stepName": float("nan")}]))
    assert consume_body(body).runs[0].error.code == "invalid-json"


def test_a_refusal_before_any_run_is_a_leading_run_error() -> None:
    body = b"".join(EventStream([SOME_TEXT]))
    assert types_in(body) == ["RUN_ERROR"]
    assert consume_body(body).runs[0].error.code == "first-event"


def test_a_refusal_after_the_run_finished_is_a_late_run_error() -> None:
    body = b"".join(EventStream([START, FINISH, SOME_TEXT]))
    result = consume_body(body)
    assert result.outcome == "completed"
    assert types_in(body) == ["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR"]
    assert result.runs[0].status == "failed"


def test_no_run_error_follows_the_agents_own() -> None:
    """After RUN_ERROR only RUN_STARTED may come: the refusal ends the stream, no second error."""
    own = v1_1.RunErrorEvent(message="model overloaded")
    stream = EventStream([START, own, SOME_TEXT])
    body = b"".join(stream)
    assert types_in(body) == ["RUN_STARTED", "RUN_ERROR"]
    assert consume_body(body).runs[0].error.message == "model overloaded"
    assert stream.violation is not None
    assert stream.violation.rule == "event-after-run-error"


def test_events_ending_with_the_run_open_end_with_run_error() -> None:
    body = b"".join(EventStream([START, OPEN_TEXT]))
    result = consume_body(body)
    assert result.outcome == "completed"
    assert result.runs[0].error.code == "truncated"


def test_no_events_at_all_is_a_run_error() -> None:
    body = b"".join(EventStream([]))
    assert types_in(body) == ["RUN_ERROR"]


@pytest.mark.parametrize("iterate", ["sync", "async"])
def test_an_event_the_writer_cannot_encode_is_its_refusal_not_the_agents_failure(
    iterate: str,
) -> None:
    stream = EventStream([START, v1_1.StateSnapshotEvent(snapshot={(1, 2): 3})])
    body = b"".join(stream) if iterate == "sync" else body_of(stream)
    error = consume_body(body).runs[0].error
    assert error is not None
    assert error.code == "invalid-json"
    assert stream.violation is not None
    assert (stream.violation.rule, stream.violation.index) == ("invalid-json", 1)
    assert stream.exception is None


def test_an_exception_in_the_agent_becomes_run_error(caplog: pytest.LogCaptureFixture) -> None:
    async def agent() -> AsyncIterator[Any]:
        yield START
        yield OPEN_TEXT
        raise RuntimeError("api key sk-123 rejected")

    stream = EventStream(agent())
    with caplog.at_level(logging.ERROR, logger="agui_msgspec"):
        body = body_of(stream)
    assert b"sk-123" not in body  # the exception's text stays in the log
    result = consume_body(body)
    assert result.outcome == "completed"
    assert result.runs[0].error.code == "agent-exception"
    assert result.runs[0].error.message == "the agent failed (RuntimeError)"
    assert isinstance(stream.exception, RuntimeError)
    assert "sk-123" in caplog.text


def test_an_exception_in_a_sync_agent_becomes_run_error() -> None:
    def agent() -> Iterator[Any]:
        yield START
        raise KeyError("x")

    body = b"".join(EventStream(agent()))
    assert consume_body(body).runs[0].error.message == "the agent failed (KeyError)"


def test_cancellation_is_not_swallowed_and_closes_the_agent() -> None:
    closed = asyncio.Event()

    async def agent() -> AsyncIterator[Any]:
        try:
            yield START
            await asyncio.sleep(60)
            yield FINISH
        finally:
            closed.set()

    async def scenario() -> None:
        async def read() -> None:
            async for _chunk in EventStream(agent()):
                pass

        task = asyncio.create_task(read())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert closed.is_set()

    asyncio.run(scenario())


def test_the_version_pins_the_writer() -> None:
    """A 1.1 field on a 1.0 stream is material a 1.0 consumer would strip: refused."""
    snapshot = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {"role": "assistant", "id": "a", "encryptedValue": "e", "encryptedValueType": "k"}
        ],
    }
    current = consume_body(b"".join(EventStream([START, snapshot, FINISH], version="1.1")))
    assert [run.status for run in current.runs] == ["completed"]
    old = b"".join(EventStream([START, snapshot, FINISH], version=v1_0))
    assert consume_body(old, version="1.0").runs[0].error.code == "unrecognised-content"


@pytest.mark.parametrize("events", [None, 42, object()], ids=["None", "int", "object"])
def test_events_that_are_not_iterable_are_a_usage_error_at_once(events: Any) -> None:
    with pytest.raises(UsageError, match="EventStream"):
        EventStream(events)


def test_a_stream_is_one_body() -> None:
    stream = EventStream([START, FINISH])
    list(stream)
    with pytest.raises(UsageError):
        list(stream)


def test_an_async_source_is_not_iterated_synchronously() -> None:
    async def agent() -> AsyncIterator[Any]:
        yield START

    with pytest.raises(UsageError):
        iter(EventStream(agent()))


# --- an agent's iterable that fails anywhere; the size bound; a client that leaves --------------


class _FailsToStart:
    """An iterable whose ``__iter__``/``__aiter__`` raises before any event."""

    def __iter__(self) -> Iterator[Any]:
        raise RuntimeError("no iterator")

    def __aiter__(self) -> AsyncIterator[Any]:
        raise RuntimeError("no iterator")


def test_an_iterable_that_fails_to_start_ends_with_run_error() -> None:
    sync = EventStream(_FailsToStart())
    assert types_in(b"".join(sync)) == ["RUN_ERROR"]
    assert isinstance(sync.exception, RuntimeError)
    async_stream = EventStream(_FailsToStart())
    assert types_in(body_of(async_stream)) == ["RUN_ERROR"]


def test_an_iterable_whose_close_raises_is_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    class Agent:
        def __init__(self) -> None:
            self.events = iter([START, {"type": "RUN_STARTED"}])

        def __iter__(self) -> Iterator[Any]:
            return self

        def __next__(self) -> Any:
            return next(self.events)

        def close(self) -> None:
            raise OSError("close failed")

    stream = EventStream(Agent())
    with caplog.at_level(logging.ERROR, logger="agui_msgspec"):
        body = b"".join(stream)
    assert types_in(body) == ["RUN_STARTED", "RUN_ERROR"]
    assert isinstance(stream.exception, OSError)
    assert "closing the AG-UI agent's iterable raised" in caplog.text


def test_the_writer_refuses_an_event_a_default_consumer_would_refuse() -> None:
    big = v1_1.TextMessageContentEvent(message_id="m", delta="x" * 100)
    writer = StrictWriter(max_event_size=99)
    writer.frame(START)
    writer.frame(OPEN_TEXT)
    with pytest.raises(TransportError, match="event-too-large") as refused:
        writer.frame(big)
    assert refused.value.index == 2
    fits = StrictWriter(max_event_size=200)
    for event in (START, OPEN_TEXT, big):
        fits.frame(event)
    oversized = "x" * (DEFAULT_MAX_EVENT_SIZE + 1)
    body = b"".join(
        EventStream([START, OPEN_TEXT, {**msgspec.to_builtins(big), "delta": oversized}])
    )
    assert len(body) < 1000  # refused before it left
    assert consume_body(body).runs[0].error.code == "event-too-large"


def test_an_asgi_client_that_leaves_closes_a_never_ending_producer() -> None:
    pytest.importorskip("uvicorn")
    httpx = pytest.importorskip("httpx")
    from serving import serve  # noqa: PLC0415

    closed = threading.Event()

    async def agent() -> AsyncIterator[Any]:
        try:
            yield START
            n = 0
            while True:  # a producer that never ends by itself
                yield {"type": "CUSTOM", "name": "tick", "value": n}
                n += 1
                await asyncio.sleep(0.01)
        finally:
            closed.set()

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await EventStream(agent())(scope, receive, send)

    with serve(app) as url, httpx.stream("POST", url, timeout=10) as response:
        assert response.headers["content-type"] == SSE_MEDIA_TYPE
        received = b""
        for chunk in response.iter_bytes():
            received += chunk
            if received.count(b"data: ") >= 3:
                break
        response.close()  # the client leaves mid-run
        assert closed.wait(10), "the producer was not closed after the client left"


def test_an_asgi_response_carries_the_whole_body() -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(3600)  # the client stays
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(EventStream([START, FINISH])({"type": "http"}, receive, send))
    assert sent[0]["type"] == "http.response.start"
    assert (b"content-type", SSE_MEDIA_TYPE.encode()) in sent[0]["headers"]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    assert types_in(body) == ["RUN_STARTED", "RUN_FINISHED"]
    assert sent[-1] == {"type": "http.response.body", "body": b"", "more_body": False}
