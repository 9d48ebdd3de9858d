# ruff: noqa: F821  (reveal_type is mypy's own: this file is type-checked, never run)
# pyright: strict
"""An SDK written on agui_msgspec, as its author would: a client loop that branches on
``event.type``, a server that reads ``inp.thread_id``, a converter round trip. No cast, no Any.

tests/system/test_typing.py runs ``mypy --strict`` on it; it is never imported.
"""

from __future__ import annotations

import ag_ui.core as official

import agui_msgspec as agui


async def client(url: str, text: str) -> str:
    agent = agui.HttpAgent(url)
    input = agui.RunAgentInput(
        thread_id="t",
        run_id="r",
        messages=[agui.UserMessage(id="u", content=text)],
        tools=[],
        context=[],
    )
    said: list[str] = []
    async with agent.run(input) as stream:
        async for event in stream:
            if event.type == "TEXT_MESSAGE_CONTENT":
                said.append(event.delta)
            elif event.type == "RUN_ERROR":
                said.append(f"[{event.message}]")
        result = await stream.result()
    if result.status == "failed" and result.error is not None:
        return result.error.message
    run = result.run
    if run.outcome is not None and run.outcome.type == "interrupt":
        return ", ".join(interrupt.id for interrupt in run.outcome.interrupts)
    for message in result.new_messages:
        if message.role == "assistant" and isinstance(message.content, str):
            said.append(message.content)
    return "".join(said)


def official_input_runs(url: str, input: official.RunAgentInput) -> str:
    return agui.HttpAgent(url).run_sync(input).raise_for_status().status


def server(body: bytes) -> str:
    inp = agui.parse_run_input(body, on_warning=print)
    return inp.thread_id + inp.run_id


def older_server(body: bytes) -> str:
    inp = agui.parse_run_input(body, "1.0")
    return inp.thread_id


def round_trip(model: official.RunAgentInput, event: official.Event) -> str:
    ours = agui.from_official(model)
    back: official.RunAgentInput = agui.to_official(ours)
    converted = agui.from_official(event)
    if converted.type == "RUN_STARTED":
        return converted.run_id + back.thread_id
    return ours.thread_id


def consumed(payloads: list[bytes]) -> list[str]:
    result = agui.consume(payloads)
    ids = [message.id for message in result.messages]
    for run in result.runs:
        if run.error is not None:
            ids.append(run.error.message)
    return ids


def revealed(body: bytes, model: official.RunAgentInput, event: official.Event) -> None:
    """The key results' types, as mypy sees them (test_typing reads the notes)."""
    reveal_type(agui.parse_run_input(body))  # 1.1: the default
    reveal_type(agui.parse_run_input(body, "1.0"))
    reveal_type(agui.build_run_input({"threadId": "t", "runId": "r", "messages": []}))
    reveal_type(agui.from_official(model))
    reveal_type(agui.from_official(event))
    reveal_type(agui.to_official(agui.from_official(model)))
    result = agui.consume([body])
    reveal_type(result.events)
    reveal_type(result.messages)
    reveal_type(result.runs[0].outcome)
    reveal_type(result.runs[0].error)


async def revealed_stream(stream: agui.RunStream) -> None:
    async for event in stream:
        reveal_type(event)
    reveal_type((await stream.result()).status)


async def revealed_older(url: str, body: bytes, model: official.RunAgentInput) -> None:
    """An agent, a result and a conversion of version 1.0 hold its own Structs."""
    agent = agui.HttpAgent(url, version="1.0")
    async with agent.run(agui.build_run_input(model, "1.0")) as stream:
        async for event in stream:
            reveal_type(event)
        reveal_type((await stream.result()).error)
    reveal_type(agui.consume([body], "1.0").messages)
    reveal_type(agui.from_official(model, "1.0"))


async def revealed_negotiated(url: str, version: str, model: official.RunAgentInput) -> None:
    """A version read from the client at run time: either shipped version's Structs."""
    agent = agui.HttpAgent(url, version=version)
    result = await agent.run_agent(agui.build_run_input(model, version))
    reveal_type(result.error)
    reveal_type(agui.from_official(model, version))
