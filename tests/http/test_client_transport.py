"""``HttpAgent`` when the transport misbehaves: compressed replies, timeouts, cuts, the deadline.

Every failure is a ``TransportError`` with a rule, ``result()`` raises it, and no httpx
exception reaches the caller (issue 14, items 2, 4 and 11; issue 12, timeouts told apart).
Memory is measured with tracemalloc, never time.
"""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import http.server
import json
import socket
import time
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serving import serve_handler, trickling_server

from agui_msgspec import HttpAgent, HttpAgentError, RunResult
from agui_msgspec._errors import ProtocolViolation, TransportError, UsageError
from agui_msgspec._tools.cli import main

INPUT: dict[str, Any] = {"threadId": "t", "runId": "r", "messages": []}
START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
ANSWER = [
    START,
    {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hi."},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    FINISH,
]
MiB = 1024 * 1024


def sse(*documents: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(d).encode() + b"\n\n" for d in documents)


def run(coroutine: Any) -> Any:
    async def bounded() -> Any:
        return await asyncio.wait_for(coroutine, timeout=30)

    return asyncio.run(bounded())


async def pieces(body: bytes, size: int = 64 * 1024) -> AsyncIterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def agent_replying(
    body: bytes | AsyncIterator[bytes], headers: dict[str, str] | None = None, **options: Any
) -> tuple[HttpAgent, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        content = pieces(body) if isinstance(body, bytes) else body
        return httpx.Response(
            200, headers={"content-type": "text/event-stream", **(headers or {})}, content=content
        )

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return HttpAgent("http://agent.test/run", client=client, **options), seen


async def outcome(agent: HttpAgent) -> tuple[list[Any], BaseException | None, Any]:
    """Events delivered, what iteration raised, and what ``result()`` then raised (or gave)."""
    delivered: list[Any] = []
    raised: BaseException | None = None
    stream = agent.run(INPUT)
    try:
        async for event in stream:
            delivered.append(event)
    except (ProtocolViolation, TransportError) as exc:
        raised = exc
    try:
        result: Any = await stream.result()
    except (ProtocolViolation, TransportError) as exc:
        result = exc
    await stream.aclose()
    return delivered, raised, result


# --- compressed replies -------------------------------------------------------------------


def gzipped(*parts: bytes, repeat: int = 1) -> bytes:
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [compressor.compress(part) for part in parts for _ in range(repeat)]
    return b"".join([*out, compressor.flush()])


@pytest.fixture(scope="module")
def gzip_bomb() -> bytes:
    """0.97 MiB that inflate to 1000 MiB: a run that starts, then one text delta without end."""
    head = sse(START, {"type": "TEXT_MESSAGE_START", "messageId": "m1"})
    head += b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"'
    compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"a" * MiB
    out = [compressor.compress(head), *(compressor.compress(block) for _ in range(1000))]
    return b"".join([*out, compressor.flush()])


def peak_memory_of(agent: HttpAgent) -> tuple[BaseException | None, int]:
    tracemalloc.start()
    try:
        _, raised, _ = run(outcome(agent))
        return raised, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_agent_asks_for_gzip_or_deflate_only() -> None:
    agent, seen = agent_replying(sse(*ANSWER))
    run(agent.run_agent(INPUT))
    assert seen[0].headers["accept-encoding"] == "gzip, deflate"


def test_a_user_client_cannot_widen_the_encodings() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["accept-encoding"] == "gzip, deflate"
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=b"")

    client = httpx.AsyncClient(
        transport=httpx.MockTransport(handler), headers={"Accept-Encoding": "br, zstd"}
    )
    agent = HttpAgent("http://agent.test/", client=client, headers={"accept-encoding": "br"})
    with pytest.raises(ProtocolViolation, match="truncated"):
        run(agent.run_agent(INPUT))


@pytest.mark.parametrize(
    ("coding", "compress"),
    [
        ("gzip", gzip.compress),
        ("x-gzip", gzip.compress),
        ("deflate", zlib.compress),  # the RFC's zlib wrapper
        ("deflate", lambda body: zlib.compress(body)[2:-4]),  # raw deflate, as servers send
        ("identity", lambda body: body),
    ],
    ids=["gzip", "x-gzip", "deflate-zlib", "deflate-raw", "identity"],
)
def test_a_compressed_reply_is_inflated(coding: str, compress: Any) -> None:
    agent, _ = agent_replying(compress(sse(*ANSWER)), headers={"content-encoding": coding})
    result: RunResult = run(agent.run_agent(INPUT))
    assert result.run.status == "completed"
    assert result.messages[-1].content == "Hi."


@pytest.mark.parametrize(
    "compress",
    [zlib.compress, lambda body: zlib.compress(body)[2:-4]],
    ids=["deflate-zlib", "deflate-raw"],
)
def test_a_deflate_reply_is_inflated_however_its_reads_split(compress: Any) -> None:
    body = compress(sse(*ANSWER))

    async def two_reads(split: int) -> AsyncIterator[bytes]:
        yield body[:split]
        yield body[split:]

    for split in range(1, len(body)):
        agent, _ = agent_replying(two_reads(split), headers={"content-encoding": "deflate"})
        result: RunResult = run(agent.run_agent(INPUT))
        assert result.messages[-1].content == "Hi.", split


def test_a_reply_of_two_gzip_members_is_one_body() -> None:
    body = sse(*ANSWER)
    agent, _ = agent_replying(
        gzip.compress(body[:40]) + gzip.compress(body[40:]), headers={"content-encoding": "gzip"}
    )
    assert run(agent.run_agent(INPUT)).messages[-1].content == "Hi."


def test_a_gzip_bomb_is_refused_within_a_few_mb(gzip_bomb: bytes) -> None:
    assert len(gzip_bomb) < 1_020_000  # the 0.97 MiB reply, inflating to 1000 MiB
    agent, _ = agent_replying(gzip_bomb, headers={"content-encoding": "gzip"}, max_event_size=MiB)
    raised, peak = peak_memory_of(agent)
    assert isinstance(raised, TransportError)
    assert (raised.rule, raised.index) == ("event-too-large", 2)
    assert peak < 6 * MiB  # the event bound and an inflated piece, not the body (1.4 GB before)


def test_a_gzip_bomb_stays_near_the_default_event_limit(gzip_bomb: bytes) -> None:
    agent, _ = agent_replying(gzip_bomb, headers={"content-encoding": "gzip"})
    raised, peak = peak_memory_of(agent)
    assert isinstance(raised, TransportError)
    assert raised.rule == "event-too-large"
    assert peak < 3 * 10 * MiB


def test_stacked_gzip_is_refused_before_it_is_read(gzip_bomb: bytes) -> None:
    doubled = gzip.compress(gzip_bomb, 9)
    assert len(doubled) < 20_000  # the 12.6 KB reply that raised MemoryError at 3.7 GB
    agent, _ = agent_replying(doubled, headers={"content-encoding": "gzip, gzip"})
    raised, peak = peak_memory_of(agent)
    assert isinstance(raised, TransportError)
    assert raised.rule == "stacked-encoding"
    assert peak < 2 * MiB


def test_stacked_codings_in_separate_headers_are_refused() -> None:
    body = gzip.compress(zlib.compress(sse(*ANSWER)))
    agent, _ = agent_replying(body, headers={})

    async def handler(request: httpx.Request) -> httpx.Response:
        headers = [("content-type", "text/event-stream")]
        headers += [("content-encoding", "deflate"), ("content-encoding", "gzip")]
        return httpx.Response(200, headers=headers, content=pieces(body))

    agent = HttpAgent(
        "http://agent.test/", client=httpx.AsyncClient(transport=httpx.MockTransport(handler))
    )
    _, _, result = run(outcome(agent))
    assert isinstance(result, TransportError)
    assert result.rule == "stacked-encoding"


@pytest.mark.parametrize("coding", ["br", "zstd", "compress", "rot13"])
def test_an_encoding_the_agent_did_not_ask_for_is_refused(coding: str) -> None:
    agent, _ = agent_replying(sse(*ANSWER), headers={"content-encoding": coding})
    delivered, _, result = run(outcome(agent))
    assert delivered == []
    assert isinstance(result, TransportError)
    assert result.rule == "unknown-encoding"
    assert coding in str(result)


def test_a_corrupt_gzip_body_is_a_decode_error_and_the_run_is_truncated() -> None:
    good = gzip.compress(sse(*ANSWER[:2]))

    async def body() -> AsyncIterator[bytes]:
        yield good[:-8]
        yield b"\x00garbage that is not deflate" * 4

    agent, _ = agent_replying(body(), headers={"content-encoding": "gzip"})
    delivered, raised, result = run(outcome(agent))
    assert len(delivered) == 2  # what inflated before the corruption was delivered
    assert isinstance(raised, TransportError)
    assert raised.rule == "decode"
    assert result is raised  # result() raises it too: never a run left "active"


@pytest.mark.parametrize(
    "fault",
    [
        pytest.param(b"\x07not deflate", id="an invalid block mid-stream"),
        pytest.param(None, id="a wrong checksum at the end"),
    ],
)
def test_what_inflates_before_a_fault_in_the_same_read_is_delivered(fault: bytes | None) -> None:
    events = sse(*ANSWER[:2])
    if fault is None:
        body = gzip.compress(events)[:-8] + b"\x00" * 8
    else:
        compressor = zlib.compressobj(9, zlib.DEFLATED, 31)
        body = compressor.compress(events) + compressor.flush(zlib.Z_SYNC_FLUSH) + fault

    async def one_read() -> AsyncIterator[bytes]:
        yield body  # the good events and the fault arrive together

    agent, _ = agent_replying(one_read(), headers={"content-encoding": "gzip"})
    delivered, raised, result = run(outcome(agent))
    assert [event.type for event in delivered] == [event["type"] for event in ANSWER[:2]]
    assert isinstance(raised, TransportError)
    assert raised.rule == "decode"
    assert result is raised


def test_a_gzip_body_cut_short_is_cut() -> None:
    body = gzip.compress(sse(*ANSWER[:2]))[:-30]
    agent, _ = agent_replying(body, headers={"content-encoding": "gzip"})
    _, raised, _ = run(outcome(agent))
    assert isinstance(raised, TransportError)
    assert raised.rule == "cut"


def test_an_error_reply_shows_its_inflated_start() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        body = gzip.compress(b"no agent here " * 10_000)
        return httpx.Response(
            500,
            headers={"content-type": "text/plain", "content-encoding": "gzip"},
            content=pieces(body),
        )

    agent = HttpAgent(
        "http://agent.test/", client=httpx.AsyncClient(transport=httpx.MockTransport(handler))
    )
    with pytest.raises(HttpAgentError) as raised:
        run(agent.run_agent(INPUT))
    assert raised.value.body.startswith("no agent here")
    assert len(raised.value.body) == 2048


# --- transport failures: each a rule ---------------------------------------------------------


def failing_after(body: bytes, error: Exception) -> AsyncIterator[bytes]:
    async def stream() -> AsyncIterator[bytes]:
        yield body
        raise error

    return stream()


@pytest.mark.parametrize(
    ("error", "rule"),
    [
        (httpx.ReadTimeout("timed out"), "timeout"),
        (httpx.ReadError("connection reset"), "cut"),
        (httpx.RemoteProtocolError("peer closed connection without sending complete body"), "cut"),
        (httpx.DecodingError("bad"), "decode"),
    ],
    ids=lambda value: value if isinstance(value, str) else type(value).__name__,
)
def test_a_failure_inside_the_body_is_a_transport_error_with_a_rule(
    error: Exception, rule: str
) -> None:
    agent, _ = agent_replying(failing_after(sse(*ANSWER[:2]), error), timeout=7.5)
    delivered, raised, result = run(outcome(agent))
    assert len(delivered) == 2
    assert isinstance(raised, TransportError)
    assert (raised.rule, raised.index) == (rule, 2)
    assert raised.__cause__ is error  # the httpx exception is kept, not raised
    assert result is raised
    if rule == "timeout":
        assert "timeout=7.5 s" in raised.detail
        assert "--timeout" in raised.detail


@pytest.mark.parametrize(
    ("error", "rule"),
    [
        (httpx.ConnectError("refused"), "connect"),
        (httpx.ConnectTimeout("slow"), "connect"),
        (httpx.ReadTimeout("no answer"), "timeout"),
        (httpx.RemoteProtocolError("server disconnected"), "cut"),
        (httpx.WriteError("broken pipe"), "connect"),
    ],
    ids=lambda value: value if isinstance(value, str) else type(value).__name__,
)
def test_a_failure_before_the_response_is_a_transport_error_with_a_rule(
    error: Exception, rule: str
) -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        raise error

    agent = HttpAgent(
        "http://agent.test/", client=httpx.AsyncClient(transport=httpx.MockTransport(handler))
    )
    with pytest.raises(TransportError) as raised:
        run(agent.run_agent(INPUT))
    assert raised.value.rule == rule
    assert raised.value.index is None
    assert str(raised.value).startswith(f"[{rule}] ")


def test_result_raises_after_iteration_failed_however_often_it_is_asked() -> None:
    agent, _ = agent_replying(failing_after(sse(*ANSWER[:2]), httpx.ReadError("reset")))

    async def scenario() -> list[BaseException]:
        raised: list[BaseException] = []
        async with agent.run(INPUT) as stream:
            for _ in range(3):
                try:
                    await stream.result()
                except (ProtocolViolation, TransportError) as exc:
                    raised.append(exc)
            assert [r.status for r in stream.runs] == ["truncated"]
        return raised

    first, *again = run(scenario())
    assert isinstance(first, TransportError)
    assert all(exc is first for exc in again)


def test_a_transport_failure_after_the_last_run_ended_only_warns() -> None:
    agent, _ = agent_replying(failing_after(sse(*ANSWER), httpx.ReadTimeout("late")))
    result = run(agent.run_agent(INPUT))
    assert result.run.status == "completed"
    assert any("[timeout]" in warning for warning in result.warnings)


def test_a_cancelled_iteration_leaves_no_result() -> None:
    async def endless() -> AsyncIterator[bytes]:
        yield sse(START)
        await asyncio.sleep(3600)
        yield b""

    agent, _ = agent_replying(endless())

    async def scenario() -> None:
        async with agent.run(INPUT) as stream:
            await stream.__anext__()
            task = asyncio.ensure_future(stream.__anext__())
            await asyncio.sleep(0.01)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
            with pytest.raises(UsageError):
                await stream.result()

    run(scenario())


async def started_then_silent() -> AsyncIterator[bytes]:
    yield sse(START)
    await asyncio.sleep(3600)


@pytest.mark.parametrize("closing", ["aclose", "async with"])
def test_a_stream_closed_before_its_end_cannot_be_read(closing: str) -> None:
    agent, _ = agent_replying(started_then_silent())

    async def scenario() -> None:
        async with agent.run(INPUT) as stream:
            await stream.__anext__()
            if closing == "aclose":
                await stream.aclose()
        with pytest.raises(UsageError, match="closed before it ended"):
            await stream.__anext__()  # it yielded nothing, silently
        with pytest.raises(UsageError, match="closed before it ended"):
            await stream.result()

    run(scenario())


def test_a_failed_stream_raises_its_failure_at_every_read() -> None:
    agent, _ = agent_replying(failing_after(sse(*ANSWER[:2]), httpx.ReadError("reset")))

    async def scenario() -> None:
        async with agent.run(INPUT) as stream:
            with pytest.raises(TransportError) as first:
                async for _ in stream:
                    pass
            with pytest.raises(TransportError) as again:
                await stream.__anext__()
            assert again.value is first.value

    run(scenario())


@pytest.mark.parametrize("second", ["iterate", "result"])
def test_a_second_task_reading_a_stream_is_a_usage_error(second: str) -> None:
    agent, _ = agent_replying(started_then_silent())

    async def scenario() -> None:
        stream = agent.run(INPUT)
        await stream.__anext__()
        reader = asyncio.ensure_future(stream.__anext__())
        await asyncio.sleep(0.01)  # the reader now waits for the next event
        with pytest.raises(UsageError, match="another task"):
            await (stream.__anext__() if second == "iterate" else stream.result())
        with pytest.raises(UsageError, match="another task"):
            await stream.aclose()  # not RuntimeError("aclose(): ... already running")
        reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reader
        await stream.aclose()

    run(scenario())


def test_a_closed_client_is_a_usage_error() -> None:
    agent, _ = agent_replying(sse(*ANSWER))
    assert agent.client is not None
    run(agent.client.aclose())
    with pytest.raises(UsageError, match="closed"):
        run(agent.run_agent(INPUT))  # not httpx's RuntimeError


# --- the overall deadline ---------------------------------------------------------------------


async def trickle() -> AsyncIterator[bytes]:
    """A run that never ends, sending a keep-alive comment every 10 ms: no read ever waits
    long enough for a read timeout."""
    yield sse(START, {"type": "TEXT_MESSAGE_START", "messageId": "m1"})
    while True:
        await asyncio.sleep(0.01)
        yield b": still thinking\n"


def test_the_deadline_ends_a_run_that_keeps_sending() -> None:
    agent, _ = agent_replying(trickle(), timeout=5, deadline=0.2)
    delivered, raised, result = run(outcome(agent))
    assert len(delivered) == 2
    assert isinstance(raised, TransportError)
    assert (raised.rule, raised.index) == ("deadline", 2)
    assert "deadline=" in raised.detail
    assert result is raised


def test_the_deadline_covers_waiting_for_the_response() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    agent = HttpAgent(
        "http://agent.test/",
        client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        deadline=0.05,
    )
    with pytest.raises(TransportError) as raised:
        run(agent.run_agent(INPUT))
    assert raised.value.rule == "deadline"


def test_a_run_within_its_deadline_is_untouched() -> None:
    agent, _ = agent_replying(sse(*ANSWER), deadline=30)
    assert run(agent.run_agent(INPUT)).run.status == "completed"


def test_the_loop_is_usable_after_a_deadline() -> None:
    agent, _ = agent_replying(trickle(), deadline=0.05)

    async def scenario() -> str:
        with pytest.raises(TransportError):
            await agent.run_agent(INPUT)
        await asyncio.sleep(0.01)  # the task was not left cancelled
        return "alive"

    assert run(scenario()) == "alive"


@pytest.mark.parametrize("seconds", [0, -1.0, float("nan")])
@pytest.mark.parametrize("option", ["deadline", "timeout"])
def test_a_deadline_and_a_timeout_must_be_positive(option: str, seconds: float) -> None:
    # a NaN timeout used to escape as asyncio's ValueError, a negative one as a `connect` failure
    with pytest.raises(UsageError, match=option):
        HttpAgent("http://agent.test/", **{option: seconds})


# --- the command line tells the failures apart ------------------------------------------------


@contextlib.contextmanager
def misbehaving_server() -> Iterator[str]:
    """127.0.0.1: /silent answers nothing; /stall sends RUN_STARTED then nothing; /corrupt a gzip body that does not
    inflate; /cut promises more bytes than it sends, then closes; /trickle never ends."""

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            if self.path == "/silent":  # no response at all for a while
                time.sleep(1.0)
                return
            start = sse(START)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            if self.path == "/corrupt":
                body = gzip.compress(start)[:-8] + b"\xff" * 64
                self.send_header("Content-Encoding", "gzip")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.send_header("Content-Length", str(len(start) + 1000))
            self.end_headers()
            self.wfile.write(start)
            self.wfile.flush()
            if self.path == "/stall":
                time.sleep(3.0)
            elif self.path == "/trickle":
                for _ in range(500):  # 5 s at least: longer than the test's deadline
                    time.sleep(0.01)
                    self.wfile.write(b":\n")
                    self.wfile.flush()
            self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler) as url:
        yield url


