"""One error tree: whatever a public entry point is given, only this library's errors
(``AguiError`` subclasses) escape it (issue 22). Wrong argument types are ``UsageError``s,
hostile bytes and odd objects the rule they break; the tree itself is as drawn in
``agui_msgspec._errors``."""

from __future__ import annotations

import asyncio
import http.server
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from docstrings import own_docstring
from serving import serve_handler

import agui_msgspec as agui
from agui_msgspec._tools.cli import main


class _RaisingAttributes:
    """An application object whose every attribute read raises its own exception."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name}")


def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


HOSTILE: dict[str, Any] = {
    "None": None,
    "int": 1,
    "bool": True,
    "nan": float("nan"),
    "object": object(),
    "type": int,
    "list": [1],
    "set": {1},
    "dict with a bad tag": {"type": 1},
    "bytes not UTF-8": b"\xff\x00{",
    "lone surrogate": "\udcff",
    "raising attributes": _RaisingAttributes(),
    "nested past the stack": _nested(100_000),
    "generator": (chunk for chunk in [b"data: x\n\n"]),
}
STARTED = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
INPUT = {"threadId": "t", "runId": "r", "messages": []}
MESSAGE = {"role": "user", "id": "u", "content": "hi"}


def _drain(frames: Any) -> list[bytes]:
    return list(frames)


ENTRY_POINTS: dict[str, Callable[[Any], object]] = {
    "consume": agui.consume,
    "consume([x])": lambda x: agui.consume([x]),
    "consume(version=x)": lambda x: agui.consume([], version=x),
    "consume(input=x)": lambda x: agui.consume([], input=x),
    "consume_body": agui.consume_body,
    "consume_body([x])": lambda x: agui.consume_body([x]),
    "Consumer(version=x)": agui.Consumer,
    "Consumer.feed": lambda x: agui.Consumer().feed(x),
    "Consumer.receive": lambda x: agui.Consumer().receive(x),
    "Consumer.close": lambda x: agui.Consumer().close(inside_event=x),
    "parse_run_input": agui.parse_run_input,
    "parse_run_input(version=x)": lambda x: agui.parse_run_input(INPUT, x),
    "read_input": lambda x: agui.read_input(x),  # noqa: PLW0108  (looked up as called: it warns)
    "build_run_input": agui.build_run_input,
    "build_run_input(peer_version=x)": lambda x: agui.build_run_input(INPUT, peer_version=x),
    "build_run_input(interrupts=x)": lambda x: agui.build_run_input(INPUT, interrupts=x),
    "build_run_input(interrupts=[x])": lambda x: agui.build_run_input(INPUT, interrupts=[x]),
    "build_run_input(now=x)": lambda x: agui.build_run_input(INPUT, now=x),
    "Consumer.set_media_type": lambda x: agui.Consumer().set_media_type(x),
    "prepare_input": lambda x: agui.prepare_input(x),  # noqa: PLW0108
    "from_official": agui.from_official,
    "from_official(version=x)": lambda x: agui.from_official(object(), x),
    "to_official": agui.to_official,
    "StrictWriter(version=x)": agui.StrictWriter,
    "StrictWriter(framing=x)": lambda x: agui.StrictWriter(framing=x),
    "StrictWriter(max_event_size=x)": lambda x: agui.StrictWriter(max_event_size=x),
    "StrictWriter.frame": lambda x: agui.StrictWriter().frame(x),
    "StrictWriter.frame(protobuf)": lambda x: agui.StrictWriter(framing="protobuf").frame(x),
    "EventStream": lambda x: _drain(agui.EventStream(x)),
    "EventStream([x])": lambda x: _drain(agui.EventStream([STARTED, x])),
    "EventStream(accept=x)": lambda x: _drain(agui.EventStream([], x)),
    "negotiate_media_type": agui.negotiate_media_type,
    "ProducerGuard(version=x)": lambda x: agui.ProducerGuard(lambda *_: None, version=x),
    "encode": agui.encode,
    "sse_frame": agui.sse_frame,
    "encode_proto": agui.encode_proto,
    "proto_frame": agui.proto_frame,
    "SSEReader.feed": lambda x: agui.SSEReader().feed(x),
    "JSONLinesReader.feed": lambda x: agui.JSONLinesReader().feed(x),
    "ProtobufReader.feed": lambda x: agui.ProtobufReader().feed(x),
    "HttpAgent(url=x)": agui.HttpAgent,
    "HttpAgent(timeout=x)": lambda x: agui.HttpAgent("http://127.0.0.1:9/", timeout=x),
    "HttpAgent(version=x)": lambda x: agui.HttpAgent("http://127.0.0.1:9/", version=x),
    "HttpAgent(peer_version=x)": lambda x: agui.HttpAgent("http://127.0.0.1:9/", peer_version=x),
    "HttpAgent.run_sync(input=x)": lambda x: agui.HttpAgent("http://127.0.0.1:9/").run_sync(x),
    "generate(schema=x)": lambda x: agui.generate(x, "out-not-written"),
    "main": main,
    "decode": agui.decode,
    "decode(version=x)": lambda x: agui.decode(STARTED, x),
    "Decoder(version=x)": agui.Decoder,
    "Decoder(peer_version=x)": lambda x: agui.Decoder(peer_version=x),
    "Decoder(max_warnings=x)": lambda x: agui.Decoder(max_warnings=x),
    "Decoder(middleware=x)": lambda x: agui.Decoder(middleware=x).decode(STARTED),
    "Decoder.decode": lambda x: agui.Decoder().decode(x),
    "Decoder.decode(index=x)": lambda x: agui.Decoder().decode(STARTED, x),
    "Decoder.decode_many": lambda x: agui.Decoder().decode_many(x),
    "Decoder.decode_many([x])": lambda x: agui.Decoder().decode_many([x, x]),
    "Decoder.decode_conformant": lambda x: agui.Decoder().decode_conformant(x),
    "Decoder.decode_batch": lambda x: agui.Decoder().decode_batch(x),
    "decode_message": agui.decode_message,
    "decode_message(version=x)": lambda x: agui.decode_message(MESSAGE, x),
    "Consumer.feed_many": lambda x: agui.Consumer().feed_many(x),
    "Consumer.feed_many([x])": lambda x: agui.Consumer().feed_many([STARTED, x]),
    "VerifyingConsumer.feed": lambda x: agui.VerifyingConsumer().feed(x),
    "SSEReader(max_event_size=x)": lambda x: agui.SSEReader(max_event_size=x),
    "JSONLinesReader(max_event_size=x)": lambda x: agui.JSONLinesReader(max_event_size=x),
    "ProtobufReader(max_event_size=x)": lambda x: agui.ProtobufReader(max_event_size=x),
    "HttpAgent(headers=x)": lambda x: agui.HttpAgent("http://127.0.0.1:9/", headers=x),
    "HttpAgent(client=x).run_sync": lambda x: agui.HttpAgent(
        "http://127.0.0.1:9/", client=x
    ).run_sync(INPUT),
    "ProducerGuard(app=x)": agui.ProducerGuard,
    "verify": agui.verify,
    "verify([x])": lambda x: agui.verify([STARTED, x]),
    "verify(input=x)": lambda x: agui.verify([], input=x),
    "verify(levels=x)": lambda x: agui.verify([], levels=x),
    "verify(media_type=x)": lambda x: agui.verify(b"", media_type=x),
    "verify(max_event_size=x)": lambda x: agui.verify(b"", max_event_size=x),
    "verify(max_violations=x)": lambda x: agui.verify([], max_violations=x),
    "render_text": agui.render_text,
    "render_json": agui.render_json,
    "render_sarif": agui.render_sarif,
    "render_junit": agui.render_junit,
    "render_html": agui.render_html,
    "render_sarif(artifact=x)": lambda x: agui.render_sarif(agui.verify([]), x),
    "render_junit(name=x)": lambda x: agui.render_junit(agui.verify([]), x),
    "render_html(title=x)": lambda x: agui.render_html(agui.verify([]), x),
    "HttpAgent(max_event_size=x)": lambda x: agui.HttpAgent(
        "http://127.0.0.1:9/", max_event_size=x
    ),
}
WARNED = {**STARTED, "vendorProperty": 1}  # a payload whose decode says a warning
CALLBACKS: dict[str, Callable[[Any], object]] = {
    "decode(on_warning=x)": lambda x: agui.decode(WARNED, on_warning=x),
    "Decoder(on_warning=x)": lambda x: agui.Decoder(on_warning=x),
    "Consumer(on_warning=x)": lambda x: agui.Consumer(on_warning=x),
    "consume(on_warning=x)": lambda x: agui.consume([], on_warning=x),
    "decode_message(on_warning=x)": lambda x: agui.decode_message(MESSAGE, on_warning=x),
    "parse_run_input(on_warning=x)": lambda x: agui.parse_run_input(INPUT, on_warning=x),
    "build_run_input(on_warning=x)": lambda x: agui.build_run_input(INPUT, on_warning=x),
    "ProtobufReader(on_warning=x)": lambda x: agui.ProtobufReader(on_warning=x),
    "HttpAgent(on_warning=x)": lambda x: agui.HttpAgent("http://127.0.0.1:9/", on_warning=x),
    "ProducerGuard(on_violation=x)": lambda x: agui.ProducerGuard(_app, on_violation=x),
}


async def _app(scope: Any, receive: Any, send: Any) -> None:
    """An ASGI application that answers nothing (a guard is made, never called)."""


def _escapes(call: Callable[[Any], object], value: Any) -> BaseException | None:
    """What escapes ``call(value)`` that is not the library's own (nor argparse's exit)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the deprecated names, and the guard's log
            call(value)
    except (agui.AguiError, SystemExit):
        return None
    except BaseException as other:
        return other
    return None


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_only_library_errors_escape_an_entry_point(entry: str, tmp_path: Path) -> None:
    call = ENTRY_POINTS[entry]
    escaped = {
        name: f"{type(error).__name__}: {str(error)[:80]}"
        for name, value in HOSTILE.items()
        if (error := _escapes(call, value)) is not None
    }
    assert escaped == {}


