"""agent-framework-ag-ui's FastAPI endpoint over agents whose chat client is scripted.

``ScriptedChatClient`` is an agent-framework chat client (``BaseChatClient`` with the
framework's own function-invocation layer, as its shipped clients are built) that streams
fixed ``ChatResponseUpdate``s. One route per scenario, ``POST /<scenario>``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    ResponseStream,
    tool,
)
from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint
from fastapi import FastAPI

Script = Callable[[Sequence[Message]], Iterable[ChatResponseUpdate]]


class ScriptedChatClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """Streams the updates ``script`` returns for the conversation so far."""

    def __init__(self, script: Script) -> None:
        super().__init__()
        self.script = script

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Any:
        updates = self.script(messages)

        async def streamed() -> AsyncIterator[ChatResponseUpdate]:
            for update in updates:
                yield update

        if stream:
            return ResponseStream(streamed(), finalizer=ChatResponse.from_updates)

        async def whole() -> ChatResponse[Any]:
            return ChatResponse.from_updates(list(updates))

        return whole()


def after_tool(messages: Sequence[Message]) -> bool:
    return any(content.type == "function_result" for content in messages[-1].contents)


def say(*pieces: str, id: str) -> list[ChatResponseUpdate]:
    return [
        ChatResponseUpdate(role="assistant", message_id=id, contents=[Content.from_text(piece)])
        for piece in pieces
    ]


def call(call_id: str, name: str, arguments: str, id: str) -> ChatResponseUpdate:
    return ChatResponseUpdate(
        role="assistant",
        message_id=id,
        contents=[Content.from_function_call(call_id, name, arguments=arguments)],
    )


def plain(messages: Sequence[Message]) -> Iterable[ChatResponseUpdate]:
    return say("Hello", ", world", id="ai-plain")


def backend_tool(messages: Sequence[Message]) -> Iterable[ChatResponseUpdate]:
    if after_tool(messages):
        return say("It is 18 C in Paris.", id="ai-answer")
    return [
        call("call-w", "get_weather", '{"city":', id="ai-call"),
        call("call-w", "get_weather", '"Paris"}', id="ai-call"),
    ]


def parallel_tools(messages: Sequence[Message]) -> Iterable[ChatResponseUpdate]:
    if after_tool(messages):
        return say("Paris: 18 C at noon.", id="ai-answer")
    return [
        call("call-w", "get_weather", '{"city":', id="ai-call"),
        call("call-t", "get_time", '{"zone":', id="ai-call"),
        call("call-w", "get_weather", '"Paris"}', id="ai-call"),
        call("call-t", "get_time", '"CET"}', id="ai-call"),
    ]


def frontend_tool(messages: Sequence[Message]) -> Iterable[ChatResponseUpdate]:
    if after_tool(messages):
        return say("Thanks, you confirmed.", id="ai-answer")
    return [call("call-f", "confirm", '{"question":"Go?"}', id="ai-call")]


def reasoning(messages: Sequence[Message]) -> Iterable[ChatResponseUpdate]:
    turn = sum(m.role == "user" for m in messages)
    return [
        ChatResponseUpdate(
            role="assistant",
            message_id=f"ai-think-{turn}",
            contents=[Content.from_text_reasoning(text=piece)],
        )
        for piece in (f"Thinking about turn {turn}", "...")
    ] + say(f"Answer {turn}", id=f"ai-think-{turn}")


def failing(messages: Sequence[Message]) -> Iterable[ChatResponseUpdate]:
    yield from say("Let me", id="ai-fail")
    raise RuntimeError("the model fell over")


def approval(messages: Sequence[Message]) -> Iterable[ChatResponseUpdate]:
    if after_tool(messages):
        return say("Deleted.", id="ai-answer")
    return [call("call-d", "delete_file", '{"path":"a.txt"}', id="ai-call")]


def state(messages: Sequence[Message]) -> Iterable[ChatResponseUpdate]:
    if after_tool(messages):
        return say("Added.", id="ai-answer")
    return [call("call-s", "update_basket", '{"items":["eggs","milk"]}', id="ai-call")]


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18 C in {city}"


@tool
def get_time(zone: str) -> str:
    """The time in a zone."""
    return f"12:00 {zone}"


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool
def update_basket(items: list[str]) -> str:
    """Replace the basket's items."""
    return f"basket: {', '.join(items)}"


def agent(script: Script, *tools: Any) -> Agent[Any]:
    return Agent(
        client=ScriptedChatClient(script),
        name=script.__name__,
        tools=list(tools) or [get_weather, get_time],
    )


def app() -> FastAPI:
    api = FastAPI()

    def add(agent: Agent[Any], path: str, **options: Any) -> None:
        # A test server with one user; without it the endpoint refuses to start.
        add_agent_framework_fastapi_endpoint(api, agent, path, single_user=True, **options)

    for script in (plain, backend_tool, parallel_tools, frontend_tool, reasoning, failing):
        add(agent(script), f"/{script.__name__}")
    add(agent(approval, delete_file), "/approval")
    add(
        agent(state, update_basket),
        "/state",
        state_schema={"items": {"type": "array", "items": {"type": "string"}}},
        predict_state_config={"items": {"tool": "update_basket", "tool_argument": "items"}},
    )
    return api
