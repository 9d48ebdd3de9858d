"""An AG-UI agent served with Starlette, built on ``parse_run_input`` and ``EventStream``.

Run it (needs starlette and uvicorn) and talk to it::

    python examples/starlette_agent.py            # serves http://127.0.0.1:8000
    agui-msgspec run http://127.0.0.1:8000/agent --message "Paris"
    agui-msgspec run http://127.0.0.1:8000/buggy-agent

``/agent`` answers with a text message, a tool call and its result, and the state.
``/buggy-agent`` has a bug: it streams content for a message it never started. The
``StrictWriter`` inside ``EventStream`` refuses that event, so the client receives a
well-formed stream whose run ends with ``RUN_ERROR`` (``code="text-message-not-open"``)
instead of a stream it would have to reject.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

import agui_msgspec as agui

logger = logging.getLogger("starlette_agent")


async def weather_agent(input: agui.RunAgentInput) -> AsyncIterator[Any]:
    """Echo the user, look the weather up with a tool, answer."""
    city = str(input.messages[-1].content) if input.messages else "Paris"
    yield agui.RunStartedEvent(
        thread_id=input.thread_id, run_id=input.run_id, protocol_version=agui.PROTOCOL_VERSION
    )
    yield agui.TextMessageStartEvent(message_id="a1")
    for word in ("Checking ", "the weather in ", city, "."):
        yield agui.TextMessageContentEvent(message_id="a1", delta=word)
        await asyncio.sleep(0)  # a live agent yields as its model produces
    yield agui.TextMessageEndEvent(message_id="a1")
    # parentMessageId puts the call on the message that announced it (without it, the
    # call gets an assistant message of its own)
    yield agui.ToolCallStartEvent(
        tool_call_id="c1", tool_call_name="get_weather", parent_message_id="a1"
    )
    yield agui.ToolCallArgsEvent(tool_call_id="c1", delta=json.dumps({"city": city}))
    yield agui.ToolCallEndEvent(tool_call_id="c1")
    yield agui.ToolCallResultEvent(message_id="t1", tool_call_id="c1", content="18 C, cloudy")
    yield agui.StateSnapshotEvent(snapshot={"city": city, "celsius": 18})
    # Events may be wire-named dicts too (or official ag-ui-protocol models).
    yield {"type": "RUN_FINISHED", "threadId": input.thread_id, "runId": input.run_id}


async def buggy_agent(input: agui.RunAgentInput) -> AsyncIterator[Any]:
    yield agui.RunStartedEvent(thread_id=input.thread_id, run_id=input.run_id)
    yield agui.TextMessageStartEvent(message_id="a1")
    yield agui.TextMessageContentEvent(message_id="a1", delta="Thinking")
    yield agui.TextMessageContentEvent(message_id="a2", delta="...")  # the bug: a2 never started
    yield agui.TextMessageEndEvent(message_id="a1")
    yield agui.RunFinishedEvent(thread_id=input.thread_id, run_id=input.run_id)


async def serve(request: Request, agent: Any) -> Response:
    try:
        # stripped, not refused: a newer client's input still runs, with a warning per path
        input = agui.parse_run_input(
            await request.body(),
            on_warning=lambda warning: logger.warning("request body: %s", warning),
        )
    except agui.MalformedInput as refused:  # the run never starts: an HTTP error, no stream
        return JSONResponse({"error": str(refused), "path": refused.path}, status_code=422)
    stream = agui.EventStream(agent(input), request.headers.get("accept"))
    return StreamingResponse(stream, headers=stream.headers)


async def agent_endpoint(request: Request) -> Response:
    return await serve(request, weather_agent)


async def buggy_agent_endpoint(request: Request) -> Response:
    return await serve(request, buggy_agent)


app = Starlette(
    routes=[
        Route("/agent", agent_endpoint, methods=["POST"]),
        Route("/buggy-agent", buggy_agent_endpoint, methods=["POST"]),
    ]
)

if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="127.0.0.1", port=8000)