def test_the_cli_names_a_read_timeout_and_its_setting(capsys: pytest.CaptureFixture[str]) -> None:
    # --thread: the canned replies are on thread "t", and a run answers on the thread asked
    with misbehaving_server() as url:
        assert main(["run", url + "/stall", "--timeout", "1", "--thread", "t"]) == 1
    captured = capsys.readouterr()
    assert "REJECTED [timeout] event 1" in captured.out
    assert "--timeout" in captured.out
    assert "cannot reach" not in captured.err


def test_the_cli_reports_a_decode_error_mid_stream_as_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with misbehaving_server() as url:
        assert main(["run", url + "/corrupt", "--thread", "t"]) == 1
    captured = capsys.readouterr()
    assert "REJECTED [decode]" in captured.out
    assert "cannot reach" not in captured.out + captured.err


def test_the_cli_reports_a_body_cut_by_the_server(capsys: pytest.CaptureFixture[str]) -> None:
    with misbehaving_server() as url:
        assert main(["run", url + "/cut", "--thread", "t"]) == 1
    captured = capsys.readouterr()
    assert "REJECTED [cut] event 1" in captured.out


def test_the_cli_deadline(capsys: pytest.CaptureFixture[str]) -> None:
    with misbehaving_server() as url:
        assert main(["run", url + "/trickle", "--deadline", "1", "--thread", "t"]) == 1
    captured = capsys.readouterr()  # on a loaded machine the deadline may pass before the reply
    assert "REJECTED [deadline]" in captured.out or "REJECTED" in captured.err
    assert "[deadline]" in captured.out + captured.err


