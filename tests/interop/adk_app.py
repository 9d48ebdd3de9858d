"""ag-ui-adk's FastAPI endpoint over Google ADK agents whose model is scripted.

``ScriptedLlm`` subclasses ADK's ``BaseLlm`` and yields what a Gemini model yields when ADK
asks it to stream: partial ``LlmResponse``s, then one final response aggregating them (the
only one a function call arrives in). One route per scenario, ``POST /<scenario>``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any

from ag_ui_adk import ADKAgent, AGUIToolset, add_adk_fastapi_endpoint
from fastapi import FastAPI
from google.adk.agents import LlmAgent
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.tools import FunctionTool, ToolContext
from google.genai import types

Script = Callable[[list[types.Content]], Iterable[LlmResponse]]


class ScriptedLlm(BaseLlm):
    """Yields the responses ``script`` returns for the conversation so far."""

    script: Any
    model: str = "scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        for response in self.script(list(llm_request.contents or [])):
            yield response


def after_tool(contents: list[types.Content]) -> bool:
    """Whether the model is called back with a function's response (its second request)."""
    return bool(contents) and any(p.function_response for p in contents[-1].parts or [])


def model(*parts: types.Part, partial: bool = False) -> LlmResponse:
    return LlmResponse(content=types.Content(role="model", parts=list(parts)), partial=partial)


def say(*pieces: str) -> list[LlmResponse]:
    """Text streamed piece by piece, then the whole of it, as Gemini's stream ends."""
    streamed = [model(types.Part(text=piece), partial=True) for piece in pieces]
    return [*streamed, model(types.Part(text="".join(pieces)))]


def use(*calls: tuple[str, str, dict[str, Any]]) -> list[LlmResponse]:
    """Function calls, all in one response: (id, name, arguments)."""
    return [
        model(
            *(
                types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
                for call_id, name, args in calls
            )
        )
    ]


def plain(contents: list[types.Content]) -> Iterable[LlmResponse]:
    return say("Hello", ", world")


def backend_tool(contents: list[types.Content]) -> Iterable[LlmResponse]:
    if after_tool(contents):
        return say("It is 18 C in Paris.")
    return use(("call-w", "get_weather", {"city": "Paris"}))


def parallel_tools(contents: list[types.Content]) -> Iterable[LlmResponse]:
    # Gemini sends a function call whole, in the final response: there are no argument
    # deltas to interleave.
    if after_tool(contents):
        return say("Paris: 18 C at noon.")
    return use(
        ("call-w", "get_weather", {"city": "Paris"}), ("call-t", "get_time", {"zone": "CET"})
    )


def frontend_tool(contents: list[types.Content]) -> Iterable[LlmResponse]:
    if after_tool(contents):
        return say("Thanks, you confirmed.")
    return use(("call-f", "confirm", {"question": "Go?"}))


def reasoning(contents: list[types.Content]) -> Iterable[LlmResponse]:
    turn = sum(c.role == "user" and any(p.text for p in c.parts or []) for c in contents)
    thought = f"Thinking about turn {turn}"
    return [
        model(types.Part(text=thought, thought=True), partial=True),
        model(types.Part(text="...", thought=True), partial=True),
        model(types.Part(text=f"Answer {turn}"), partial=True),
        model(types.Part(text=f"{thought}...", thought=True), types.Part(text=f"Answer {turn}")),
    ]


def failing(contents: list[types.Content]) -> Iterable[LlmResponse]:
    yield model(types.Part(text="Let me"), partial=True)
    raise RuntimeError("the model fell over")


def approval(contents: list[types.Content]) -> Iterable[LlmResponse]:
    if after_tool(contents):
        return say("Deleted.")
    return use(("call-d", "delete_file", {"path": "a.txt"}))


def state(contents: list[types.Content]) -> Iterable[LlmResponse]:
    if after_tool(contents):
        return say("Added.")
    return use(("call-s", "add_item", {"item": "milk"}))


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18 C in {city}"


def get_time(zone: str) -> str:
    """The time in a zone."""
    return f"12:00 {zone}"


def delete_file(path: str) -> str:
    """Delete a file, once someone approves."""
    return f"deleted {path}"


def add_item(item: str, tool_context: ToolContext) -> str:
    """Add an item to the basket."""
    tool_context.state["items"] = [*tool_context.state.get("items", []), item]
    return item


def agent(script: Script, *tools: Any, **options: Any) -> ADKAgent:
    core = LlmAgent(
        name=script.__name__,
        model=ScriptedLlm(script=script),
        tools=list(tools or (get_weather, get_time)),
    )
    return ADKAgent(
        adk_agent=core,
        app_name=script.__name__,
        user_id="interop",
        use_in_memory_services=True,
        **options,
    )


def app() -> FastAPI:
    api = FastAPI()
    for script in (plain, backend_tool, parallel_tools, reasoning, failing):
        add_adk_fastapi_endpoint(api, agent(script), path=f"/{script.__name__}")
    # AGUIToolset brings the client's tools; it fails a run whose input has no "tools" key,
    # so only the route whose every input declares them has it.
    add_adk_fastapi_endpoint(api, agent(frontend_tool, AGUIToolset()), path="/frontend_tool")
    add_adk_fastapi_endpoint(api, agent(state, add_item), path="/state")
    # The interrupt outcome is opt-in: by default a paused run ends as a plain RUN_FINISHED.
    confirmed = FunctionTool(delete_file, require_confirmation=True)
    interrupting = agent(approval, confirmed, emit_interrupt_outcome=True)
    add_adk_fastapi_endpoint(api, interrupting, path="/approval")
    return api
