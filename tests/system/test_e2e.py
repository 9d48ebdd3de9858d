"""End to end against a producer this project did not write.

The agent endpoint is an ASGI app that emits its runs with the official Python
SDK (``ag-ui-protocol``: the ``ag_ui.core`` event models and
``ag_ui.encoder.EventEncoder``) and parses the request with that SDK's
``RunAgentInput``. uvicorn serves it on 127.0.0.1 from a background thread for
this module's tests; ``HttpAgent`` and ``agui-msgspec run`` talk to it over a
real socket.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

REASON = "the end-to-end producer needs the tests extra (ag-ui-protocol, starlette, uvicorn)"
pytest.importorskip("ag_ui.encoder", reason=REASON)
pytest.importorskip("starlette", reason=REASON)
pytest.importorskip("uvicorn", reason=REASON)

from ag_ui.core import (  # noqa: E402
    BaseEvent,
    Interrupt,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunStartedEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    TokenUsage,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)
from ag_ui.core.version import PROTOCOL_VERSION  # noqa: E402
from ag_ui.encoder import EventEncoder  # noqa: E402
from pydantic import ValidationError  # noqa: E402
from serving import serve  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response, StreamingResponse  # noqa: E402
from starlette.routing import Route  # noqa: E402

from agui_msgspec import (  # noqa: E402
    HttpAgent,
    RunFailed,
    v1_1,
)
from agui_msgspec._tools.cli import main  # noqa: E402

received: list[RunAgentInput] = []


def weather_run(input: RunAgentInput) -> list[BaseEvent]:
    """Echo the user, call a tool, read its result, answer: a run with text and a tool call."""
    said = str(input.messages[-1].content) if input.messages else "nothing"
    thread_id, run_id = input.thread_id, input.run_id
    return [
        RunStartedEvent(thread_id=thread_id, run_id=run_id, protocol_version=PROTOCOL_VERSION),
        TextMessageStartEvent(message_id="a1", role="assistant"),
        TextMessageContentEvent(message_id="a1", delta="You said: "),
        TextMessageContentEvent(message_id="a1", delta=said),
        TextMessageEndEvent(message_id="a1"),
        ToolCallStartEvent(tool_call_id="c1", tool_call_name="get_weather", parent_message_id="a1"),
        ToolCallArgsEvent(tool_call_id="c1", delta='{"city":'),
        ToolCallArgsEvent(tool_call_id="c1", delta='"Paris"}'),
        ToolCallEndEvent(tool_call_id="c1"),
        ToolCallResultEvent(
            message_id="t1", tool_call_id="c1", content="18 C, cloudy", role="tool"
        ),
        StateSnapshotEvent(snapshot={"city": "Paris", "units": None}),
        TextMessageStartEvent(message_id="a2", role="assistant"),
        TextMessageContentEvent(message_id="a2", delta="It is 18 C and cloudy in Paris."),
        TextMessageEndEvent(message_id="a2"),
        RunFinishedEvent(
            thread_id=thread_id,
            run_id=run_id,
            usage=[TokenUsage(input_tokens=20, output_tokens=9, total_tokens=29)],
        ),
    ]


def failing_run(input: RunAgentInput) -> list[BaseEvent]:
    return [
        RunStartedEvent(thread_id=input.thread_id, run_id=input.run_id),
        TextMessageStartEvent(message_id="a1", role="assistant"),
        TextMessageContentEvent(message_id="a1", delta="Let me"),
        RunErrorEvent(message="model overloaded", code="OVERLOADED"),
    ]


def interrupted_run(input: RunAgentInput) -> list[BaseEvent]:
    outcome = RunFinishedInterruptOutcome(interrupts=[Interrupt(id="i1", reason="approval")])
    return [
        RunStartedEvent(thread_id=input.thread_id, run_id=input.run_id),
        RunFinishedEvent(thread_id=input.thread_id, run_id=input.run_id, outcome=outcome),
    ]


RUNS = {"weather": weather_run, "failing": failing_run, "interrupted": interrupted_run}


async def agent_endpoint(request: Request) -> Response:
    try:
        input = RunAgentInput.model_validate_json(await request.body())
    except ValidationError as exc:
        return JSONResponse({"detail": str(exc)}, status_code=422)
    received.append(input)
    encoder = EventEncoder(accept=request.headers.get("accept", ""))
    events = RUNS[request.path_params["scenario"]](input)

    async def stream() -> AsyncIterator[str]:
        for event in events:
            yield encoder.encode(event)
            await asyncio.sleep(0)  # one event per write, as a live agent sends them

    return StreamingResponse(stream(), media_type=encoder.get_content_type())


@pytest.fixture(scope="module")
def producer() -> Iterator[str]:
    """The base URL of the SDK-built agent, served by uvicorn on a free loopback port."""
    app = Starlette(routes=[Route("/agent/{scenario}", agent_endpoint, methods=["POST"])])
    with serve(app) as url:
        yield f"{url}/agent"


def user_input(text: str) -> dict[str, Any]:
    return {
        "threadId": "thread-e2e",
        "runId": f"run-{len(received)}",
        "messages": [{"id": "u1", "role": "user", "content": text}],
    }


def test_http_agent_assembles_a_run_from_the_official_sdk(producer: str) -> None:
    async def scenario() -> tuple[list[str], Any]:
        tags: list[str] = []
        async with HttpAgent(producer + "/weather", timeout=10).run(user_input("Hi")) as stream:
            async for event in stream:
                tags.append(str(type(event).__struct_config__.tag))
            return tags, await stream.result()

    tags, result = asyncio.run(asyncio.wait_for(scenario(), timeout=30))
    assert tags == [event.type.value for event in weather_run(received[-1])]
    assert received[-1].protocol_version == "1.1"  # the SDK parsed what we sent
    assert [m.content for m in received[-1].messages] == ["Hi"]
    assert result.run.status == "completed"
    assert result.run.protocol_version == PROTOCOL_VERSION
    assert result.run.total_tokens() == 29
    assert result.warnings == []
    assert result.state == {"city": "Paris", "units": None}
    assert result.new_messages == [
        v1_1.AssistantMessage(
            id="a1",
            content="You said: Hi",
            tool_calls=[
                v1_1.ToolCall(
                    id="c1",
                    type="function",
                    function=v1_1.FunctionCall(name="get_weather", arguments='{"city":"Paris"}'),
                )
            ],
        ),
        v1_1.ToolMessage(id="t1", content="18 C, cloudy", tool_call_id="c1"),
        v1_1.AssistantMessage(id="a2", content="It is 18 C and cloudy in Paris."),
    ]


def test_a_run_error_from_the_sdk_is_a_failed_run(producer: str) -> None:
    result = HttpAgent(producer + "/failing", timeout=10).run_sync(user_input("Hi"))
    assert result.status == "failed"
    assert result.error.code == "OVERLOADED"
    assert result.new_messages == [v1_1.AssistantMessage(id="a1", content="Let me")]
    with pytest.raises(RunFailed):
        result.raise_for_status()


def test_an_interrupt_from_the_sdk_is_an_interrupted_run(producer: str) -> None:
    result = HttpAgent(producer + "/interrupted", timeout=10).run_sync(user_input("Hi"))
    assert result.run.status == "interrupted"
    assert [i.reason for i in result.run.interrupts] == ["approval"]


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agui_msgspec._tools.cli", "run", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_the_run_command_streams_the_run_and_reads_back_the_answer(producer: str) -> None:
    done = cli(producer + "/weather", "--message", "Hello there", "--thread", "th-cli")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "TOOL_CALL_START tool_call_id=c1 tool_call_name='get_weather'" in done.stdout
    assert "TEXT_MESSAGE_CONTENT message_id=a1 delta='Hello there'" in done.stdout
    assert "  [assistant] You said: Hello there" in lines
    assert '      calls get_weather({"city":"Paris"}) id=c1' in lines
    assert "  [tool] result of c1: 18 C, cloudy" in lines
    assert f"  run {received[-1].run_id} on thread th-cli: completed; tokens 29" in lines
    assert lines[-1] == "ACCEPTED (completed)"
    assert received[-1].thread_id == "th-cli"


def test_the_run_command_json_verdict(producer: str) -> None:
    done = cli(producer + "/weather", "--message", "Hi", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["outcome"] == "completed"
    assert document["violation"] is None
    assert [run["status"] for run in document["runs"]] == ["completed"]
    assert [m["role"] for m in document["messages"]] == ["user", "assistant", "tool", "assistant"]


def test_the_run_command_exits_0_on_the_sdks_run_error(producer: str) -> None:
    done = cli(producer + "/failing")
    assert done.returncode == 0  # a conformant stream, as check says; the summary says it failed
    assert done.stdout.splitlines()[-1] == "RUN FAILED 'model overloaded'"


def test_main_runs_in_process_too(producer: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", producer + "/interrupted"]) == 0
    assert "interrupted; 1 interrupt(s): approval" in capsys.readouterr().out
