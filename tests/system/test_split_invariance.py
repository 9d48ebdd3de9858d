"""Split-invariance: however the bytes of a body are chunked, the events and the verdict
are those of the whole body at once.

Bodies: every recorded example, and every upstream conformance stream framed as SSE
(with CRLF line ends and comments, so the reader's harder cases are split too).
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_msgspec import Consumer, ProtocolViolation, TransportError, consume_body
from agui_msgspec._wire.text import JSONLinesReader, SSEReader, sniff_format

ROOT = Path(__file__).resolve().parents[2]
STREAMS = ROOT.parent / "shared" / "agui" / "conformance" / "1.1" / "streams"


def bodies() -> list[tuple[str, bytes]]:
    found = [(path.name, path.read_bytes()) for path in sorted((ROOT / "examples").glob("*.*"))]
    found = [(name, body) for name, body in found if not name.endswith(".md")]
    for path in sorted(STREAMS.glob("*.json")) if STREAMS.is_dir() else []:
        events = msgspec.json.decode(path.read_bytes())["stream"]
        frames = [b": comment\r\ndata: " + msgspec.json.encode(e) + b"\r\n\r\n" for e in events]
        found.append((path.name, b"".join(frames)))
    return found


BODIES = bodies()


def verdict_of_chunks(body: bytes, cuts: list[int]) -> tuple[object, ...]:
    reader = SSEReader() if sniff_format(body) == "sse" else JSONLinesReader()
    consumer = Consumer()
    delivered: list[msgspec.Struct] = []
    bounds = [0, *sorted(set(cuts)), len(body)]
    try:
        for start, end in pairwise(bounds):
            for payload in reader.feed(body[start:end]):
                delivered += consumer.feed(payload)
        for payload in reader.close():
            delivered += consumer.feed(payload)
        consumer.close(inside_event=reader.discarded_partial)
    except (ProtocolViolation, TransportError) as violation:
        delivered += violation.delivered  # type: ignore[arg-type]
    return summary(consumer.result(delivered))


def summary(result: object) -> tuple[object, ...]:
    violation = getattr(result, "violation", None)
    return (
        getattr(result, "outcome", None),
        None if violation is None else (violation.rule, violation.index),
        msgspec.json.encode(getattr(result, "events", [])),
        tuple(getattr(result, "warnings", [])),
        msgspec.json.encode(getattr(result, "messages", [])),
    )


def test_there_are_bodies_to_split() -> None:
    assert any(name.endswith(".sse") for name, _ in BODIES)


@pytest.mark.parametrize(("name", "body"), BODIES, ids=[name for name, _ in BODIES])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_any_chunking_gives_the_whole_body_verdict(
    name: str, body: bytes, data: st.DataObject
) -> None:
    cuts = data.draw(st.lists(st.integers(0, len(body)), max_size=12), label="cuts")
    whole = summary(consume_body(body))
    assert verdict_of_chunks(body, cuts) == whole
    bounds = [0, *sorted(cuts), len(body)]
    assert summary(consume_body(body[start:end] for start, end in pairwise(bounds))) == whole


@pytest.mark.parametrize(("name", "body"), BODIES, ids=[name for name, _ in BODIES])
def test_byte_by_byte_gives_the_whole_body_verdict(name: str, body: bytes) -> None:
    assert verdict_of_chunks(body, list(range(len(body)))) == summary(consume_body(body))
