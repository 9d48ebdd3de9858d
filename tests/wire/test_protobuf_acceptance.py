"""Acceptance: the protobuf body of every example and conformance stream is consumed as its
SSE body is (AG-UI basic/transports/http-protobuf: "An event decoded from a frame enters
the same processing pipeline as an event parsed from SSE").

Each stream falls in one of three groups, decided from the stream itself:

- every event survives the binary wire (decoding its frame gives its JSON back): the two
  bodies give the same verdict, warnings, messages, state and runs. A frame for an event
  type the wire has no arm for (written here as an unknown arm) is dropped by the reader
  with its own warning, where SSE's enforcement drops it with one: the warnings match
  one for one, the wording differs.
- some event is narrowed by the wire as the spec admits (a property the wire schema does
  not model is skipped silently; a required string left out reads as empty): the protobuf
  body is consumed as the SSE body of what the wire carried.
- some event has no protobuf form at all (a wrong JSON type in a known field, an unknown
  patch operation, a non-object outcome): ``encode_proto`` says so with ``UsageError``,
  and the SSE consumer refuses or strips the same material.

Streams of the era shims (retired THINKING_* events translated for pre-1.0 JSON peers)
are JSON-only: the protobuf wire never had those events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from node.parity import without_empty_lists
from test_protobuf import summary

from agui_msgspec import JSONLinesReader, SSEReader, UsageError, consume_body, encode_proto
from agui_msgspec._wire.protobuf import decode_frame
from agui_msgspec._wire.text import iter_payloads, sniff_format

ROOT = Path(__file__).resolve().parents[2]
STREAMS = ROOT.parent / "shared" / "agui" / "conformance" / "1.1" / "streams"
UNKNOWN_ARM = b"\xc2\x3e\x00"  # Event field 1000, an empty message: an event from later
DROPPED_ON_SSE = "dropped event of unrecognised type"
DROPPED_ON_PROTO = "dropped a protobuf frame"


def streams() -> list[tuple[str, list[bytes], Any, bytes]]:
    found = []
    for path in sorted((ROOT / "examples").glob("*.*")):
        if path.suffix in (".sse", ".jsonl"):
            body = path.read_bytes()
            reader = SSEReader() if sniff_format(body) == "sse" else JSONLinesReader()
            found.append((path.name, list(iter_payloads([body], reader)), None, body))
    for path in sorted(STREAMS.glob("*.json")) if STREAMS.is_dir() else []:
        fixture = json.loads(path.read_text(encoding="utf-8"))
        payloads = [msgspec.json.encode(event) for event in fixture["stream"]]
        body = b"".join(b"data: " + payload + b"\n\n" for payload in payloads)
        found.append((path.name, payloads, fixture.get("input"), body))
    return found


STREAM_CASES = streams()


def frame(message: bytes) -> bytes:
    return len(message).to_bytes(4, "big") + message


def test_there_are_examples_and_conformance_streams() -> None:
    assert sum(name.endswith(".sse") for name, *_ in STREAM_CASES) >= 3
    if not STREAMS.is_dir():
        pytest.skip(f"no conformance streams at {STREAMS}")
    assert sum(name.endswith(".json") for name, *_ in STREAM_CASES) >= 20


@pytest.mark.parametrize(
    ("name", "payloads", "run_input", "sse"), STREAM_CASES, ids=[c[0] for c in STREAM_CASES]
)
def test_a_protobuf_body_is_consumed_as_its_sse_body(
    name: str, payloads: list[bytes], run_input: Any, sse: bytes
) -> None:
    from_sse = consume_body(sse, input=run_input)
    if any("translated retired" in warning for warning in from_sse.warnings):
        pytest.skip("era shim for pre-1.0 JSON peers: no protobuf wire had these events")
    frames, carried, narrowed, unencodable = [], [], False, ""
    for payload in payloads:
        event = json.loads(payload)
        try:
            message = encode_proto(event)
        except UsageError as problem:
            if "has no arm" in str(problem):
                frames.append(frame(UNKNOWN_ARM))
                continue
            unencodable = str(problem)
            break
        back = decode_frame(message)
        narrowed = narrowed or without_empty_lists(back, event) != event
        frames.append(frame(message))
        carried.append(back)
    if unencodable:  # no protobuf form: the JSON consumer refuses or strips that material too
        assert from_sse.violation is not None or from_sse.warnings, unencodable
        return
    from_proto = consume_body(b"".join(frames), input=run_input)
    if narrowed:
        what_the_wire_carried = b"".join(
            b"data: " + msgspec.json.encode(e) + b"\n\n" for e in carried
        )
        assert summary(from_proto) == summary(consume_body(what_the_wire_carried, input=run_input))
        return
    expected, got = summary(from_sse), summary(from_proto)
    sse_warnings = [DROPPED_ON_PROTO if DROPPED_ON_SSE in w else w for w in expected[2]]
    proto_warnings = [DROPPED_ON_PROTO if DROPPED_ON_PROTO in w else w for w in got[2]]
    assert proto_warnings == sse_warnings
    assert got[:2] + got[3:] == expected[:2] + expected[3:]