@pytest.mark.parametrize("entry", sorted(CALLBACKS))
def test_a_callback_that_cannot_be_called_is_refused_when_it_is_given(entry: str) -> None:
    """Before any stream: else the first warning would fail mid-stream as a ``TypeError``.
    (A callable callback's own exception is its own, and goes through.)"""
    for value in HOSTILE.values():
        if value is None or callable(value):
            continue
        with pytest.raises(agui.UsageError, match=r"on_\w+= takes a callable or None"):
            CALLBACKS[entry](value)
    CALLBACKS[entry](None)
    CALLBACKS[entry](print)


def test_a_wrong_argument_type_is_a_usage_error_naming_the_type() -> None:
    with pytest.raises(agui.UsageError, match="takes bytes, not str"):
        agui.Consumer().receive("data: {}\n\n")  # type: ignore[arg-type]
    with pytest.raises(agui.UsageError, match="not list"):
        agui.consume([], version=_nested(100_000))  # type: ignore[arg-type]
    with pytest.raises(agui.UsageError, match="not int"):
        agui.consume(1)  # type: ignore[arg-type]
    with pytest.raises(agui.UsageError, match=r"decode_many\(\) takes an iterable of payloads"):
        agui.Decoder().decode_many(None)  # type: ignore[arg-type]
    with pytest.raises(agui.UsageError, match="middleware= takes callables, not str"):
        agui.Decoder(middleware=["not a stage"])  # type: ignore[list-item]
    with pytest.raises(agui.UsageError, match="index must be an int of at least 0, not -1"):
        agui.Decoder().decode(STARTED, -1)
    with pytest.raises(agui.UsageError, match="max_event_size must be an int of at least 1"):
        agui.SSEReader(max_event_size=None)  # type: ignore[arg-type]
    with pytest.raises(agui.UsageError, match="max_event_size must be an int of at least 1"):
        agui.ProtobufReader(max_event_size=True)
    with pytest.raises(agui.UsageError, match="timeout= takes a number of seconds or None"):
        agui.HttpAgent("http://127.0.0.1:9/", timeout=True)
    with pytest.raises(agui.UsageError, match="takes an ASGI application, not int"):
        agui.ProducerGuard(5)  # type: ignore[arg-type]
    with pytest.raises(agui.UsageError, match="takes a Report, not dict"):
        agui.render_text({"verdict": "accepted"})  # type: ignore[arg-type]
    with pytest.raises(agui.UsageError, match="title= is not text"):
        agui.render_html(agui.verify([]), title="\udcff")


