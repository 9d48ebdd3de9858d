"""The bad-input catalogue: what a hostile or broken response body gets, case by case.

Each case is a whole body (SSE unless it says JSON lines), the verdict, the rule
and the 0-based event index of a rejection, and — for the cases that test a
resource bound — the configured limit and how much of the body was read before
the verdict. Bounds are structural, never timed: a case shows the library's
limit (``SSEReader(max_event_size=...)``, ``Consumer(max_open_items=...)``, the
interpreter's recursion limit) stopping the input, and that the rest of a huge
body was never read. Huge bodies are generated lazily, chunk by chunk, the way
a network delivers them.

docs/bad-input.md is written from this table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import msgspec
import pytest

from agui_msgspec import Consumer, ProtocolViolation, Run, TransportError, consume, consume_body
from agui_msgspec._pipeline.lifecycle import DEFAULT_MAX_CLOSED_ITEMS, DEFAULT_MAX_OPEN_ITEMS
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE, JSONLinesReader, SSEReader

Wire = dict[str, Any]
Body = bytes | Callable[[], Iterator[bytes]]

MiB = 1024 * 1024
BOM = b"\xef\xbb\xbf"
START = b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}'
FINISH = b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}'
MAX_SAFE = 2**53 - 1


def event(**fields: Any) -> bytes:
    return json.dumps(fields).encode()


def sse(*payloads: bytes, eol: bytes = b"\n") -> bytes:
    return b"".join(b"data: " + payload + eol + eol for payload in payloads)


def jsonl(*payloads: bytes) -> bytes:
    return b"".join(payload + b"\n" for payload in payloads)


def in_run(*payloads: bytes) -> bytes:
    return sse(START, *payloads, FINISH)


def custom(value: bytes, **envelope: bytes) -> bytes:
    """A CUSTOM event whose value (and envelope fields) are raw JSON text."""
    extra = b"".join(b',"' + k.encode() + b'":' + v for k, v in envelope.items())
    return b'{"type":"CUSTOM","name":"n","value":' + value + extra + b"}"


def lazy(parts: Callable[[], Iterator[bytes]], chunk: int = 256 * 1024) -> Body:
    """A body made on demand and handed over in ``chunk``-sized pieces."""

    def chunks() -> Iterator[bytes]:
        pending = bytearray()
        for part in parts():
            pending += part
            while len(pending) >= chunk:
                yield bytes(pending[:chunk])
                del pending[:chunk]
        if pending:
            yield bytes(pending)

    return chunks


def many(template: bytes, count: int, *, closing: bytes = b"") -> Body:
    """RUN_STARTED, then ``count`` events made from ``template`` with ``%(i)d`` the event's
    number (each followed by ``closing`` when given), as SSE, generated lazily."""

    def parts() -> Iterator[bytes]:
        yield sse(START)
        for i in range(count):
            yield b"data: " + template % {b"i": i} + b"\n\n"
            if closing:
                yield b"data: " + closing % {b"i": i} + b"\n\n"
        yield sse(FINISH)

    return lazy(parts)


def huge_value(kind: bytes, size: int) -> Body:
    """RUN_STARTED, one event whose string value is ``size`` bytes, RUN_FINISHED (lazily)."""
    head = {
        b"delta": b'{"type":"STATE_DELTA","delta":[{"op":"add","path":"/big","value":"',
        b"custom": b'{"type":"CUSTOM","name":"n","value":"',
    }[kind]
    tail = b'"}]}' if kind == b"delta" else b'"}'

    def parts() -> Iterator[bytes]:
        yield sse(START) + b"data: " + head
        for _ in range(size // MiB):
            yield b"a" * MiB
        yield b"a" * (size % MiB) + tail + b"\n\n" + sse(FINISH)

    return lazy(parts, chunk=MiB)


@dataclass(frozen=True)
class Judged:
    verdict: Literal["accepted", "rejected"]
    rule: str | None
    index: int | None
    path: str
    warnings: list[str]
    runs: list[Run]
    messages: list[Any]
    state: Any
    events: list[msgspec.Struct]
    bytes_read: int


@dataclass(frozen=True)
class Case:
    name: str
    body: Body
    verdict: Literal["accepted", "rejected"]
    rule: str | None = None
    index: int | None = None
    path: str | None = None  # checked when given
    fmt: Literal["sse", "jsonl"] = "sse"
    max_event_size: int = DEFAULT_MAX_EVENT_SIZE
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS
    warning: str | None = None  # a substring some warning must contain
    read_at_most: int | None = None  # bytes of the body read before the verdict
    check: Callable[[Judged], object] | None = None  # anything else the case shows

    @property
    def defaults(self) -> bool:
        return (self.max_event_size, self.max_open_items, self.max_closed_items) == (
            DEFAULT_MAX_EVENT_SIZE,
            DEFAULT_MAX_OPEN_ITEMS,
            DEFAULT_MAX_CLOSED_ITEMS,
        )


def judge(case: Case) -> Judged:
    """The body through the case's reader and a Consumer, stopping at the first violation."""
    reader: SSEReader | JSONLinesReader = (
        SSEReader(case.max_event_size)
        if case.fmt == "sse"
        else JSONLinesReader(case.max_event_size)
    )
    consumer = Consumer(max_open_items=case.max_open_items, max_closed_items=case.max_closed_items)
    chunks = iter([case.body]) if isinstance(case.body, bytes) else case.body()
    delivered: list[msgspec.Struct] = []
    read = 0
    violation: ProtocolViolation | None = None
    try:
        for chunk in chunks:
            read += len(chunk)
            for payload in reader.feed(chunk):
                delivered += consumer.feed(payload)
        for payload in reader.close():
            delivered += consumer.feed(payload)
        consumer.close(inside_event=reader.discarded_partial)
    except (ProtocolViolation, TransportError) as exc:
        violation = exc
    return Judged(
        verdict="accepted" if violation is None else "rejected",
        rule=None if violation is None else violation.rule,
        index=None if violation is None else violation.index,
        path="" if violation is None else violation.path,
        warnings=consumer.warnings,
        runs=consumer.runs,
        messages=consumer.messages,
        state=consumer.state,
        events=delivered,
        bytes_read=read,
    )


