"""Five frameworks' AG-UI integrations as producers, each scenario written once.

Each framework's app (``<framework>_app``) serves one route per scenario over a scripted fake
model; uvicorn serves it on loopback for the module, and every scenario runs through
``HttpAgent`` and, for its first turn, ``agui-msgspec run``. What the frameworks send
differently is data, in ``PRODUCERS``: the events, the texts, and each known producer bug
as what this consumer makes of it (a rejection with its rule and index, or content that is
wrong until a snapshot restates it). A field left ``None`` is one that producer's case does
not pin. A bug that goes away fails its case with "update docs/project/real-producers.md".

The frameworks are installed only in their own ``nox -s interop`` venv, where
``AGUI_INTEROP`` names the framework: there its cases alone run and its import must succeed.
Anywhere else a framework's cases are skipped unless it is installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from interop_harness import (
    FRONTEND_TOOLS,
    Turn,
    answer_the_frontend_call,
    first_turn,
    http_turn,
    role_of,
    run_input,
    text_of,
    user,
)
from serving import serve

from agui_msgspec import GuardReport, HttpAgent, ProducerGuard, verify

# --- what each producer sends ----------------------------------------------------------------

Events = tuple[str, ...]


@dataclass(frozen=True)
class Rejected:
    """A producer bug the consumer rejects: the rule, and the index of the offending event."""

    rule: str
    index: int


@dataclass(frozen=True)
class EndsWith:
    """Texts ending with these, after whatever else the producer restates as new."""

    texts: tuple[str, ...]


Texts = tuple[str, ...] | EndsWith


@dataclass(frozen=True)
class BackendTool:
    """``get_weather`` called, run by the producer, and answered."""

    arguments: str = '{"city":"Paris"}'
    result: str = "18 C in Paris"
    in_order: bool = True
    """The new messages are the call's, the result, the answer, in that order."""
    opening: Events | None = None
    streamed_arguments: tuple[tuple[str, str], ...] | None = None
    """The ``TOOL_CALL_ARGS`` deltas as streamed, when a known bug makes them wrong."""
    result_restated_from: str | None = None
    """Known bug: the result streams under this ``messageId`` and ``MESSAGES_SNAPSHOT``
    restates it under another, so reconciling by id drops the streamed one."""


@dataclass(frozen=True)
class ParallelCalls:
    """``get_weather`` and ``get_time`` called at once, their argument deltas interleaved."""

    rejected: Rejected | None
    call_ids: tuple[tuple[str, ...], ...]
    """The ids of the calls each new message with calls holds."""
    events_at: tuple[int, Events] | None = None
    arguments: dict[str, str] | None = None
    streamed_arguments: tuple[tuple[str, str], ...] | None = None
    """Known bug: the deltas as streamed, when they are attributed to the wrong call."""
    results: dict[str, str] | None = None
    answer: str | None = None


@dataclass(frozen=True)
class FrontendTool:
    """``confirm``, a tool the client declares: the run ends awaiting it, a second run answers."""

    names_pending_ids: bool
    """Whether the success outcome names ``pendingToolCallIds`` (else they are derived)."""
    answer: Texts = ("Thanks, you confirmed.",)
    roles_after: tuple[str, ...] | None = None
    drops_unchunked_arguments: bool = False
    """Known bug: a call in one chunk streams no ``TOOL_CALL_ARGS`` at all."""


@dataclass(frozen=True)
class Reasoning:
    """A reasoning message, then the answer."""

    answer: str = "Answer 1"
    streams_reasoning: bool = True
    deltas: tuple[str, ...] | None = None
    answer_blanked: bool = False
    """Known bug: the closing ``MESSAGES_SNAPSHOT`` restates the answer with empty content."""
    second_turn: bool = False
    reasoning_repeated: bool = False
    """Known bug: the reasoning streams, then is sent again whole inside the open answer, and
    the consumer ends with a second reasoning message after the answer."""


@dataclass(frozen=True)
class State:
    """A tool adds milk to the basket in the state, one run after another on a thread."""

    initial: dict[str, Any]
    first: Any
    second: Any
    key: str | None = None
    """The state member compared, where the producer keeps more in its state."""
    streams_deltas: bool = False
    answer: Texts | None = None
    from_the_cli: dict[str, Any] | None = None


@dataclass(frozen=True)
class Failing:
    """The model raises after its first words."""

    message: str = "the model fell over"
    code: str | None = None
    events: Events | None = None


