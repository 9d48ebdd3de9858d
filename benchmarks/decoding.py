"""The decoding layer against the official decode (issue 24, item 3): one table, one run.

    python benchmarks/decoding.py [--repeat 5] [--scale 1.0] [--json out.json]

Five workloads (text deltas of one message, short messages, tool calls + results, state
deltas, a realistic mix), each also with one unknown property on every event, by the
strict typed msgspec decode (the floor: ``event_decoder.decode`` per payload), ``decode``
(``Decoder().decode_many`` on batches of 1,024), ``consume`` (``keep_events=False``), ``Consumer.feed`` one
payload at a time and ``feed_many``, the official ``TypeAdapter(Event).validate_json``, and
for state the official decode plus the ``jsonpatch`` library applying each delta (what a
user of the official SDK writes). Then every goal of item 3 as PASS or MISS with its
ratio; a MISS never fails the run. µs per event, the median of ``--repeat`` interleaved
rounds (every measurement once per round, so load drifting on a shared machine skews no
ratio), garbage collector on, ``gc.collect()`` before each.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonpatch
import msgspec
import workloads
from ag_ui.core import Event as OfficialEvent
from pydantic import TypeAdapter

from agui_msgspec import Consumer, consume, v1_1
from agui_msgspec._pipeline.decode import Decoder

Document = dict[str, Any]
OFFICIAL: Callable[[bytes], Any] = TypeAdapter(OfficialEvent).validate_json
STRICT = v1_1.event_decoder.decode


def short_messages(messages: int = 33_000) -> Iterator[Document]:
    """One run of ``messages`` short assistant messages: start, one content, end."""
    yield from workloads.text_events(messages, 1)


def one_message(deltas: int = 100_000) -> Iterator[Document]:
    yield from workloads.text_events(1, deltas)


WORKLOADS: dict[str, Callable[[float], Iterator[Document]]] = {
    "text deltas of one message": lambda scale: one_message(int(100_000 * scale)),
    "short messages": lambda scale: short_messages(int(33_000 * scale)),
    "tool calls + results": lambda scale: workloads.tool_events(int(2_000 * scale)),
    "state deltas": lambda scale: workloads.state_events(int(10_000 * scale)),
    "realistic mix": lambda scale: workloads.mixed_events(int(250 * scale)),
}
STATE = "state deltas"
UNKNOWN = workloads.UNKNOWN_PROPERTY


def with_unknown(documents: Iterator[Document]) -> Iterator[Document]:
    for index, document in enumerate(documents):
        yield {**document, UNKNOWN: f"00-{index:032x}-01"}


# --- the measurements ------------------------------------------------------------------


def strict(payloads: list[bytes]) -> None:
    for payload in payloads:
        STRICT(payload)


BATCH = 1024
"""Payloads per ``decode_many`` call: what a reader makes of a network read, about (and the
consumer's own batch). Events are taken and let go batch by batch, as an application does;
one list of every event of a stream would cost the collector more than the decode."""


def tolerant(payloads: list[Any]) -> None:
    decode_many = Decoder().decode_many
    for start in range(0, len(payloads), BATCH):
        decode_many(payloads[start : start + BATCH])


def consumed(payloads: list[Any]) -> None:
    result = consume(payloads, keep_events=False)
    if result.outcome != "completed":
        raise SystemExit(f"the workload was rejected: {result.violation}")


def fed_one_by_one(payloads: list[bytes]) -> None:
    consumer: Consumer[Any] = Consumer()
    feed = consumer.feed
    for payload in payloads:
        feed(payload)
    consumer.close()


def fed_many(payloads: list[bytes]) -> None:
    consumer: Consumer[Any] = Consumer()
    consumer.feed_many(payloads)
    consumer.close()


def official(payloads: list[bytes]) -> None:
    for payload in payloads:
        OFFICIAL(payload)


def official_with_jsonpatch(payloads: list[bytes]) -> None:
    """The official decode, and each state delta applied with ``jsonpatch`` (in place)."""
    state: Any = {}
    for payload in payloads:
        event = OFFICIAL(payload)
        if event.type == "STATE_SNAPSHOT":
            state = json.loads(json.dumps(event.snapshot))  # the application's own copy
        elif event.type == "STATE_DELTA":
            operations = [op.model_dump(by_alias=True, exclude_unset=True) for op in event.delta]
            state = jsonpatch.apply_patch(state, operations, in_place=True)


def interleaved(timings: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    for run in timings.values():  # warm-up: every cache and plan built
        run()
    samples: dict[str, list[float]] = {label: [] for label in timings}
    for _ in range(repeat):
        for label, run in timings.items():
            gc.collect()
            start = time.perf_counter()
            run()
            samples[label].append(time.perf_counter() - start)
    return samples


def measure(name: str, scale: float, repeat: int) -> dict[str, Any]:
    documents = list(WORKLOADS[name](scale))
    payloads = [msgspec.json.encode(document) for document in documents]
    unknown = [msgspec.json.encode(document) for document in with_unknown(iter(documents))]
    dicts = [msgspec.json.decode(payload) for payload in payloads]
    structs = [STRICT(payload) for payload in payloads]
    timings: dict[str, Callable[[], object]] = {
        "strict": lambda: strict(payloads),
        "decode": lambda: tolerant(payloads),
        "consume": lambda: consumed(payloads),
        "feed": lambda: fed_one_by_one(payloads),
        "feed_many": lambda: fed_many(payloads),
        "official": lambda: official(payloads),
        "decode unknown": lambda: tolerant(unknown),
        "consume unknown": lambda: consumed(unknown),
        "consume dicts": lambda: consumed(dicts),
        "consume structs": lambda: consumed(structs),
    }
    if name == STATE:
        timings["official + jsonpatch"] = lambda: official_with_jsonpatch(payloads)
    samples = interleaved(timings, repeat)
    return {
        "workload": name,
        "events": len(payloads),
        "us": {
            label: [seconds / len(payloads) * 1e6 for seconds in times]
            for label, times in samples.items()
        },
    }


# --- the report ------------------------------------------------------------------------

COLUMNS = (
    "strict",
    "decode",
    "consume",
    "feed",
    "feed_many",
    "official",
    "official + jsonpatch",
    "decode unknown",
    "consume unknown",
    "consume dicts",
    "consume structs",
)


def median(row: dict[str, Any], label: str) -> float:
    return float(statistics.median(row["us"][label]))


def goals(row: dict[str, Any]) -> list[tuple[str, float, str, bool]]:
    """(goal, measured ratio, bound, met) for one workload."""
    m = {label: median(row, label) for label in row["us"]}
    found = [
        (
            "decode ≥ 5x official",
            m["official"] / m["decode"],
            "≥ 5x",
            m["official"] / m["decode"] >= 5,
        ),
        (
            "decode ≤ 1.5x strict",
            m["decode"] / m["strict"],
            "≤ 1.5x",
            m["decode"] / m["strict"] <= 1.5,
        ),
        (
            "unknown property: decode ≤ 2x conformant",
            m["decode unknown"] / m["decode"],
            "≤ 2x",
            m["decode unknown"] / m["decode"] <= 2,
        ),
        (
            "unknown property: consume ≤ 2x conformant",
            m["consume unknown"] / m["consume"],
            "≤ 2x",
            m["consume unknown"] / m["consume"] <= 2,
        ),
        (
            "consume ≥ 1x official",
            m["official"] / m["consume"],
            "≥ 1x",
            m["official"] / m["consume"] >= 1,
        ),
        (
            "feed per payload ≤ 2x feed_many",
            m["feed"] / m["feed_many"],
            "≤ 2x",
            m["feed"] / m["feed_many"] <= 2,
        ),
        (
            "dicts into consume ≤ 2x bytes",
            m["consume dicts"] / m["consume"],
            "≤ 2x",
            m["consume dicts"] / m["consume"] <= 2,
        ),
        (
            "Structs into consume ≤ 2x bytes",
            m["consume structs"] / m["consume"],
            "≤ 2x",
            m["consume structs"] / m["consume"] <= 2,
        ),
    ]
    if row["workload"] == "realistic mix":
        ratio = m["official"] / m["consume"]
        found.append(("consume ≥ 2x official on the mix", ratio, "≥ 2x", ratio >= 2))
    if "official + jsonpatch" in m:
        ratio = m["official + jsonpatch"] / m["consume"]
        found.append(("consume ≥ 5x official + jsonpatch", ratio, "≥ 5x", ratio >= 5))
    return found


def report(rows: list[dict[str, Any]], repeat: int) -> list[str]:
    lines = [
        f"µs per event, median of {repeat} interleaved rounds (lower is better)",
        "",
        "| workload | events | " + " | ".join(COLUMNS) + " |",
        "|---|--:|" + "--:|" * len(COLUMNS),
    ]
    for row in rows:
        cells = [f"{median(row, c):.2f}" if c in row["us"] else "" for c in COLUMNS]
        lines.append(f"| {row['workload']} | {row['events']:,} | " + " | ".join(cells) + " |")
    lines += ["", "| workload | goal | ratio | bound | verdict |", "|---|---|--:|--:|---|"]
    for row in rows:
        for goal, ratio, bound, met in goals(row):
            verdict = "PASS" if met else "MISS"
            lines.append(f"| {row['workload']} | {goal} | {ratio:.2f}x | {bound} | {verdict} |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--scale", type=float, default=1.0, help="workload sizes, 1.0 = ~100k")
    parser.add_argument("--only", default="", help="comma-separated workload names")
    parser.add_argument("--json", type=Path, help="also write the samples here as JSON")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n] or list(WORKLOADS)
    rows = []
    for name in names:
        print(f"  … {name}", file=sys.stderr, flush=True)
        rows.append(measure(name, args.scale, args.repeat))
    print("\n".join(report(rows, args.repeat)))
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
