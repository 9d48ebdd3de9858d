"""Peak memory of ``agui-msgspec check`` on a 100 MB body, each mode in a fresh subprocess.

    python benchmarks/check_memory.py [--mb 100]

The body is one run of many assistant messages (40 text deltas each), a tool call and a
state delta after each, written to a temporary file. Each mode (``--summary``, the full
timeline, ``--json``) runs as ``python -m agui_msgspec._tools.cli check`` with its output sent
to /dev/null; the peak resident set size is the child's own ``ru_maxrss`` (``os.wait4``).
Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def frame(document: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(document, separators=(",", ":")).encode() + b"\n\n"


def write_body(path: Path, size: int) -> int:
    """Write a run of about ``size`` bytes; return its event count."""
    events = 2
    with path.open("wb") as out:
        out.write(frame({"type": "RUN_STARTED", "threadId": "t", "runId": "r"}))
        written, n = 0, 0
        while written < size:
            n += 1
            block = [
                frame({"type": "TEXT_MESSAGE_START", "messageId": f"m{n}", "role": "assistant"})
            ]
            block += [
                frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m{n}", "delta": "word "})
            ] * 40
            block += [
                frame({"type": "TEXT_MESSAGE_END", "messageId": f"m{n}"}),
                frame({"type": "TOOL_CALL_START", "toolCallId": f"c{n}", "toolCallName": "f"}),
                frame({"type": "TOOL_CALL_ARGS", "toolCallId": f"c{n}", "delta": '{"k":1}'}),
                frame({"type": "TOOL_CALL_END", "toolCallId": f"c{n}"}),
                frame(
                    {
                        "type": "TOOL_CALL_RESULT",
                        "messageId": f"t{n}",
                        "toolCallId": f"c{n}",
                        "content": "ok",
                    }
                ),
                frame(
                    {
                        "type": "STATE_DELTA",
                        "delta": [{"op": "add", "path": f"/k{n % 100}", "value": n}],
                    }
                ),
            ]
            data = b"".join(block)
            out.write(data)
            written += len(data)
            events += len(block)
        out.write(frame({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}))
    return events


def peak_of(args: list[str]) -> tuple[int, float, int]:
    """The child's exit code, wall seconds and peak RSS in bytes."""
    start = time.perf_counter()
    with open(os.devnull, "wb") as devnull:
        child = subprocess.Popen(
            [sys.executable, "-m", "agui_msgspec._tools.cli", *args], stdout=devnull
        )
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, time.perf_counter() - start, usage.ru_maxrss * 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--mb", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        body = Path(tmp, "body.sse")
        events = write_body(body, args.mb * 1_000_000)
        size = body.stat().st_size
        print(f"body: {size / 1e6:.1f} MB, {events:,} events")
        # Linux may start a child's ru_maxrss at its parent's RSS: this one stays small.
        parent = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(f"  (this process's own peak RSS: {parent / 1e6:.1f} MB)")
        for mode in (["--summary"], [], ["--json"]):
            code, wall, peak = peak_of(["check", *mode, str(body)])
            name = " ".join(mode) or "(timeline)"
            print(f"  check {name:10} exit {code}  peak RSS {peak / 1e6:6.1f} MB  {wall:5.1f} s")


if __name__ == "__main__":
    main()