def _custom_value(judged: Judged) -> Any:
    custom: Any = next(e for e in judged.events if type(e).__struct_config__.tag == "CUSTOM")
    return custom.value


def _is(expected: object) -> Callable[[Any], object]:
    def check(actual: Any) -> object:
        assert actual == expected
        assert type(actual) is type(expected)
        return True

    return check


def _first_run_id(judged: Judged) -> object:
    assert judged.runs[0].run_id == "second"
    return True


def _timestamp_is(expected: int) -> Callable[[Judged], object]:
    def check(judged: Judged) -> object:
        return _is(expected)(judged.events[1].timestamp)  # type: ignore[attr-defined]

    return check


PRETTY = json.dumps({"type": "CUSTOM", "name": "n", "value": list(range(10_000))}, indent=0)
NESTED_100K_ARRAYS = b"[" * 100_000 + b"]" * 100_000
NESTED_100K_OBJECTS = b'{"a":' * 100_000 + b"1" + b"}" * 100_000
TOOL_CALL = b'{"type":"TOOL_CALL_START","toolCallId":"c%(i)d","toolCallName":"f","parentMessageId":"m%(i)d"}'
STEP = b'{"type":"STEP_STARTED","stepName":"s%(i)d"}'
TEXT = b'{"type":"TEXT_MESSAGE_START","messageId":"m%(i)d"}'
TEXT_END = b'{"type":"TEXT_MESSAGE_END","messageId":"m%(i)d"}'
EXACT = custom(b'"' + b"x" * 1000 + b'"')

