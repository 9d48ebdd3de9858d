"""``ProducerGuard``: ASGI middleware verifying the AG-UI stream an endpoint sends (issue 12, item 2).

The stream under test is the pydantic-ai parallel-tool-call shape: the first call's
``TOOL_CALL_END`` comes when the second call starts, then more ``TOOL_CALL_ARGS`` for the
first. Spec (basic/patterns/streaming, events/tool-calls "Error Handling"): "continuing or
closing a call that is not open, or reopening one that is, is fatal." The guard reports
``tool-call-not-open`` at that event's index while the client still receives the bytes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agui_msgspec import (
    PROTOBUF_MEDIA_TYPE,
    SSE_MEDIA_TYPE,
    EventStream,
    GuardReport,
    HttpAgent,
    ProducerGuard,
    ProtobufReader,
    ProtocolViolation,
    SSEReader,
    TransportError,
    UsageError,
    proto_frame,
)

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from measure import MiB, peak_bytes
from serving import serve
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
INTERLEAVED = [
    START,
    {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "get_weather"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"city": '},
    {"type": "TOOL_CALL_END", "toolCallId": "c1"},
    {"type": "TOOL_CALL_START", "toolCallId": "c2", "toolCallName": "get_time"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '"Paris"}'},  # index 5: c1 is closed
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c2", "delta": "{}"},
    {"type": "TOOL_CALL_END", "toolCallId": "c2"},
    FINISH,
]
GOOD = [
    START,
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hi."},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    FINISH,
]
INPUT = {"threadId": "t", "runId": "r", "messages": []}


def frame(document: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(document).encode() + b"\n\n"


def streaming(events: list[dict[str, Any]], *, split: bool = False) -> StreamingResponse:
    async def body() -> AsyncIterator[bytes]:
        for event in events:
            data = frame(event)
            if split:  # an event's bytes in two sends, with a keep-alive comment first
                yield b": ping\n"
                yield data[:10]
                yield data[10:]
            else:
                yield data

    return StreamingResponse(body(), media_type="text/event-stream")


async def interleaved(request: Request) -> StreamingResponse:
    return streaming(INTERLEAVED, split=request.query_params.get("split") == "1")


async def good(request: Request) -> StreamingResponse:
    return streaming(GOOD, split=request.query_params.get("split") == "1")


async def cut(request: Request) -> StreamingResponse:
    return streaming(GOOD[:3])


async def other(request: Request) -> JSONResponse:
    return JSONResponse({"not": "a stream"})


APP = Starlette(
    routes=[
        Route("/interleaved", interleaved, methods=["POST"]),
        Route("/good", good, methods=["POST"]),
        Route("/cut", cut, methods=["POST"]),
        Route("/other", other, methods=["POST"]),
    ]
)


# --- in process: the ASGI messages themselves -----------------------------------------------


def drive(app: Any, path: str, accept: bytes | None = None) -> list[dict[str, Any]]:
    """Call an ASGI app once for POST ``path`` (with ``accept`` as the ``Accept`` header);
    the messages it sent, in order."""
    sent: list[dict[str, Any]] = []
    requested: list[bool] = []

    async def receive() -> dict[str, Any]:
        if requested:  # the client stays connected: wait until the app stops listening
            await asyncio.Event().wait()
        requested.append(True)
        return {"type": "http.request", "body": json.dumps(INPUT).encode(), "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": [(b"content-type", b"application/json")]
        + ([] if accept is None else [(b"accept", accept)]),
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    return sent


def body_of(messages: list[dict[str, Any]]) -> bytes:
    return b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")


@pytest.mark.parametrize("split", ["0", "1"])
def test_the_guard_reports_the_interleaved_args_at_their_index(split: str) -> None:
    reports: list[GuardReport] = []
    guarded = drive(ProducerGuard(APP, on_violation=reports.append), f"/interleaved?split={split}")
    unguarded = drive(APP, f"/interleaved?split={split}")
    (report,) = reports
    assert (report.violation.rule, report.violation.index) == ("tool-call-not-open", 5)
    assert json.loads(report.event or b"") == INTERLEAVED[5]
    assert report.path == "/interleaved"
    # Observing adds no buffering: the client gets the very messages the app sent.
    assert guarded == unguarded


def test_the_guard_logs_the_rule_index_and_event(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="agui_msgspec.guard"):
        drive(ProducerGuard(APP), "/interleaved")
    (record,) = caplog.records
    assert record.name == "agui_msgspec.guard"
    assert record.agui_rule == "tool-call-not-open"  # type: ignore[attr-defined]
    assert record.agui_index == 5  # type: ignore[attr-defined]
    assert "Paris" in record.getMessage()


def test_the_guards_log_line_is_one_line_whatever_the_path_and_stream_hold(
    caplog: pytest.LogCaptureFixture,
) -> None:
    wild = "x\n2026-12-05 INFO all good\x1b[2J"
    events = [
        START,
        {"type": "STEP_FINISHED", "stepName": wild, wild: 1},  # never started: rejected
    ]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", SSE_MEDIA_TYPE.encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        body = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)
        await send({"type": "http.response.body", "body": body + b"data: {\n\x1b]0;x\x07\n\n"})

    with caplog.at_level(logging.WARNING, logger="agui_msgspec.guard"):
        drive(ProducerGuard(app), "/run/" + wild)  # a path as ASGI gives it: percent-decoded
    (record,) = caplog.records
    message = record.getMessage()
    assert message.isprintable()
    assert "/run/x\\x0a2026-12-05 INFO all good\\x1b[2J" in message
    assert record.agui_rule == "step-not-open"  # type: ignore[attr-defined]


def test_bytes_go_out_before_the_guard_judges_them() -> None:
    order: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for event in INTERLEAVED:
            await send({"type": "http.response.body", "body": frame(event), "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body" and message["body"]:
            order.append(json.loads(message["body"][6:])["type"])

    guard = ProducerGuard(app, on_violation=lambda report: order.append("REPORT"))
    asyncio.run(guard({"type": "http", "path": "/"}, receive, send))
    assert order.index("REPORT") == 6  # after the offending event (index 5) went out


def test_a_conformant_stream_is_passed_on_untouched_and_unreported() -> None:
    for split in ("0", "1"):
        reports: list[GuardReport] = []
        guarded = drive(ProducerGuard(APP, on_violation=reports.append), f"/good?split={split}")
        assert reports == []
        assert guarded == drive(APP, f"/good?split={split}")


def test_a_body_ending_inside_a_run_is_reported_as_truncated() -> None:
    reports: list[GuardReport] = []
    drive(ProducerGuard(APP, on_violation=reports.append), "/cut")
    (report,) = reports
    assert report.violation.rule == "truncated"
    assert report.event is None


def test_responses_that_are_not_event_streams_are_not_verified() -> None:
    reports: list[GuardReport] = []
    sent = drive(ProducerGuard(APP, on_violation=reports.append), "/other")
    assert reports == []
    assert json.loads(body_of(sent)) == {"not": "a stream"}


def test_a_compressed_stream_is_passed_unverified_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/event-stream"), (b"content-encoding", b"gzip")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send(
            {"type": "http.response.body", "body": b"\x1f\x8b not verified", "more_body": False}
        )

    reports: list[GuardReport] = []
    with caplog.at_level(logging.WARNING, logger="agui_msgspec.guard"):
        sent = drive(ProducerGuard(app, on_violation=reports.append), "/")
    assert reports == []
    assert body_of(sent) == b"\x1f\x8b not verified"
    assert "compressed" in caplog.text


def test_a_failing_callback_does_not_break_the_response(caplog: pytest.LogCaptureFixture) -> None:
    def explode(report: GuardReport) -> None:
        raise RuntimeError("boom")

    with caplog.at_level(logging.WARNING, logger="agui_msgspec.guard"):
        sent = drive(ProducerGuard(APP, on_violation=explode), "/interleaved")
    assert body_of(sent) == b"".join(frame(e) for e in INTERLEAVED)
    assert "callback failed" in caplog.text


# --- enforcing: RUN_ERROR instead of the broken event --------------------------------------


def events_of(body: bytes) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in body.split(b"\n") if line.startswith(b"data: ")]


@pytest.mark.parametrize("split", ["0", "1"])
def test_enforcing_ends_the_stream_with_run_error_before_the_broken_event(split: str) -> None:
    reports: list[GuardReport] = []
    guard = ProducerGuard(APP, on_violation=reports.append, end_with_run_error=True)
    events = events_of(body_of(drive(guard, f"/interleaved?split={split}")))
    assert events[:5] == INTERLEAVED[:5]  # everything verified before it was delivered
    assert events[5]["type"] == "RUN_ERROR"
    assert events[5]["code"] == "agui-guard:tool-call-not-open"
    assert len(events) == 6
    assert reports[0].violation.index == 5


def test_enforcing_passes_a_conformant_stream_whole() -> None:
    for split in ("0", "1"):
        guard = ProducerGuard(APP, end_with_run_error=True)
        assert body_of(drive(guard, f"/good?split={split}")) == body_of(
            drive(APP, f"/good?split={split}")
        )


def test_enforcing_holds_each_event_until_it_is_complete() -> None:
    guard = ProducerGuard(APP, end_with_run_error=True)
    sent = [m["body"] for m in drive(guard, "/good?split=1") if m["type"] == "http.response.body"]
    for body in sent:  # every send is whole events (and comments), never a part of one
        assert body == b"" or body.endswith(b"\n\n") or body == b": ping\n"


def test_enforcing_replaces_a_cut_run_with_run_error() -> None:
    guard = ProducerGuard(APP, end_with_run_error=True)
    events = events_of(body_of(drive(guard, "/cut")))
    assert [e["type"] for e in events] == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "RUN_ERROR",
    ]
    assert events[-1]["code"] == "agui-guard:truncated"


def test_enforcing_refuses_an_event_that_grows_past_the_bound() -> None:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        await send({"type": "http.response.body", "body": frame(START), "more_body": True})
        await send(
            {
                "type": "http.response.body",
                "body": b'data: {"type":"CUSTOM","value":"',
                "more_body": True,
            }
        )
        for _ in range(100):
            await send({"type": "http.response.body", "body": b"x" * 1000, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    reports: list[GuardReport] = []
    guard = ProducerGuard(
        app, on_violation=reports.append, end_with_run_error=True, max_event_size=10_000
    )
    events = events_of(body_of(drive(guard, "/")))
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert reports[0].violation.rule == "event-too-large"


def keeping_alive(comments: int, *, inside_event: bool = False) -> Any:
    """An app sending RUN_STARTED, then ``comments`` keep-alive comment lines (after the
    first line of an event when ``inside_event``), then a blank line and RUN_FINISHED."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": frame(START), "more_body": True})
        if inside_event:
            line = b'data: {"type":"CUSTOM","name":"x","value":1}\n'
            await send({"type": "http.response.body", "body": line, "more_body": True})
        for _ in range(comments):
            await send({"type": "http.response.body", "body": COMMENT, "more_body": True})
        body = b"\n" + frame(FINISH)
        await send({"type": "http.response.body", "body": body, "more_body": False})

    return app


