"""Deterministic AG-UI workloads for the benchmarks, each an SSE body in memory.

Every workload is a generator of wire-named event documents (plain dicts) built
from arithmetic on loop indices alone: no randomness, no clock, so every run and
every machine benchmarks the same bytes. :func:`build` encodes a generator into
a :class:`Workload` (the payloads and the ``data: <json>\\n\\n`` SSE body);
:func:`sse_chunks` streams the same body in fixed-size chunks without holding
it, for the memory probe.

- ``text``: one run, 200 messages of 500 TEXT_MESSAGE_CONTENT deltas, timestamps.
- ``tools``: 2,000 tool calls of 50 argument deltas each, with TOOL_CALL_RESULT.
- ``state``: STATE_SNAPSHOT of 1,000 keys, then 10,000 STATE_DELTA of 1-3 ops.
- ``mixed``: turns of steps, reasoning, text, tool calls, state deltas, a
  subagent (its text as TEXT_MESSAGE_CHUNK) every tenth turn, usage at the end.
- ``unknown``: ``text`` with one unknown property on every event (the slow path).

Every stream is conformant AG-UI 1.1 and validates against the official 1.0
Python SDK's models too, so all measurements decode the same payloads.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

Document = dict[str, Any]

T0 = 1_700_000_000_000
"""Timestamp of the first event, in milliseconds since the epoch; each event adds 7 ms."""
THREAD_ID = "thread-bench"
RUN_ID = "run-bench"
UNKNOWN_PROPERTY = "xVendorTrace"
"""The property the ``unknown`` workload adds: no AG-UI event defines it."""

_WORDS = (
    "the agent",
    "streams",
    "a",
    "typed",
    "event",
    "over",
    "server-sent",
    "events,",
    "and",
    "consumer",
    "assembles",
    "messages",
    "from",
    "deltas.",
    "Each",
    "token",
    "is",
    "small;",
    "JSON",
    "framing",
    "dominates",
    "payload",
    "size",
    "here",
    "(see",
    "benchmarks)",
    "with",
    "ünïcödé",
    "text",
    "\u2014",
    "quotes\u201d",
    "numbers 42",
)
_encode = msgspec.json.Encoder().encode


def _delta(message: int, position: int) -> str:
    """One token-sized text delta, deterministic in its position (a leading space, as LLMs send)."""
    return " " + _WORDS[(message * 7919 + position * 104_729) % len(_WORDS)]


class _Clock:
    """Deterministic timestamps: ``T0`` plus 7 ms per event."""

    def __init__(self) -> None:
        self._now = T0

    def __call__(self) -> int:
        self._now += 7
        return self._now


def _run_started(clock: _Clock) -> Document:
    return {
        "type": "RUN_STARTED",
        "threadId": THREAD_ID,
        "runId": RUN_ID,
        "timestamp": clock(),
    }


def _run_finished(clock: _Clock, **extra: Any) -> Document:
    return {
        "type": "RUN_FINISHED",
        "threadId": THREAD_ID,
        "runId": RUN_ID,
        "timestamp": clock(),
        **extra,
    }


# --- the workloads ---------------------------------------------------------------------


def text_events(messages: int = 200, deltas: int = 500) -> Iterator[Document]:
    """One run of ``messages`` assistant messages, each ``deltas`` TEXT_MESSAGE_CONTENT long."""
    clock = _Clock()
    yield _run_started(clock)
    for m in range(messages):
        message_id = f"msg-{m:06d}"
        yield {
            "type": "TEXT_MESSAGE_START",
            "messageId": message_id,
            "role": "assistant",
            "timestamp": clock(),
        }
        for d in range(deltas):
            yield {
                "type": "TEXT_MESSAGE_CONTENT",
                "messageId": message_id,
                "delta": _delta(m, d),
                "timestamp": clock(),
            }
        yield {"type": "TEXT_MESSAGE_END", "messageId": message_id, "timestamp": clock()}
    yield _run_finished(clock)


def unknown_events(messages: int = 200, deltas: int = 500) -> Iterator[Document]:
    """The text workload with one property no event defines on every event."""
    for index, document in enumerate(text_events(messages, deltas)):
        document[UNKNOWN_PROPERTY] = f"00-{index:032x}-01"
        yield document


def _argument_deltas(call: int, deltas: int) -> list[str]:
    """``deltas`` fragments that join into one JSON object of arguments."""
    middle = [_delta(call, d).replace('"', "'") for d in range(deltas - 2)]
    return ['{"query": "', *middle, f'", "limit": {call % 50 + 1}}}']


def tool_events(
    calls: int = 2_000, deltas: int = 50, calls_per_message: int = 10
) -> Iterator[Document]:
    """``calls`` tool calls of ``deltas`` TOOL_CALL_ARGS each, every one answered by a result.

    Consecutive calls share a parent assistant message, ``calls_per_message`` to a message.
    """
    clock = _Clock()
    yield _run_started(clock)
    for c in range(calls):
        call_id = f"call-{c:06d}"
        yield {
            "type": "TOOL_CALL_START",
            "toolCallId": call_id,
            "toolCallName": ("search", "fetch_page", "run_sql", "calculator")[c % 4],
            "parentMessageId": f"msg-{c // calls_per_message:06d}",
            "timestamp": clock(),
        }
        for fragment in _argument_deltas(c, deltas):
            yield {
                "type": "TOOL_CALL_ARGS",
                "toolCallId": call_id,
                "delta": fragment,
                "timestamp": clock(),
            }
        yield {"type": "TOOL_CALL_END", "toolCallId": call_id, "timestamp": clock()}
        yield {
            "type": "TOOL_CALL_RESULT",
            "messageId": f"tool-{c:06d}",
            "toolCallId": call_id,
            "content": f'{{"rows": {c % 17}, "status": "ok", "elapsedMs": {c % 997}}}',
            "role": "tool",
            "timestamp": clock(),
        }
    yield _run_finished(clock)


def _key(k: int) -> str:
    return f"key_{k:04d}"


def initial_state(keys: int = 1_000) -> Document:
    """A state of ``keys`` entries, each a small object."""
    return {
        _key(k): {"count": k, "label": f"item {k}", "enabled": k % 3 != 0, "tags": ["a", "b"]}
        for k in range(keys)
    }


def state_events(deltas: int = 10_000, keys: int = 1_000) -> Iterator[Document]:
    """STATE_SNAPSHOT of ``keys`` keys, then ``deltas`` STATE_DELTA events of 1-3 operations.

    The operations (replace a count, add or remove a note, append a tag, test a
    label) always apply: the generator tracks which notes exist.
    """
    clock = _Clock()
    yield _run_started(clock)
    yield {"type": "STATE_SNAPSHOT", "snapshot": initial_state(keys), "timestamp": clock()}
    noted: set[int] = set()
    for d in range(deltas):
        operations: list[Document] = []
        for o in range(d % 3 + 1):
            k = (d * 31 + o * 577) % keys
            path = "/" + _key(k)
            kind = (d + o) % 5
            if kind == 0:
                operations.append({"op": "replace", "path": path + "/count", "value": d})
            elif kind == 1 and k in noted:
                operations.append({"op": "remove", "path": path + "/note"})
                noted.discard(k)
            elif kind == 1:
                operations.append({"op": "add", "path": path + "/note", "value": f"note {d}"})
                noted.add(k)
            elif kind == 2:
                operations.append({"op": "add", "path": path + "/tags/-", "value": f"t{d}"})
            elif kind == 3:
                operations.append({"op": "test", "path": path + "/label", "value": f"item {k}"})
            else:
                operations.append({"op": "replace", "path": path + "/enabled", "value": d % 2 == 0})
        yield {"type": "STATE_DELTA", "delta": operations, "timestamp": clock()}
    yield _run_finished(clock)


def _subagent(turn: int, clock: _Clock) -> Iterator[Document]:
    """A subagent invocation: its text as TEXT_MESSAGE_CHUNK, one tool call, then its finish."""
    run_id = f"sub-{turn:04d}"
    yield {
        "type": "SUBAGENT_STARTED",
        "subagentRunId": run_id,
        "name": "researcher",
        "description": "looks things up",
        "parentToolCallId": f"call-{turn:04d}-0",
        "timestamp": clock(),
    }
    message_id = f"sub-msg-{turn:04d}"
    for d in range(60):
        chunk: Document = {
            "type": "TEXT_MESSAGE_CHUNK",
            "subagentRunId": run_id,
            "delta": _delta(turn, d),
            "timestamp": clock(),
        }
        if d == 0:
            chunk["messageId"] = message_id
            chunk["role"] = "assistant"
        yield chunk
    call_id = f"sub-call-{turn:04d}"
    yield {
        "type": "TOOL_CALL_START",
        "toolCallId": call_id,
        "toolCallName": "fetch_page",
        "parentMessageId": message_id,
        "subagentRunId": run_id,
        "timestamp": clock(),
    }
    for fragment in _argument_deltas(turn, 20):
        yield {
            "type": "TOOL_CALL_ARGS",
            "toolCallId": call_id,
            "delta": fragment,
            "subagentRunId": run_id,
            "timestamp": clock(),
        }
    yield {
        "type": "TOOL_CALL_END",
        "toolCallId": call_id,
        "subagentRunId": run_id,
        "timestamp": clock(),
    }
    yield {
        "type": "TOOL_CALL_RESULT",
        "messageId": f"sub-tool-{turn:04d}",
        "toolCallId": call_id,
        "content": "<html>a page</html>",
        "subagentRunId": run_id,
        "timestamp": clock(),
    }
    yield {
        "type": "SUBAGENT_FINISHED",
        "subagentRunId": run_id,
        "outcome": {"type": "success"},
        "result": {"summary": f"found {turn % 7} sources"},
        "timestamp": clock(),
    }


def mixed_events(turns: int = 250) -> Iterator[Document]:
    """A realistic agent run: per turn a step holding reasoning, text, two tool calls and a
    state delta; a subagent every tenth turn; token usage on RUN_FINISHED."""
    clock = _Clock()
    yield _run_started(clock)
    yield {"type": "STATE_SNAPSHOT", "snapshot": initial_state(50), "timestamp": clock()}
    for t in range(turns):
        step = f"turn-{t:04d}"
        yield {"type": "STEP_STARTED", "stepName": step, "timestamp": clock()}
        reasoning_id = f"reasoning-{t:04d}"
        yield {"type": "REASONING_START", "messageId": reasoning_id, "timestamp": clock()}
        yield {
            "type": "REASONING_MESSAGE_START",
            "messageId": reasoning_id,
            "role": "reasoning",
            "timestamp": clock(),
        }
        for d in range(100):
            yield {
                "type": "REASONING_MESSAGE_CONTENT",
                "messageId": reasoning_id,
                "delta": _delta(t + 1, d),
                "timestamp": clock(),
            }
        yield {"type": "REASONING_MESSAGE_END", "messageId": reasoning_id, "timestamp": clock()}
        yield {"type": "REASONING_END", "messageId": reasoning_id, "timestamp": clock()}
        message_id = f"msg-{t:04d}"
        yield {
            "type": "TEXT_MESSAGE_START",
            "messageId": message_id,
            "role": "assistant",
            "timestamp": clock(),
        }
        for d in range(200):
            yield {
                "type": "TEXT_MESSAGE_CONTENT",
                "messageId": message_id,
                "delta": _delta(t, d),
                "timestamp": clock(),
            }
        yield {"type": "TEXT_MESSAGE_END", "messageId": message_id, "timestamp": clock()}
        for c in range(2):
            call_id = f"call-{t:04d}-{c}"
            yield {
                "type": "TOOL_CALL_START",
                "toolCallId": call_id,
                "toolCallName": ("search", "delegate")[c],
                "parentMessageId": message_id,
                "timestamp": clock(),
            }
            for fragment in _argument_deltas(t * 2 + c, 30):
                yield {
                    "type": "TOOL_CALL_ARGS",
                    "toolCallId": call_id,
                    "delta": fragment,
                    "timestamp": clock(),
                }
            yield {"type": "TOOL_CALL_END", "toolCallId": call_id, "timestamp": clock()}
            if c == 1 and t % 10 == 0:
                yield from _subagent(t, clock)
            yield {
                "type": "TOOL_CALL_RESULT",
                "messageId": f"tool-{t:04d}-{c}",
                "toolCallId": call_id,
                "content": f"result {t}.{c}",
                "role": "tool",
                "timestamp": clock(),
            }
        yield {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "replace", "path": f"/{_key(t % 50)}/count", "value": t},
                {"op": "add", "path": f"/{_key(t % 50)}/tags/-", "value": step},
            ],
            "timestamp": clock(),
        }
        yield {"type": "STEP_FINISHED", "stepName": step, "timestamp": clock()}
    yield _run_finished(
        clock,
        outcome={"type": "success"},
        usage=[
            {
                "provider": "openai",
                "model": "gpt-x",
                "inputTokens": 120_000,
                "outputTokens": 30_000,
                "totalTokens": 150_000,
                "reasoningTokens": 9_000,
                "cachedInputTokens": 80_000,
            },
            {
                "provider": "anthropic",
                "model": "claude-x",
                "inputTokens": 5_000,
                "totalTokens": 5_000,
            },
        ],
    )


WORKLOADS: dict[str, Callable[[], Iterator[Document]]] = {
    "text": text_events,
    "tools": tool_events,
    "state": state_events,
    "mixed": mixed_events,
    "unknown": unknown_events,
}
"""The workloads the benchmark table covers, by name, at their standard sizes."""

WARMUPS: dict[str, Callable[[], Iterator[Document]]] = {
    "text": lambda: text_events(10),
    "tools": lambda: tool_events(100),
    "state": lambda: state_events(500),
    "mixed": lambda: mixed_events(13),
    "unknown": lambda: unknown_events(10),
}
"""Complete streams of the same shapes, to warm each measurement up: about 5,000 events
(state: 503, as its events cost ten times more)."""


# --- encoding ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload:
    """One workload: its payloads (one JSON event each) and the SSE body that frames them."""

    name: str
    payloads: list[bytes]
    body: bytes

    @property
    def events(self) -> int:
        return len(self.payloads)


def sse_frame(payload: bytes) -> bytes:
    return b"data: " + payload + b"\n\n"


def build(name: str, documents: Iterable[Document]) -> Workload:
    """Encode ``documents`` into payloads and the SSE body."""
    payloads = [_encode(document) for document in documents]
    body = b"".join(sse_frame(payload) for payload in payloads)
    return Workload(name, payloads, body)


def load(name: str, warmup: bool = False) -> Workload:
    """The named workload of :data:`WORKLOADS` at its standard size, or its warm-up size."""
    return build(name, (WARMUPS if warmup else WORKLOADS)[name]())


def chunked(body: bytes, size: int = 64 * 1024) -> Iterator[bytes]:
    """``body`` in ``size``-byte chunks, as a network read loop would hand them over."""
    for start in range(0, len(body), size):
        yield body[start : start + size]


def sse_chunks(documents: Iterable[Document], size: int = 64 * 1024) -> Iterator[bytes]:
    """The SSE body of ``documents`` in ``size``-byte chunks, made as it goes (never held whole)."""
    buffer = bytearray()
    for document in documents:
        buffer += b"data: "
        buffer += _encode(document)
        buffer += b"\n\n"
        while len(buffer) >= size:
            yield bytes(buffer[:size])
            del buffer[:size]
    if buffer:
        yield bytes(buffer)