CATALOGUE: list[Case] = [
    # --- framing ---------------------------------------------------------------------------
    Case("empty body", b"", "rejected", "truncated", None),
    Case("only comments", b": keep-alive\n: still here\n\n", "rejected", "truncated", None),
    Case("only blank lines", b"\n\n\r\n\r\r", "rejected", "truncated", None),
    Case("minimal SSE run", sse(START, FINISH), "accepted"),
    Case("minimal JSON lines run", jsonl(START, FINISH), "accepted", fmt="jsonl"),
    Case("BOM at stream start (SSE): skipped", BOM + sse(START, FINISH), "accepted"),
    Case(
        "BOM at stream start (JSON lines): skipped",
        BOM + jsonl(START, FINISH),
        "accepted",
        fmt="jsonl",
    ),
    Case("BOM inside a payload", sse(START, BOM + FINISH), "rejected", "invalid-json", 1),
    Case(
        "second BOM at start: the first line's field is not 'data', RUN_STARTED is lost",
        BOM + BOM + sse(START, FINISH),
        "rejected",
        "first-event",
        0,
    ),
    Case("CR-only line ends", sse(START, FINISH, eol=b"\r"), "accepted"),
    Case("CRLF line ends", sse(START, FINISH, eol=b"\r\n"), "accepted"),
    Case("data: without the space", b"data:" + START + b"\n\ndata:" + FINISH + b"\n\n", "accepted"),
    Case(
        "event:, id:, retry: and comment lines are ignored",
        b"event: agui\nid: 1\nretry: 5\n: hi\n" + sse(START) + b"id: 2\n" + sse(FINISH),
        "accepted",
    ),
    Case(
        "one event split across 10,000 data: lines (joined with LF, valid JSON)",
        sse(START)
        + b"".join(b"data: " + line + b"\n" for line in PRETTY.encode().split(b"\n"))
        + b"\n"
        + sse(FINISH),
        "accepted",
        check=lambda judged: _is(list(range(10_000)))(_custom_value(judged)),
    ),
    Case(
        "data: lines split inside a JSON string (a raw LF in a string)",
        sse(START) + b'data: {"type":"CUSTOM","name":"a\ndata: b","value":1}\n\n' + sse(FINISH),
        "rejected",
        "invalid-json",
        1,
    ),
    Case(
        "body ends inside the last event (no blank line): discarded, the run is truncated",
        sse(START) + b"data: " + FINISH,
        "rejected",
        "truncated",
        None,
    ),
    Case("JSON lines: last line without LF", jsonl(START) + FINISH, "accepted", fmt="jsonl"),
    Case(
        "JSON lines: body cut inside a line",
        jsonl(START) + FINISH[:20],
        "rejected",
        "invalid-json",
        1,
        fmt="jsonl",
    ),
    Case(
        "JSON lines: 70 blank lines before the first event",
        b"\n" * 70 + jsonl(START, FINISH),
        "accepted",
        fmt="jsonl",
    ),
    # --- encoding and JSON -------------------------------------------------------------------
    Case(
        "invalid UTF-8 in a string",
        in_run(b'{"type":"CUSTOM","name":"\xff","value":1}'),
        "rejected",
        "invalid-utf8",
        1,
    ),
    Case(
        "overlong UTF-8 after the object",
        in_run(custom(b"1") + b"\xc0\x80"),
        "rejected",
        "invalid-utf8",
        1,
    ),
    Case(
        "UTF-8-encoded surrogate (ED A0 80)",
        in_run(b'{"type":"CUSTOM","name":"\xed\xa0\x80","value":1}'),
        "rejected",
        "invalid-utf8",
        1,
    ),
    Case(
        "lone surrogate escape \\ud800", in_run(custom(b'"\\ud800"')), "rejected", "invalid-json", 1
    ),
    Case(
        "truncated JSON object",
        in_run(b'{"type":"CUSTOM","name":"n"'),
        "rejected",
        "invalid-json",
        1,
    ),
    Case("trailing comma", in_run(custom(b"1,")), "rejected", "invalid-json", 1),
    Case("two objects in one payload", in_run(b"{}{}"), "rejected", "invalid-json", 1),
    Case(
        "NUL byte after the object", in_run(custom(b"1") + b"\x00"), "rejected", "invalid-json", 1
    ),
    Case(
        "raw control character in a string",
        in_run(custom(b'"a\tb"')),
        "rejected",
        "invalid-json",
        1,
    ),
    Case("a JSON array as an event", in_run(b"[]"), "rejected", "not-an-object", 1),
    Case("a JSON number as an event", in_run(b"42"), "rejected", "not-an-object", 1),
    Case("a JSON string as an event", in_run(b'"RUN_FINISHED"'), "rejected", "not-an-object", 1),
    Case("JSON null as the first event", sse(b"null"), "rejected", "not-an-object", 0),
    Case("NaN", in_run(custom(b"NaN")), "rejected", "invalid-json", 1),
    Case("Infinity", in_run(custom(b"Infinity")), "rejected", "invalid-json", 1),
    Case("-Infinity", in_run(custom(b"-Infinity")), "rejected", "invalid-json", 1),
    Case("1e400 (beyond a double)", in_run(custom(b"1e400")), "rejected", "invalid-json", 1),
    Case(
        "an integer of 4,300 digits (Python's int_max_str_digits) in an open value",
        in_run(custom(b"9" * 4300)),
        "accepted",
        check=lambda judged: _is(int("9" * 4300))(_custom_value(judged)),
    ),
    Case(
        "an integer of 5,000 digits in an open value",
        in_run(custom(b"9" * 5000)),
        "rejected",
        "invalid-json",
        1,
    ),
    # --- duplicate keys: msgspec keeps the last value, on both decode paths ------------------
    Case(
        "duplicate key, both valid: the last wins",
        sse(b'{"type":"RUN_STARTED","threadId":"t","runId":"first","runId":"second"}')
        + sse(event(type="RUN_FINISHED", threadId="t", runId="second")),
        "accepted",
        check=_first_run_id,
    ),
    Case(
        "duplicate key, the last one wrong-typed",
        sse(b'{"type":"RUN_STARTED","threadId":"t","runId":"r","threadId":5}', FINISH),
        "rejected",
        "malformed-event",
        0,
        path="/threadId",
    ),
    Case(
        "duplicate key, the first one wrong-typed",
        sse(b'{"type":"RUN_STARTED","threadId":5,"runId":"r","threadId":"t"}', FINISH),
        "accepted",
    ),
    Case(
        "duplicate type: the last names a known event",
        in_run(b'{"type":"NOT_AN_EVENT","name":"n","value":1,"type":"CUSTOM"}'),
        "accepted",
    ),
    Case(
        "duplicate type: the last names an unknown event",
        in_run(b'{"type":"CUSTOM","name":"n","value":1,"type":"NOT_AN_EVENT"}'),
        "accepted",
        warning="dropped event of unrecognised type 'NOT_AN_EVENT'",
    ),
    # --- numbers on known fields --------------------------------------------------------------
    Case(
        "timestamp 2^53 (beyond the safe-integer bound)",
        in_run(custom(b"1", timestamp=str(2**53).encode())),
        "rejected",
        "malformed-event",
        1,
        path="/timestamp",
    ),
    Case(
        "timestamp -2^53",
        in_run(custom(b"1", timestamp=str(-(2**53)).encode())),
        "rejected",
        "malformed-event",
        1,
        path="/timestamp",
    ),
    Case(
        "timestamp 2^53 - 1 (the bound itself)",
        in_run(custom(b"1", timestamp=str(MAX_SAFE).encode())),
        "accepted",
        check=_timestamp_is(MAX_SAFE),
    ),
    Case(
        "timestamp 2^64 + 1",
        in_run(custom(b"1", timestamp=str(2**64 + 1).encode())),
        "rejected",
        "malformed-event",
        1,
        path="/timestamp",
    ),
    Case(
        "timestamp 1.0 (JSON Schema counts it as the integer 1)",
        in_run(custom(b"1", timestamp=b"1.0")),
        "accepted",
        check=_timestamp_is(1),
    ),
    Case(
        "timestamp 1e3",
        in_run(custom(b"1", timestamp=b"1e3")),
        "accepted",
        check=_timestamp_is(1000),
    ),
    Case(
        "timestamp 1.5",
        in_run(custom(b"1", timestamp=b"1.5")),
        "rejected",
        "malformed-event",
        1,
        path="/timestamp",
    ),
    Case(
        'timestamp "1" (a string)',
        in_run(custom(b"1", timestamp=b'"1"')),
        "rejected",
        "malformed-event",
        1,
        path="/timestamp",
    ),
    Case(
        "a negative token count",
        sse(
            START, event(type="RUN_FINISHED", threadId="t", runId="r", usage=[{"inputTokens": -1}])
        ),
        "rejected",
        "malformed-event",
        1,
        path="/usage/0/inputTokens",
    ),
    Case(
        "a token count of 2^53",
        sse(
            START,
            event(type="RUN_FINISHED", threadId="t", runId="r", usage=[{"outputTokens": 2**53}]),
        ),
        "rejected",
        "malformed-event",
        1,
        path="/usage/0/outputTokens",
    ),
    # --- fields and events --------------------------------------------------------------------
    Case(
        "null on an optional field",
        in_run(event(type="TEXT_MESSAGE_START", messageId="m", name=None)),
        "rejected",
        "malformed-event",
        1,
        path="/name",
    ),
    Case(
        "legacy null on TOOL_CALL_START.parentMessageId (registered shim)",
        in_run(
            event(type="TOOL_CALL_START", toolCallId="c", toolCallName="f", parentMessageId=None),
            event(type="TOOL_CALL_END", toolCallId="c"),
        ),
        "accepted",
        warning="event 1 /parentMessageId: legacy null",
    ),
    Case(
        "a required field missing",
        sse(event(type="RUN_STARTED", threadId="t"), FINISH),
        "rejected",
        "malformed-event",
        0,
    ),
    Case(
        "an event without type",
        in_run(b'{"name":"n","value":1}'),
        "rejected",
        "malformed-event",
        1,
        path="/type",
    ),
    Case("type is a number", in_run(b'{"type":5}'), "rejected", "malformed-event", 1, path="/type"),
    Case(
        "an unknown field",
        in_run(custom(b"1", zz=b"[1]")),
        "accepted",
        warning="event 1 /zz: removed unrecognised property",
    ),
    Case(
        "an unknown event inside a run",
        in_run(event(type="ZZ_NEW", x=1)),
        "accepted",
        warning="dropped event of unrecognised type 'ZZ_NEW'",
    ),
    Case(
        "an unknown event and nothing else: no run ever started",
        sse(event(type="ZZ_NEW")),
        "rejected",
        "truncated",
        None,
        warning="dropped event of unrecognised type 'ZZ_NEW'",
    ),
    Case(
        "a structurally malformed patch (op without path)",
        in_run(event(type="STATE_DELTA", delta=[{"op": "add", "value": 1}])),
        "rejected",
        "malformed-event",
        1,
        path="/delta/0",
    ),
    Case(
        "a well-formed patch that does not apply: warned, state kept",
        in_run(event(type="STATE_DELTA", delta=[{"op": "remove", "path": "/nope"}])),
        "accepted",
        warning="event 1 /delta: STATE_DELTA does not apply",
    ),
    # --- lifecycle ----------------------------------------------------------------------------
    Case("RUN_FINISHED without RUN_STARTED", sse(FINISH), "rejected", "first-event", 0),
    Case("RUN_STARTED twice", sse(START, START, FINISH), "rejected", "nested-run", 1),
    Case(
        "an event after RUN_FINISHED",
        sse(START, FINISH, custom(b"1")),
        "rejected",
        "event-after-run-finished",
        2,
    ),
    Case(
        "content without a start",
        in_run(event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="x")),
        "rejected",
        "text-message-not-open",
        1,
    ),
    Case(
        "RUN_FINISHED with a message still open",
        in_run(event(type="TEXT_MESSAGE_START", messageId="m")),
        "rejected",
        "open-at-run-finished",
        2,
    ),
    # --- nesting: bounded by the interpreter's recursion limit --------------------------------
    Case("100 levels of nesting", in_run(custom(b"[" * 100 + b"]" * 100)), "accepted"),
    Case("100,000 nested arrays", in_run(custom(NESTED_100K_ARRAYS)), "rejected", "too-deep", 1),
    Case(
        "100,000 nested objects in a state snapshot",
        in_run(b'{"type":"STATE_SNAPSHOT","snapshot":' + NESTED_100K_OBJECTS + b"}"),
        "rejected",
        "too-deep",
        1,
    ),
    Case(
        "100,000 levels in an unknown field (the slow path's generic decode)",
        sse(START[:-1] + b',"zz":' + NESTED_100K_ARRAYS + b"}", FINISH),
        "rejected",
        "too-deep",
        0,
    ),
    Case(
        "100,000 unclosed brackets (JSON lines)",
        jsonl(START, b'{"type":"CUSTOM","name":"n","value":' + b"[" * 100_000),
        "rejected",
        "too-deep",
        1,
        fmt="jsonl",
    ),
    # --- size: bounded by max_event_size ------------------------------------------------------
    Case(
        "a 50 MB STATE_DELTA value (default 10 MiB limit)",
        huge_value(b"delta", 50_000_000),
        "rejected",
        "event-too-large",
        1,
        read_at_most=DEFAULT_MAX_EVENT_SIZE + 2 * MiB,
    ),
    Case(
        "a 9 MiB STATE_DELTA value (under the default limit)",
        huge_value(b"delta", 9 * MiB),
        "accepted",
        check=lambda judged: _is(9 * MiB)(len(judged.state["big"])),
    ),
    Case(
        "a 20 MB event in one SSE line",
        huge_value(b"custom", 20_000_000),
        "rejected",
        "event-too-large",
        1,
        read_at_most=DEFAULT_MAX_EVENT_SIZE + 2 * MiB,
    ),
    Case(
        "a 20 MB comment line (ignored lines count towards the limit too)",
        lazy(lambda: iter([sse(START), b":" + b"c" * 20_000_000 + b"\n", sse(FINISH)])),
        "rejected",
        "event-too-large",
        1,
        read_at_most=DEFAULT_MAX_EVENT_SIZE + MiB,
    ),
    Case(
        "a payload of exactly max_event_size",
        in_run(EXACT),
        "accepted",
        max_event_size=len(EXACT),
    ),
    Case(
        "a payload one byte over max_event_size",
        in_run(EXACT),
        "rejected",
        "event-too-large",
        1,
        max_event_size=len(EXACT) - 1,
    ),
    Case(
        "a JSON lines line one byte over max_event_size",
        jsonl(START, EXACT, FINISH),
        "rejected",
        "event-too-large",
        1,
        fmt="jsonl",
        max_event_size=len(EXACT) - 1,
    ),
    # --- open items: bounded by max_open_items ------------------------------------------------
    Case(
        "a million open tool calls, max_open_items=1000",
        many(TOOL_CALL, 1_000_000),
        "rejected",
        "too-many-open-items",
        1001,
        max_open_items=1000,
        read_at_most=1100 * 120 + 256 * 1024,
    ),
    Case(
        "a million open tool calls, default max_open_items",
        many(TOOL_CALL, 1_000_000),
        "rejected",
        "too-many-open-items",
        DEFAULT_MAX_OPEN_ITEMS + 1,
        read_at_most=110_000 * 120,
    ),
    Case(
        "a million open steps, default max_open_items",
        many(STEP, 1_000_000),
        "rejected",
        "too-many-open-items",
        DEFAULT_MAX_OPEN_ITEMS + 1,
        read_at_most=110_000 * 60,
    ),
    Case(
        "a million open text messages, max_open_items=1000",
        many(TEXT, 1_000_000),
        "rejected",
        "too-many-open-items",
        1001,
        max_open_items=1000,
    ),
    Case(
        "open items of every kind count together",
        lazy(
            lambda: iter(
                [
                    sse(START),
                    *(sse(STEP % {b"i": i}) for i in range(600)),
                    *(sse(TEXT % {b"i": i}) for i in range(600)),
                ]
            )
        ),
        "rejected",
        "too-many-open-items",
        1001,
        max_open_items=1000,
    ),
    Case(
        "10,000 steps opened and closed one at a time, max_open_items=1",
        many(STEP, 10_000, closing=b'{"type":"STEP_FINISHED","stepName":"s%(i)d"}'),
        "accepted",
        max_open_items=1,
    ),
    # --- closed items a run remembers: bounded by max_closed_items ----------------------------
    Case(
        "a million text messages opened and closed in one run, default max_closed_items",
        many(TEXT, 1_000_000, closing=TEXT_END),
        "rejected",
        "too-many-closed-items",
        2 * DEFAULT_MAX_CLOSED_ITEMS + 2,  # the close of message N + 1
        read_at_most=2 * 110_000 * 70,
    ),
    Case(
        "a million tool calls, each naming a message not seen, max_closed_items=1000",
        many(TOOL_CALL, 1_000_000),
        "rejected",
        "too-many-closed-items",
        1001,
        max_closed_items=1000,
    ),
    Case(
        "10,000 steps opened and closed one at a time, max_closed_items=0",
        many(STEP, 10_000, closing=b'{"type":"STEP_FINISHED","stepName":"s%(i)d"}'),
        "accepted",
        max_closed_items=0,
    ),
    Case(
        "one message reopened 10,000 times, max_closed_items=1",
        many(
            b'{"type":"TEXT_MESSAGE_START","messageId":"m"}',
            10_000,
            closing=b'{"type":"TEXT_MESSAGE_END","messageId":"m"}',
        ),
        "accepted",
        max_closed_items=1,
    ),
]


