"""The HTML report (issue 23, item 6): one self-contained page showing the conversation,
every event (those after a violation too) with its findings, timing, the state history
with per-delta changes; a finding links to its event. Opened in headless Chromium."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agui_msgspec._tools.cli import main
from agui_msgspec._tools.render_html import render_html, state_changes
from agui_msgspec._tools.verify import verify

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def page_data(page: str) -> list[dict[str, Any]]:
    start = page.index('<script type="application/json" id="report-data">')
    text = page[page.index(">", start) + 1 : page.index("</script>", start)]
    data: list[dict[str, Any]] = json.loads(text)
    return data


def two_violations() -> list[dict[str, Any]]:
    return [
        START,
        {"type": "STATE_SNAPSHOT", "snapshot": {"city": "Paris", "tags": ["a"]}},
        *[{"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": f"w{i} "} for i in range(60)],
        {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/city", "value": "Oslo"}]},
        {"type": "TEXT_MESSAGE_END", "messageId": "nope"},
        *[{"type": "TEXT_MESSAGE_CHUNK", "messageId": "n", "delta": f"v{i} "} for i in range(60)],
        {"type": "TOOL_CALL_END", "toolCallId": "nope"},
        FINISH,
    ]


def test_the_page_holds_every_event_and_links_each_finding_to_its_event() -> None:
    report = verify(two_violations())
    [data] = page_data(render_html(report))
    assert len(data["events"]) == len(report.events)
    assert data["events"][-1]["event"] == FINISH  # read to the end, past the violations
    linked = [(item["finding"]["rule"], data["events"][item["event"]]) for item in data["findings"]]
    assert [(rule, event["type"], event["status"]) for rule, event in linked] == [
        ("text-message-not-open", "TEXT_MESSAGE_END", "set-aside"),
        ("tool-call-not-open", "TOOL_CALL_END", "set-aside"),
    ]
    assert data["findings"][1]["finding"]["afterViolation"] is True
    assert [step["changes"] for step in data["states"]] == [
        [{"op": "added", "path": "", "new": {"city": "Paris", "tags": ["a"]}}],
        [{"op": "changed", "path": "/city", "old": "Paris", "new": "Oslo"}],
    ]


def test_the_state_history_says_where_max_state_history_stopped_it() -> None:
    snapshot = {"type": "STATE_SNAPSHOT", "snapshot": {"big": "x" * 64, "c": 0}}
    delta = {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/c", "value": 1}]}
    [cut] = page_data(render_html(verify([START, snapshot, delta, FINISH], max_state_history=90)))
    assert len(cut["states"]) == 1
    assert "max_state_history" in cut["statesStop"]
    [whole] = page_data(render_html(verify([START, snapshot, delta, FINISH])))
    assert len(whole["states"]) == 2
    assert whole["statesStop"] is None


def test_state_changes_name_each_pointer() -> None:
    before = {"a": 1, "b": [1, 2], "c/d": {"x": True}}
    after = {"a": 2, "b": [1], "c/d": {"x": True, "y": None}}
    assert state_changes(before, after) == [
        {"op": "changed", "path": "/a", "old": 1, "new": 2},
        {"op": "removed", "path": "/b/1", "old": 2},
        {"op": "added", "path": "/c~1d/y", "new": None},
    ]
    assert state_changes({"a": 1}, {"a": 1}) == []
    assert state_changes({"a": 1}, {"a": 1.0}) == [
        {"op": "changed", "path": "/a", "old": 1, "new": 1.0}
    ]


def test_the_page_fetches_nothing_and_a_hostile_event_stays_text() -> None:
    # "<!--<script>" inside a script element makes an HTML parser read on past its end tag
    hostile = "<!--<script></script><script>alert(1)</script><img src=http://evil.test/x>"
    report = verify(
        [START, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": hostile}, FINISH]
    )
    page = render_html(report, title="<b>stream</b>")
    assert "<title>&lt;b&gt;stream&lt;/b&gt;</title>" in page
    start = page.index('<script type="application/json" id="report-data">')
    data = page[page.index(">", start) + 1 : page.index("</script>", start)]
    assert "<" not in data  # each "<" of the JSON is written \u003c
    assert page_data(page)[0]["messages"][0]["content"] == hostile
    assert "default-src 'none'" in page
    assert "<link" not in page
    assert " src=" not in page.replace(data, "")


def test_check_writes_the_page_with_format_html(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    args = ["check", str(EXAMPLES / "rejected-stream.sse"), "--format", "html", "--output"]
    assert main([*args, str(out)]) == 1  # the verdict's exit code, as with any format
    [data] = page_data(out.read_text(encoding="utf-8"))
    assert data["verdict"] == "rejected"
    assert [e["type"] for e in data["events"]][-1] == "RUN_FINISHED"  # after the violation


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    # `nox -s docs` runs this file too, and there (AGUI_DOCS_REQUIRED) a missing tool fails
    missing = pytest.fail if os.environ.get("AGUI_DOCS_REQUIRED") else pytest.skip
    try:
        from playwright import sync_api  # noqa: PLC0415
    except ImportError:
        missing("needs the playwright package (nox -s docs installs it)")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        missing("needs a chromium on PATH (no browser download here)")
    with sync_api.sync_playwright() as playwright:
        # a fresh profile each time: launch() without a user data dir makes a temporary one
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def test_in_chromium_a_click_on_a_finding_scrolls_its_event_into_view(
    browser: Any, tmp_path: Path
) -> None:
    report = verify(two_violations())
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    errors: list[str] = []
    page.on("console", lambda message: message.type == "error" and errors.append(message.text))
    page.on("pageerror", lambda error: errors.append(str(error)))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]")
    assert page.locator(".verdict").inner_text() == "REJECTED"
    assert "w59" in page.locator(".message").first.inner_text()  # the conversation
    assert page.locator(".change.changed").inner_text() == '~ /city: "Paris" \u2192 "Oslo"'

    last = report.findings[1]
    position = next(
        i for i, e in enumerate(report.events) if e.received_index == last.received_index
    )
    row = page.locator(f"#r0e{position}")
    page.locator("#findings-0 a.event-link").nth(1).click()
    row.wait_for()
    assert "target" in (row.get_attribute("class") or "")
    box, window = row.bounding_box(), page.viewport_size
    assert box is not None
    assert box["y"] >= 0
    assert box["y"] + box["height"] <= window["height"]
    assert "tool-call-not-open" in page.locator("#detail-0").inner_text()
    assert errors == []
    assert requests == [path.as_uri()]  # nothing fetched but the page itself
    page.close()


def test_in_chromium_only_the_rows_in_view_exist(browser: Any, tmp_path: Path) -> None:
    chunks = [{"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": "x"}] * 5000
    path = tmp_path / "big.html"
    report = verify([START, *chunks, FINISH])
    path.write_text(render_html(report), encoding="utf-8")
    page = browser.new_page()
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]")
    assert 0 < page.locator(".row").count() < 200
    page.locator("#events-0").evaluate("node => { node.scrollTop = node.scrollHeight; }")
    last = f"#r0e{len(report.events) - 1}"
    page.wait_for_selector(last)  # the RUN_FINISHED row, drawn once in view
    assert page.locator(f"{last} .type").inner_text() == "RUN_FINISHED"
    page.close()


def test_in_chromium_a_hostile_event_is_shown_as_text_and_the_page_still_renders(
    browser: Any, tmp_path: Path
) -> None:
    hostile = "<!--<script></script><script>document.title='owned'</script>"
    events = [START, {"type": "TEXT_MESSAGE_CHUNK", "messageId": "m", "delta": hostile}, FINISH]
    path = tmp_path / "hostile.html"
    path.write_text(render_html(verify(events)), encoding="utf-8")
    page = browser.new_page()
    page.goto(path.as_uri())
    page.wait_for_selector("body[data-rendered=true]")  # the page's own script ran
    assert page.title() != "owned"
    assert hostile in page.locator(".message").first.inner_text()
    page.close()
