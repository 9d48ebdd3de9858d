"""``HttpAgent`` over the HTTP + SSE binding, and the ``agui-msgspec run`` command.

The agent talks to an in-process ``httpx.MockTransport`` whose handler plays the
agent endpoint; the command talks to a standard-library HTTP server on
127.0.0.1. Spec: basic/transports/http-sse (request, response, errors) and
basic/transports (truncation).
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import io
import json
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from serving import serve_handler

from agui_msgspec import HttpAgent, HttpAgentError, RunFailed, RunResult, v1_1
from agui_msgspec._errors import MalformedEvent, ProtocolViolation, TransportError, UsageError
from agui_msgspec._tools.cli import main

T = TypeVar("T")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
INPUT: dict[str, Any] = {
    "threadId": "t",
    "runId": "r",
    "messages": [{"id": "u1", "role": "user", "content": "Hello?"}],
}
START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
ANSWER = [
    START,
    {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hi "},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "there."},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    FINISH,
]
SSE = {"content-type": "text/event-stream"}


def frame(document: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(document).encode() + b"\n\n"


def sse(*documents: dict[str, Any]) -> bytes:
    return b"".join(frame(document) for document in documents)


def run(coroutine: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, timeout=10)

    return asyncio.run(bounded())


Handler = Callable[[httpx.Request], Coroutine[None, None, httpx.Response]]


def agent_for(handler: Handler, **options: Any) -> HttpAgent:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return HttpAgent("http://agent.test/run", client=client, **options)


def replying(
    body: bytes | AsyncIterator[bytes], status: int = 200, content_type: str = "text/event-stream"
) -> Handler:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(status, headers={"content-type": content_type}, content=body)

    return handler


async def pieces(body: bytes, size: int) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


async def collect(agent: HttpAgent, input: dict[str, Any] = INPUT) -> list[Any]:
    """The events iteration delivered, up to whatever iteration raised."""
    delivered: list[Any] = []
    async with agent.run(input) as stream:
        async for event in stream:
            delivered.append(event)
    return delivered


def tags(events: list[Any]) -> list[str]:
    return [str(type(event).__struct_config__.tag) for event in events]


# --- the request ------------------------------------------------------------------------


def test_the_request_is_a_json_post_asking_for_an_event_stream() -> None:
    seen: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers=SSE, content=sse(*ANSWER))

    agent = agent_for(handler, headers={"Authorization": "Bearer k", "accept": "text/html"})
    run(agent.run_agent(INPUT))
    (request,) = seen
    assert request.method == "POST"
    assert str(request.url) == "http://agent.test/run"
    assert request.headers.get_list("accept") == [
        "text/event-stream, application/vnd.ag-ui.event+proto"
    ]
    assert request.headers["content-type"] == "application/json"
    assert request.headers["authorization"] == "Bearer k"
    assert json.loads(request.content) == {**INPUT, "protocolVersion": "1.1"}


def test_the_input_is_enforced_before_it_is_sent() -> None:
    seen: list[bytes] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.content)
        return httpx.Response(200, headers=SSE, content=sse(*ANSWER))

    activity = {"id": "a1", "role": "activity", "activityType": "x", "content": {}}
    input = {**INPUT, "messages": [*INPUT["messages"], activity], "mood": "sunny"}
    result = run(agent_for(handler, version="1.0").run_agent(input))
    sent = json.loads(seen[0])
    assert sent["protocolVersion"] == "1.0"
    assert "mood" not in sent
    assert [m["id"] for m in sent["messages"]] == ["u1"]
    assert any("/mood" in warning for warning in result.warnings)


def test_a_malformed_input_is_refused_before_any_request() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        raise AssertionError("nothing may be sent")

    with pytest.raises(ProtocolViolation) as raised:
        agent_for(handler).run({**INPUT, "messages": "not a list"})
    assert raised.value.rule == "malformed-input"


# --- the stream -------------------------------------------------------------------------


def test_events_are_delivered_in_order_while_the_body_is_still_arriving() -> None:
    first_delivered = asyncio.Event()

    async def body() -> AsyncIterator[bytes]:
        yield frame(START)
        # The rest exists only once the client has handed the first event over.
        await first_delivered.wait()
        async for piece in pieces(sse(*ANSWER[1:]), 7):  # events split across reads
            yield piece

    async def scenario() -> tuple[list[Any], RunResult]:
        delivered: list[Any] = []
        async with agent_for(replying(body())).run(INPUT) as stream:
            async for event in stream:
                delivered.append(event)
                first_delivered.set()
            return delivered, await stream.result()

    delivered, result = run(scenario())
    assert tags(delivered) == [str(e["type"]) for e in ANSWER]
    assert delivered[2] == v1_1.TextMessageContentEvent(message_id="m1", delta="Hi ")
    assert result.run.status == "completed"
    assert [m.id for m in result.messages] == ["u1", "m1"]
    assert result.new_messages == [v1_1.AssistantMessage(id="m1", content="Hi there.")]


def test_chunks_arrive_expanded_and_sse_extras_are_ignored() -> None:
    body = (
        b": keep-alive\n\n"
        + frame(START)
        + b"event: message\nid: 7\nretry: 100\n"
        + frame({"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "Hi"})
        + frame(FINISH)
    )
    delivered = run(collect(agent_for(replying(body))))
    assert tags(delivered) == [
        "RUN_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]


def test_an_event_stream_with_parameters_is_an_event_stream() -> None:
    handler = replying(sse(*ANSWER), content_type="Text/Event-Stream; charset=utf-8")
    assert run(agent_for(handler).run_agent(INPUT)).run.status == "completed"


def test_interrupt_and_cancel_are_results_not_failures() -> None:
    interrupt = {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approval"}]}
    result = run(agent_for(replying(sse(START, {**FINISH, "outcome": interrupt}))).run_agent(INPUT))
    assert result.run.status == "interrupted"
    assert [i.id for i in result.run.interrupts] == ["i1"]
    cancelled = sse(START, {**FINISH, "outcome": {"type": "cancelled"}})
    assert run(agent_for(replying(cancelled)).run_agent(INPUT)).run.status == "cancelled"


def test_run_sync_returns_the_same_result_without_an_event_loop() -> None:
    result = agent_for(replying(sse(*ANSWER))).run_sync(INPUT)
    assert result.new_messages == [v1_1.AssistantMessage(id="m1", content="Hi there.")]


# --- errors before the stream ----------------------------------------------------------


def test_an_error_status_raises_with_the_status_and_body() -> None:
    handler = replying(b'{"detail":"bad input"}', 422, content_type="application/json")
    with pytest.raises(HttpAgentError) as raised:
        run(collect(agent_for(handler)))
    assert raised.value.status_code == 422
    assert raised.value.body == '{"detail":"bad input"}'
    assert "422" in str(raised.value)


def test_a_server_error_fails_the_awaited_result() -> None:
    handler = replying(b"upstream exploded", 500, content_type="text/plain")
    with pytest.raises(HttpAgentError) as raised:
        run(agent_for(handler).run_agent(INPUT))
    assert (raised.value.status_code, raised.value.body) == (500, "upstream exploded")


def test_a_long_error_body_is_cut_to_an_excerpt() -> None:
    handler = replying(b"x" * 100_000, 503, content_type="text/plain")
    with pytest.raises(HttpAgentError) as raised:
        run(collect(agent_for(handler)))
    assert raised.value.body == "x" * 2048


def test_a_success_that_is_not_an_event_stream_is_refused() -> None:
    handler = replying(sse(*ANSWER), content_type="application/json")
    with pytest.raises(HttpAgentError) as raised:
        run(collect(agent_for(handler)))
    assert (raised.value.status_code, raised.value.content_type) == (200, "application/json")
    assert "text/event-stream" in str(raised.value)


def test_a_response_without_content_type_is_refused() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=sse(*ANSWER))

    with pytest.raises(HttpAgentError) as raised:
        run(collect(agent_for(handler)))
    assert raised.value.content_type == ""


# --- the run's own failure ---------------------------------------------------------------


def test_run_error_is_delivered_then_is_the_failed_result() -> None:
    error = {"type": "RUN_ERROR", "message": "model overloaded", "code": "OVERLOADED"}
    body = sse(*ANSWER[:3], error)

    async def scenario() -> tuple[list[Any], RunResult]:
        delivered: list[Any] = []
        async with agent_for(replying(body)).run(INPUT) as stream:
            async for event in stream:  # iteration itself does not raise
                delivered.append(event)
            return delivered, await stream.result()  # nor does the result

    delivered, result = run(scenario())
    assert tags(delivered)[-1] == "RUN_ERROR"
    assert result.status == "failed"
    assert result.error == v1_1.RunErrorEvent(message="model overloaded", code="OVERLOADED")
    assert result.new_messages == [v1_1.AssistantMessage(id="m1", content="Hi ")]
    with pytest.raises(RunFailed) as raised:
        result.raise_for_status()
    assert raised.value.error == result.error
    assert raised.value.result is result
    assert "model overloaded" in str(raised.value)


def test_raise_for_status_returns_a_result_that_did_not_fail() -> None:
    result = run(agent_for(replying(sse(*ANSWER))).run_agent(INPUT))
    assert result.status == "completed"
    assert result.error is None
    assert result.raise_for_status() is result


def test_a_run_error_before_a_new_run_does_not_fail_the_new_run() -> None:
    body = sse({"type": "RUN_ERROR", "message": "old"}, *ANSWER)
    result = run(agent_for(replying(body)).run_agent(INPUT))
    assert [r.status for r in result.runs] == ["failed", "completed"]


def test_a_late_run_error_fails_a_finished_run() -> None:
    body = sse(*ANSWER, {"type": "RUN_ERROR", "message": "late"})
    result = run(agent_for(replying(body)).run_agent(INPUT))
    assert result.status == "failed"
    assert result.error.message == "late"


# --- rejected and truncated streams --------------------------------------------------------


@dataclass
class Outcome:
    delivered: list[Any] = field(default_factory=list)
    raised: ProtocolViolation | TransportError | None = None
    result_raised: BaseException | None = None
    messages: list[Any] = field(default_factory=list)
    statuses: list[str] = field(default_factory=list)


def outcome_of(agent: HttpAgent) -> Outcome:
    """Iterate a run to where it raises, then ask for its result too."""

    async def scenario() -> Outcome:
        seen = Outcome()
        async with agent.run(INPUT) as stream:
            try:
                async for event in stream:
                    seen.delivered.append(event)
            except (ProtocolViolation, TransportError) as violation:
                seen.raised = violation
            try:
                await stream.result()
            except (ProtocolViolation, TransportError) as exc:
                seen.result_raised = exc
            seen.messages = stream.messages
            seen.statuses = [r.status for r in stream.runs]
        return seen

    return run(scenario())


def test_a_violation_mid_stream_raises_after_everything_before_it() -> None:
    orphan = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nope", "delta": "x"}
    seen = outcome_of(agent_for(replying(sse(*ANSWER[:3], orphan, *ANSWER[3:]))))
    assert tags(seen.delivered) == ["RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"]
    assert seen.raised is not None
    assert (seen.raised.rule, seen.raised.index) == ("text-message-not-open", 3)
    assert seen.result_raised is seen.raised


def test_the_violation_iteration_raises_carries_none_of_the_events_it_yielded() -> None:
    orphan = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "nope", "delta": "x"}
    seen = outcome_of(agent_for(replying(sse(*ANSWER[:3], orphan))))  # one chunk, one batch
    assert len(seen.delivered) == 3
    assert seen.raised is not None
    assert seen.raised.delivered == []  # delivered once, by the iteration


def test_a_violation_inside_an_expanded_chunk_keeps_the_events_before_it() -> None:
    # The last chunk expands to END m1 (its predecessor closes), which passes, then
    # START m2, which breaks a rule: m2 is open in a subagent's lane.
    body = sse(
        START,
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "delta": "a"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m2", "subagentRunId": "s1"},
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m2", "delta": "b"},
    )
    seen = outcome_of(agent_for(replying(body)))
    assert seen.raised is not None
    assert (seen.raised.rule, seen.raised.index) == ("text-message-already-open", 3)
    assert seen.delivered[-1] == v1_1.TextMessageEndEvent(message_id="m1")


def test_a_body_ending_inside_a_run_is_a_truncated_run() -> None:
    seen = outcome_of(agent_for(replying(sse(*ANSWER[:3]))))
    assert len(seen.delivered) == 3
    assert seen.raised is not None
    assert seen.raised.rule == "truncated"
    assert seen.statuses == ["truncated"]
    assert seen.messages[-1] == v1_1.AssistantMessage(id="m1", content="Hi ")
    assert seen.result_raised is seen.raised


def test_a_body_ending_inside_an_event_is_truncated_even_after_a_finish() -> None:
    body = sse(*ANSWER) + b'data: {"type":"RUN_ERROR","message":"la'
    seen = outcome_of(agent_for(replying(body)))
    assert len(seen.delivered) == len(ANSWER)
    assert seen.raised is not None
    assert seen.raised.rule == "truncated"
    assert "inside an event" in seen.raised.detail


def test_an_empty_body_is_truncated() -> None:
    seen = outcome_of(agent_for(replying(b"")))
    assert seen.raised is not None
    assert seen.raised.rule == "truncated"


def test_a_dropped_connection_is_a_cut_and_truncates_the_run() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield sse(*ANSWER[:2])
        raise httpx.ReadError("connection reset by peer")

    seen = outcome_of(agent_for(replying(body())))
    assert len(seen.delivered) == 2
    assert isinstance(seen.raised, TransportError)
    assert (seen.raised.rule, seen.raised.index) == ("cut", 2)
    assert "still active" in seen.raised.detail
    assert "connection reset by peer" in seen.raised.detail
    assert isinstance(seen.raised.__cause__, httpx.ReadError)
    assert seen.statuses == ["truncated"]


def test_a_connection_dropped_after_the_run_ended_only_warns() -> None:
    async def body() -> AsyncIterator[bytes]:
        yield sse(*ANSWER)
        raise httpx.ReadError("connection reset by peer")

    result = run(agent_for(replying(body())).run_agent(INPUT))
    assert result.run.status == "completed"
    assert any("[cut]" in warning for warning in result.warnings)


def test_an_oversized_event_fails_after_the_events_before_it() -> None:
    big = {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "x" * 500}
    body = sse(*ANSWER[:2], big, *ANSWER[4:])
    seen = outcome_of(agent_for(replying(body), max_event_size=200))
    assert len(seen.delivered) == 2
    assert isinstance(seen.raised, TransportError)
    assert seen.raised.rule == "event-too-large"


def test_leaving_early_closes_the_response_and_there_is_no_result() -> None:
    class LongRun(httpx.AsyncByteStream):
        closed = False

        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield frame(START)
            await asyncio.sleep(60)  # a run that would go on for a long time
            yield sse(*ANSWER[1:])

        async def aclose(self) -> None:
            self.closed = True

    body = LongRun()

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=SSE, stream=body)

    async def scenario() -> None:
        async with agent_for(handler).run(INPUT) as stream:
            async for _ in stream:
                break
        assert body.closed
        with pytest.raises(UsageError):
            await stream.result()

    run(scenario())


# --- making an agent -----------------------------------------------------------------------


@pytest.mark.parametrize("url", ["ftp://agent.test/run", "agent.test/run", "http://"])
def test_a_url_that_is_not_http_is_a_usage_error(url: str) -> None:
    with pytest.raises(UsageError):
        HttpAgent(url)


@pytest.mark.parametrize("port", ["99999", "-1", "0"])
def test_a_port_tcp_has_not_is_a_usage_error(port: str) -> None:
    # httpx takes them, and the first send failed with an OverflowError in an ExceptionGroup
    with pytest.raises(UsageError, match="not a TCP port"):
        HttpAgent(f"http://127.0.0.1:{port}/")


def test_an_unknown_version_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        HttpAgent("http://agent.test/", version="0.9")


def test_without_httpx_the_agent_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(ImportError, match=r"agui-msgspec\[http\]"):
        HttpAgent("http://agent.test/")


def test_the_package_and_its_client_module_import_without_httpx() -> None:
    code = (
        "import sys; sys.modules['httpx'] = None\n"
        "import agui_msgspec, agui_msgspec._http.client, agui_msgspec._tools.cli, agui_msgspec._serve.writer\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# --- the command line: agui-msgspec run --------------------------------------------------------


@dataclass
class Endpoint:
    """A canned agent endpoint on 127.0.0.1: path → (status, content type, body)."""

    url: str
    routes: dict[str, tuple[int, str, bytes]]
    requests: list[dict[str, Any]] = field(default_factory=list)
    # Set by a test once the client showed the first event; a /gated reply waits for it.
    shown: threading.Event = field(default_factory=threading.Event)
    waited: list[bool] = field(default_factory=list)


def on_thread(body: bytes, thread_id: str) -> bytes:
    """An SSE body's events moved onto ``thread_id``."""

    def moved(line: bytes) -> bytes:
        if not line.startswith(b"data: "):
            return line
        event = json.loads(line[6:])
        if "threadId" in event:
            event["threadId"] = thread_id
        return b"data: " + json.dumps(event).encode()

    return b"\n".join(moved(line) for line in body.split(b"\n"))


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    routes = {
        "/plain": (200, "text/event-stream", (EXAMPLES / "plain-answer.sse").read_bytes()),
        "/rejected": (200, "text/event-stream", (EXAMPLES / "rejected-stream.sse").read_bytes()),
        "/failed": (
            200,
            "text/event-stream",
            sse(*ANSWER[:5], {"type": "RUN_ERROR", "message": "no"}),
        ),
        "/missing": (404, "text/plain", b"no agent here"),
    }
    state = Endpoint("", routes)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            state.requests.append(
                {
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": json.loads(self.rfile.read(length)),
                }
            )
            # a conformant agent answers on the thread it was asked about (basic/run-input)
            thread_id = state.requests[-1]["body"]["threadId"]
            if self.path == "/gated":
                self._reply(200, "text/event-stream", on_thread(frame(START), thread_id))
                state.waited.append(state.shown.wait(timeout=5))
                self.wfile.write(on_thread(sse(*ANSWER[1:]), thread_id))
                return
            status, content_type, body = routes[self.path]
            self._reply(status, content_type, on_thread(body, thread_id))

        def _reply(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    with serve_handler(Handler) as state.url:
        try:
            yield state
        finally:
            state.shown.set()  # a handler still waiting on it ends before the server does


def test_run_prints_events_as_they_arrive_then_the_answer(
    endpoint: Endpoint, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    class Screen(io.StringIO):
        def write(self, text: str) -> int:
            if "RUN_STARTED" in text:
                endpoint.shown.set()
            return super().write(text)

    screen = Screen()
    monkeypatch.setattr(sys, "stdout", screen)
    code = main(["run", endpoint.url + "/gated", "--message", "Say hi", "--thread", "th-9"])
    assert code == 0
    assert endpoint.waited == [True]  # RUN_STARTED was on screen before the rest was sent
    out = screen.getvalue()
    assert "TEXT_MESSAGE_CONTENT message_id=m1 delta='Hi '" in out
    assert "[assistant] Hi there." in out
    assert out.rstrip().endswith("ACCEPTED (completed)")
    (request,) = endpoint.requests
    assert request["body"]["threadId"] == "th-9"
    assert request["body"]["protocolVersion"] == "1.1"
    assert [(m["role"], m["content"]) for m in request["body"]["messages"]] == [("user", "Say hi")]
    assert request["headers"]["Accept"] == "text/event-stream, application/vnd.ag-ui.event+proto"


def test_run_without_a_message_sends_an_empty_history_on_a_new_thread(
    endpoint: Endpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", endpoint.url + "/plain"]) == 0
    assert main(["run", endpoint.url + "/plain"]) == 0
    first, second = (request["body"] for request in endpoint.requests)
    assert first["messages"] == []
    assert first["threadId"] != second["threadId"]
    assert first["runId"] != second["runId"]
    out = capsys.readouterr().out
    assert "[assistant] The capital of France is Paris." in out
    assert "tokens 19" in out


def test_run_json_prints_the_verdict_document(
    endpoint: Endpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", endpoint.url + "/plain", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["outcome"] == "completed"
    assert [run["status"] for run in document["runs"]] == ["completed"]
    assert document["messages"][-1]["content"] == "The capital of France is Paris."


def test_run_exits_1_on_a_rejected_stream(
    endpoint: Endpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", endpoint.url + "/rejected"]) == 1
    assert "REJECTED [text-message-not-open] event 4" in capsys.readouterr().out


def test_run_exits_0_on_a_run_that_failed_by_run_error_as_check_does(
    endpoint: Endpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", endpoint.url + "/failed"]) == 0  # a conformant stream
    out = capsys.readouterr().out
    assert "failed; error 'no'" in out
    assert out.rstrip().endswith("RUN FAILED 'no'")


def test_run_exits_1_on_an_http_error(
    endpoint: Endpoint, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", endpoint.url + "/missing"]) == 1
    err = capsys.readouterr().err
    assert "404" in err
    assert "no agent here" in err


@contextlib.contextmanager
def socket_without_listener() -> Iterator[int]:
    """A loopback port that is bound but not listening: connecting is refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]


def test_run_exits_1_when_nothing_listens(capsys: pytest.CaptureFixture[str]) -> None:
    with socket_without_listener() as port:
        assert main(["run", f"http://127.0.0.1:{port}/"]) == 1
    assert capsys.readouterr().err.startswith("agui-msgspec: ")


def test_run_exits_2_on_a_bad_url(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "not a url"]) == 2
    assert "http" in capsys.readouterr().err


def test_run_exits_2_without_httpx(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    assert main(["run", "http://127.0.0.1:9/"]) == 2
    assert "agui-msgspec[http]" in capsys.readouterr().err


def test_a_resume_must_answer_every_interrupt_of_the_threads_last_run() -> None:
    interrupt = {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approval"}]}
    bodies = iter([sse(START, {**FINISH, "outcome": interrupt}), sse(*ANSWER)])

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers=SSE, content=next(bodies))

    agent = agent_for(handler)
    assert run(agent.run_agent(INPUT)).run.status == "interrupted"
    with pytest.raises(MalformedEvent) as refused:
        agent.run(INPUT)  # no resume entry for i1: refused before any request
    assert refused.value.rule == "resume-uncovered"
    resumed = {**INPUT, "runId": "r2", "resume": [{"interruptId": "i1", "status": "resolved"}]}
    assert run(agent.run_agent(resumed)).run.status == "completed"
    agent.run(INPUT)  # the thread has no open interrupt any more
