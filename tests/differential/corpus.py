"""The streams of the differential test: the conformance fixtures and seeded mutations of them.

A case is one stream plus the run input both consumers start from (and the version of an
old peer, when the fixture pins one: both sides then apply their era shims). Mutants apply one to
three operators to a fixture's stream; every operator is a pure function of a
``random.Random``, so a seed names the whole corpus and a disagreement can be replayed
from its case id alone.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

FIXTURES = (
    Path(__file__).resolve().parents[3] / "shared" / "agui" / "conformance" / "1.1" / "streams"
)

Event = Any  # a raw event: usually a dict, but a mutation may leave any JSON value
Stream = list[Event]


@dataclass
class Case:
    id: int
    origin: str  # the fixture's name
    mutations: list[str]  # the operators applied, in order ("" for the fixture itself)
    stream: Stream
    input: dict[str, Any] = field(default_factory=dict)
    peer: str | None = None  # the peer's protocol version, when the fixture pins an old one

    @cached_property
    def wire(self) -> set[str]:
        """Every string the stream and the input carry (what is not here was minted)."""
        return wire_strings([self.stream, self.input], set())

    def describe(self) -> str:
        applied = " + ".join(self.mutations) if self.mutations else "as recorded"
        return f"case {self.id}: {self.origin} ({applied})"


def wire_strings(value: Any, into: set[str]) -> set[str]:
    """Every string (member names too) inside a JSON value."""
    if isinstance(value, str):
        into.add(value)
    elif isinstance(value, dict):
        for key, member in value.items():
            into.add(key)
            wire_strings(member, into)
    elif isinstance(value, list):
        for member in value:
            wire_strings(member, into)
    return into


def load_fixtures(folder: Path = FIXTURES) -> list[dict[str, Any]]:
    """Every fixture file, sorted by name; empty when the folder is absent."""
    if not folder.is_dir():
        return []
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]


def run_input(fixture: dict[str, Any], stream: Stream) -> dict[str, Any]:
    """The RunAgentInput both sides start from.

    Its ids are those of the stream's first RUN_STARTED (as upstream's own conformance
    lane does): the spec obliges a run's boundary events to carry the input's threadId,
    and the fixtures never meant to test a producer answering about another thread.
    """
    started = next(
        (
            e
            for e in stream
            if isinstance(e, dict)
            and e.get("type") == "RUN_STARTED"
            and isinstance(e.get("threadId"), str)
            and isinstance(e.get("runId"), str)
        ),
        None,
    )
    given = fixture.get("input") or {}
    return {
        "threadId": started["threadId"] if started else "differential-thread",
        "runId": started["runId"] if started else "differential-run",
        "messages": copy.deepcopy(given.get("messages", [])),
        "state": copy.deepcopy(given.get("state", {})),
        "tools": copy.deepcopy(given.get("tools", [])),
        "context": copy.deepcopy(given.get("context", [])),
        "forwardedProps": copy.deepcopy(given.get("forwardedProps", {})),
    }


# --- mutation operators ---------------------------------------------------------------
# Each takes (rng, stream, pool) and returns the new stream, or None when it does not
# apply (say, "chunks" on a stream without a text message). `pool` is every event of
# every fixture, the material "insert" and "retype" draw from.

Operator = Callable[[random.Random, Stream, list[Event]], Stream | None]


def _events(stream: Stream) -> list[int]:
    return [i for i, e in enumerate(stream) if isinstance(e, dict)]


def drop(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    if not stream:
        return None
    i = rng.randrange(len(stream))
    return stream[:i] + stream[i + 1 :]


def duplicate(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    if not stream:
        return None
    i = rng.randrange(len(stream))
    return [*stream[: i + 1], copy.deepcopy(stream[i]), *stream[i + 1 :]]


def swap(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    if len(stream) < 2:
        return None
    i = rng.randrange(len(stream) - 1)
    j = i + 1 if rng.random() < 0.7 else rng.randrange(len(stream))
    out = list(stream)
    out[i], out[j] = out[j], out[i]
    return out


def insert(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    i = rng.randrange(len(stream) + 1)
    return [*stream[:i], copy.deepcopy(rng.choice(pool)), *stream[i:]]


def retype(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """Another known event type on an event's fields (ids kept, so the sequence still refers)."""
    candidates = _events(stream)
    if not candidates:
        return None
    i = rng.choice(candidates)
    types = sorted({e["type"] for e in pool if isinstance(e, dict) and "type" in e})
    out = copy.deepcopy(stream)
    out[i]["type"] = rng.choice(types)
    return out


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every member path inside a JSON value (keys of objects, indexes of arrays)."""
    if isinstance(value, dict):
        for key, member in value.items():
            yield (*prefix, key)
            yield from _paths(member, (*prefix, key))
    elif isinstance(value, list):
        for index, member in enumerate(value):
            yield (*prefix, index)
            yield from _paths(member, (*prefix, index))


def _set(root: Any, path: tuple[Any, ...], value: Any) -> None:
    node = root
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def _get(root: Any, path: tuple[Any, ...]) -> Any:
    node = root
    for step in path:
        node = node[step]
    return node


def null(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """`null` in place of a member anywhere in an event (never the `type` tag)."""
    candidates = [(i, p) for i in _events(stream) for p in _paths(stream[i]) if p != ("type",)]
    if not candidates:
        return None
    i, path = rng.choice(candidates)
    out = copy.deepcopy(stream)
    _set(out[i], path, None)
    return out


WRONG_TYPES: tuple[Any, ...] = (0, -1, 1.5, "", "x", True, [], {}, [1], {"k": 1})


def malform(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """A value of another JSON type in place of a member."""
    candidates = [(i, p) for i in _events(stream) for p in _paths(stream[i])]
    if not candidates:
        return None
    i, path = rng.choice(candidates)
    out = copy.deepcopy(stream)
    old = _get(out[i], path)
    _set(out[i], path, rng.choice([v for v in WRONG_TYPES if type(v) is not type(old)]))
    return out


def cut(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """The stream ends early: the transport closed mid-run."""
    if not stream:
        return None
    return stream[: rng.randrange(len(stream))]


UNKNOWN_NAMES = ("futureField", "x-vendor-trace", "_private", "traceId")


def unknown_field(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """An undescribed member on an event or on an object inside it."""
    candidates = [(i, ()) for i in _events(stream)]
    candidates += [
        (i, p)
        for i in _events(stream)
        for p in _paths(stream[i])
        if isinstance(_get(stream[i], p), dict)
    ]
    if not candidates:
        return None
    i, path = rng.choice(candidates)
    out = copy.deepcopy(stream)
    _get(out[i], path)[rng.choice(UNKNOWN_NAMES)] = rng.choice(("v", 1, None, {"a": [1]}))
    return out


def unknown_event(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    i = rng.randrange(len(stream) + 1)
    event = rng.choice(
        (
            {"type": "VENDOR_PROGRESS", "percent": 40},
            {"type": "TEXT_MESSAGE_FUTURE", "messageId": "m-future"},
            {"type": "run_started"},
            {"type": ""},
        )
    )
    return [*stream[:i], event, *stream[i:]]


UNKNOWN_SET_VALUES: dict[str, tuple[str, ...]] = {
    "role": ("narrator", "critic"),
    "subtype": ("blob",),
    "op": ("merge",),
    "status": ("paused",),
}


def unknown_value(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """An unknown outcome type, content-part type or closed-set value where one is described."""
    finished = [i for i in _events(stream) if stream[i].get("type") == "RUN_FINISHED"]
    closed = [
        (i, p)
        for i in _events(stream)
        for p in _paths(stream[i])
        if p and p[-1] in UNKNOWN_SET_VALUES and isinstance(_get(stream[i], p), str)
    ]
    tagged = [
        (i, p)
        for i in _events(stream)
        for p in _paths(stream[i])
        if len(p) > 1 and p[-1] == "type" and isinstance(_get(stream[i], p), str)
    ]
    choices: list[Callable[[Stream], None]] = []
    if finished:

        def outcome(out: Stream) -> None:
            out[rng.choice(finished)]["outcome"] = rng.choice(
                ({"type": "timeout"}, {"type": "handoff", "to": "agent-b"})
            )

        choices.append(outcome)
    if closed:

        def closed_value(out: Stream) -> None:
            i, p = rng.choice(closed)
            _set(out[i], p, rng.choice(UNKNOWN_SET_VALUES[p[-1]]))

        choices.append(closed_value)
    if tagged:

        def member(out: Stream) -> None:
            i, p = rng.choice(tagged)
            _set(out[i], p, "hologram")

        choices.append(member)
    if not choices:
        return None
    out = copy.deepcopy(stream)
    rng.choice(choices)(out)
    return out


# opener type → (chunk kind, id key, content type)
CHUNKABLE = {
    "TEXT_MESSAGE_START": ("TEXT_MESSAGE", "messageId", "TEXT_MESSAGE_CONTENT"),
    "TOOL_CALL_START": ("TOOL_CALL", "toolCallId", "TOOL_CALL_ARGS"),
    "REASONING_MESSAGE_START": ("REASONING_MESSAGE", "messageId", "REASONING_MESSAGE_CONTENT"),
}


def chunks(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """Rewrite a text message, tool call or reasoning message into its chunk form.

    The first chunk carries the opener's fields; the later ones carry the id or not,
    at random (an id-less continuation is legal while the stream is open).
    """
    openers = [i for i in _events(stream) if str(stream[i].get("type")) in CHUNKABLE]
    if not openers:
        return None
    start = rng.choice(openers)
    kind, id_key, content = CHUNKABLE[stream[start]["type"]]
    item = stream[start].get(id_key)
    out = copy.deepcopy(stream)
    first = {k: v for k, v in out[start].items() if k != "type"}
    if kind == "TOOL_CALL" and "toolCallName" not in first:
        return None
    if kind == "REASONING_MESSAGE":
        first.pop("role", None)  # a reasoning chunk has no role: it is always "reasoning"
    out[start] = {"type": f"{kind}_CHUNK", **first}
    end = f"{kind}_END"
    result: Stream = []
    for i, event in enumerate(out):
        if i > start and isinstance(event, dict) and event.get(id_key) == item:
            if event.get("type") == content:
                chunk = {"type": f"{kind}_CHUNK", "delta": event.get("delta")}
                if rng.random() < 0.5:
                    chunk[id_key] = item
                result.append(chunk)
                continue
            if event.get("type") == end:
                continue  # a chunk stream is closed by what follows it
        result.append(event)
    return result


def retired(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """A shape the protocol retired and the compatibility boundary translates."""
    out = copy.deepcopy(stream)
    dicts = _events(out)
    by_type: dict[str, list[int]] = {}
    for i in dicts:
        by_type.setdefault(str(out[i].get("type")), []).append(i)
    options: list[Callable[[], bool]] = []

    def thinking() -> bool:
        # a span at the start of every run, as an old peer reasons on every turn
        started = by_type.get("RUN_STARTED")
        if not started:
            return False
        for at in reversed(started):
            own_id = rng.random() < 0.3
            span: Stream = [
                {"type": "THINKING_START", **({"messageId": "think-own"} if own_id else {})},
                {"type": "THINKING_TEXT_MESSAGE_START"},
                {"type": "THINKING_TEXT_MESSAGE_CONTENT", "delta": "pondering"},
                {"type": "THINKING_TEXT_MESSAGE_END"},
                {"type": "THINKING_END"},
            ]
            out[at + 1 : at + 1] = span
        return True

    def legacy_null(type_: str, key: str) -> Callable[[], bool]:
        def apply() -> bool:
            targets = by_type.get(type_)
            if not targets:
                return False
            out[rng.choice(targets)][key] = None
            return True

        return apply

    def raw_event_null() -> bool:
        if not dicts:
            return False
        out[rng.choice(dicts)]["rawEvent"] = None
        return True

    def binary_part() -> bool:
        snapshots = by_type.get("MESSAGES_SNAPSHOT")
        started = by_type.get("RUN_STARTED")
        part = {"type": "binary", "mimeType": "image/png", "data": "iVBORw0KGgo="}
        message = {
            "id": "u-binary",
            "role": "user",
            "content": [{"type": "text", "text": "see"}, part],
        }
        if snapshots:
            event = out[rng.choice(snapshots)]
            if isinstance(event.get("messages"), list):
                event["messages"].append(message)
                return True
        if started:
            out.insert(started[0] + 1, {"type": "MESSAGES_SNAPSHOT", "messages": [message]})
            return True
        return False

    options += [
        thinking,
        legacy_null("TOOL_CALL_START", "parentMessageId"),
        legacy_null("TOOL_CALL_CHUNK", "parentMessageId"),
        legacy_null("RUN_FINISHED", "outcome"),
        legacy_null("RUN_FINISHED", "result"),
        legacy_null("SUBAGENT_FINISHED", "result"),
        raw_event_null,
        binary_part,
    ]
    rng.shuffle(options)
    for option in options:
        if option():
            return out
    return None


ID_KEYS = ("threadId", "runId", "messageId", "toolCallId", "parentMessageId", "subagentRunId")


def rename(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """An identifier replaced by another one of the stream, or by a fresh one."""
    candidates = [
        (i, p)
        for i in _events(stream)
        for p in _paths(stream[i])
        if p[-1] in ID_KEYS and isinstance(_get(stream[i], p), str)
    ]
    if not candidates:
        return None
    i, path = rng.choice(candidates)
    known = sorted({_get(stream[j], q) for j, q in candidates})
    out = copy.deepcopy(stream)
    _set(out[i], path, rng.choice([*known, "renamed-id"]))
    return out


def reattribute(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """A subagent tag added to, changed on or removed from an event that is not run-scoped."""
    candidates = [
        i for i in _events(stream) if not str(stream[i].get("type", "")).startswith("RUN_")
    ]
    if not candidates:
        return None
    i = rng.choice(candidates)
    out = copy.deepcopy(stream)
    if "subagentRunId" in out[i] and rng.random() < 0.5:
        del out[i]["subagentRunId"]
    else:
        out[i]["subagentRunId"] = rng.choice(("s1", "s2"))
    return out


def duplicate_element(rng: random.Random, stream: Stream, pool: list[Event]) -> Stream | None:
    """An element of a list inside an event repeated (a snapshot message, an interrupt...)."""
    candidates = [
        (i, p)
        for i in _events(stream)
        for p in _paths(stream[i])
        if isinstance(_get(stream[i], p), list) and _get(stream[i], p)
    ]
    if not candidates:
        return None
    i, path = rng.choice(candidates)
    out = copy.deepcopy(stream)
    items = _get(out[i], path)
    k = rng.randrange(len(items))
    items.insert(k + 1, copy.deepcopy(items[k]))
    return out


OPERATORS: dict[str, Operator] = {
    "drop": drop,
    "duplicate": duplicate,
    "swap": swap,
    "insert": insert,
    "retype": retype,
    "null": null,
    "malform": malform,
    "cut": cut,
    "unknown-field": unknown_field,
    "unknown-event": unknown_event,
    "unknown-value": unknown_value,
    "chunks": chunks,
    "retired": retired,
    "rename": rename,
    "reattribute": reattribute,
    "duplicate-element": duplicate_element,
}


def _seed(name: str, *stream: dict[str, Any]) -> dict[str, Any]:
    started = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    finished = [{"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}]
    return {"name": name, "stream": [*started, *stream, *finished]}


# The streams of issue 13 that the fixtures do not reach, mutated like the fixtures.
ISSUE_STREAMS = [
    _seed(
        "issue-13-item-1-tool-call-inherits-attribution",
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "subagentRunId": "s1"},
        {"type": "TOOL_CALL_START", "toolCallId": "tc1", "toolCallName": "f", "parentMessageId": "m1"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc1", "delta": "{}", "subagentRunId": "s1"},
        {"type": "TOOL_CALL_END", "toolCallId": "tc1"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    ),
    _seed(
        "issue-13-item-2-snapshot-establishes-ownership",
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "a1", "role": "assistant", "content": "p"}]},
        {"type": "TEXT_MESSAGE_START", "messageId": "a1", "subagentRunId": "s1"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a1", "delta": "s", "subagentRunId": "s1"},
        {"type": "TEXT_MESSAGE_END", "messageId": "a1"},
    ),
    _seed(
        "issue-13-item-7-activity-replace-false",
        {"type": "TEXT_MESSAGE_START", "messageId": "x1"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "x1", "delta": "hello"},
        {"type": "TEXT_MESSAGE_END", "messageId": "x1"},
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "x1", "activityType": "plan",
         "content": {"a": 1}, "replace": False},
    ),
    _seed(
        "issue-13-item-10-interrupt-ids",
        {"type": "STEP_STARTED", "stepName": "ask"},
        {"type": "STEP_FINISHED", "stepName": "ask"},
    )
    | {"stream": [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": {
            "type": "interrupt", "interrupts": [{"id": "i1", "reason": "approve"},
                                                {"id": "i2", "reason": "confirm"}]}},
    ]},
]  # fmt: skip


def _peer(fixture: dict[str, Any]) -> str | None:
    """The version of an old peer the fixture pins (its era shims apply), else None."""
    peer = (fixture.get("client") or {}).get("maxProtocolVersion")
    return peer if isinstance(peer, str) else None


def cases(seed: int, mutants: int, folder: Path = FIXTURES) -> list[Case]:
    """Every fixture as recorded (and the issue streams), then `mutants` seeded mutants."""
    fixtures = load_fixtures(folder)
    if fixtures:
        fixtures += copy.deepcopy(ISSUE_STREAMS)
    out: list[Case] = []
    for fixture in fixtures:
        stream = copy.deepcopy(fixture["stream"])
        out.append(
            Case(len(out), fixture["name"], [], stream, run_input(fixture, stream), _peer(fixture))
        )
    if not fixtures:
        return out
    pool = [copy.deepcopy(e) for f in fixtures for e in f["stream"]]
    rng = random.Random(seed)
    names = sorted(OPERATORS)
    while len(out) < len(fixtures) + mutants:
        fixture = fixtures[rng.randrange(len(fixtures))]
        stream: Stream = copy.deepcopy(fixture["stream"])
        applied: list[str] = []
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            name = rng.choice(names)
            mutated = OPERATORS[name](rng, stream, pool)
            if mutated is not None:
                stream = mutated
                applied.append(name)
        if applied:
            given = run_input(fixture, stream)
            out.append(Case(len(out), fixture["name"], applied, stream, given, _peer(fixture)))
    return out
