"""The protobuf binding over HTTP: the server helper answers it when asked, the client asks
for it and reads either binding by the response's Content-Type, and the producer's writer
frames it (AG-UI basic/transports/http-protobuf)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import httpx
import msgspec
import pytest

from agui_msgspec import (
    PROTOBUF_MEDIA_TYPE,
    SSE_MEDIA_TYPE,
    EventStream,
    HttpAgent,
    ProtocolViolation,
    StrictWriter,
    TransportError,
    UsageError,
    consume_body,
    proto_frame,
)
from agui_msgspec._tools.cli import main

T = TypeVar("T")
INPUT: dict[str, Any] = {"threadId": "t", "runId": "r", "messages": []}
ANSWER: list[dict[str, Any]] = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hi there."},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def run(coroutine: Awaitable[T]) -> T:
    async def bounded() -> T:
        return await asyncio.wait_for(coroutine, timeout=10)

    return asyncio.run(bounded())


def agent_for(handler: Any) -> HttpAgent:
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return HttpAgent("http://agent.test/run", client=client)


async def served_by_the_helper(request: httpx.Request) -> httpx.Response:
    """A server built on the response helper: it negotiates by the request's Accept."""
    stream = EventStream(ANSWER, request.headers.get("accept"))
    return httpx.Response(200, headers=stream.headers, content=b"".join(stream))


def test_the_client_gets_protobuf_from_a_server_that_offers_it() -> None:
    answered: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        response = await served_by_the_helper(request)
        answered.append(response.headers["content-type"])
        return response

    result = run(agent_for(handler).run_agent(INPUT))
    assert answered == [PROTOBUF_MEDIA_TYPE]
    assert result.run.status == "completed"
    assert [m.content for m in result.messages] == ["Hi there."]


def test_the_client_reads_sse_from_a_server_that_ignores_the_media_type() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        stream = EventStream(ANSWER)  # no Accept consulted: the default binding
        return httpx.Response(200, headers=stream.headers, content=b"".join(stream))

    result = run(agent_for(handler).run_agent(INPUT))
    assert result.run.status == "completed"
    assert [m.content for m in result.messages] == ["Hi there."]


def test_the_client_names_both_media_types() -> None:
    seen: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.headers["accept"])
        return await served_by_the_helper(request)

    run(agent_for(handler).run_agent(INPUT))
    assert seen == [f"{SSE_MEDIA_TYPE}, {PROTOBUF_MEDIA_TYPE}"]


def test_a_protobuf_reply_cut_inside_a_frame_is_truncated() -> None:
    body = b"".join(proto_frame(event) for event in ANSWER)

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": PROTOBUF_MEDIA_TYPE}, content=body[:-3])

    with pytest.raises(ProtocolViolation) as raised:
        run(agent_for(handler).run_agent(INPUT))
    assert raised.value.rule == "truncated"


def test_a_protobuf_reply_with_bytes_that_do_not_decode_is_rejected() -> None:
    body = proto_frame(ANSWER[0]) + b"\x00\x00\x00\x02\x08\x01"

    async def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": PROTOBUF_MEDIA_TYPE}, content=body)

    with pytest.raises(TransportError) as raised:
        run(agent_for(handler).run_agent(INPUT))
    assert (raised.value.rule, raised.value.index) == ("malformed-frame", 1)


def test_the_writer_frames_protobuf_on_request() -> None:
    writer = StrictWriter(framing="protobuf")
    body = b"".join(writer.frame(event) for event in ANSWER)
    writer.close()
    # the frames of the events as a consumer decodes them (Structs: defaults left out)
    typed = consume_body(b"".join(proto_frame(event) for event in ANSWER)).events
    assert body == b"".join(proto_frame(event) for event in typed)
    assert consume_body(body).outcome == "completed"
    assert StrictWriter().frame(ANSWER[0]).startswith(b"data: ")


def test_the_writer_still_checks_before_framing_protobuf() -> None:
    writer = StrictWriter(framing="protobuf")
    with pytest.raises(ProtocolViolation):
        writer.frame(ANSWER[1])


def test_an_unknown_framing_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="framing"):
        StrictWriter(framing="xml")  # type: ignore[arg-type]


def test_the_helper_frames_a_refused_stream_s_run_error_as_protobuf() -> None:
    stream = EventStream(
        [ANSWER[0], {"type": "TEXT_MESSAGE_END", "messageId": "x"}], PROTOBUF_MEDIA_TYPE
    )
    body = b"".join(stream)
    result = consume_body(body)
    assert stream.media_type == PROTOBUF_MEDIA_TYPE
    assert [msgspec.to_builtins(e)["type"] for e in result.events][-1] == "RUN_ERROR"


def test_check_reads_a_recorded_protobuf_body(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recorded = tmp_path / "run.bin"
    recorded.write_bytes(b"".join(proto_frame(event) for event in ANSWER))
    assert main(["check", str(recorded), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["outcome"] == "completed"
    recorded.write_bytes(b"".join(proto_frame(event) for event in ANSWER)[:-2])
    assert main(["check", str(recorded)]) == 1