def test_the_cli_says_cannot_reach_only_for_a_connect_failure(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        assert main(["run", f"http://127.0.0.1:{port}/"]) == 1
    err = capsys.readouterr().err
    assert "cannot reach" in err
    assert "[connect]" in err


def test_the_cli_tells_a_silent_server_from_one_it_cannot_reach(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with misbehaving_server() as url:
        assert main(["run", url + "/silent", "--timeout", "0.2", "--thread", "t"]) == 1
    err = capsys.readouterr().err
    assert "[timeout] the response did not come within timeout=0.2 s" in err
    assert "cannot reach" not in err


# --- whatever comes, only ProtocolViolation or TransportError (a failed run is a result) ----------

FAILURES = [
    None,
    httpx.ReadTimeout("t"),
    httpx.ReadError("r"),
    httpx.RemoteProtocolError("p"),
    httpx.DecodingError("d"),
    httpx.WriteError("w"),
]


@given(
    body=st.binary(max_size=512) | st.sampled_from([sse(*ANSWER), sse(*ANSWER[:3])]),
    coding=st.sampled_from([None, "gzip", "deflate", "br", "gzip, deflate", "identity"]),
    compress=st.booleans(),
    cut_at=st.integers(min_value=0, max_value=600),
    failure=st.sampled_from(FAILURES),
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_nothing_escapes_but_protocol_violation(
    body: bytes, coding: str | None, compress: bool, cut_at: int, failure: Exception | None
) -> None:
    raw = gzip.compress(body) if compress and coding in ("gzip", "gzip, deflate") else body
    if compress and coding == "deflate":
        raw = zlib.compress(body)

    async def stream() -> AsyncIterator[bytes]:
        yield raw[:cut_at]
        if failure is not None:
            raise failure
        yield raw[cut_at:]

    headers = {} if coding is None else {"content-encoding": coding}
    agent, _ = agent_replying(stream(), headers=headers)
    with contextlib.suppress(ProtocolViolation, TransportError):
        run(agent.run_agent(INPUT))


def test_the_deadline_covers_a_slow_error_body() -> None:
    async def slow() -> AsyncIterator[bytes]:
        while True:
            await asyncio.sleep(0.01)
            yield b"."

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"content-type": "text/plain"}, content=slow())

    agent = HttpAgent(
        "http://agent.test/",
        client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        deadline=0.1,
    )
    with pytest.raises(TransportError) as raised:
        run(agent.run_agent(INPUT))
    assert raised.value.rule == "deadline"


def test_a_trickled_error_body_is_cut_at_event_timeout() -> None:
    async def trickled() -> AsyncIterator[bytes]:
        while True:  # each byte within `timeout`; 2 KiB of them would take 41 s
            await asyncio.sleep(0.02)
            yield b"."

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"content-type": "text/plain"}, content=trickled())

    agent = HttpAgent(
        "http://agent.test/",
        client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        event_timeout=0.1,
    )
    with pytest.raises(HttpAgentError) as raised:
        run(agent.run_agent(INPUT))
    assert raised.value.status_code == 503
    assert raised.value.body.startswith(".")  # what came in time is kept


