"""The Starlette example agent (examples/starlette_agent.py), served by uvicorn on
127.0.0.1, driven by ``HttpAgent`` and ``agui-msgspec run``: the server-side helpers
(``parse_run_input``, ``EventStream``) end to end, including the event the writer refuses."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REASON = "the example agent needs the tests extra (starlette, uvicorn, httpx)"
pytest.importorskip("starlette", reason=REASON)
pytest.importorskip("uvicorn", reason=REASON)
pytest.importorskip("httpx", reason=REASON)

import httpx  # noqa: E402
from serving import serve  # noqa: E402

from agui_msgspec import PROTOBUF_MEDIA_TYPE, HttpAgent, consume_body, v1_1  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "starlette_agent.py"


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("starlette_agent", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The example app on a free loopback port, served from a background thread."""
    with serve(load_example().app) as url:
        yield url


def user_input(text: str) -> dict[str, Any]:
    return {
        "threadId": "thread-example",
        "runId": "run-1",
        "messages": [{"id": "u1", "role": "user", "content": text}],
    }


def test_http_agent_runs_the_example_agent(server: str) -> None:
    result = HttpAgent(server + "/agent", timeout=10).run_sync(user_input("Lyon"))
    assert result.run.status == "completed"
    assert result.run.protocol_version == "1.1"
    assert result.warnings == []
    assert result.state == {"city": "Lyon", "celsius": 18}
    assert result.new_messages == [
        v1_1.AssistantMessage(
            id="a1",
            content="Checking the weather in Lyon.",
            tool_calls=[
                v1_1.ToolCall(
                    id="c1",
                    type="function",
                    function=v1_1.FunctionCall(name="get_weather", arguments='{"city": "Lyon"}'),
                )
            ],
        ),
        v1_1.ToolMessage(id="t1", content="18 C, cloudy", tool_call_id="c1"),
    ]


def test_the_refused_event_reaches_the_client_as_run_error(server: str) -> None:
    result = HttpAgent(server + "/buggy-agent", timeout=10).run_sync(user_input("Hi"))
    error = result.error
    assert error.code == "text-message-not-open"
    assert error.message.startswith("[text-message-not-open] event 3")
    # A failed run, not a rejection: the stream was well formed and the run failed; what was
    # delivered before the refusal stays delivered.
    assert result.status == "failed"
    assert result.new_messages == [v1_1.AssistantMessage(id="a1", content="Thinking")]


@pytest.mark.parametrize(
    ("accept", "media_type"),
    [
        ("text/event-stream", "text/event-stream"),
        ("text/event-stream, application/vnd.ag-ui.event+proto", PROTOBUF_MEDIA_TYPE),
    ],
)
def test_the_response_headers(server: str, accept: str, media_type: str) -> None:
    async def scenario() -> httpx.Response:
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.post(
                server + "/agent", json=user_input("Hi"), headers={"Accept": accept}
            )

    response = asyncio.run(scenario())
    assert response.status_code == 200
    assert response.headers["content-type"] == media_type
    assert response.headers["cache-control"] == "no-cache"
    assert response.headers["x-accel-buffering"] == "no"
    if media_type == "text/event-stream":
        assert response.text.startswith('data: {"type":"RUN_STARTED"')
    assert consume_body(response.content).outcome == "completed"


@pytest.mark.parametrize(
    ("body", "path"),
    [
        (b'{"threadId": "t", "messages": []}', "/runId"),
        (b"{not json", ""),
    ],
)
def test_a_malformed_body_is_an_http_error_without_a_stream(
    server: str, body: bytes, path: str
) -> None:
    response = httpx.post(server + "/agent", content=body, timeout=10)
    assert response.status_code == 422
    assert response.json()["path"] == path
    assert response.json()["error"].startswith("[malformed-input] request body")


def test_unknown_input_members_are_stripped_and_the_run_goes_on(server: str) -> None:
    body = {**user_input("Oslo"), "clientTrace": {"id": 1}}
    response = httpx.post(server + "/agent", json=body, timeout=10)  # Accept: */*: protobuf
    assert response.status_code == 200
    assert [run.status for run in consume_body(response.content).runs] == ["completed"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agui_msgspec._tools.cli", "run", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_run_command_accepts_the_example_agent(server: str) -> None:
    done = cli(server + "/agent", "--message", "Rome", "--json")
    assert done.returncode == 0, done.stderr
    verdict = json.loads(done.stdout)
    assert verdict["outcome"] == "completed"
    assert [run["status"] for run in verdict["runs"]] == ["completed"]
    assert verdict["state"] == {"city": "Rome", "celsius": 18}


def test_the_run_command_reports_the_refused_event_as_a_failed_run(server: str) -> None:
    done = cli(server + "/buggy-agent")
    assert done.returncode == 0  # the StrictWriter made it a conformant stream: check's 0
    assert "RUN_ERROR" in done.stdout
    assert done.stdout.splitlines()[-1].startswith('RUN FAILED "[text-message-not-open] event 3')
