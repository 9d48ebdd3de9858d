"""ag-ui-strands' FastAPI endpoint over Strands agents whose model is scripted.

``ScriptedModel`` subclasses Strands' ``Model`` and yields fixed stream events in the
Converse shape every Strands model produces. One route per scenario, ``POST /<scenario>``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from ag_ui_strands import StrandsAgent, StrandsAgentConfig, ToolBehavior
from ag_ui_strands.endpoint import add_strands_fastapi_endpoint
from fastapi import FastAPI
from strands import Agent, ToolContext, tool
from strands.models import Model

Script = Callable[[list[dict[str, Any]]], Iterable[dict[str, Any]]]


class ScriptedModel(Model):
    """Streams the events ``script`` returns for the conversation so far."""

    def __init__(self, script: Script) -> None:
        self.script = script

    def update_config(self, **model_config: Any) -> None:
        pass

    def get_config(self) -> Any:
        return {}

    def structured_output(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("no structured output in these scenarios")

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        for event in self.script(messages):
            yield event


def after_tool(messages: list[dict[str, Any]]) -> bool:
    return any("toolResult" in block for block in messages[-1]["content"])


def say(*pieces: str, stop: str = "end_turn") -> list[dict[str, Any]]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        *({"contentBlockDelta": {"delta": {"text": piece}}} for piece in pieces),
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": stop}},
    ]


def use(*calls: tuple[str, str, list[str]]) -> list[dict[str, Any]]:
    """Tool calls one after another: (id, name, argument pieces)."""
    events: list[dict[str, Any]] = [{"messageStart": {"role": "assistant"}}]
    for call_id, name, pieces in calls:
        events.append(
            {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}}
        )
        events += [{"contentBlockDelta": {"delta": {"toolUse": {"input": p}}}} for p in pieces]
        events.append({"contentBlockStop": {}})
    events.append({"messageStop": {"stopReason": "tool_use"}})
    return events


def plain(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    return say("Hello", ", world")


def backend_tool(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    if after_tool(messages):
        return say("It is 18 C in Paris.")
    return use(("call-w", "get_weather", ['{"city":', '"Paris"}']))


def parallel_tools(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    # The Converse stream has one content block open at a time: parallel calls follow each
    # other, so there is nothing to interleave.
    if after_tool(messages):
        return say("Paris: 18 C at noon.")
    return use(
        ("call-w", "get_weather", ['{"city":', '"Paris"}']),
        ("call-t", "get_time", ['{"zone":', '"CET"}']),
    )


def frontend_tool(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    if after_tool(messages):
        return say("Thanks, you confirmed.")
    return use(("call-f", "confirm", ['{"question":"Go?"}']))


def reasoning(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    turn = sum(
        m["role"] == "user" and not any("toolResult" in b for b in m["content"]) for m in messages
    )
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {
            "contentBlockDelta": {
                "delta": {"reasoningContent": {"text": f"Thinking about turn {turn}"}}
            }
        },
        {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "..."}}}},
        {"contentBlockStop": {}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"text": f"Answer {turn}"}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


def failing(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    yield {"messageStart": {"role": "assistant"}}
    yield {"contentBlockStart": {"start": {}}}
    yield {"contentBlockDelta": {"delta": {"text": "Let me"}}}
    raise RuntimeError("the model fell over")


def approval(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    if after_tool(messages):
        return say("Deleted.")
    return use(("call-d", "delete_file", ['{"path":"a.txt"}']))


def state(messages: list[dict[str, Any]]) -> Iterable[dict[str, Any]]:
    if after_tool(messages):
        return say("Added.")
    return use(("call-s", "add_item", ['{"item":"milk"}']))


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18 C in {city}"


@tool
def get_time(zone: str) -> str:
    """The time in a zone."""
    return f"12:00 {zone}"


@tool(context=True)
def delete_file(path: str, tool_context: ToolContext) -> str:
    """Delete a file, once someone approves."""
    answer = tool_context.interrupt("approval", reason={"question": f"Delete {path}?"})
    # ag-ui-strands hands the tool a generic interrupt's resume payload as {"response": ...}.
    return f"deleted {path}" if answer == {"response": "yes"} else f"kept {path}"


@tool
def add_item(item: str) -> str:
    """Add an item to the basket."""
    return item


def basket_after(context: Any) -> dict[str, Any]:
    items = list((context.input_data.state or {}).get("items", []))
    return {"items": [*items, str(context.result_data)]}


def agent(script: Script, *tools: Any, config: StrandsAgentConfig | None = None) -> StrandsAgent:
    core = Agent(
        model=ScriptedModel(script),
        tools=list(tools) or [get_weather, get_time],
        callback_handler=None,  # Strands prints the stream to stdout by default
    )
    return StrandsAgent(core, name=script.__name__, config=config)


def app() -> FastAPI:
    api = FastAPI()
    for script in (plain, backend_tool, parallel_tools, frontend_tool, reasoning, failing):
        add_strands_fastapi_endpoint(api, agent(script), f"/{script.__name__}")
    add_strands_fastapi_endpoint(api, agent(approval, delete_file), "/approval")
    state_config = StrandsAgentConfig(
        tool_behaviors={"add_item": ToolBehavior(state_from_result=basket_after)}
    )
    add_strands_fastapi_endpoint(api, agent(state, add_item, config=state_config), "/state")
    return api
