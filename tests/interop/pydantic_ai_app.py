"""pydantic-ai's AG-UI endpoint (``AGUIAdapter.dispatch_request``) over scripted ``FunctionModel``s.

One route per scenario: ``POST /<scenario>``. Each model streams a fixed script and looks at
the conversation only to tell its first request from the one after a tool result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from ag_ui.core import EventType, StateDeltaEvent, StateSnapshotEvent
from pydantic import BaseModel
from pydantic_ai import Agent, DeferredToolRequests, RunContext
from pydantic_ai.messages import ModelMessage, ModelRequest, ToolReturn, ToolReturnPart
from pydantic_ai.models.function import (
    AgentInfo,
    DeltaThinkingCalls,
    DeltaThinkingPart,
    DeltaToolCall,
    DeltaToolCalls,
    FunctionModel,
)
from pydantic_ai.ui import StateDeps
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

Script = AsyncIterator[str | DeltaToolCalls | DeltaThinkingCalls]


def after_tool(messages: list[ModelMessage]) -> bool:
    """Whether the model is called back with tool results (its second request)."""
    last = messages[-1]
    return isinstance(last, ModelRequest) and any(
        isinstance(part, ToolReturnPart) for part in last.parts
    )


async def plain(messages: list[ModelMessage], info: AgentInfo) -> Script:
    yield "Hello"
    yield ", world"


async def backend_tool(messages: list[ModelMessage], info: AgentInfo) -> Script:
    if after_tool(messages):
        yield "It is 18 C in Paris."
        return
    yield {0: DeltaToolCall(name="get_weather", json_args='{"city":', tool_call_id="call-w")}
    yield {0: DeltaToolCall(json_args='"Paris"}')}


async def parallel_tools(messages: list[ModelMessage], info: AgentInfo) -> Script:
    if after_tool(messages):
        yield "Paris: 18 C at noon."
        return
    # Two calls whose argument deltas interleave, as a provider streams parallel calls.
    yield {0: DeltaToolCall(name="get_weather", json_args='{"city":', tool_call_id="call-w")}
    yield {1: DeltaToolCall(name="get_time", json_args='{"zone":', tool_call_id="call-t")}
    yield {0: DeltaToolCall(json_args='"Paris"}')}
    yield {1: DeltaToolCall(json_args='"CET"}')}


async def frontend_tool(messages: list[ModelMessage], info: AgentInfo) -> Script:
    if after_tool(messages):
        yield "Thanks, you confirmed."
        return
    yield {0: DeltaToolCall(name="confirm", json_args='{"question":"Go?"}', tool_call_id="call-f")}


async def reasoning(messages: list[ModelMessage], info: AgentInfo) -> Script:
    turn = sum(isinstance(m, ModelRequest) for m in messages)
    yield {0: DeltaThinkingPart(content=f"Thinking about turn {turn}")}
    yield {0: DeltaThinkingPart(content="...")}
    yield f"Answer {turn}"


async def state(messages: list[ModelMessage], info: AgentInfo) -> Script:
    if after_tool(messages):
        yield "Added."
        return
    yield {0: DeltaToolCall(name="add_item", json_args='{"item":"milk"}', tool_call_id="call-s")}


async def failing(messages: list[ModelMessage], info: AgentInfo) -> Script:
    yield "Let me"
    raise RuntimeError("the model fell over")


async def approval(messages: list[ModelMessage], info: AgentInfo) -> Script:
    if after_tool(messages):
        yield "Deleted."
        return
    yield {
        0: DeltaToolCall(name="delete_file", json_args='{"path":"a.txt"}', tool_call_id="call-d")
    }


class Basket(BaseModel):
    items: list[str] = []
    count: int = 0


def agent_for(script: Callable[..., Script], **kwargs: Any) -> Agent[Any, Any]:
    agent: Agent[Any, Any] = Agent(FunctionModel(stream_function=script), **kwargs)

    @agent.tool_plain
    def get_weather(city: str) -> str:
        return f"18 C in {city}"

    @agent.tool_plain
    def get_time(zone: str) -> str:
        return f"12:00 {zone}"

    return agent


def state_agent() -> Agent[StateDeps[Basket], str]:
    agent = Agent(FunctionModel(stream_function=state), deps_type=StateDeps[Basket])

    @agent.tool
    def add_item(ctx: RunContext[StateDeps[Basket]], item: str) -> ToolReturn:
        before = ctx.deps.state
        after = Basket(items=[*before.items, item], count=before.count + 1)
        return ToolReturn(
            return_value=f"added {item}",
            metadata=[
                StateSnapshotEvent(type=EventType.STATE_SNAPSHOT, snapshot=before.model_dump()),
                StateDeltaEvent(
                    type=EventType.STATE_DELTA,
                    delta=[
                        {"op": "add", "path": "/items/-", "value": item},
                        {"op": "replace", "path": "/count", "value": after.count},
                    ],
                ),
            ],
        )

    return agent


def approval_agent() -> Agent[None, str | DeferredToolRequests]:
    agent = Agent(FunctionModel(stream_function=approval), output_type=[str, DeferredToolRequests])

    @agent.tool_plain(requires_approval=True)
    def delete_file(path: str) -> str:
        return f"deleted {path}"

    return agent


AGENTS: dict[str, tuple[Agent[Any, Any], dict[str, Any]]] = {
    "plain": (agent_for(plain), {}),
    "backend_tool": (agent_for(backend_tool), {}),
    "parallel_tools": (agent_for(parallel_tools), {}),
    "frontend_tool": (
        Agent(
            FunctionModel(stream_function=frontend_tool), output_type=[str, DeferredToolRequests]
        ),
        {},
    ),
    "reasoning": (agent_for(reasoning), {}),
    # An old peer: pydantic-ai sends it the retired THINKING_* events.
    "reasoning_legacy": (agent_for(reasoning), {"ag_ui_version": "0.1.10"}),
    "state": (state_agent(), {"deps": StateDeps(Basket())}),
    "failing": (agent_for(failing), {}),
    "approval": (approval_agent(), {}),
}


async def endpoint(request: Request) -> Response:
    agent, options = AGENTS[request.path_params["scenario"]]
    return await AGUIAdapter.dispatch_request(request, agent=agent, **options)


def app() -> Starlette:
    return Starlette(routes=[Route("/{scenario}", endpoint, methods=["POST"])])