COMMENT = b": keep-alive\n"


def stream_bodies(guard: ProducerGuard, on_body: Any) -> None:
    """Run ``guard`` for one request, handing each body it sends to ``on_body``, unkept."""

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            on_body(message["body"])

    asyncio.run(guard({"type": "http", "path": "/", "headers": []}, receive, send))


def test_enforcing_sends_keep_alive_comments_between_events_at_once() -> None:
    received: list[bytes] = []
    app = keeping_alive(3)

    async def watched(scope: Any, receive: Any, send: Any) -> None:
        async def send_and_see(message: dict[str, Any]) -> None:
            await send(message)
            seen.append(b"".join(received))  # what the client has once the app's send returns

        await app(scope, receive, send_and_see)

    seen: list[bytes] = []
    stream_bodies(ProducerGuard(watched, end_with_run_error=True), received.append)
    assert seen[2:5] == [frame(START) + COMMENT * n for n in (1, 2, 3)]
    assert b"".join(received) == frame(START) + COMMENT * 3 + b"\n" + frame(FINISH)


def test_enforcing_holds_no_keep_alive_comment_between_events() -> None:
    sizes: list[int] = [0, 0]  # the number of bodies sent, the largest

    def count(body: bytes) -> None:
        sizes[:] = [sizes[0] + 1, max(sizes[1], len(body))]

    reports: list[GuardReport] = []
    guard = ProducerGuard(
        keeping_alive(100_000), on_violation=reports.append, end_with_run_error=True
    )
    _, peak = peak_bytes(lambda: stream_bodies(guard, count))
    assert sizes == [100_002, len(frame(FINISH)) + 1]
    assert reports == []
    assert peak < MiB  # held, the 1.3 MB of comments would pass it twice over


