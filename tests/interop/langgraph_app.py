"""ag-ui-langgraph's FastAPI endpoint over LangGraph graphs whose chat model is scripted.

``ScriptedChatModel`` is a langchain-core chat model that streams fixed ``AIMessageChunk``s
(text, tool-call chunks, thinking blocks): a fake in the manner of langchain-core's own
``GenericFakeChatModel``, which cannot stream tool-call chunks. One route per scenario,
``POST /<scenario>``; every graph keeps its threads in an ``InMemorySaver``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import interrupt

Script = Callable[[list[BaseMessage]], Iterable[AIMessageChunk]]


class ScriptedChatModel(BaseChatModel):
    """Streams the chunks ``script`` returns for the conversation so far."""

    script: Script

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self.script(messages):
            if run_manager:
                run_manager.on_llm_new_token(chunk.text, chunk=ChatGenerationChunk(message=chunk))
            yield ChatGenerationChunk(message=chunk)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        whole: AIMessageChunk | None = None
        for chunk in self.script(messages):
            whole = chunk if whole is None else whole + chunk
        assert whole is not None
        message = AIMessage(content=whole.content, tool_calls=whole.tool_calls, id=whole.id or None)
        return ChatResult(generations=[ChatGeneration(message=message)])


def after_tool(messages: list[BaseMessage]) -> bool:
    return isinstance(messages[-1], ToolMessage)


def text(*pieces: str, id: str) -> list[AIMessageChunk]:
    return [AIMessageChunk(content=piece, id=id) for piece in pieces]


def call_chunks(*chunks: dict[str, Any], id: str) -> list[AIMessageChunk]:
    return [
        AIMessageChunk(content="", id=id, tool_call_chunks=[{"type": "tool_call_chunk", **c}])
        for c in chunks
    ]


def plain(messages: list[BaseMessage]) -> list[AIMessageChunk]:
    return text("Hello", ", world", id="ai-plain")


def backend_tool(messages: list[BaseMessage]) -> list[AIMessageChunk]:
    if after_tool(messages):
        return text("It is 18 C in Paris.", id="ai-answer")
    return call_chunks(
        {"name": "get_weather", "args": '{"city":', "id": "call-w", "index": 0},
        {"name": None, "args": '"Paris"}', "id": None, "index": 0},
        id="ai-call",
    )


def parallel_tools(messages: list[BaseMessage]) -> list[AIMessageChunk]:
    if after_tool(messages):
        return text("Paris: 18 C at noon.", id="ai-answer")
    return call_chunks(
        {"name": "get_weather", "args": '{"city":', "id": "call-w", "index": 0},
        {"name": "get_time", "args": '{"zone":', "id": "call-t", "index": 1},
        {"name": None, "args": '"Paris"}', "id": None, "index": 0},
        {"name": None, "args": '"CET"}', "id": None, "index": 1},
        id="ai-call",
    )


def frontend_tool(messages: list[BaseMessage]) -> list[AIMessageChunk]:
    if after_tool(messages):
        return text("Thanks, you confirmed.", id="ai-answer")
    return call_chunks(
        {"name": "confirm", "args": '{"question":"Go?"}', "id": "call-f", "index": 0},
        id="ai-call",
    )


def reasoning(messages: list[BaseMessage]) -> list[AIMessageChunk]:
    turn = sum(m.type == "human" for m in messages)
    return [
        AIMessageChunk(
            content=[{"type": "thinking", "thinking": f"Thinking about turn {turn}", "index": 0}],
            id=f"ai-think-{turn}",
        ),
        AIMessageChunk(
            content=[{"type": "thinking", "thinking": "...", "index": 0}], id=f"ai-think-{turn}"
        ),
        AIMessageChunk(content=f"Answer {turn}", id=f"ai-think-{turn}"),
    ]


def failing(messages: list[BaseMessage]) -> Iterator[AIMessageChunk]:
    yield AIMessageChunk(content="Let me", id="ai-fail")
    raise RuntimeError("the model fell over")


@tool
def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"18 C in {city}"


@tool
def get_time(zone: str) -> str:
    """The time in a zone."""
    return f"12:00 {zone}"


BACKEND_TOOLS = [get_weather, get_time]


def chat_graph(script: Script) -> Any:
    """model ⇄ tools: backend calls go to the tool node, a frontend call ends the run."""
    model = ScriptedChatModel(script=script)

    async def chat(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    def route(state: MessagesState) -> str:
        last = state["messages"][-1]
        names = {c["name"] for c in getattr(last, "tool_calls", [])}
        return "tools" if names & {t.name for t in BACKEND_TOOLS} else END

    graph = StateGraph(MessagesState)
    graph.add_node("chat", chat)
    graph.add_node("tools", ToolNode(BACKEND_TOOLS))
    graph.add_edge(START, "chat")
    graph.add_conditional_edges("chat", route, ["tools", END])
    graph.add_edge("tools", "chat")
    return graph.compile(checkpointer=InMemorySaver())


class BasketState(MessagesState):
    items: list[str]


def state_graph() -> Any:
    async def add_milk(state: BasketState) -> dict[str, Any]:
        return {
            "items": [*state.get("items", []), "milk"],
            "messages": [AIMessage(content="Added.", id=f"ai-add-{len(state['messages'])}")],
        }

    graph = StateGraph(BasketState)
    graph.add_node("add_milk", add_milk)
    graph.add_edge(START, "add_milk")
    graph.add_edge("add_milk", END)
    return graph.compile(checkpointer=InMemorySaver())


def approval_graph() -> Any:
    async def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt({"question": "Delete a.txt?"})
        said = "Deleted." if answer == "yes" else "Kept."
        return {"messages": [AIMessage(content=said, id="ai-approval")]}

    graph = StateGraph(MessagesState)
    graph.add_node("ask", ask)
    graph.add_edge(START, "ask")
    graph.add_edge("ask", END)
    return graph.compile(checkpointer=InMemorySaver())


def app() -> FastAPI:
    agents = {
        "plain": chat_graph(plain),
        "backend_tool": chat_graph(backend_tool),
        "parallel_tools": chat_graph(parallel_tools),
        "frontend_tool": chat_graph(frontend_tool),
        "reasoning": chat_graph(reasoning),
        "failing": chat_graph(failing),
        "state": state_graph(),
    }
    api = FastAPI()
    for name, graph in agents.items():
        add_langgraph_fastapi_endpoint(api, LangGraphAgent(name=name, graph=graph), f"/{name}")
    # The interrupt as ag-ui-langgraph sends it by default, and with the outcome opted in.
    add_langgraph_fastapi_endpoint(
        api, LangGraphAgent(name="approval", graph=approval_graph()), "/approval"
    )
    add_langgraph_fastapi_endpoint(
        api,
        LangGraphAgent(name="approval", graph=approval_graph(), emit_interrupt_outcome=True),
        "/approval_outcome",
    )
    return api