def test_headers_http_cannot_send_are_refused_without_showing_their_value() -> None:
    """Else the first request fails as if the server could not be reached."""
    for headers in ({"X": "a\r\nHost: elsewhere"}, {"Bad Name": "v"}, {"X": " padded"}):
        with pytest.raises(agui.UsageError, match="which HTTP cannot send") as refused:
            agui.HttpAgent("http://127.0.0.1:9/", headers=headers)
        assert "elsewhere" not in str(refused.value)
        assert "padded" not in str(refused.value)
    with pytest.raises(agui.UsageError, match="are not HTTP headers"):
        agui.HttpAgent("http://127.0.0.1:9/", headers={"X": "caf\u00e9"})
    agent = agui.HttpAgent("http://127.0.0.1:9/", headers={"Authorization": "Bearer a\tb c"})
    assert agent.headers["authorization"] == "Bearer a\tb c"


def test_a_right_type_reads_on() -> None:
    """The argument checks refuse only the wrong type: the right one still works."""
    assert agui.Consumer().receive(memoryview(b"data: ")) == []
    assert agui.consume([STARTED], version="1.1").outcome == "failed"  # truncated, not refused
    assert agui.negotiate_media_type(None) == agui.SSE_MEDIA_TYPE


# --- the tree ----------------------------------------------------------------------------------