@pytest.mark.parametrize("case", CATALOGUE, ids=[case.name for case in CATALOGUE])
def test_catalogue(case: Case) -> None:
    judged = judge(case)
    assert (judged.verdict, judged.rule, judged.index) == (case.verdict, case.rule, case.index)
    if case.path is not None:
        assert judged.path == case.path
    if case.warning is not None:
        assert any(case.warning in warning for warning in judged.warnings), judged.warnings
    elif case.verdict == "accepted":
        assert judged.warnings == []
    if case.read_at_most is not None:
        assert judged.bytes_read <= case.read_at_most
    if case.check is not None:
        assert case.check(judged)


def test_the_catalogue_is_large_enough() -> None:
    assert len(CATALOGUE) >= 40
    assert len({case.name for case in CATALOGUE}) == len(CATALOGUE)


# --- consume_body (what the command line's check runs) agrees with the reader + Consumer -----

_SMALL_AT_DEFAULTS = [
    case for case in CATALOGUE if case.defaults and isinstance(case.body, bytes)
] + [next(case for case in CATALOGUE if case.name.startswith("a 20 MB event"))]


def _materialised(case: Case) -> bytes:
    return case.body if isinstance(case.body, bytes) else b"".join(case.body())


@pytest.mark.parametrize("case", _SMALL_AT_DEFAULTS, ids=[case.name for case in _SMALL_AT_DEFAULTS])
def test_consume_body_gives_the_catalogue_verdict(case: Case) -> None:
    result = consume_body(_materialised(case))
    violation = result.violation
    rule = None if violation is None else violation.rule
    index = None if violation is None else violation.index
    assert (result.outcome == "completed", rule, index) == (
        case.verdict == "accepted",
        case.rule,
        case.index,
    )


# --- the other entry points never raise either -----------------------------------------------


@pytest.mark.parametrize("payload", [b"0", b"[]", b"true", b"null", b'"x"'])
def test_middleware_does_not_change_the_verdict_on_a_non_object(payload: bytes) -> None:
    """Found by fuzz/fuzz_consume.py: with middleware, ``b"0"`` raised TypeError (fixed in 9a535f3)."""
    plain = consume([START, payload])
    with_middleware = consume([START, payload], middleware=[lambda document, index: document])
    assert plain.violation is not None
    assert plain.violation.rule == "not-an-object"
    assert with_middleware.violation is not None
    assert (with_middleware.violation.rule, with_middleware.violation.index) == (
        "not-an-object",
        1,
    )


def test_nesting_as_a_dict_payload_is_too_deep_too() -> None:
    """consume() takes dicts as well; a dict nested past the recursion limit is refused."""
    value: Any = 1
    for _ in range(100_000):
        value = [value]
    result = consume([json.loads(START), {"type": "CUSTOM", "name": "n", "value": value}])
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("too-deep", 1)