@dataclass(frozen=True)
class Interrupt:
    """A tool that needs approval: the run is interrupted, a resume approves it."""

    reason: str
    payload: Any
    answer: Texts = ("Deleted.",)
    route: str = "/approval"
    interrupt_id: str | None = None
    tool_call_id: str | None = None
    result: str | None = None
    new_roles: tuple[str, ...] | None = None
    result_restated: bool = False
    """Known bug: the result streams under one message id and is restated under another."""


@dataclass(frozen=True)
class Producer:
    name: str
    """As ``AGUI_INTEROP`` and the ``interop`` session's parameter spell it."""
    package: str
    module: str
    """Imported to tell whether the framework is installed."""
    app: str
    plain: Events
    backend: BackendTool
    parallel: ParallelCalls
    frontend: FrontendTool
    reasoning: Reasoning
    state: State
    failing: Failing
    interrupt: Interrupt
    noise: frozenset[str] = field(default_factory=frozenset)
    """Event types left out wherever a case compares event types."""
    quiet: bool = True
    """A plain run gives no warning."""


HELLO: Events = (
    "TEXT_MESSAGE_START",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_CONTENT",
    "TEXT_MESSAGE_END",
)
""""Hello" and ", world", as every fake model streams them."""

PRODUCERS = {
    producer.name: producer
    for producer in (
        Producer(
            name="pydantic_ai",
            package="pydantic-ai",
            module="pydantic_ai.ui.ag_ui",
            app="pydantic_ai_app",
            plain=("RUN_STARTED", *HELLO, "RUN_FINISHED"),
            # It opens and closes an empty text message to parent the call.
            backend=BackendTool(),
            # Spec, basic/patterns/streaming: "A producer MUST NOT send a content or end event
            # for an identifier that is not open." pydantic-ai closes the first call
            # (TOOL_CALL_END, event 5) when the second starts, then sends the first call's next
            # TOOL_CALL_ARGS (event 8). The calls stay as delivered: each with the arguments it
            # had when the first was closed.
            parallel=ParallelCalls(
                rejected=Rejected("tool-call-not-open", 8),
                events_at=(
                    3,
                    (
                        "TOOL_CALL_START",
                        "TOOL_CALL_ARGS",
                        "TOOL_CALL_END",
                        "TOOL_CALL_START",
                        "TOOL_CALL_ARGS",
                    ),
                ),
                call_ids=(("call-w", "call-t"),),
                arguments={"call-w": '{"city":', "call-t": '{"zone":'},
            ),
            frontend=FrontendTool(
                names_pending_ids=True, roles_after=("user", "assistant", "tool", "assistant")
            ),
            reasoning=Reasoning(),
            state=State(
                initial={"items": ["eggs"]},
                first={"items": ["eggs", "milk"], "count": 1},
                second={"items": ["eggs", "milk", "milk"], "count": 2},
                streams_deltas=True,
                from_the_cli={"items": ["milk"], "count": 1},
            ),
            failing=Failing(),
            interrupt=Interrupt(
                reason="tool_call",
                payload={"approved": True},
                interrupt_id="int-call-d",
                tool_call_id="call-d",
                result="deleted a.txt",
                new_roles=("tool", "assistant"),
            ),
        ),
        Producer(
            name="langgraph",
            package="ag-ui-langgraph",
            module="ag_ui_langgraph",
            app="langgraph_app",
            # Every LangChain callback goes out as a RAW event, so indexes count those too.
            noise=frozenset({"RAW", "STATE_SNAPSHOT", "STEP_STARTED", "STEP_FINISHED"}),
            quiet=False,
            plain=("RUN_STARTED", *HELLO, "MESSAGES_SNAPSHOT", "RUN_FINISHED"),
            # The model streamed '{"city":' then '"Paris"}'; only the second delta is sent, so
            # the call streams as '"Paris"}' until MESSAGES_SNAPSHOT restates it whole.
            backend=BackendTool(
                arguments='{"city": "Paris"}',
                in_order=False,
                opening=("RUN_STARTED", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"),
                streamed_arguments=(("call-w", '"Paris"}'),),
                result_restated_from="call-w",
            ),
            # It closes the first call when the second starts and sends the first call's later
            # delta as the second call's: no rule is broken, the arguments are wrong until
            # MESSAGES_SNAPSHOT restates both calls.
            parallel=ParallelCalls(
                rejected=None,
                events_at=(
                    1,
                    (
                        "TOOL_CALL_START",
                        "TOOL_CALL_END",
                        "TOOL_CALL_START",
                        "TOOL_CALL_ARGS",
                        "TOOL_CALL_ARGS",
                        "TOOL_CALL_END",
                    ),
                ),
                streamed_arguments=(("call-t", '"Paris"}'), ("call-t", '"CET"}')),
                call_ids=(("call-w", "call-t"),),
                arguments={"call-w": '{"city": "Paris"}', "call-t": '{"zone": "CET"}'},
            ),
            frontend=FrontendTool(names_pending_ids=False, drops_unchunked_arguments=True),
            # The model's message holds a thinking block and text; MESSAGES_SNAPSHOT restates
            # it with empty content, so the answer the user watched stream is replaced by "".
            reasoning=Reasoning(answer="", streams_reasoning=False, answer_blanked=True),
            state=State(
                initial={"items": []},
                key="items",
                first=["milk"],
                second=["milk", "milk"],
                answer=("Added.",),
            ),
            failing=Failing(),
            # With emit_interrupt_outcome=True; by default it reports success (a case below).
            interrupt=Interrupt(
                reason="langgraph:interrupt",
                payload="yes",
                route="/approval_outcome",
                new_roles=("assistant",),
            ),
        ),
        Producer(
            name="agent_framework",
            package="agent-framework-ag-ui",
            module="agent_framework_ag_ui",
            app="agent_framework_app",
            plain=("RUN_STARTED", *HELLO, "MESSAGES_SNAPSHOT", "RUN_FINISHED"),
            backend=BackendTool(),
            # Spec, basic/patterns/streaming: "A producer MUST NOT open an item whose
            # identifier is already open." agent-framework-ag-ui sends TOOL_CALL_START again
            # (event 6) when the first call's next delta follows the second call's.
            parallel=ParallelCalls(
                rejected=Rejected("tool-call-already-open", 6),
                events_at=(
                    2,
                    ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_START", "TOOL_CALL_ARGS"),
                ),
                call_ids=(("call-w", "call-t"),),
                arguments={"call-w": '{"city":', "call-t": '{"zone":'},
            ),
            frontend=FrontendTool(
                names_pending_ids=False, roles_after=("user", "assistant", "tool", "assistant")
            ),
            reasoning=Reasoning(second_turn=True),
            # Predicted state: the tool's argument is the whole basket, so a second call of
            # the same script leaves it as it was.
            state=State(
                initial={"items": ["eggs"]},
                first={"items": ["eggs", "milk"]},
                second={"items": ["eggs", "milk"]},
                streams_deltas=True,
                answer=EndsWith(("Added.",)),
            ),
            # The text message is left open: RUN_ERROR ends whatever the run had open.
            failing=Failing(
                message="An internal error has occurred while streaming events.",
                code="RuntimeError",
                events=("RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "RUN_ERROR"),
            ),
            # The approved tool's result streams under one message id (TOOL_CALL_RESULT) and
            # MESSAGES_SNAPSHOT restates it as "approval-response-...".
            interrupt=Interrupt(
                reason="tool_call",
                payload={"approved": True},
                tool_call_id="call-d",
                result="deleted a.txt",
                result_restated=True,
            ),
        ),
        Producer(
            name="strands",
            package="ag-ui-strands",
            module="ag_ui_strands",
            app="strands_app",
            plain=(
                "RUN_STARTED",
                "MESSAGES_SNAPSHOT",
                *HELLO,
                "MESSAGES_SNAPSHOT",
                "STATE_SNAPSHOT",
                "RUN_FINISHED",
            ),
            # The tool returned the text 18 C in Paris; Strands sends it JSON-encoded.
            backend=BackendTool(result='"18 C in Paris"'),
            # Its model stream (the Converse shape) holds one content block at a time, so the
            # calls arrive one after the other, each parented to its own assistant message.
            parallel=ParallelCalls(
                rejected=None,
                call_ids=(("call-w",), ("call-t",)),
                results={"call-w": '"18 C in Paris"', "call-t": '"12:00 CET"'},
                answer="Paris: 18 C at noon.",
            ),
            frontend=FrontendTool(
                names_pending_ids=False, answer=EndsWith(("Thanks, you confirmed.",))
            ),
            reasoning=Reasoning(deltas=("Thinking about turn 1", "...")),
            state=State(
                initial={"items": ["eggs"]},
                first={"items": ["eggs", "milk"]},
                second={"items": ["eggs", "milk", "milk"]},
                answer=EndsWith(("Added.",)),
            ),
            failing=Failing(code="STRANDS_FORCE_STOP"),
            interrupt=Interrupt(
                reason="approval",
                payload="yes",
                result='"deleted a.txt"',
                answer=EndsWith(("Deleted.",)),
            ),
        ),
        Producer(
            name="adk",
            package="ag-ui-adk",
            module="ag_ui_adk",
            app="adk_app",
            plain=("RUN_STARTED", *HELLO, "STATE_SNAPSHOT", "RUN_FINISHED"),
            # The function returned the text 18 C in Paris; ADK wraps it as {"result": ...}.
            backend=BackendTool(result='{"result": "18 C in Paris"}'),
            # A Gemini model sends each function call whole in its final response, so there is
            # nothing to interleave; each call is parented to a message of its own.
            parallel=ParallelCalls(
                rejected=None,
                call_ids=(("call-w",), ("call-t",)),
                results={
                    "call-w": '{"result": "18 C in Paris"}',
                    "call-t": '{"result": "12:00 CET"}',
                },
                answer="Paris: 18 C at noon.",
            ),
            frontend=FrontendTool(
                names_pending_ids=False, roles_after=("user", "assistant", "tool", "assistant")
            ),
            # The final response restates the streamed reasoning: it goes out again, whole,
            # between the answer's last TEXT_MESSAGE_CONTENT and its TEXT_MESSAGE_END, and
            # becomes a second reasoning message after the answer.
            reasoning=Reasoning(
                deltas=("Thinking about turn 1", "...", "Thinking about turn 1..."),
                second_turn=True,
                reasoning_repeated=True,
            ),
            state=State(
                initial={"items": ["eggs"]},
                key="items",
                first=["eggs", "milk"],
                second=["eggs", "milk", "milk"],
                streams_deltas=True,
                answer=EndsWith(("Added.",)),
            ),
            # The text message is left open: RUN_ERROR ends whatever the run had open.
            failing=Failing(
                code="BACKGROUND_EXECUTION_ERROR",
                events=("RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "RUN_ERROR"),
            ),
            # With emit_interrupt_outcome=True, on a tool that requires confirmation: the
            # interrupt is ADK's adk_request_confirmation call (its id is ADK's), and the
            # resume runs the tool.
            interrupt=Interrupt(
                reason="confirmation",
                payload={"approved": True},
                result='{"result": "deleted a.txt"}',
                new_roles=("tool", "assistant"),
            ),
        ),
    )
}

SESSION = os.environ.get("AGUI_INTEROP")
"""The framework of this ``nox -s interop`` session, if this is one."""
if SESSION is not None and SESSION not in PRODUCERS:
    raise LookupError(f"AGUI_INTEROP={SESSION!r} names none of {sorted(PRODUCERS)}")


def producers(*names: str) -> pytest.MarkDecorator:
    """Run a case once per producer (the ones named, else all)."""
    chosen = [PRODUCERS[name] for name in names] if names else list(PRODUCERS.values())
    return pytest.mark.parametrize(
        "producer", [pytest.param(p, id=p.name) for p in chosen], indirect=True
    )


@pytest.fixture(scope="module")
def producer(request: pytest.FixtureRequest) -> Producer:
    """The case's producer, its integration imported: inside its own session a failed import
    is an error, elsewhere a framework that is not installed skips its cases."""
    chosen: Producer = request.param
    try:
        importlib.import_module(chosen.module)
    except ImportError:
        if chosen.name == SESSION:
            raise
        pytest.skip(f"{chosen.name} is installed by `nox -s interop` only")
    return chosen


@pytest.fixture(scope="module")
def base(producer: Producer) -> Iterator[str]:
    """The producer's app, served once for its cases."""
    with serve(importlib.import_module(producer.app).app()) as url:
        yield url


# --- reading a turn --------------------------------------------------------------------------


def typed(turn: Turn, producer: Producer) -> list[str]:
    """The types of the events delivered, without the producer's noise."""
    return [event for event in turn.events if event not in producer.noise]


def calls_of(message: Any) -> list[Any]:
    return list(getattr(message, "tool_calls", None) or [])


def streamed(turn: Turn, event_type: str) -> list[Any]:
    return [event for event in turn.delivered if event.type == event_type]


def streamed_arguments(turn: Turn) -> tuple[tuple[str, str], ...]:
    return tuple((e.tool_call_id, e.delta) for e in streamed(turn, "TOOL_CALL_ARGS"))


def assert_texts(texts: list[Any], expected: Texts) -> None:
    if isinstance(expected, EndsWith):
        assert texts[-len(expected.texts) :] == list(expected.texts), texts
    else:
        assert texts == list(expected)


def repeated_reasoning_dropped(
    final: list[tuple[str, Any]], producer: Producer
) -> list[tuple[str, Any]]:
    """The messages without the reasoning a producer sent again after the answer."""
    known_bug(
        len(final) == 3 and final[2] == final[0] and final[0][0] == "reasoning",
        producer,
        "sends a message's reasoning once",
    )
    return final[:2]


def known_bug(still_there: bool, producer: Producer, when_fixed: str) -> None:
    """A producer bug the data asserts as what it is: when it goes, the data must change."""
    if not still_there:
        pytest.fail(
            f"{producer.package} now {when_fixed}: update docs/project/real-producers.md and this test"
        )


# --- the scenarios ---------------------------------------------------------------------------


@producers()
def test_plain_text(producer: Producer, base: str) -> None:
    http, cli = first_turn(f"{base}/plain", "t-plain", "Hi")
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert typed(http, producer) == list(producer.plain)
    assert [(role_of(m), text_of(m)) for m in http.new_messages] == [("assistant", "Hello, world")]
    assert [text_of(m) for m in cli.new_messages] == ["Hello, world"]
    if producer.quiet:
        assert http.warnings == []


@producers()
def test_backend_tool_and_its_result(producer: Producer, base: str) -> None:
    expected = producer.backend
    http, _ = first_turn(f"{base}/backend_tool", "t-tool", "Weather?")
    assert (http.verdict, http.status) == ("accepted", "completed")
    if expected.opening is not None:
        assert typed(http, producer)[: len(expected.opening)] == list(expected.opening)
    if expected.streamed_arguments is not None:
        known_bug(
            streamed_arguments(http) == expected.streamed_arguments,
            producer,
            "streams the first tool-call chunk's arguments",
        )
    # the hint a producer author gets on this real body: arguments that do not parse as JSON
    # at TOOL_CALL_END (the verdict stays: a hint never changes it)
    hints = [finding.rule for finding in verify(http.delivered).hints]
    dropped_arguments = expected.streamed_arguments is not None
    assert ("tool-arguments-not-json" in hints) == dropped_arguments, hints
    (call_message,) = [m for m in http.new_messages if calls_of(m)]
    (result,) = [m for m in http.new_messages if role_of(m) == "tool"]
    (answer,) = [m for m in http.new_messages if m not in (call_message, result)]
    if expected.in_order:
        assert http.new_messages == [call_message, result, answer]
    assert [(c.id, c.function.name, c.function.arguments) for c in calls_of(call_message)] == [
        ("call-w", "get_weather", expected.arguments)
    ]
    assert (result.tool_call_id, result.content) == ("call-w", expected.result)
    assert (role_of(answer), answer.content) == ("assistant", "It is 18 C in Paris.")
    if expected.result_restated_from is not None:
        (streamed_result,) = streamed(http, "TOOL_CALL_RESULT")
        known_bug(
            result.id != streamed_result.message_id,
            producer,
            "gives a tool result one message id",
        )
        assert streamed_result.message_id == expected.result_restated_from


@producers()
def test_parallel_tool_calls_with_interleaved_deltas(producer: Producer, base: str) -> None:
    expected = producer.parallel
    http, _ = first_turn(f"{base}/parallel_tools", "t-parallel", "Weather and time?")
    if expected.rejected is not None:
        known_bug(
            http.verdict == "rejected",
            producer,
            "streams interleaved parallel tool calls that this consumer accepts",
        )
        assert (http.rule, http.index) == (expected.rejected.rule, expected.rejected.index)
        assert http.status == "active"  # rejected while the run was going
    else:
        assert (http.verdict, http.status) == ("accepted", "completed")
    if expected.events_at is not None:
        start, types = expected.events_at
        assert typed(http, producer)[start : start + len(types)] == list(types)
    if expected.streamed_arguments is not None:
        known_bug(
            streamed_arguments(http) == expected.streamed_arguments,
            producer,
            "streams interleaved parallel tool calls differently",
        )
    carriers = [m for m in http.new_messages if calls_of(m)]
    if expected.rejected is not None:  # what was delivered stays: the calls as they were
        assert http.new_messages == carriers
    assert [tuple(c.id for c in calls_of(m)) for m in carriers] == list(expected.call_ids)
    assert {role_of(m) for m in carriers} == {"assistant"}
    if expected.arguments is not None:
        calls = [c for m in carriers for c in calls_of(m)]
        assert {c.id: c.function.arguments for c in calls} == expected.arguments
    if expected.results is not None:
        results = {m.tool_call_id: m.content for m in http.new_messages if role_of(m) == "tool"}
        assert results == expected.results
    if expected.answer is not None:
        assert text_of(http.new_messages[-1]) == expected.answer


@producers()
def test_frontend_tool_ends_the_run_then_a_second_run_answers_it(
    producer: Producer, base: str
) -> None:
    expected = producer.frontend
    agent = HttpAgent(f"{base}/frontend_tool", timeout=30)
    first = http_turn(agent, run_input("t-front", [user("Go?", "u1")], tools=FRONTEND_TOOLS))
    assert (first.verdict, first.status) == ("accepted", "completed")
    if expected.drops_unchunked_arguments:
        known_bug(
            "TOOL_CALL_ARGS" not in first.events,
            producer,
            "streams the arguments of a call in one chunk",
        )
    (run,) = first.runs
    named = run.outcome.pending_tool_call_ids if run.outcome is not None else None
    if expected.names_pending_ids:
        assert named == ["call-f"]
    else:
        known_bug(not named, producer, "names pendingToolCallIds")
    (call_message,) = first.new_messages
    assert [(c.id, c.function.name) for c in calls_of(call_message)] == [("call-f", "confirm")]

    # What the application still has to answer: as the producer named it, or as derived.
    source = "producer" if expected.names_pending_ids else "stream"
    assert (run.pending_tool_calls, run.pending_source) == (["call-f"], source)
    second = answer_the_frontend_call(agent, first)
    assert_texts([text_of(m) for m in second.new_messages], expected.answer)
    if expected.roles_after is not None:
        assert [role_of(m) for m in second.messages] == list(expected.roles_after)


@producers()
def test_reasoning(producer: Producer, base: str) -> None:
    expected = producer.reasoning
    http, cli = first_turn(f"{base}/reasoning", "t-reason", "Think")
    assert (http.verdict, http.status) == ("accepted", "completed")
    if expected.streams_reasoning:
        assert "REASONING_MESSAGE_CONTENT" in http.events
    if expected.deltas is not None:
        deltas = [e.delta for e in streamed(http, "REASONING_MESSAGE_CONTENT")]
        assert deltas == list(expected.deltas)
    final = [(role_of(m), text_of(m)) for m in http.new_messages]
    assert [(m["role"], m["content"]) for m in cli.new_messages] == final
    if expected.reasoning_repeated:
        final = repeated_reasoning_dropped(final, producer)
    if expected.answer_blanked:
        assert [e.delta for e in streamed(http, "TEXT_MESSAGE_CONTENT")] == ["Answer 1"]
        known_bug(
            final[-1] != ("assistant", "Answer 1"),
            producer,
            "keeps the text of a message with reasoning in its MESSAGES_SNAPSHOT",
        )
    assert final == [("reasoning", "Thinking about turn 1..."), ("assistant", expected.answer)]
    if expected.second_turn:
        agent = HttpAgent(f"{base}/reasoning", timeout=30)
        again = run_input("t-reason", [*http.wire_messages(), user("Again")])
        second = http_turn(agent, again)
        assert (second.verdict, second.status) == ("accepted", "completed")
        again_final = [(role_of(m), text_of(m)) for m in second.new_messages]
        if expected.reasoning_repeated:
            again_final = repeated_reasoning_dropped(again_final, producer)
        assert again_final == [
            ("reasoning", "Thinking about turn 2..."),
            ("assistant", "Answer 2"),
        ]


@producers()
def test_state_across_turns(producer: Producer, base: str) -> None:
    expected = producer.state

    def held(turn: Turn) -> Any:
        return turn.state if expected.key is None else turn.state[expected.key]

    agent = HttpAgent(f"{base}/state", timeout=30)
    first_input = run_input("t-state", [user("Add milk", "u1")], state=expected.initial)
    first = http_turn(agent, first_input)
    assert (first.verdict, first.status) == ("accepted", "completed")
    if expected.streams_deltas:
        assert {"STATE_SNAPSHOT", "STATE_DELTA"} <= set(first.events)
    assert held(first) == expected.first
    messages = [*first.wire_messages(), user("More milk", "u2")]
    second = http_turn(agent, run_input("t-state", messages, state=first.state))
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert held(second) == expected.second
    if expected.answer is not None:
        assert_texts([text_of(m) for m in second.new_messages], expected.answer)
    if expected.from_the_cli is not None:
        _, cli = first_turn(f"{base}/state", "t-state-cli", "Add milk")
        assert cli.state == expected.from_the_cli


@producers()
def test_an_exception_mid_run_is_a_failed_run(producer: Producer, base: str) -> None:
    expected = producer.failing
    http, cli = first_turn(f"{base}/failing", "t-fail", "Hi")
    assert (http.verdict, http.status) == ("accepted", "failed")
    if expected.events is not None:
        assert typed(http, producer) == list(expected.events)
    error, reported = http.runs[-1].error, cli.runs[-1]["error"]
    assert (error.message, reported["message"]) == (expected.message, expected.message)
    if expected.code is not None:
        assert (error.code, reported["code"]) == (expected.code, expected.code)
    assert [text_of(m) for m in http.new_messages] == ["Let me"]


@producers()
def test_interrupt_and_resume(producer: Producer, base: str) -> None:
    expected = producer.interrupt
    agent = HttpAgent(f"{base}{expected.route}", timeout=30)
    first = http_turn(agent, run_input("t-int", [user("Delete a.txt", "u1")]))
    assert (first.verdict, first.status) == ("accepted", "interrupted")
    (interrupt,) = first.runs[-1].interrupts
    assert interrupt.reason == expected.reason
    if expected.interrupt_id is not None:
        assert interrupt.id == expected.interrupt_id
    if expected.tool_call_id is not None:
        assert interrupt.tool_call_id == expected.tool_call_id
    resume = [{"interruptId": interrupt.id, "status": "resolved", "payload": expected.payload}]
    second = http_turn(agent, run_input("t-int", first.wire_messages(), resume=resume))
    assert (second.verdict, second.status) == ("accepted", "completed")
    results = [m for m in second.new_messages if role_of(m) == "tool"]
    if expected.result is not None:
        assert [m.content for m in results] == [expected.result]
    if expected.tool_call_id is not None:
        assert [m.tool_call_id for m in results] == [expected.tool_call_id]
    if expected.result_restated:
        (streamed_result,) = streamed(second, "TOOL_CALL_RESULT")
        known_bug(
            results[0].id != streamed_result.message_id,
            producer,
            "gives an approved tool's result one message id",
        )
    answers = [text_of(m) for m in second.new_messages if role_of(m) == "assistant"]
    assert_texts(answers, expected.answer)
    if expected.new_roles is not None:
        assert [role_of(m) for m in second.new_messages] == list(expected.new_roles)
    _, cli = first_turn(f"{base}{expected.route}", "t-int-cli", "Delete a.txt")
    assert cli.status == "interrupted"


# --- what one producer alone shows -----------------------------------------------------------


@producers("pydantic_ai")
def test_the_producer_guard_reports_the_interleaved_calls_while_the_client_gets_the_bytes(
    producer: Producer, caplog: pytest.LogCaptureFixture
) -> None:
    rejected = producer.parallel.rejected
    assert rejected is not None
    reports: list[GuardReport] = []
    app = importlib.import_module(producer.app).app()
    with serve(ProducerGuard(app, on_violation=reports.append)) as url:
        http, cli = first_turn(f"{url}/parallel_tools", "t-guarded", "Weather and time?")
    # One report per response (HttpAgent's, then the CLI's), at the event the client rejects.
    assert [(r.violation.rule, r.violation.index, r.path) for r in reports] == [
        (rejected.rule, rejected.index, "/parallel_tools"),
        (rejected.rule, rejected.index, "/parallel_tools"),
    ]
    offending = json.loads(reports[0].event or b"null")
    assert (offending["type"], offending["toolCallId"]) == ("TOOL_CALL_ARGS", "call-w")
    # The guard observes: the client still received every byte and judged them itself.
    assert (http.rule, http.index, len(http.events)) == (rejected.rule, rejected.index, 8)
    assert (cli.rule, cli.index) == (rejected.rule, rejected.index)
    logged = [r for r in caplog.records if r.name == "agui_msgspec.guard"]
    assert [getattr(r, "agui_rule", None) for r in logged] == [rejected.rule] * 2


@producers("pydantic_ai")
def test_the_enforcing_guard_ends_the_stream_with_run_error_instead(producer: Producer) -> None:
    rejected = producer.parallel.rejected
    assert rejected is not None
    reports: list[GuardReport] = []
    app = importlib.import_module(producer.app).app()
    guarded = ProducerGuard(app, on_violation=reports.append, end_with_run_error=True)
    with serve(guarded) as url:
        http, cli = first_turn(f"{url}/parallel_tools", "t-enforced", "Weather and time?")
    assert [(r.violation.rule, r.violation.index) for r in reports] == [
        (rejected.rule, rejected.index),
        (rejected.rule, rejected.index),
    ]
    # The client never sees the broken event: the run it gets failed, and the stream is
    # conformant. Events 0-7 as sent, then the guard's RUN_ERROR in place of event 8.
    assert (http.verdict, http.status) == ("accepted", "failed")
    assert http.events[rejected.index :] == ["RUN_ERROR"]
    assert http.runs[-1].error.code == f"agui-guard:{rejected.rule}"
    assert cli.runs[-1]["error"]["code"] == f"agui-guard:{rejected.rule}"


@producers("pydantic_ai")
def test_legacy_thinking_for_an_old_peer_is_translated(producer: Producer, base: str) -> None:
    http, _ = first_turn(f"{base}/reasoning_legacy", "t-legacy", "Think")
    assert (http.verdict, http.status) == ("accepted", "completed")
    # The retired THINKING_* events arrive as REASONING_* after the compatibility boundary.
    assert "THINKING_TEXT_MESSAGE_CONTENT" not in http.events
    assert "REASONING_MESSAGE_CONTENT" in http.events
    assert [(role_of(m), text_of(m)) for m in http.new_messages] == [
        ("reasoning", "Thinking about turn 1..."),
        ("assistant", "Answer 1"),
    ]


@producers("pydantic_ai")
def test_legacy_thinking_across_two_turns_keeps_each_runs_reasoning(
    producer: Producer, base: str
) -> None:
    # THINKING_* events carry no ids: the translated reasoning message of each run must be
    # its own, not appended to the first run's.
    agent = HttpAgent(f"{base}/reasoning_legacy", timeout=30)
    first = http_turn(agent, run_input("t-legacy-2", [user("Think", "u1")]))
    second = http_turn(
        agent, run_input("t-legacy-2", [*first.wire_messages(), user("Again", "u2")])
    )
    assert (second.verdict, second.status) == ("accepted", "completed")
    assert [(role_of(m), text_of(m)) for m in second.messages] == [
        ("user", "Think"),
        ("reasoning", "Thinking about turn 1..."),
        ("assistant", "Answer 1"),
        ("user", "Again"),
        ("reasoning", "Thinking about turn 2..."),
        ("assistant", "Answer 2"),
    ]
    assert [(role_of(m), text_of(m)) for m in second.new_messages] == [
        ("reasoning", "Thinking about turn 2..."),
        ("assistant", "Answer 2"),
    ]


@producers("langgraph")
def test_an_interrupt_by_default_is_reported_as_success(producer: Producer, base: str) -> None:
    # Spec, basic/patterns/interrupt-resume: "A producer MUST NOT report an interrupted run as
    # success: the interrupt outcome is the only conforming way to end a run that stopped to
    # ask". By default ag-ui-langgraph sends CUSTOM on_interrupt, then RUN_FINISHED without an
    # outcome, which a consumer must read as success.
    http, cli = first_turn(f"{base}/approval", "t-int-default", "Delete a.txt")
    known_bug(
        http.status != "interrupted",
        producer,
        "ends an interrupted run with the interrupt outcome by default",
    )
    assert (http.verdict, http.status) == ("accepted", "completed")
    assert typed(http, producer)[-2:] == ["CUSTOM", "RUN_FINISHED"]
    assert http.runs[-1].interrupts == []
    assert cli.status == "completed"
    # Only its own convention resumes it: forwardedProps.command.resume on the next input.
    agent = HttpAgent(f"{base}/approval", timeout=30)
    first = http_turn(agent, run_input("t-int-legacy", [user("Delete a.txt", "u1")]))
    resumed = http_turn(
        agent,
        run_input(
            "t-int-legacy",
            first.wire_messages(),
            forwardedProps={"command": {"resume": "yes"}},
        ),
    )
    assert (resumed.verdict, resumed.status) == ("accepted", "completed")
    assert [text_of(m) for m in resumed.new_messages] == ["Deleted."]


# Last, so that a run without any framework still builds every case above before skipping.
if SESSION is None and not any(
    importlib.util.find_spec(p.module.partition(".")[0]) for p in PRODUCERS.values()
):
    pytest.skip(
        "no framework is installed: `nox -s interop` installs each", allow_module_level=True
    )


# --- the live probe --------------------------------------------------------------------------

# The probe's steps each producer fails on its plain route (docs/project/real-producers.md, "The probe").
PROBE_FAILURES: dict[str, tuple[str, ...]] = {
    "pydantic_ai": (),
    "langgraph": (),
    "agent_framework": (),
    "strands": (),
    "adk": (),
}


@producers()
def test_the_probe_battery(producer: Producer, base: str) -> None:
    from agui_msgspec._tools.probe import probe, summary_row  # noqa: PLC0415

    steps = probe(f"{base}/plain", timeout=30)
    print(summary_row(producer.name, steps))  # the notes' table row, with -s
    assert steps[0].name == "plain message"
    assert steps[0].outcome == "passed"
    failed = tuple(step.name for step in steps if step.outcome == "failed")
    assert failed == PROBE_FAILURES[producer.name], [
        (step.name, step.note, [d.message for d in step.diagnostics]) for step in steps
    ]