# --- the client's edges: credentials in the URL, redirects -----------------------------------


def test_credentials_in_the_url_appear_in_no_message_and_no_repr() -> None:
    agent = HttpAgent("http://ann:s3cret@127.0.0.1:9/agent")  # the discard port: refused
    assert "s3cret" not in repr(agent)
    with pytest.raises(TransportError) as caught:
        agent.run_sync({"threadId": "t", "runId": "r", "messages": []})
    assert caught.value.rule == "connect"
    assert "s3cret" not in str(caught.value)
    assert "127.0.0.1:9/agent" in str(caught.value)


def test_credentials_in_the_url_are_not_in_an_http_error() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, text="no")

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    agent = HttpAgent("http://ann:s3cret@agent.test/", client=client)
    with pytest.raises(HttpAgentError) as caught:
        agent.run_sync({"threadId": "t", "runId": "r", "messages": []})
    assert "s3cret" not in str(caught.value)


def redirecting_client(location: str, status: int = 307) -> tuple[httpx.AsyncClient, list[str]]:
    """A client that follows redirects, over a transport where /old redirects to ``location``
    and anything else answers the run; the requests' URLs and headers are recorded."""
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url} key={request.headers.get('x-api-key')}")
        if request.url.path == "/old":
            return httpx.Response(status, headers={"location": location})
        thread = json.loads(request.content)["threadId"]
        body = sse(
            {**ANSWER[0], "threadId": thread}, *ANSWER[1:-1], {**ANSWER[-1], "threadId": thread}
        )
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler), follow_redirects=True)
    return client, seen


