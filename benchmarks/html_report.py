"""The HTML report of a 100k-event stream: how long ``render_html`` takes, how large the
page is, and how long headless Chromium takes to open it until the page says it is drawn.

    python benchmarks/html_report.py [--events 100000]

Needs the playwright package and a chromium on PATH (no browser is downloaded). The
stream is one run of text messages (a start, deltas and an end each) with a state delta
every 50 events and one violation after the first tenth, so the page carries findings
and a state history. Goal: under 2 s in Chromium. Run by hand, not in CI.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from agui_msgspec._tools.render_html import render_html
from agui_msgspec._tools.verify import verify

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip


def stream(events: int) -> list[dict[str, Any]]:
    payloads: list[dict[str, Any]] = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"count": 0}},
    ]
    message, violated = 0, False
    while len(payloads) < events - 1:
        if not violated and len(payloads) >= events // 10:
            violated = True
            payloads.append({"type": "TEXT_MESSAGE_END", "messageId": "never-started"})
        payloads.append({"type": "TEXT_MESSAGE_START", "messageId": f"m{message}"})
        for word in range(47):
            payloads.append(
                {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m{message}", "delta": f"w{word} "}
            )
        payloads.append({"type": "TEXT_MESSAGE_END", "messageId": f"m{message}"})
        payloads.append(
            {
                "type": "STATE_DELTA",
                "delta": [{"op": "replace", "path": "/count", "value": message}],
            }
        )
        message += 1
    payloads.append({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    return payloads


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright  # noqa: PLC0415  (only when run)

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        raise SystemExit("needs a chromium on PATH")
    report = verify(stream(args.events))
    started = time.perf_counter()
    page_text = render_html(report)
    rendered = time.perf_counter() - started
    print(f"{len(report.events)} events, {len(report.findings)} finding(s)")
    print(f"render_html: {rendered:.3f} s, {len(page_text) / 1e6:.1f} MB")
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as playwright:
        path = Path(tmp, "report.html")
        path.write_text(page_text, encoding="utf-8")
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        times = []
        for _ in range(args.repeat):
            page = browser.new_page()
            started = time.perf_counter()
            page.goto(path.as_uri())
            page.wait_for_selector("body[data-rendered=true]", timeout=60_000)
            times.append(time.perf_counter() - started)
            page.close()
        browser.close()
    print(f"chromium, open until drawn: best {min(times):.3f} s of {args.repeat} (goal < 2 s)")


if __name__ == "__main__":
    main()