def test_a_transport_error_is_not_a_protocol_violation_but_reads_like_one() -> None:
    error = agui.TransportError("cut", "the connection broke", index=3)
    assert isinstance(error, agui.AguiError)
    assert not isinstance(error, agui.ProtocolViolation)
    assert (error.rule, error.index, error.path, error.detail, error.delivered) == (
        "cut",
        3,
        "",
        "the connection broke",
        [],
    )


WILD = "x\n2026-12-05 INFO all good\x1b[2J\u202e"
"""A name a stream or a client could send: a forged log line, an escape sequence, a bidi override."""
SHOWN = "x\\x0a2026-12-05 INFO all good\\x1b[2J\\u202e"


def test_a_warning_is_one_line_whatever_names_it_quotes() -> None:
    # warnings go to logs (on_warning=logger.warning): a name is shown escaped, one line each
    said: list[str] = []
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    message = {"id": "u", "role": "user", "content": "hi", WILD: 1}
    result = agui.consume(
        [start, {"type": "CUSTOM", "name": "n", "value": 1, WILD: 1}], on_warning=said.append
    )
    agui.decode({"type": "CUSTOM", "name": "n", "value": 1, WILD: 1}, on_warning=said.append)
    agui.decode_message(message, on_warning=said.append)
    request = {"threadId": "t", "runId": "r", "messages": [message], WILD: 1}
    agui.parse_run_input(request, on_warning=said.append)
    agui.build_run_input(request, on_warning=said.append)
    assert len(said) == 7  # the inputs' warnings: the message's and the input's own
    assert all(warning.isprintable() and SHOWN in warning for warning in said)
    assert result.warnings[0] == said[0] == f"event 1 /{SHOWN}: removed unrecognised property"


def test_an_errors_text_is_one_line_and_its_attributes_stay_exact() -> None:
    error = agui.MalformedEvent("malformed-event", f"{WILD} is wrong", index=2, path=f"/{WILD}")
    assert str(error) == f"[malformed-event] event 2 at /{SHOWN}: {SHOWN} is wrong"
    assert (error.path, error.detail) == (f"/{WILD}", f"{WILD} is wrong")  # for code: exact
    cut = agui.TransportError("cut", WILD)
    assert str(cut) == f"[cut] {SHOWN}"
    run = agui.consume(
        [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            {"type": "RUN_ERROR", "message": WILD},
        ]
    )
    error = run.runs[-1].error
    assert error is not None
    assert error.message == WILD  # the value itself, as sent


