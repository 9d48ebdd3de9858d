"""What every interop case does: run a turn through ``HttpAgent`` and through ``agui-msgspec
run`` against a producer served on loopback, and describe what a user got.

The producers, their scenarios and what each sends differently are in ``test_producers``.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from typing import Any

from agui_msgspec import HttpAgent, ProtocolViolation, TransportError

FRONTEND_TOOLS = [
    {
        "name": "confirm",
        "description": "Ask the user to confirm",
        "parameters": {"type": "object", "properties": {"question": {"type": "string"}}},
    }
]
"""The tool the client offers in the frontend-tool scenario (each app's script calls it)."""


@dataclass
class Turn:
    """One run as a user met it: the verdict, the run's status, what it assembled."""

    verdict: str
    """``accepted`` or ``rejected`` (our consumer's verdict on the stream)."""
    rule: str | None
    index: int | None
    status: str | None
    """The status of the last run the stream carried (``None`` if it carried none)."""
    events: list[str]
    """The type of every event delivered, in order."""
    messages: list[Any]
    new_messages: list[Any]
    state: Any
    runs: list[Any] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    delivered: list[Any] = field(default_factory=list)
    """The events themselves (Structs over HTTP, wire dicts from the CLI)."""

    def wire_messages(self) -> list[dict[str, Any]]:
        """The messages as wire dicts (the next turn's input carries them so)."""
        return [msgspec_to_builtins(m) for m in self.messages]


def msgspec_to_builtins(value: Any) -> Any:
    import msgspec  # noqa: PLC0415

    return msgspec.to_builtins(value)


def user(text: str, id: str | None = None) -> dict[str, Any]:
    return {"id": id or f"u-{uuid.uuid4().hex[:8]}", "role": "user", "content": text}


def run_input(thread: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """A ``RunAgentInput``; with no extras, what ``agui-msgspec run --message`` sends."""
    return {
        "threadId": thread,
        "runId": f"run-{uuid.uuid4().hex[:8]}",
        "messages": messages,
        **extra,
    }


async def http_turn_async(agent: HttpAgent, input: dict[str, Any]) -> Turn:
    events: list[str] = []
    delivered: list[Any] = []
    async with agent.run(input) as stream:
        rule: str | None = None
        index: int | None = None
        try:
            async for event in stream:
                events.append(event.type)
                delivered.append(event)
            await stream.result()  # a failed run is a result: its status says it
        except (ProtocolViolation, TransportError) as violation:
            rule, index = violation.rule, violation.index
        sent = {m["id"] for m in input["messages"]}
        runs = stream.runs
        return Turn(
            verdict="accepted" if rule is None else "rejected",
            rule=rule,
            index=index,
            status=runs[-1].status if runs else None,
            events=events,
            messages=list(stream.messages),
            new_messages=[m for m in stream.messages if m.id not in sent],
            state=stream.state,
            runs=list(runs),
            warnings=list(stream.warnings),
            delivered=delivered,
        )


def http_turn(agent: HttpAgent, input: dict[str, Any]) -> Turn:
    """One run through ``HttpAgent``: the verdict instead of an exception."""
    return asyncio.run(asyncio.wait_for(http_turn_async(agent, input), timeout=60))


def cli_turn(url: str, text: str) -> Turn:
    """One run through ``agui-msgspec run URL --message TEXT --json`` in a subprocess.

    The command sends one user message and nothing else (no tools, no state, no resume), so
    it covers a scenario's first turn.
    """
    done = subprocess.run(
        [sys.executable, "-m", "agui_msgspec", "run", url, "--message", text, "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    document = json.loads(done.stdout)
    violation = document["violation"]
    runs = document["runs"]
    status = runs[-1]["status"] if runs else None
    # check's exit code for the stream: a run that failed by RUN_ERROR sent a conformant one
    rejected = violation is not None or status is None
    assert done.returncode == (1 if rejected else 0), (done.returncode, document)
    return Turn(
        verdict="rejected" if violation else "accepted",
        rule=violation and violation["rule"],
        index=violation and violation["index"],
        status=status,
        events=[event["type"] for event in document["events"]],
        messages=document["messages"],
        new_messages=[m for m in document["messages"] if m["role"] != "user"],
        state=document["state"],
        runs=runs,
        warnings=document["warnings"],
        delivered=document["events"],
    )


def first_turn(url: str, thread: str, text: str, **extra: Any) -> tuple[Turn, Turn]:
    """The same first turn through ``HttpAgent`` and through the CLI; they must agree.

    On the events they agree as a multiset: a framework that runs two tools at once may
    report them in either order.
    """
    over_http = http_turn(HttpAgent(url, timeout=30), run_input(thread, [user(text)], **extra))
    from_cli = cli_turn(url, text)
    agree = ("verdict", "rule", "index", "status")
    assert {k: getattr(from_cli, k) for k in agree} == {k: getattr(over_http, k) for k in agree}
    assert sorted(from_cli.events) == sorted(over_http.events)
    assert [role_of(m) for m in from_cli.messages] == [role_of(m) for m in over_http.messages]
    return over_http, from_cli


def answer_the_frontend_call(agent: HttpAgent, first: Turn) -> Turn:
    """The frontend-tool scenario's second run: the client sends its result for ``call-f``,
    and the producer must accept it and complete the run."""
    answer = {"id": "tool-1", "role": "tool", "toolCallId": "call-f", "content": "yes"}
    messages = [*first.wire_messages(), answer]
    second = http_turn(agent, run_input("t-front", messages, tools=FRONTEND_TOOLS))
    assert (second.verdict, second.status) == ("accepted", "completed")
    return second


def role_of(message: Any) -> str:
    return message["role"] if isinstance(message, dict) else message.role


def text_of(message: Any) -> Any:
    return message.get("content") if isinstance(message, dict) else message.content
