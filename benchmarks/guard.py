"""What ``ProducerGuard`` costs per event: an ASGI app sending an event stream, called in
process with and without the guard, observing and enforcing.

    python benchmarks/guard.py [--events N] [--repeat R] [--per-send K]
    python benchmarks/guard.py --one-event BYTES [--piece P]

The app sends a realistic run (text deltas, a tool call, state deltas) as SSE frames,
``--per-send`` frames per ``http.response.body`` message (1: one event per send, what
most frameworks do). The ASGI ``send`` the server would provide is a no-op, so the
numbers are the guard's own cost: the time with the guard less the time without, per
event, the median of ``--repeat`` interleaved rounds. Run by hand, not in CI.

``--one-event BYTES`` times instead one ``STATE_SNAPSHOT`` of that size sent in pieces of
``--piece`` bytes: the enforcing guard holds it until its end, and must do so in time
linear in its size.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agui_msgspec import ProducerGuard

App = Callable[[Any, Any, Any], Awaitable[None]]


def frames(events: int) -> list[bytes]:
    """A run of ``events`` events: mostly text deltas, with tool calls and state deltas."""
    documents: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": "t", "runId": "r"}]
    n = 0
    while len(documents) < events - 1:
        n += 1
        documents.append({"type": "TEXT_MESSAGE_START", "messageId": f"m{n}", "role": "assistant"})
        documents += [
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m{n}", "delta": "a few words "}
        ] * 40
        documents.append({"type": "TEXT_MESSAGE_END", "messageId": f"m{n}"})
        documents.append({"type": "TOOL_CALL_START", "toolCallId": f"c{n}", "toolCallName": "f"})
        documents += [{"type": "TOOL_CALL_ARGS", "toolCallId": f"c{n}", "delta": '{"k": 1}'}] * 5
        documents.append({"type": "TOOL_CALL_END", "toolCallId": f"c{n}"})
        documents.append(
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": f"/k{n % 50}", "value": n}]}
        )
    documents = documents[: events - 1]
    # close whatever the cut left open, then finish
    body = [b"data: " + json.dumps(d, separators=(",", ":")).encode() + b"\n\n" for d in documents]
    last = documents[-1]
    if last["type"] in ("TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT"):
        body.append(
            b'data: {"type":"TEXT_MESSAGE_END","messageId":"%s"}\n\n' % last["messageId"].encode()
        )
    elif last["type"] in ("TOOL_CALL_START", "TOOL_CALL_ARGS"):
        body.append(
            b'data: {"type":"TOOL_CALL_END","toolCallId":"%s"}\n\n' % last["toolCallId"].encode()
        )
    body.append(b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n')
    return body


def app_sending(body: list[bytes], per_send: int) -> App:
    sends = [b"".join(body[i : i + per_send]) for i in range(0, len(body), per_send)]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream")],
            }
        )
        for chunk in sends:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return app


async def _nothing() -> dict[str, Any]:
    return {"type": "http.request", "body": b"", "more_body": False}


async def _drop(message: Any) -> None:
    pass


def seconds(app: App) -> float:
    scope = {"type": "http", "path": "/agent"}
    start = time.perf_counter()
    asyncio.run(app(scope, _nothing, _drop))
    return time.perf_counter() - start


def one_event(size: int, piece: int) -> None:
    snapshot = b'data: {"type":"STATE_SNAPSHOT","snapshot":"' + b"x" * size + b'"}\n\n'
    body = [
        b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n',
        *(snapshot[i : i + piece] for i in range(0, len(snapshot), piece)),
        b'data: {"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n\n',
    ]
    bare = app_sending(body, 1)
    print(f"one {size:,}-byte event in {piece}-byte sends")
    for name, app in {
        "no guard": bare,
        "guard, observing": ProducerGuard(bare),
        "guard, enforcing": ProducerGuard(bare, end_with_run_error=True),
    }.items():
        print(f"{name:20} {seconds(app):8.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--per-send", type=int, default=1)
    parser.add_argument("--one-event", type=int, default=0)
    parser.add_argument("--piece", type=int, default=256)
    args = parser.parse_args()
    if args.one_event:
        one_event(args.one_event, args.piece)
        return
    body = frames(args.events)
    bare = app_sending(body, args.per_send)
    variants = {
        "no guard": bare,
        "guard, observing": ProducerGuard(bare),
        "guard, enforcing": ProducerGuard(bare, end_with_run_error=True),
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    seconds(variants["guard, observing"])  # warm-up
    for _ in range(args.repeat):
        for name, app in variants.items():
            times[name].append(seconds(app))
    events = len(body)
    base = statistics.median(times["no guard"])
    print(f"{events} events, {args.per_send} per send, median of {args.repeat}")
    print(f"{'':20} {'total s':>8} {'µs/event':>9} {'guard µs/event':>15}")
    for name, runs in times.items():
        total = statistics.median(runs)
        cost = (total - base) / events * 1e6
        print(f"{name:20} {total:8.3f} {total / events * 1e6:9.2f} {cost:15.2f}")


if __name__ == "__main__":
    main()