def test_a_framing_failure_still_rejects_a_consumed_body() -> None:
    result = agui.consume_body(b"data: " + b"x" * 64 + b"\n\n", max_warnings=10)
    assert result.outcome == "failed"  # x... is not JSON: a MalformedEvent
    big = agui.Consumer(max_event_size=8)
    with pytest.raises(agui.TransportError) as raised:
        big.receive(b"data: " + b"x" * 64)
    assert raised.value.rule == "event-too-large"
    assert big.violation is raised.value


def test_a_request_body_error_is_malformed_input_and_still_a_malformed_event() -> None:
    with pytest.raises(agui.MalformedInput) as raised:
        agui.parse_run_input(b"[]")
    assert isinstance(raised.value, agui.MalformedEvent)  # for one release
    assert (raised.value.rule, raised.value.subject) == ("malformed-input", "request body")
    with pytest.raises(agui.MalformedInput):
        agui.build_run_input({"threadId": 1})


def test_every_error_class_is_under_one_base_and_lists_its_attributes() -> None:
    classes = [
        value
        for value in vars(agui).values()
        if isinstance(value, type) and issubclass(value, BaseException)
    ]
    assert {cls.__name__ for cls in classes} >= {"TransportError", "MalformedInput", "UsageError"}
    for cls in classes:
        assert issubclass(cls, agui.AguiError), cls
        doc = own_docstring(cls) or cls.__doc__ or ""
        assert "ttributes" in doc, f"{cls.__name__}'s docstring lists no attributes"


# --- the official SDK and the event loop -------------------------------------------------------


def test_to_official_of_what_the_models_cannot_hold_is_a_usage_error() -> None:
    pytest.importorskip("ag_ui")

    class Interrupt(msgspec.Struct, kw_only=True):  # a newer schema's: its id is a number
        id: int
        reason: str

    with pytest.raises(agui.UsageError, match="cannot hold this Interrupt"):
        agui.to_official(Interrupt(id=1, reason="r"))


def test_run_sync_inside_a_running_loop_is_a_usage_error_and_leaves_no_coroutine() -> None:
    pytest.importorskip("httpx")
    agent = agui.HttpAgent("http://127.0.0.1:9/")

    async def inside() -> None:
        agent.run_sync(INPUT)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "coroutine ... was never awaited" would be one
        with pytest.raises(agui.UsageError, match="inside a running event loop"):
            asyncio.run(inside())


# --- HttpAgent against a local server ----------------------------------------------------------


def _answering(body: bytes, content_type: str) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    return Handler


HOSTILE_BODIES = {
    "not UTF-8": b"data: \xff\xfe\n\n",
    "not JSON": b"data: {\n\n",
    "nested past the stack": b"data: " + b"[" * 100_000 + b"\n\n",
    "an unknown event only": b'data: {"type": "NOPE"}\n\n',
    "a lone RUN_STARTED": b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n',
    "NUL bytes": b"\x00" * 64,
}


@pytest.fixture(params=sorted(HOSTILE_BODIES))
def hostile_server(request: pytest.FixtureRequest) -> Iterator[str]:
    pytest.importorskip("httpx")
    with serve_handler(_answering(HOSTILE_BODIES[request.param], "text/event-stream")) as url:
        yield url


def test_only_library_errors_escape_a_run_over_http(hostile_server: str) -> None:
    agent = agui.HttpAgent(hostile_server, timeout=10)

    async def streamed() -> None:
        async with agent.run(INPUT) as stream:
            async for _ in stream:
                pass
            await stream.result()

    for run in (lambda: asyncio.run(streamed()), lambda: asyncio.run(agent.run_agent(INPUT))):
        with pytest.raises(agui.AguiError):
            run()
    with pytest.raises(agui.AguiError):
        agent.run_sync(INPUT)
