"""``HttpAgent`` under load: many concurrent runs in one process against a loopback producer.

    python benchmarks/load.py [--runs 1000] [--events 200] [--hold 2.0]

A producer (uvicorn, a raw ASGI app, in a subprocess so its CPU is not the client's)
answers each POST with a run: ``RUN_STARTED``, then a pause of ``--hold`` seconds so every
run is open at once, then ``--events`` events (text deltas in chunks of 20, a tool call, a
state delta) and ``RUN_FINISHED``. The client starts ``--runs`` runs at once through one
``HttpAgent`` sharing one ``httpx.AsyncClient`` (a pool as large as the run count) and
reports:

- memory per open stream: the client's resident memory once every run has delivered
  ``RUN_STARTED`` (all streams open, nothing else arrived), less before the runs, ÷ runs;
- events per second per core: the events delivered ÷ the client's CPU seconds (user +
  system) over the streaming phase, which is what one core sustains; and the wall-clock rate.

Run by hand (it needs the tests extra for uvicorn), not in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import time
from typing import Any

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * PAGE


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def frame(document: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(document, separators=(",", ":")).encode() + b"\n\n"


def run_body(events: int) -> list[bytes]:
    """The events after RUN_STARTED, in sends of about 20 events."""
    documents: list[dict[str, Any]] = [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}
    ]
    documents += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "word "}] * max(
        0, events - 7
    )
    documents += [
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "f"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/n", "value": 1}]},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]
    frames = [frame(d) for d in documents]
    return [b"".join(frames[i : i + 20]) for i in range(0, len(frames), 20)]


def serve(port: int, events: int, hold: float) -> None:
    import uvicorn  # noqa: PLC0415

    sends = run_body(events)
    started = frame({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        headers = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": started, "more_body": True})
        await asyncio.sleep(hold)
        for chunk in sends:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    config = uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", lifespan="off", backlog=4096
    )
    uvicorn.Server(config).run()


async def client(url: str, runs: int) -> dict[str, float]:
    import httpx  # noqa: PLC0415

    from agui_msgspec import HttpAgent  # noqa: PLC0415

    limits = httpx.Limits(max_connections=runs, max_keepalive_connections=runs)
    async with httpx.AsyncClient(limits=limits, timeout=120) as http:
        agent = HttpAgent(url, client=http, timeout=120)
        input = {"threadId": "t", "runId": "r", "messages": []}
        before = rss()
        opened = 0
        delivered = 0
        marks: dict[str, float] = {}

        async def one() -> None:
            nonlocal opened, delivered
            async with agent.run(input) as stream:
                first = True
                async for _ in stream:
                    delivered += 1
                    if first:  # RUN_STARTED: this stream is open
                        first = False
                        opened += 1
                        if opened == runs:
                            marks["open_rss"] = rss()
                            marks["open_cpu"] = cpu_seconds()
                            marks["open_wall"] = time.perf_counter()
                result = await stream.result()
                assert result.run.status == "completed"

        await asyncio.gather(*(one() for _ in range(runs)))
        end_cpu, end_wall = cpu_seconds(), time.perf_counter()
    streamed = delivered - runs  # the events after RUN_STARTED, all of them after all_open
    return {
        "runs": runs,
        "events": delivered,
        "rss_before_mb": before / 1e6,
        "rss_open_mb": marks["open_rss"] / 1e6,
        "per_stream_kb": (marks["open_rss"] - before) / runs / 1e3,
        "cpu_s": end_cpu - marks["open_cpu"],
        "wall_s": end_wall - marks["open_wall"],
        "events_per_cpu_s": streamed / (end_cpu - marks["open_cpu"]),
        "events_per_wall_s": streamed / (end_wall - marks["open_wall"]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--hold", type=float, default=2.0)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.events, args.hold)
        return
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    producer = subprocess.Popen(
        [
            sys.executable,
            __file__,
            "--serve",
            str(port),
            "--events",
            str(args.events),
            "--hold",
            str(args.hold),
        ]
    )
    try:
        for _ in range(200):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        numbers = asyncio.run(client(f"http://127.0.0.1:{port}/agent", args.runs))
    finally:
        producer.terminate()
        producer.wait(timeout=10)
    print(f"{args.runs} concurrent runs of {args.events + 1} events each, one process, one core")
    for name, value in numbers.items():
        print(f"  {name:18} {value:,.1f}")


if __name__ == "__main__":
    main()
