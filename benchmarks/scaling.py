"""Per-event cost at 1k and at 100k events, for each stream shape whose cost once grew
with the stream (issue 14, item 6): the ratio should stay near 1 (goal: at most 1.5).

    python benchmarks/scaling.py [--small 1000] [--large 100000] [--repeat 3]

Each scenario is a whole stream through ``consume(..., keep_events=False)`` from
pre-encoded payloads; the cost per event is the best of ``--repeat`` runs (the small
stream is consumed enough times to take as long as the large one). Wall-clock times: on a
shared machine, read the ratios, not the microseconds.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from agui_msgspec import Consumer, consume

Payloads = list[bytes]
_encode = msgspec.json.Encoder().encode


def _run(*events: dict[str, Any]) -> Iterator[bytes]:
    yield _encode({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    for event in events:
        yield _encode(event)


def _end() -> bytes:
    return _encode({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})


def replace_messages(events: int) -> Payloads:
    """Activity messages added, each followed by a replacement of an older one."""
    out = list(_run())
    for n in range(events // 2):
        out.append(
            _encode(
                {
                    "type": "ACTIVITY_SNAPSHOT",
                    "messageId": f"a{n}",
                    "activityType": "p",
                    "content": {},
                }
            )
        )
        out.append(
            _encode(
                {
                    "type": "ACTIVITY_SNAPSHOT",
                    "messageId": f"a{n // 2}",
                    "activityType": "p",
                    "content": {"n": n},
                    "replace": True,
                }
            )
        )
    return [*out, _end()]


def messages_snapshots(events: int) -> Payloads:
    """Activity messages accumulate; every 100th event is a short MESSAGES_SNAPSHOT."""
    out = list(_run())
    for n in range(events):
        if n % 100 == 99:
            user = {"id": f"u{n}", "role": "user", "content": "hi"}
            out.append(_encode({"type": "MESSAGES_SNAPSHOT", "messages": [user]}))
        else:
            out.append(
                _encode(
                    {
                        "type": "ACTIVITY_SNAPSHOT",
                        "messageId": f"a{n}",
                        "activityType": "p",
                        "content": {},
                    }
                )
            )
    return [*out, _end()]


def subagent_chunks(events: int) -> Payloads:
    """Subagents each open a chunk stream and leave it open; every one gets a second chunk."""
    out = list(_run())
    for n in range(events // 3):
        lane = f"s{n}"
        out.append(_encode({"type": "SUBAGENT_STARTED", "subagentRunId": lane, "name": "h"}))
        for delta in ("a", "b"):
            chunk = {"type": "TEXT_MESSAGE_CHUNK", "subagentRunId": lane, "messageId": f"m{n}"}
            out.append(_encode({**chunk, "delta": delta}))
    return [*out, _encode({"type": "RUN_ERROR", "message": "end"})]


def reopen_message(events: int) -> Payloads:
    """One message reopened again and again, a delta each time."""
    out = list(_run())
    for _ in range(events // 3):
        out.append(_encode({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}))
        out.append(_encode({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "word "}))
        out.append(_encode({"type": "TEXT_MESSAGE_END", "messageId": "m"}))
    return [*out, _end()]


def growing_state(events: int) -> Payloads:
    """Each STATE_DELTA adds a key to the top-level object and changes an older one."""
    out = list(_run())
    for n in range(events):
        operations = [{"op": "add", "path": f"/k{n}", "value": {"n": n}}]
        if n:
            operations.append({"op": "replace", "path": f"/k{n // 2}/n", "value": -n})
        out.append(_encode({"type": "STATE_DELTA", "delta": operations}))
    return [*out, _end()]


def growing_metadata(events: int) -> Payloads:
    """One message whose every delta adds a metadata key."""
    out = list(_run())
    out.append(_encode({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"}))
    for n in range(events):
        out.append(
            _encode(
                {
                    "type": "TEXT_MESSAGE_CONTENT",
                    "messageId": "m",
                    "delta": "w",
                    "metadata": {f"k{n}": n},
                }
            )
        )
    out.append(_encode({"type": "TEXT_MESSAGE_END", "messageId": "m"}))
    return [*out, _end()]


def _consume(payloads: Payloads) -> None:
    result = consume(payloads, keep_events=False)
    assert result.violation is None, result.violation


def _read_after_each_delta(payloads: Payloads) -> None:
    """A live UI: ``Consumer.messages`` read after every event."""
    consumer = Consumer()
    for payload in payloads:
        consumer.feed(payload)
        consumer.messages  # noqa: B018
    consumer.close()


def many_messages(events: int) -> Payloads:
    """Short messages one after another (for the live-UI reader)."""
    out = list(_run())
    for n in range(events // 3):
        out.append(
            _encode({"type": "TEXT_MESSAGE_START", "messageId": f"m{n}", "role": "assistant"})
        )
        out.append(_encode({"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m{n}", "delta": "hi"}))
        out.append(_encode({"type": "TEXT_MESSAGE_END", "messageId": f"m{n}"}))
    return [*out, _end()]


SCENARIOS: dict[str, tuple[Callable[[int], Payloads], Callable[[Payloads], None]]] = {
    "replace a message": (replace_messages, _consume),
    "MESSAGES_SNAPSHOT among activity messages": (messages_snapshots, _consume),
    "chunk streams of many subagents": (subagent_chunks, _consume),
    "reopen a message": (reopen_message, _consume),
    "STATE_DELTA on a growing state": (growing_state, _consume),
    "metadata merged into a growing map": (growing_metadata, _consume),
    "Consumer.messages read after each event": (many_messages, _read_after_each_delta),
}


def per_event(
    build: Callable[[int], Payloads],
    run: Callable[[Payloads], None],
    events: int,
    large: int,
    repeat: int,
) -> float:
    payloads = build(events)
    rounds = max(1, large // events)
    best = float("inf")
    for _ in range(repeat):
        gc.collect()  # also with the collector off: each run starts from the same heap
        started = time.perf_counter()
        for _ in range(rounds):
            run(payloads)
        best = min(best, (time.perf_counter() - started) / (rounds * len(payloads)))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=1_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", default="", help="scenarios whose name contains this")
    parser.add_argument("--no-gc", action="store_true", help="the garbage collector off")
    args = parser.parse_args()
    if args.no_gc:
        gc.disable()
    print(f"| scenario | µs/event at {args.small:,} | µs/event at {args.large:,} | ratio | ≤ 1.5 |")
    print("|---|--:|--:|--:|---|")
    for name, (build, run) in SCENARIOS.items():
        if args.only not in name:
            continue
        small = per_event(build, run, args.small, args.large, args.repeat)
        large = per_event(build, run, args.large, args.large, args.repeat)
        ratio = large / small
        verdict = "PASS" if ratio <= 1.5 else "MISS"
        print(
            f"| {name} | {small * 1e6:.2f} | {large * 1e6:.2f} | {ratio:.2f} | {verdict} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