def test_a_cross_origin_redirect_is_refused_whatever_the_client() -> None:
    client, seen = redirecting_client("http://elsewhere.test/new")
    agent = HttpAgent("http://agent.test/old", headers={"X-Api-Key": "k"}, client=client)
    with pytest.raises(HttpAgentError, match="another origin") as caught:
        agent.run_sync({"threadId": "t", "runId": "r", "messages": []})
    assert caught.value.status_code == 307
    assert seen == ["http://agent.test/old key=k"]  # nothing went to elsewhere.test


def test_a_same_origin_redirect_keeps_the_run_when_the_client_follows_redirects() -> None:
    client, seen = redirecting_client("/new", status=308)
    agent = HttpAgent("http://agent.test/old", headers={"X-Api-Key": "k"}, client=client)
    result = agent.run_sync({"threadId": "t", "runId": "r", "messages": []})
    assert result.run.status == "completed"
    assert seen == ["http://agent.test/old key=k", "http://agent.test/new key=k"]


def test_a_redirect_is_not_followed_by_a_client_that_does_not_follow_them() -> None:
    client, seen = redirecting_client("/new")
    client.follow_redirects = False
    agent = HttpAgent("http://agent.test/old", client=client)
    with pytest.raises(HttpAgentError) as caught:
        agent.run_sync({"threadId": "t", "runId": "r", "messages": []})
    assert caught.value.status_code == 307
    assert len(seen) == 1