def test_enforcing_refuses_comments_held_inside_an_event_past_the_bound() -> None:
    reports: list[GuardReport] = []
    guard = ProducerGuard(
        keeping_alive(1000, inside_event=True),
        on_violation=reports.append,
        end_with_run_error=True,
        max_event_size=10_000,
    )
    events = events_of(body_of(drive(guard, "/")))
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert events[-1]["code"] == "agui-guard:event-too-large"
    assert [(r.violation.rule, r.violation.index) for r in reports] == [("event-too-large", 1)]


def test_enforcing_passes_an_event_as_large_as_the_reader_accepts() -> None:
    payload = b'{"type":"CUSTOM","name":"x","value":"' + b"y" * 5000 + b'"}'
    body = frame(START) + b"data: " + payload + b"\r\n\r\n" + frame(FINISH)
    reports: list[GuardReport] = []
    guard = ProducerGuard(
        raw_app(body, 1),
        on_violation=reports.append,
        end_with_run_error=True,
        max_event_size=len(payload),
    )
    assert body_of(drive(guard, "/")) == body
    assert reports == []


# --- over the network: the client still gets the bytes -------------------------------------


@pytest.fixture
def served() -> Iterator[tuple[str, list[GuardReport]]]:
    reports: list[GuardReport] = []
    with serve(ProducerGuard(APP, on_violation=reports.append)) as url:
        yield url, reports


