"""Fuzz the transport readers and the consumer pipeline.

Run it standalone (``python fuzz/fuzz_consume.py --seconds 300``) or with
``nox -s fuzz -- 300``. With atheris installed it is coverage-guided (libFuzzer
over the instrumented ``agui_msgspec`` modules); without it, hypothesis draws
mutated seeds and random bytes for the same time.

The target, :func:`check_one`, takes one response body and raises on a crash:

- ``SSEReader``/``JSONLinesReader`` + ``Consumer.feed``/``close`` raising
  anything but :class:`ProtocolViolation` or :class:`TransportError`, with the body whole or cut into
  random chunks, and with low resource limits;
- ``consume()`` or ``consume_body()`` raising anything at all (they report, they
  never raise), over the body's lines as payloads and the body as one payload;
- reading the result (messages, state, runs) or encoding it raising;
- ``parse_run_input`` (the body, and its first lines, as a request body) raising anything
  but ``MalformedInput``, or saying more warnings than its bound;
- ``verify`` (the body, and its lines as str) or any of the five renderers of its report
  raising, or the report's violations disagreeing with the consumer's verdict;
- an invariant broken (:class:`InvariantBroken`): the same bytes must get the
  same verdict, warnings and result whatever the chunking, and ``consume_body``
  must agree with the reader + consumer pipeline it stands for.

With ``--target protobuf`` the body is read as the HTTP + Protobuf binding's frames
whatever its first byte (:func:`check_protobuf`): the same invariants (chunking, tight
limits, ``Consumer.receive`` against the reader + consumer pipeline), and each frame read
alike by the single-pass and the general decoder; seeded with ``tests/data/proto`` and the
streams above as frames, with an empty frame and an unknown arm among them.

A resource target too: an input of up to 64 KiB that takes more than 2 s of CPU,
or raises the process's peak memory more than 256 MB above where it started, is a
crash (:class:`ResourceExceeded`): hostile input must cost O(n) time and bounded memory.

Seeds: built-in streams, ``examples/`` and the upstream conformance streams
(``shared/agui/conformance/1.1/streams`` beside the checkout or any folder above
this file, or ``--shared DIR``) when present, each as an SSE body and as a JSON
lines body. A crash is recorded (deduplicated by exception type
and the innermost ``agui_msgspec`` frame), fuzzing goes on, and at the end
each distinct crash is minimised and printed with its reproducer.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import random
import resource
import sys
import tempfile
import time
import traceback
import types
import zlib
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import msgspec
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from agui_msgspec import (
    Consumer,
    MalformedInput,
    ProtobufReader,
    ProtocolViolation,
    TransportError,
    UsageError,
    VerifyingConsumer,
    consume,
    consume_body,
    parse_run_input,
    proto_frame,
    render_html,
    render_json,
    render_junit,
    render_sarif,
    render_text,
    v1_1,
    verify,
)
from agui_msgspec._pipeline.warnings import DEFAULT_MAX_WARNINGS
from agui_msgspec._wire.protobuf import PROTOBUF_MEDIA_TYPE, wire_tables
from agui_msgspec._wire.protobuf.decode import GeneralDecoder
from agui_msgspec._wire.protobuf.fast import FastDecoder
from agui_msgspec._wire.text import JSONLinesReader, PayloadReader, SSEReader, sniff_format

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PROTO_DATA = ROOT / "tests" / "data" / "proto"
# Frames no build knows, put among a stream's: an empty one and an unknown arm's.
_NO_ARM = b"\x00\x00\x00\x00"
_UNKNOWN_ARM = b"\x00\x00\x00\x03\xc2\x3e\x00"
_STREAMS = Path("agui", "conformance", "1.1", "streams")
# The resource target: what an input of up to RESOURCE_INPUT_BYTES may cost.
RESOURCE_INPUT_BYTES = 64 * 1024
RESOURCE_CPU_SECONDS = 2.0
RESOURCE_MEMORY_BYTES = 256 * 1024 * 1024

Wire = dict[str, Any]
Verdict = tuple[Any, ...]


class InvariantBroken(AssertionError):
    """Two ways of judging the same bytes disagree."""


class ResourceExceeded(AssertionError):
    """A small input cost more time or memory than the resource target allows."""


def conformance_streams(shared: Path | None = None) -> Path | None:
    """The conformance streams: in ``shared``, else in a ``shared`` folder beside the
    checkout or beside any folder above this file (wherever the fuzzer is run from)."""
    if shared is not None:
        return shared / _STREAMS
    for folder in Path(__file__).resolve().parents:
        candidate = folder / "shared" / _STREAMS
        if candidate.is_dir():
            return candidate
    return None


# --- seeds ---------------------------------------------------------------------------------

_START: Wire = {"type": "RUN_STARTED", "threadId": "t", "runId": "r1", "protocolVersion": "1.1"}
_FINISH: Wire = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"}

BUILTIN_STREAMS: list[list[Wire]] = [
    [
        _START,
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hello"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "c1",
            "toolCallName": "f",
            "parentMessageId": "m1",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"a":1}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_RESULT", "messageId": "m2", "toolCallId": "c1", "content": "ok"},
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r1",
            "usage": [{"provider": "p", "inputTokens": 3, "outputTokens": 4, "totalTokens": 7}],
        },
    ],
    [
        _START,
        {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m1", "role": "user", "delta": "a"},
        {"type": "TOOL_CALL_CHUNK", "toolCallId": "c1", "toolCallName": "f", "delta": "{"},
        {"type": "TOOL_CALL_CHUNK", "delta": "}"},
        {"type": "REASONING_START", "messageId": "s1"},
        {"type": "REASONING_MESSAGE_CHUNK", "messageId": "r1", "delta": "hm"},
        {"type": "REASONING_END", "messageId": "s1"},
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "r1",
            "encryptedValue": "x",
        },
        {"type": "STEP_STARTED", "stepName": "plan"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        _FINISH,
    ],
    [
        _START,
        {"type": "STATE_SNAPSHOT", "snapshot": {"a": [1, 2], "b": {"c": None}}},
        {
            "type": "STATE_DELTA",
            "delta": [
                {"op": "add", "path": "/a/-", "value": 3},
                {"op": "move", "from": "/b/c", "path": "/d"},
                {"op": "test", "path": "/a/0", "value": 1},
            ],
        },
        {"type": "ACTIVITY_SNAPSHOT", "messageId": "a1", "activityType": "x", "content": {"n": 0}},
        {
            "type": "ACTIVITY_DELTA",
            "messageId": "a1",
            "activityType": "x",
            "patch": [{"op": "replace", "path": "/n", "value": 1}],
        },
        {
            "type": "MESSAGES_SNAPSHOT",
            "messages": [{"id": "u1", "role": "user", "content": "hi"}],
        },
        {"type": "CUSTOM", "name": "n", "value": [1, {"x": None}]},
        {"type": "RAW", "event": {"k": "v"}, "source": "s"},
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r1",
            "outcome": {"type": "interrupt", "interrupts": [{"id": "i1", "reason": "approve"}]},
        },
    ],
    [
        {"type": "RUN_ERROR", "message": "boom"},
        _START,
        {"type": "SUBAGENT_STARTED", "subagentRunId": "sa", "name": "helper"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m9", "subagentRunId": "sa"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m9", "delta": "x"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m9", "subagentRunId": "sa"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "sa"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1", "outcome": {"type": "cancelled"}},
        {"type": "RUN_ERROR", "message": "late", "code": "c"},
    ],
]


# A producer one version ahead: the same property on every event, which a batch takes at once.
BUILTIN_STREAMS.append([{**event, "xTraceId": "00-1"} for event in BUILTIN_STREAMS[0]])


def sse_body(events: Iterable[Wire | bytes]) -> bytes:
    return b"".join(b"data: " + _encode(event) + b"\n\n" for event in events)


def jsonl_body(events: Iterable[Wire | bytes]) -> bytes:
    return b"".join(_encode(event) + b"\n" for event in events)


def _encode(event: Wire | bytes) -> bytes:
    return event if isinstance(event, bytes) else json.dumps(event).encode()


def seed_inputs(extra_dirs: Iterable[Path] = (), shared: Path | None = None) -> list[bytes]:
    """Every seed body: built-in streams, examples/ files, conformance streams, as SSE and JSONL."""
    streams: list[list[Wire]] = list(BUILTIN_STREAMS)
    raw: list[bytes] = []
    for folder in (EXAMPLES, *extra_dirs):
        if folder.is_dir():
            raw += [path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()]
    conformance = conformance_streams(shared)
    if conformance is not None and conformance.is_dir():
        for path in sorted(conformance.glob("*.json")):
            fixture = json.loads(path.read_bytes())
            if isinstance(fixture.get("stream"), list):
                streams.append(fixture["stream"])
    seeds = raw + [sse_body(s) for s in streams] + [jsonl_body(s) for s in streams]
    seeds += [body for body in map(protobuf_body, streams) if body]
    return list(dict.fromkeys(seeds))


def protobuf_body(events: Iterable[Wire | bytes]) -> bytes | None:
    """The stream as protobuf frames, or None if some event has no protobuf form."""
    try:
        return b"".join(proto_frame(json.loads(_encode(event))) for event in events)
    except (UsageError, ValueError):
        return None


DICTIONARY = [
    "data: ",
    "data:",
    "\n\n",
    "\r\n",
    "\r",
    ": comment\n",
    "event: x\n",
    "\xef\xbb\xbf",
    '"type":',
    '"messageId":',
    '"toolCallId":',
    '"toolCallName":',
    '"subagentRunId":',
    '"parentMessageId":',
    '"delta":',
    '"stepName":',
    '"outcome":',
    '"usage":',
    '"timestamp":',
    '"metadata":',
    '"snapshot":',
    '"messages":',
    '"role":',
    '"op":',
    '"path":',
    '"from":',
    '"value":',
    "null",
    "true",
    "1e400",
    "9007199254740993",
    "-1",
    "1.5",
    "[[[[",
    "{}",
    "[]",
    '"\\ud800"',
]
_EVENT_TYPES: list[str] = sorted(v1_1.EVENT_TYPES)


def _dictionary_file(folder: Path) -> Path:
    path = folder / "agui.dict"
    entries = [*DICTIONARY, *(f'"{name}"' for name in _EVENT_TYPES)]
    lines = []
    for entry in entries:
        escaped = "".join(
            f"\\x{byte:02x}" if byte < 0x20 or byte >= 0x7F or byte in b'"\\' else chr(byte)
            for byte in entry.encode("latin-1", "replace")
        )
        lines.append(f'"{escaped}"')
    path.write_text("\n".join(lines) + "\n")
    return path


# --- the target ----------------------------------------------------------------------------


def _reader(
    body: bytes,
    max_event_size: int | None,
    warn_before: Callable[[int, str], None],
    protobuf: bool = False,
) -> PayloadReader:
    """The reader consume_body picks for ``body`` (protobuf's if told); a protobuf one's
    warnings go to ``warn_before``."""
    size: dict[str, Any] = {} if max_event_size is None else {"max_event_size": max_event_size}
    if protobuf or body[:1] == b"\x00":  # a protobuf frame's length
        return ProtobufReader(**size, on_warning_before=warn_before)
    return SSEReader(**size) if sniff_format(body) == "sse" else JSONLinesReader(**size)


def pipeline(
    body: bytes,
    chunks: list[bytes],
    *,
    max_event_size: int | None = None,
    max_open_items: int | None = None,
    max_closed_items: int | None = None,
    protobuf: bool = False,
) -> Verdict:
    """Reader + Consumer over ``chunks`` (which join to ``body``), payload by payload: the
    verdict and the result.

    Raises whatever the pipeline raises that is not a ProtocolViolation or a TransportError
    (a frame too large): that is a crash.
    """
    bounds = {"max_open_items": max_open_items, "max_closed_items": max_closed_items}
    chosen: dict[str, Any] = {name: bound for name, bound in bounds.items() if bound is not None}
    consumer: Consumer[v1_1.Event] = Consumer(**chosen)
    # A dropped protobuf frame's warning, said once the payloads before it are taken, as
    # Consumer.receive says it (never, if one of them is rejected).
    pending: deque[tuple[int, str]] = deque()
    events: list[object] = []

    def say_pending() -> None:
        while pending and pending[0][0] <= consumer.event_index:
            consumer.warn(pending.popleft()[1])

    def warn_before(index: int, message: str) -> None:
        # said at once when the payloads before it are taken: the reader may raise next
        pending.append((index, message))
        say_pending()

    reader = _reader(body, max_event_size, warn_before, protobuf)

    def take(payloads: list[bytes]) -> None:
        for payload in payloads:
            say_pending()
            events.extend(consumer.feed(payload))
        say_pending()

    violation: ProtocolViolation | TransportError | None = None
    try:
        for chunk in chunks:
            take(reader.feed(chunk))
        take(reader.close())
        consumer.close(inside_event=reader.discarded_partial)
    except (ProtocolViolation, TransportError) as exc:
        violation = exc
        events += exc.delivered  # what the failing payload delivered before its violation
    return (
        None if violation is None else (violation.rule, violation.index, violation.path),
        tuple(consumer.warnings),
        tuple((run.status, run.run_id) for run in consumer.runs),
        msgspec.json.encode(consumer.messages),
        msgspec.json.encode(consumer.state),
        msgspec.json.encode(events),
    )


def verifier_verdict(body: bytes) -> tuple[object, bytes]:
    """A VerifyingConsumer's verdict and events on the body: a Consumer's, without its
    conversation (its warnings about messages are not said, its runs are the latest)."""
    verifier: VerifyingConsumer[v1_1.Event] = VerifyingConsumer()
    events: list[object] = []
    violation: ProtocolViolation | TransportError | None = None
    try:
        events += verifier.receive(body)
        events += verifier.close()
    except (ProtocolViolation, TransportError) as exc:
        violation = exc
        events += exc.delivered
    verdict = None if violation is None else (violation.rule, violation.index, violation.path)
    return verdict, msgspec.json.encode(events)


def split(body: bytes, rng: random.Random) -> list[bytes]:
    if len(body) < 2:
        return [body]
    cuts = sorted(rng.sample(range(1, len(body)), min(len(body) - 1, rng.randint(1, 12))))
    return [body[a:b] for a, b in pairwise([0, *cuts, len(body)])]


def check_one(body: bytes) -> None:
    """The fuzz target: returns quietly, or raises on a crash or a broken invariant."""
    rng = random.Random(zlib.crc32(body))
    whole = pipeline(body, [body])
    chunked = pipeline(body, split(body, rng))
    if whole != chunked:
        raise InvariantBroken(f"chunking changed the verdict or result: {whole!r} != {chunked!r}")
    limits: dict[str, Any] = {
        "max_event_size": max(1, len(body) // rng.randint(1, 8)),
        "max_open_items": rng.randint(1, 4),
        "max_closed_items": rng.randint(0, 4),
    }
    tight_whole = pipeline(body, [body], **limits)
    tight_chunked = pipeline(body, split(body, rng), **limits)
    if tight_whole != tight_chunked:
        raise InvariantBroken(
            f"chunking changed the verdict under {limits}: {tight_whole!r} != {tight_chunked!r}"
        )
    result = consume_body(body)  # every chunk's payloads as one batch: the consumer's fast paths
    verdict = result.violation
    batched = (
        None if verdict is None else (verdict.rule, verdict.index, verdict.path),
        tuple(result.warnings),
        tuple((run.status, run.run_id) for run in result.runs),
        msgspec.json.encode(result.messages),
        msgspec.json.encode(result.state),
        msgspec.json.encode(result.events),
    )
    if batched != whole:
        raise InvariantBroken(f"consume_body says {batched!r}, reader + Consumer say {whole!r}")
    verified = verifier_verdict(body)
    if verified != (whole[0], whole[-1]):
        raise InvariantBroken(f"a VerifyingConsumer says {verified!r}, a Consumer {whole!r}")
    lines = body.split(b"\n")
    _check_report(body, whole[0])
    # the lines as str: an undecodable byte becomes a lone surrogate, which no report may hold
    _check_report([line.decode("utf-8", "surrogateescape") for line in lines], None)
    _summarise(consume(lines))
    _summarise(consume(lines, version="1.0"))
    _summarise(consume(lines, middleware=[lambda document, index: document]))
    _summarise(consume([body]))
    for line in lines[:4]:  # a request body: the server's reading, bounded and typed
        _read_request(line)
    _read_request(body)


def _check_report(source: bytes | list[str], verdict: Verdict | None) -> None:
    """``verify`` and every renderer on ``source``: no raise, and for a body, a violation in the
    report exactly when the consumer found one, its rule among the report's."""
    report = verify(source)
    for render in (render_text, render_json, render_sarif, render_junit, render_html):
        render(report).encode("utf-8")
    if isinstance(source, bytes):
        rules = {finding.rule for finding in report.violations}
        if (verdict is None) != (not rules) or (verdict is not None and verdict[0] not in rules):
            raise InvariantBroken(f"verify says {sorted(rules)}, the consumer {verdict!r}")


def check_protobuf(body: bytes) -> None:
    """The protobuf target: ``body`` as frames, whatever its first byte."""
    rng = random.Random(zlib.crc32(body))
    whole = pipeline(body, [body], protobuf=True)
    chunked = pipeline(body, split(body, rng), protobuf=True)
    if whole != chunked:
        raise InvariantBroken(f"chunking changed the verdict or result: {whole!r} != {chunked!r}")
    limits: dict[str, Any] = {
        "max_event_size": max(1, len(body) * rng.randint(1, 16) // 8),
        "max_open_items": rng.randint(1, 4),
        "max_closed_items": rng.randint(0, 4),
    }
    tight_whole = pipeline(body, [body], protobuf=True, **limits)
    tight_chunked = pipeline(body, split(body, rng), protobuf=True, **limits)
    if tight_whole != tight_chunked:
        raise InvariantBroken(
            f"chunking changed the verdict under {limits}: {tight_whole!r} != {tight_chunked!r}"
        )
    received = _received(body)
    if received != whole[:5]:
        raise InvariantBroken(f"Consumer.receive says {received!r}, reader + Consumer {whole!r}")
    for message in _messages(body):
        fast, general = _decoded(FastDecoder, message), _decoded(GeneralDecoder, message)
        if fast != general:
            raise InvariantBroken(f"the decoders differ on {message!r}: {fast!r} != {general!r}")


def _received(body: bytes) -> Verdict:
    """``body`` through ``Consumer.receive`` as a protobuf body, in 64 KiB pieces."""
    consumer = Consumer()
    consumer.set_media_type(PROTOBUF_MEDIA_TYPE)
    violation: ProtocolViolation | TransportError | None = None
    try:
        for start in range(0, max(len(body), 1), 65536):
            consumer.receive(body[start : start + 65536])
        consumer.close()
    except (ProtocolViolation, TransportError) as exc:
        violation = exc
    return (
        None if violation is None else (violation.rule, violation.index, violation.path),
        tuple(consumer.warnings),
        tuple((run.status, run.run_id) for run in consumer.runs),
        msgspec.json.encode(consumer.messages),
        msgspec.json.encode(consumer.state),
    )


def _messages(body: bytes) -> list[bytes]:
    """The frames' messages, as far as their lengths go, and the body as one message."""
    found, pos = [body], 0
    while pos + 4 <= len(body) and len(found) < 64:
        length = int.from_bytes(body[pos : pos + 4], "big")
        found.append(body[pos + 4 : pos + 4 + length])
        pos += 4 + length
    return found


def _decoded(decoder: type[FastDecoder | GeneralDecoder], message: bytes) -> tuple[Any, ...]:
    """What a decoder makes of one message: its event (keys sorted) and warnings, or what
    it raised (the decoders' own exceptions, which the reader turns into its errors)."""
    warnings: list[str] = []
    try:
        event = decoder(wire_tables(), warnings.append).event(message)
    except RecursionError:
        return ("refused", "RecursionError")
    except Exception as refused:
        if type(refused).__module__ != "agui_msgspec._wire.protobuf.decode":
            raise
        return ("refused", type(refused).__name__, str(refused), warnings)
    return ("read", msgspec.json.encode(event, order="sorted"), warnings)


def protobuf_seeds(shared: Path | None = None) -> list[bytes]:
    """The protobuf target's seeds: the reference frames and the chunking reproducers, and
    every stream as frames, plain and with a frame no build knows among them."""
    seeds: list[bytes] = []
    corpus = PROTO_DATA / "corpus-frames.json"
    if corpus.is_file():
        for case in json.loads(corpus.read_text(encoding="utf-8")):
            message = bytes.fromhex(case["hex"])
            seeds.append(len(message).to_bytes(4, "big") + message)
    chunking = PROTO_DATA / "chunking"
    if chunking.is_dir():
        seeds += [path.read_bytes() for path in sorted(chunking.glob("*.bin"))]
    streams: list[list[Wire]] = list(BUILTIN_STREAMS)
    conformance = conformance_streams(shared)
    if conformance is not None and conformance.is_dir():
        for path in sorted(conformance.glob("*.json")):
            fixture = json.loads(path.read_bytes())
            if isinstance(fixture.get("stream"), list):
                streams.append(fixture["stream"])
    for stream in streams:
        body = protobuf_body(stream)
        if body:
            first = protobuf_body(stream[:1]) or b""
            seeds += [body, first + _NO_ARM + body[len(first) :] + _UNKNOWN_ARM]
    return list(dict.fromkeys(seeds))


def _read_request(body: bytes) -> None:
    """``parse_run_input`` on ``body``: the input and bounded warnings, or ``MalformedInput``."""
    warnings: list[str] = []
    try:
        typed = parse_run_input(body, on_warning=warnings.append)
    except MalformedInput:
        return
    if len(warnings) > DEFAULT_MAX_WARNINGS + 1 or any(len(w) > 1000 for w in warnings):
        raise InvariantBroken(f"parse_run_input said {len(warnings)} warnings, or one too long")
    msgspec.json.encode(typed)


def _summarise(result: Any) -> None:
    msgspec.json.encode([result.messages, result.state, result.events, result.runs])


def _peak_rss() -> int:
    """The process's peak resident memory so far, in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


_RSS_AT_START = _peak_rss()


_TARGETS: dict[str, Callable[[bytes], None]] = {"text": check_one, "protobuf": check_protobuf}
_target: list[Callable[[bytes], None]] = [check_one]  # the target of this run, as --target chose


def check_bounded(body: bytes) -> None:
    """The target (:func:`check_one` or :func:`check_protobuf`), and the resource target for an input of up to 64 KiB: CPU time,
    not wall time, so a busy machine does not make crashes up; memory as the rise of the
    process's peak above where it started, which only an input that sets a new peak moves."""
    started = time.process_time()
    _target[0](body)
    if len(body) > RESOURCE_INPUT_BYTES:
        return
    spent = time.process_time() - started
    if spent > RESOURCE_CPU_SECONDS:
        raise ResourceExceeded(f"time: {spent:.1f} s of CPU for {len(body)} bytes")
    grown = _peak_rss() - _RSS_AT_START
    if grown > RESOURCE_MEMORY_BYTES:
        raise ResourceExceeded(
            f"memory: peak {grown >> 20} MB above the start for {len(body)} bytes"
        )


# --- crash bookkeeping -----------------------------------------------------------------------


@dataclass
class Crash:
    key: tuple[str, str]
    error: str
    trace: str
    body: bytes
    count: int = 1


@dataclass
class Recorder:
    artifacts: Path
    crashes: dict[tuple[str, str], Crash] = field(default_factory=dict)
    inputs: int = 0
    started: float = field(default_factory=time.monotonic)

    def run(self, body: bytes) -> None:
        self.inputs += 1
        try:
            check_bounded(body)
        except Exception as exc:
            key = crash_key(exc)
            known = self.crashes.get(key)
            if known is not None:
                known.count += 1
                if len(body) < len(known.body):
                    known.body = body
                return
            crash = Crash(key, f"{type(exc).__name__}: {exc}"[:500], traceback.format_exc(), body)
            self.crashes[key] = crash
            name = f"crash-{len(self.crashes)}-{zlib.crc32(repr(key).encode()):08x}"
            (self.artifacts / name).write_bytes(body)
            print(f"\n[fuzz] new crash {key}: {crash.error[:200]}", file=sys.stderr, flush=True)

    def report(self, minimise_seconds: float) -> str:
        lines = [
            f"[fuzz] inputs tried: {self.inputs} in {time.monotonic() - self.started:.0f} s; "
            f"distinct crashes: {len(self.crashes)}"
        ]
        for number, crash in enumerate(self.crashes.values(), 1):
            small = minimise(crash.body, crash.key, minimise_seconds)
            (self.artifacts / f"minimal-{number}").write_bytes(small)
            lines += [
                f"[fuzz] crash {number}: {crash.key[0]} at {crash.key[1]} (hit {crash.count}x)",
                f"       {crash.error[:300]}",
                f"       minimal reproducer ({len(small)} bytes): {small!r}",
            ]
        lines.append(f"[fuzz] artifacts in {self.artifacts}")
        return "\n".join(lines)


def crash_key(exc: BaseException) -> tuple[str, str]:
    """The exception type and the innermost frame inside agui_msgspec (else the innermost)."""
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [f for f in frames if "agui_msgspec" in f.filename]
    chosen = inside or list(frames)
    where = f"{Path(chosen[-1].filename).name}:{chosen[-1].lineno}" if chosen else "?"
    if isinstance(exc, (InvariantBroken, ResourceExceeded)):
        where = str(exc).split(":", 1)[0]
    return type(exc).__name__, where


def _reproduces(body: bytes, key: tuple[str, str]) -> bool:
    try:
        check_bounded(body)
    except Exception as exc:
        return crash_key(exc) == key
    return False


def minimise(body: bytes, key: tuple[str, str], seconds: float) -> bytes:
    """Delta debugging over bytes: drop chunks while the same crash reproduces."""
    deadline = time.monotonic() + seconds
    if not _reproduces(body, key):
        return body
    size = max(1, len(body) // 2)
    while size >= 1 and time.monotonic() < deadline:
        start, shrunk = 0, False
        while start < len(body) and time.monotonic() < deadline:
            candidate = body[:start] + body[start + size :]
            if candidate and _reproduces(candidate, key):
                body, shrunk = candidate, True
            else:
                start += size
        if not shrunk:
            size //= 2
    return body


# --- engines -------------------------------------------------------------------------------


def fuzz_atheris(
    atheris: Any, recorder: Recorder, seeds: list[bytes], args: argparse.Namespace
) -> None:
    """libFuzzer until ``args.seconds`` have passed; then report and end the process.

    libFuzzer ends the process without running ``atexit`` handlers, so the target
    itself reports once its time is up (libFuzzer's own limit is only a backstop).
    """
    corpus = Path(tempfile.mkdtemp(prefix="agui-fuzz-corpus-"))
    for number, seed in enumerate(seeds):
        (corpus / f"seed-{number}").write_bytes(seed)
    libfuzzer_args = [
        sys.argv[0],
        f"-max_total_time={args.seconds + 600}",
        f"-max_len={args.max_len}",
        f"-dict={_dictionary_file(recorder.artifacts)}",
        f"-seed={args.seed}",
        # Backstops only: the target reports the resource target's crashes itself.
        "-rss_limit_mb=2048",
        "-timeout=20",
        str(corpus),
    ]
    deadline: list[float] = []  # set by the first call: instrumenting and loading take time

    def target(body: bytes) -> None:
        if not deadline:
            deadline.append(time.monotonic() + args.seconds)
            recorder.started = time.monotonic()
        if time.monotonic() >= deadline[0]:
            print(recorder.report(args.minimise_seconds), file=sys.stderr, flush=True)
            sys.stdout.flush()
            os._exit(1 if recorder.crashes else 0)
        recorder.run(body)

    _instrument_library(atheris)
    atheris.Setup(libfuzzer_args, target)
    atheris.Fuzz()


def _instrument_library(atheris: Any) -> None:
    """Coverage for the library's Python functions only (``instrument_all`` takes minutes)."""
    functions = [
        obj
        for obj in gc.get_objects()
        if isinstance(obj, types.FunctionType)
        and obj.__module__ is not None
        and obj.__module__.startswith("agui_msgspec")
    ]
    for function in functions:
        atheris.instrument_func(function)
    print(f"[fuzz] instrumented {len(functions)} functions", file=sys.stderr, flush=True)


def fuzz_hypothesis(recorder: Recorder, seeds: list[bytes], args: argparse.Namespace) -> None:
    edits = st.lists(
        st.tuples(st.integers(0, 1 << 16), st.integers(0, 3), st.binary(max_size=8)), max_size=6
    )
    mutated = st.tuples(st.sampled_from(seeds), edits).map(lambda pair: _edit(*pair))
    bodies = st.one_of(mutated, st.binary(max_size=args.max_len))
    deadline = time.monotonic() + args.seconds

    @settings(
        max_examples=5000,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(bodies)
    def batch(body: bytes) -> None:
        if time.monotonic() < deadline:
            recorder.run(body)

    while time.monotonic() < deadline:
        batch()


def _edit(seed: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    body = seed
    for position, operation, data in edits:
        at = position % (len(body) + 1)
        if operation == 0:
            body = body[:at] + data + body[at:]
        elif operation == 1:
            body = body[:at] + body[at + len(data) + 1 :]
        elif operation == 2:
            body = body[:at] + data + body[at + len(data) :]
        else:
            body = body[:at]
    return body


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=60, help="how long to fuzz")
    parser.add_argument("--engine", choices=["auto", "atheris", "hypothesis"], default="auto")
    parser.add_argument("--max-len", type=int, default=8192, help="largest input to try")
    parser.add_argument("--seed", type=int, default=0, help="libFuzzer's random seed (0: time)")
    parser.add_argument("--artifacts", type=Path, default=None, help="where crashes are written")
    parser.add_argument("--minimise-seconds", type=float, default=30.0)
    parser.add_argument("--corpus", type=Path, action="append", default=[], help="extra seed dir")
    parser.add_argument("--shared", type=Path, default=None, help="the shared test data folder")
    parser.add_argument("--target", choices=sorted(_TARGETS), default="text")
    args = parser.parse_args(argv)
    _target[0] = _TARGETS[args.target]
    artifacts = args.artifacts or Path(tempfile.mkdtemp(prefix="agui-fuzz-artifacts-"))
    artifacts.mkdir(parents=True, exist_ok=True)
    recorder = Recorder(artifacts)
    seeds = (
        seed_inputs(args.corpus, args.shared)
        if args.target == "text"
        else protobuf_seeds(args.shared)
    )
    for seed in seeds:  # the seeds must pass before anything else is worth trying
        recorder.run(seed)
    print(
        f"[fuzz] target {args.target}: {len(seeds)} seeds; fuzzing for {args.seconds} s",
        file=sys.stderr,
        flush=True,
    )
    atheris = None
    if args.engine != "hypothesis":
        try:
            atheris = importlib.import_module("atheris")
        except ImportError:
            if args.engine == "atheris":
                raise
    if atheris is not None:
        print("[fuzz] engine: atheris (libFuzzer)", file=sys.stderr, flush=True)
        fuzz_atheris(atheris, recorder, seeds, args)  # ends the process when time is up
        return 2  # not reached
    print("[fuzz] engine: hypothesis", file=sys.stderr, flush=True)
    fuzz_hypothesis(recorder, seeds, args)
    print(recorder.report(args.minimise_seconds), file=sys.stderr, flush=True)
    return 1 if recorder.crashes else 0


if __name__ == "__main__":
    sys.exit(main())