@pytest.mark.parametrize("location", ["javascript:alert(1)", "mailto:a@b.test", "about:blank"])
@pytest.mark.parametrize("follows", [True, False])
def test_a_redirect_to_what_is_not_a_url_is_a_transport_error(location: str, follows: bool) -> None:
    client, seen = redirecting_client(location, status=302)
    client.follow_redirects = follows
    agent = HttpAgent("http://agent.test/old", client=client)
    with pytest.raises(TransportError) as caught:  # was httpx.InvalidURL
        agent.run_sync({"threadId": "t", "runId": "r", "messages": []})
    assert caught.value.rule == "bad-redirect"
    assert "http://agent.test/old" in str(caught.value)
    assert len(seen) == 1


# --- an event that never completes --------------------------------------------------------------


def test_an_event_trickled_a_byte_at_a_time_is_refused_after_event_timeout() -> None:
    handler = trickling_server(b'data: {"type":"TEXT_MESSAGE_START",', b" ", 0.05)
    with serve_handler(handler) as url:
        agent = HttpAgent(f"{url}/", event_timeout=1.0)
        started = time.monotonic()
        with pytest.raises(TransportError) as caught:
            agent.run_sync(INPUT)
    assert caught.value.rule == "event-timeout"
    assert caught.value.index == 1
    assert time.monotonic() - started < 30  # not the per-byte timeout, which never trips