def test_behind_uvicorn_the_client_and_the_guard_agree(
    served: tuple[str, list[GuardReport]],
) -> None:
    url, reports = served

    async def scenario() -> tuple[int, ProtocolViolation]:
        delivered = 0
        async with HttpAgent(url + "/interleaved").run(INPUT) as stream:
            try:
                async for _ in stream:
                    delivered += 1
            except (ProtocolViolation, TransportError) as violation:
                return delivered, violation
        raise AssertionError("the client accepted the interleaved stream")

    delivered, violation = asyncio.run(scenario())
    assert (violation.rule, violation.index, delivered) == ("tool-call-not-open", 5, 5)
    (report,) = reports
    assert (report.violation.rule, report.violation.index) == ("tool-call-not-open", 5)


def raw_app(
    body: bytes, piece: int, media_type: bytes = b"text/event-stream; charset=utf-8"
) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        headers = [(b"content-type", media_type)]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for start in range(0, len(body), piece):
            chunk = body[start : start + piece]
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("piece", [1, 3, 7, 64, 100_000])
def test_enforcing_cuts_at_event_boundaries_whatever_the_line_ends_and_sends(
    line_end: bytes, piece: int
) -> None:
    def body(events: list[dict[str, Any]]) -> bytes:
        text = b"\xef\xbb\xbf: hello\n\n" + b"".join(frame(e) for e in events)
        return text.replace(b"\n", line_end)

    reports: list[GuardReport] = []
    good_body = body(GOOD)
    sent = drive(ProducerGuard(raw_app(good_body, piece), end_with_run_error=True), "/")
    assert body_of(sent) == good_body
    bad = drive(
        ProducerGuard(
            raw_app(body(INTERLEAVED), piece), on_violation=reports.append, end_with_run_error=True
        ),
        "/",
    )
    received = body_of(bad)
    assert received.startswith(body(INTERLEAVED[:5]))
    assert received.endswith(b"\n\n")
    reader = SSEReader()  # the client reads the RUN_ERROR whole: no part of event 5 came first
    payloads = [json.loads(p) for p in reader.feed(received) + reader.close()]
    assert [p["type"] for p in payloads] == [e["type"] for e in INTERLEAVED[:5]] + ["RUN_ERROR"]
    assert b'"code":"agui-guard:tool-call-not-open"' in received
    assert [r.violation.index for r in reports] == [5]


