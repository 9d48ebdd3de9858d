"""The pytest plugin (issue 23, item 4): ``agui_verify`` over a body, payloads, an ASGI app
and a URL, failing with every finding and its spec link; run in pytest's own ``pytester``."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Installed, the entry point loads the plugin by itself (a -p as well would register it
# twice); in a checkout whose metadata predates it (an old editable install: the packaging
# session checks the entry point), the inner pytest loads the module the entry point names.
REGISTERED = bool(importlib.metadata.entry_points(group="pytest11", name="agui_msgspec"))
PLUGIN = () if REGISTERED else ("-p", "agui_msgspec._tools.pytest_plugin")

PREAMBLE = f"""
import json
EXAMPLES = {str(EXAMPLES)!r}
START = {{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}}
FINISH = {{"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}}
"""


def run(pytester: pytest.Pytester, body: str) -> pytest.RunResult:
    pytester.makepyfile(PREAMBLE + body)
    return pytester.runpytest(*PLUGIN, "-p", "no:cacheprovider")


def test_a_conformant_body_and_payloads_pass(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
def test_body(agui_verify):
    report = agui_verify(open(EXAMPLES + "/plain-answer.sse", "rb").read())
    assert report.verdict == "accepted"

def test_payloads(agui_verify):
    agui_verify([START, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "hi"}, FINISH])
""",
    )
    result.assert_outcomes(passed=2)


def test_a_rejected_stream_fails_with_every_finding_and_its_link(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        """
def test_two_violations(agui_verify):
    agui_verify([
        START,
        {"type": "TEXT_MESSAGE_END", "messageId": "nope"},
        {"type": "TOOL_CALL_END", "toolCallId": "nope"},
        FINISH,
    ])
""",
    )
    result.assert_outcomes(failed=1)
    result.stdout.re_match_lines(
        [
            r"AG-UI stream rejected: 2 violation\(s\)",
            r" +VIOLATION \[text-message-not-open\] frame 1: .* https://docs\.ag-ui\.com/spec/",
            r" +VIOLATION \[tool-call-not-open\] .*after the first violation.* https://docs\.ag-ui",
        ]
    )
    assert "Traceback" not in result.stdout.str()  # the findings, not the plugin's insides


def test_fail_on_warning_fails_a_stream_the_consumer_accepts(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
STREAM = [START, {"type": "SOME_FUTURE_EVENT"}, FINISH]

def test_default(agui_verify):
    assert agui_verify(STREAM).warnings

def test_strict(agui_verify):
    agui_verify(STREAM, fail_on="warning")
""",
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*AG-UI stream accepted: 0 violation(s), 1 warning(s)*"])


def test_an_asgi_app_is_posted_a_run_agent_input(pytester: pytest.Pytester) -> None:
    result = run(
        pytester,
        """
import sys
sys.path.insert(0, EXAMPLES)
import pytest
from starlette_agent import app

INPUT = {"threadId": "t1", "runId": "r1",
         "messages": [{"id": "u1", "role": "user", "content": "Oslo"}]}

def test_agent(agui_verify):
    report = agui_verify(app, path="/agent", input=INPUT)
    assert report.result.messages[-1].content == "18 C, cloudy"
    assert report.result.state == {"city": "Oslo", "celsius": 18}

def test_protobuf(agui_verify):
    report = agui_verify(app, path="/agent", accept="application/vnd.ag-ui.event+proto")
    assert report.verdict == "accepted"

def test_buggy_agent_ends_in_run_error(agui_verify):
    # the StrictWriter turned its bug into RUN_ERROR: a conformant stream
    report = agui_verify(app, path="/buggy-agent")
    assert report.result.runs[-1].status == "failed"

def test_not_a_stream(agui_verify):
    agui_verify(app, path="/agent", input={"threadId": 3})

async def from_a_running_loop():
    from agui_msgspec._tools.pytest_plugin import assert_conformant
    return assert_conformant(app, path="/agent")

def test_called_from_a_running_loop():
    import asyncio
    assert asyncio.run(from_a_running_loop()).verdict == "accepted"
""",
    )
    result.assert_outcomes(passed=4, failed=1)
    result.stdout.fnmatch_lines(["*the agent answered HTTP 422, not a stream*"])


def test_a_url_is_posted_a_run_agent_input(pytester: pytest.Pytester) -> None:
    pytest.importorskip("uvicorn")
    result = run(
        pytester,
        """
import socket, sys, threading, time
sys.path.insert(0, EXAMPLES)
import uvicorn
from starlette_agent import app

def test_url(agui_verify):
    sock = socket.socket(); sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="error"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.01)
    try:
        url = "http://127.0.0.1:%d/agent" % sock.getsockname()[1]
        assert agui_verify(url).verdict == "accepted"
    finally:
        server.should_exit = True
        thread.join()
""",
    )
    result.assert_outcomes(passed=1)


def test_an_agent_that_never_ends_stalls_or_is_no_stream_fails_the_test_in_bounds(
    pytester: pytest.Pytester,
) -> None:
    result = run(
        pytester,
        r"""
import asyncio, socket

def answer(status, content_type, chunks):
    async def app(scope, receive, send):
        await receive()
        headers = [(b"content-type", content_type)]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        async for chunk in chunks():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    return app

async def forever():
    yield b"data: " + json.dumps(START).encode() + b"\n\n"
    while True:
        yield b": keep-alive\n" * 1000
        await asyncio.sleep(0)

async def stalled():
    yield b"data: " + json.dumps(START).encode() + b"\n\n"
    await asyncio.sleep(600)

async def page():
    yield b"<h1>\x1b[31mdown\x1b[0m\xe2\x80\xae</h1>"

def test_forever(agui_verify):
    agui_verify(answer(200, b"text/event-stream", forever), max_body_size=1_000_000)

def test_stalled(agui_verify):
    agui_verify(answer(200, b"text/event-stream", stalled), deadline=0.5)

def test_html(agui_verify):
    agui_verify(answer(200, b"text/html", page))

def test_error_page(agui_verify):
    agui_verify(answer(500, b"text/html", page))

def test_nobody_listens(agui_verify):
    sock = socket.socket(); sock.bind(("127.0.0.1", 0)); port = sock.getsockname()[1]
    sock.close()
    agui_verify("HTTP://127.0.0.1:%d/agent" % port, deadline=5)

def test_many_findings(agui_verify):
    stream = [START, *({**START, "type": "STEP_STARTED", "stepName": "s", "x%d" % n: 1}
                       for n in range(80)), FINISH]
    agui_verify(stream, fail_on="warning")
""",
    )
    result.assert_outcomes(failed=6)
    result.stdout.fnmatch_lines(
        [
            "*max_body_size (1000000 bytes)*",
            "*deadline (0.5 s)*",
            "*Content-Type text/html, not an AG-UI stream*",
            "*HTTP 500, not a stream: <h1>\\x1b[31mdown\\x1b[0m\\u202e</h1>*",
            "*no answer from HTTP://127.0.0.1:*ConnectError*",
        ]
    )
    result.stdout.fnmatch_lines(["*  and * more*"])
    assert "\x1b" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str()