def test_keepalive_comments_inside_an_event_do_not_renew_its_time() -> None:
    # the event's data line has come; comment lines follow, never the blank line that ends it
    handler = trickling_server(b'data: {"type":"TEXT_MESSAGE_START"}\n', b": keepalive\n", 0.05)
    with serve_handler(handler) as url, pytest.raises(TransportError) as caught:
        HttpAgent(f"{url}/", event_timeout=1.0).run_sync(INPUT)
    assert caught.value.rule == "event-timeout"


def test_keepalive_comments_between_events_are_not_an_event() -> None:
    handler = trickling_server(b"", b": keepalive\n\n", 0.05)
    with serve_handler(handler) as url, pytest.raises(TransportError) as caught:
        HttpAgent(f"{url}/", event_timeout=0.5, deadline=2.0).run_sync(INPUT)
    assert caught.value.rule == "deadline"  # only the run's own bound ends it


# --- runs without client= -------------------------------------------------------------------


def test_runs_without_a_client_load_the_trust_store_once(monkeypatch: pytest.MonkeyPatch) -> None:
    class Answer(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            body = sse(*ANSWER)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    import ssl  # noqa: PLC0415

    loaded: list[object] = []
    create_default_context = ssl.create_default_context

    def counted(*args: Any, **kwargs: Any) -> ssl.SSLContext:
        loaded.append(kwargs)
        return create_default_context(*args, **kwargs)

    monkeypatch.setattr(ssl, "create_default_context", counted)
    with serve_handler(Answer) as url:
        agent = HttpAgent(f"{url}/")
        for _ in range(3):
            assert agent.run_sync(INPUT).run.status == "completed"
    # one run's client loading certifi's store cost about 25 ms of CPU and 0.8 MB
    assert len(loaded) <= 1