@pytest.mark.parametrize("line_end", [b"\n", b"\r\n", b"\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("piece", [1, 7, 100_000])
def test_observing_reports_the_same_index_whatever_the_line_ends_and_sends(
    line_end: bytes, piece: int
) -> None:
    body = b"".join(frame(e) for e in INTERLEAVED).replace(b"\n", line_end)
    reports: list[GuardReport] = []
    sent = drive(ProducerGuard(raw_app(body, piece), on_violation=reports.append), "/")
    assert body_of(sent) == body
    assert [(r.violation.rule, r.violation.index) for r in reports] == [("tool-call-not-open", 5)]


def test_an_oversized_event_is_reported_once_and_passed_on() -> None:
    big = b'data: {"type":"CUSTOM","name":"x","value":"' + b"y" * 5000 + b'"}\n\n'
    body = frame(START) + big + big + frame(FINISH)
    reports: list[GuardReport] = []
    app = ProducerGuard(raw_app(body, 1000), on_violation=reports.append, max_event_size=1000)
    assert body_of(drive(app, "/")) == body
    assert [(r.violation.rule, r.violation.index) for r in reports] == [("event-too-large", 1)]


@pytest.mark.parametrize("options", [{"version": "9.9"}, {"max_event_size": 0}])
def test_a_bad_option_is_refused_when_the_guard_is_built(options: dict[str, Any]) -> None:
    """Not by every response it would then break."""
    with pytest.raises(UsageError):
        ProducerGuard(raw_app(b"", 1), **options)


# --- the HTTP + Protobuf binding -------------------------------------------------------------

PROTOBUF = b"application/vnd.ag-ui.event+proto"


def proto_body(events: list[dict[str, Any]]) -> bytes:
    return b"".join(proto_frame(event) for event in events)


def proto_events(body: bytes) -> list[dict[str, Any]]:
    reader = ProtobufReader()
    payloads = reader.feed(body)
    reader.close()
    assert not reader.discarded_partial, "the guard sent part of a frame"
    return [json.loads(payload) for payload in payloads]


@pytest.mark.parametrize("piece", [1, 7, 100_000])
def test_observing_verifies_a_protobuf_body_and_passes_it_on(piece: int) -> None:
    reports: list[GuardReport] = []
    body = proto_body(INTERLEAVED)
    sent = drive(ProducerGuard(raw_app(body, piece, PROTOBUF), on_violation=reports.append), "/")
    assert body_of(sent) == body
    assert [(r.violation.rule, r.violation.index) for r in reports] == [("tool-call-not-open", 5)]
    assert json.loads(reports[0].event or b"")["toolCallId"] == "c1"


@pytest.mark.parametrize("piece", [1, 7, 100_000])
def test_enforcing_a_protobuf_body_ends_it_with_a_run_error_frame(piece: int) -> None:
    reports: list[GuardReport] = []
    guard = ProducerGuard(
        raw_app(proto_body(INTERLEAVED), piece, PROTOBUF),
        on_violation=reports.append,
        end_with_run_error=True,
    )
    sent = drive(guard, "/")
    for message in sent:  # every send is whole frames, never a part of one
        if message["type"] == "http.response.body":
            proto_events(message["body"])
    events = proto_events(body_of(sent))
    assert [e["type"] for e in events[:5]] == [e["type"] for e in INTERLEAVED[:5]]
    assert events[5]["type"] == "RUN_ERROR"
    assert events[5]["code"] == "agui-guard:tool-call-not-open"
    assert len(events) == 6
    assert [r.violation.index for r in reports] == [5]


@pytest.mark.parametrize("piece", [1, 100_000])
def test_enforcing_passes_a_conformant_protobuf_body_whole(piece: int) -> None:
    body = proto_body(GOOD)
    sent = drive(ProducerGuard(raw_app(body, piece, PROTOBUF), end_with_run_error=True), "/")
    assert body_of(sent) == body


def test_enforcing_replaces_a_protobuf_body_cut_inside_a_frame_with_run_error() -> None:
    body = proto_body(GOOD)[:-3]  # the last frame, RUN_FINISHED, cut short
    reports: list[GuardReport] = []
    guard = ProducerGuard(
        raw_app(body, 100_000, PROTOBUF), on_violation=reports.append, end_with_run_error=True
    )
    events = proto_events(body_of(drive(guard, "/")))
    assert [e["type"] for e in events] == [e["type"] for e in GOOD[:4]] + ["RUN_ERROR"]
    assert events[-1]["code"] == "agui-guard:truncated"


def test_enforcing_refuses_a_protobuf_frame_longer_than_the_bound_from_its_header() -> None:
    header = (10**9).to_bytes(4, "big")  # a gigabyte announced: refused before it is held
    reports: list[GuardReport] = []
    guard = ProducerGuard(
        raw_app(proto_frame(START) + header + b"x" * 100, 7, PROTOBUF),
        on_violation=reports.append,
        end_with_run_error=True,
    )
    events = proto_events(body_of(drive(guard, "/")))
    assert [e["type"] for e in events] == ["RUN_STARTED", "RUN_ERROR"]
    assert [(r.violation.rule, r.violation.index) for r in reports] == [("event-too-large", 1)]


async def negotiating(scope: Any, receive: Any, send: Any) -> None:
    """An endpoint answering in the binding its request's Accept asks for."""
    accept = dict(scope["headers"]).get(b"accept", b"").decode()
    await EventStream([START, FINISH], accept)(scope, receive, send)


def content_type(messages: list[dict[str, Any]]) -> bytes:
    return dict(messages[0]["headers"])[b"content-type"]


@pytest.mark.parametrize("end_with_run_error", [False, True])
def test_a_guard_not_offering_protobuf_makes_the_app_answer_sse(end_with_run_error: bool) -> None:
    reports: list[GuardReport] = []
    asked = PROTOBUF_MEDIA_TYPE.encode()
    sse_only = ProducerGuard(
        negotiating,
        on_violation=reports.append,
        end_with_run_error=end_with_run_error,
        offer_protobuf=False,
    )
    sent = drive(sse_only, "/run", accept=b"text/event-stream, " + asked)
    assert content_type(sent) == SSE_MEDIA_TYPE.encode()
    assert [e["type"] for e in events_of(body_of(sent))] == ["RUN_STARTED", "RUN_FINISHED"]
    assert reports == []
    # by default the client's Accept reaches the app as it was sent: protobuf is answered
    default = drive(
        ProducerGuard(negotiating, end_with_run_error=end_with_run_error), "/run", asked
    )
    assert content_type(default) == asked
    assert body_of(default) == proto_frame(START) + proto_frame(FINISH)
