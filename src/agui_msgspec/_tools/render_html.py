"""A :class:`~agui_msgspec._tools.verify.Report` as one self-contained HTML page.

Everything is inline (CSS, script, the report as JSON) and the page's Content-Security-Policy
forbids fetching anything, so the file opens from a disk or a CI artifact as it is. The
event list is virtualised (only the rows in view exist), so a 100k-event report opens at
once; event text is set as text, never as markup, so a hostile stream cannot script it.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

from agui_msgspec._errors import inert
from agui_msgspec._tools.render import json_text, result_document
from agui_msgspec._tools.verify import Finding, Report, checked_report

_Change = dict[str, Any]


def render_html(report: Report, title: str = "AG-UI stream") -> str:
    """The report as a page: its verdict, findings (each linking to its event), the
    conversation, every event with its timing when known, and the state history with
    each step's changes."""
    checked_report("render_html()", report, title=title)
    return render_html_steps([(title, report)], title=title)


def render_html_steps(steps: Sequence[tuple[str, Report]], title: str = "AG-UI probe") -> str:
    """Several reports on one page (a probe's steps), each under its own heading."""
    data = json_text([_page_data(name, report) for name, report in steps])
    # No "<" inside the script element: "</script" would end it, "<!--<script>" would make
    # the parser read on past its end tag. In JSON a "<" is only ever inside a string.
    embedded = data.replace("<", "\\u003c")
    # html.escape leaves control characters, which a terminal the page is printed on acts on
    title = html.escape(inert(title))
    return _PAGE.format(title=title, data=embedded, style=_STYLE, script=_SCRIPT)


def _page_data(title: str, report: Report) -> dict[str, Any]:
    by_delivered: dict[int, int] = {}
    by_received: dict[int, int] = {}
    set_aside: dict[int, int] = {}
    for position, event in enumerate(report.events):
        if event.delivered_index is not None:
            by_delivered[event.delivered_index] = position
        elif event.status == "set-aside":
            set_aside.setdefault(event.received_index, position)
        by_received.setdefault(event.received_index, position)

    def position_of(finding: Finding) -> int | None:
        if finding.delivered_index is not None:
            return by_delivered.get(finding.delivered_index)
        if finding.received_index is None:
            return None  # the end of the stream
        return set_aside.get(finding.received_index, by_received.get(finding.received_index))

    result = result_document(report.result)
    states, before = [], None
    for step in report.states:
        states.append(
            {
                "event": by_delivered.get(step.delivered_index),
                "deliveredIndex": step.delivered_index,
                "changes": state_changes(before, step.state),
            }
        )
        before = step.state
    stop = next((f for f in report.findings if f.rule == "state-history-too-large"), None)
    return {
        "title": title,
        "verdict": report.verdict,
        "findings": [
            {
                "finding": finding,
                "event": position_of(finding),
                "related": None
                if finding.related_index is None
                else by_delivered.get(finding.related_index),
            }
            for finding in report.findings
        ],
        "events": report.events,
        "messages": result["messages"],
        "runs": result["runs"],
        "states": states,
        # where the history stops, when max_state_history left the later states out
        "statesStop": None if stop is None else stop.message,
        "state": result["state"],
    }


def state_changes(before: Any, after: Any, path: str = "") -> list[_Change]:
    """What changed from ``before`` to ``after``, by JSON Pointer: added, removed, changed."""
    if isinstance(before, dict) and isinstance(after, dict):
        changes: list[_Change] = []
        for key in before.keys() | after.keys():
            pointer = f"{path}/{_escaped(str(key))}"
            if key not in after:
                changes.append({"op": "removed", "path": pointer, "old": before[key]})
            elif key not in before:
                changes.append({"op": "added", "path": pointer, "new": after[key]})
            else:
                changes += state_changes(before[key], after[key], pointer)
        return sorted(changes, key=lambda change: change["path"])
    if isinstance(before, list) and isinstance(after, list):
        changes = []
        for index in range(max(len(before), len(after))):
            pointer = f"{path}/{index}"
            if index >= len(after):
                changes.append({"op": "removed", "path": pointer, "old": before[index]})
            elif index >= len(before):
                changes.append({"op": "added", "path": pointer, "new": after[index]})
            else:
                changes += state_changes(before[index], after[index], pointer)
        return changes
    if before is None and path == "":
        return [{"op": "added", "path": "", "new": after}]
    if type(before) is not type(after) or before != after:
        return [{"op": "changed", "path": path, "old": before, "new": after}]
    return []


def _escaped(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
 content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>{style}</style>
</head>
<body>
<h1>{title}</h1>
<div id="reports"></div>
<script type="application/json" id="report-data">{data}</script>
<script>{script}</script>
</body>
</html>
"""

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1em 2em; color: #222; }
h2 { margin-top: 1.5em; } h3 { margin: 1em 0 .3em; }
summary { cursor: pointer; } summary h3 { display: inline-block; }
.verdict { font-weight: bold; padding: .3em .6em; border-radius: 4px; display: inline-block; }
.accepted { background: #dfd; } .rejected { background: #fdd; }
.violation { color: #b00; } .warning { color: #a60; } .hint { color: #06a; }
ol.findings li { margin: .2em 0; } a.event-link { cursor: pointer; }
.message { border-left: 3px solid #ccc; padding: .2em .6em; margin: .4em 0; white-space: pre-wrap; }
.message .role { font-weight: bold; } .role-user { border-color: #69c; }
.role-assistant { border-color: #6a6; } .role-tool { border-color: #c96; }
.viewport { max-height: 60vh; overflow: auto; position: relative; border: 1px solid #ccc;
  font: 12px/22px ui-monospace, monospace; }
.row { position: absolute; left: 0; right: 0; height: 22px; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; padding: 0 .4em; cursor: pointer; }
.row:hover { background: #f4f4f4; } .row.target { background: #ffe9a8; }
.row.set-aside { text-decoration: line-through; color: #b00; } .row.dropped { color: #888; }
.row .n { display: inline-block; width: 9em; color: #888; }
.row .t { display: inline-block; width: 5em; color: #888; text-align: right; margin-right: .5em; }
.row .type { font-weight: bold; margin-right: .5em; }
.badge { padding: 0 .3em; border-radius: 3px; margin-right: .3em; color: #fff; }
.badge.violation { background: #b00; } .badge.warning { background: #a60; }
.badge.hint { background: #06a; }
pre.detail { background: #f8f8f8; border: 1px solid #ddd; padding: .6em; max-height: 40vh;
  overflow: auto; white-space: pre-wrap; }
.change.added { color: #080; } .change.removed { color: #b00; } .change.changed { color: #a60; }
"""

_SCRIPT = r"""
"use strict";
(function () {
  const ROW = 22, SPARE = 20, LAZY = 300;
  const reports = JSON.parse(document.getElementById("report-data").textContent);
  const root = document.getElementById("reports");

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value; else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }
  const json = (value) => JSON.stringify(value);
  const where = (f) => f.deliveredIndex !== null ? "event " + f.deliveredIndex +
      (f.receivedIndex !== null && f.receivedIndex !== f.deliveredIndex ?
        " (frame " + f.receivedIndex + ")" : "") :
    f.receivedIndex === null ? "end of stream" : "frame " + f.receivedIndex;

  // A part with many items opens closed and is built when first opened: the page stays
  // quick to open however long the stream.
  function part(title, count, noun, fill) {
    const box = el("details", {},
      el("summary", {}, el("h3", {}, title + " (" + count + " " + noun + ")")));
    let filled = false;
    const open = () => { if (!filled) { filled = true; fill(box); } };
    box.addEventListener("toggle", () => { if (box.open) open(); });
    if (count <= LAZY) { box.open = true; open(); }
    return box;
  }

  reports.forEach((report, k) => root.append(build(report, k)));
  requestAnimationFrame(() => { document.body.dataset.rendered = "true"; });

  function build(report, k) {
    const section = el("section", {id: "report-" + k});
    const counts = {violation: 0, warning: 0, hint: 0};
    const byEvent = new Map();
    report.findings.forEach((item, i) => {
      counts[item.finding.severity] += 1;
      if (item.event !== null) {
        if (!byEvent.has(item.event)) byEvent.set(item.event, []);
        byEvent.get(item.event).push(i);
      }
    });
    if (reports.length > 1) section.append(el("h2", {}, report.title));
    section.append(el("p", {},
      el("span", {class: "verdict " + report.verdict}, report.verdict.toUpperCase()),
      " " + counts.violation + " violation(s), " + counts.warning + " warning(s), " +
      counts.hint + " hint(s); " + report.events.length + " event(s) read"));

    const viewport = el("div", {class: "viewport", id: "events-" + k, tabindex: "0"});
    const spacer = el("div", {style: "height:" + report.events.length * ROW + "px"});
    viewport.append(spacer);
    const detail = el("pre", {class: "detail", id: "detail-" + k}, "Click an event to see it.");
    const last = report.events.reduce((m, e) => e.arrived !== null && e.arrived > m ?
      e.arrived : m, 0);
    let target = null, drawn = [-1, -1];

    function rowFor(i) {
      const e = report.events[i];
      const number = (e.deliveredIndex === null ? "-" : String(e.deliveredIndex)) +
        (e.deliveredIndex !== e.receivedIndex ? " (frame " + e.receivedIndex + ")" : "");
      const row = el("div", {class: "row " + e.status + (i === target ? " target" : ""),
        id: "r" + k + "e" + i, style: "top:" + i * ROW + "px"},
        el("span", {class: "n"}, number));
      if (last > 0) {
        row.append(el("span", {class: "t", title: "arrival, ms since the first byte"},
          e.arrived === null ? "" : (e.arrived * 1000).toFixed(1)));
      }
      for (const f of byEvent.get(i) || []) {
        const finding = report.findings[f].finding;
        row.append(el("span", {class: "badge " + finding.severity}, finding.rule));
      }
      const rest = Object.assign({}, e.event); delete rest.type;
      row.append(el("span", {class: "type"}, e.type || "(no type)"), json(rest).slice(0, 300));
      row.addEventListener("click", () => select(i));
      return row;
    }
    function draw(force) {
      const first = Math.max(0, Math.floor(viewport.scrollTop / ROW) - SPARE);
      const end = Math.min(report.events.length,
        Math.ceil((viewport.scrollTop + viewport.clientHeight) / ROW) + SPARE);
      if (!force && first === drawn[0] && end === drawn[1]) return;
      drawn = [first, end];
      const rows = [];
      for (let i = first; i < end; i++) rows.push(rowFor(i));
      spacer.replaceChildren(...rows);
    }
    function select(i) {
      target = i;
      const e = report.events[i];
      detail.replaceChildren(el("b", {}, (e.type || "(no type)") + ", " + e.status +
        ", frame " + e.receivedIndex + (e.arrived === null ? "" :
          ", arrived at " + (e.arrived * 1000).toFixed(1) + " ms") + "\n"));
      for (const f of byEvent.get(i) || []) {
        const finding = report.findings[f].finding;
        detail.append(el("span", {class: finding.severity},
          finding.severity + " [" + finding.rule + "] " + finding.message + "\n"));
      }
      detail.append(JSON.stringify(e.event, null, 2));
      draw(true);
    }
    function show(i) {
      viewport.scrollIntoView({block: "start"});
      viewport.scrollTop = Math.max(0, i * ROW - viewport.clientHeight / 3);
      select(i);
    }
    viewport.addEventListener("scroll", () => draw(false));
    const link = (i, text) => {
      const a = el("a", {class: "event-link", href: "#r" + k + "e" + i}, text);
      a.addEventListener("click", (event) => { event.preventDefault(); show(i); });
      return a;
    };

    section.append(el("h3", {}, "Findings"));
    if (report.findings.length === 0) section.append(el("p", {}, "None."));
    const list = el("ol", {class: "findings", id: "findings-" + k});
    for (const item of report.findings) {
      const f = item.finding;
      const li = el("li", {class: f.severity},
        f.severity.toUpperCase() + " [" + f.rule + "] ",
        item.event === null ? where(f) : link(item.event, where(f)),
        (f.path ? " at " + f.path : "") + ": " + f.message);
      if (item.related !== null) li.append(" (see ", link(item.related, "event " +
        f.relatedIndex), ")");
      if (f.afterViolation) li.append(" [after the first violation]");
      if (f.specUrl) li.append(" ", el("a", {href: f.specUrl, target: "_blank",
        rel: "noreferrer"}, "spec"));
      list.append(li);
    }
    section.append(list);

    section.append(part("Conversation", report.messages.length, "message(s)", (box) => {
      for (const m of report.messages) {
        const message = el("div", {class: "message role-" + m.role},
          el("span", {class: "role"}, m.role + (m.toolCallId ? " (result of " +
            m.toolCallId + ")" : "") + ": "),
          typeof m.content === "string" ? m.content :
            m.content === undefined ? "" : json(m.content));
        for (const call of m.toolCalls || []) {
          message.append("\n\u2192 " + call.function.name + "(" + call.function.arguments + ")");
        }
        box.append(message);
      }
      for (const run of report.runs) {
        box.append(el("p", {}, "run " + run.runId + ": " + run.status +
          (run.error ? " (" + json(run.error) + ")" : "")));
      }
    }));

    section.append(el("h3", {}, "Events"), viewport, detail);

    section.append(part("State history", report.states.length, "state event(s)", (box) => {
      const states = el("ol", {class: "states"});
      for (const step of report.states) {
        const li = el("li", {}, step.event === null ? "event " + step.deliveredIndex :
          link(step.event, "event " + step.deliveredIndex));
        const changes = el("ul", {});
        for (const c of step.changes) {
          const text = c.op === "added" ? "+ " + (c.path || "/") + ": " + json(c.new) :
            c.op === "removed" ? "- " + c.path + " (was " + json(c.old) + ")" :
            "~ " + (c.path || "/") + ": " + json(c.old) + " \u2192 " + json(c.new);
          changes.append(el("li", {class: "change " + c.op}, text));
        }
        if (step.changes.length === 0) changes.append(el("li", {}, "no change"));
        li.append(changes);
        states.append(li);
      }
      box.append(states);
      if (report.statesStop !== null) box.append(el("p", {}, report.statesStop));
      if (report.state !== null) {
        box.append(el("p", {}, "Final state:"), el("pre", {class: "detail"},
          JSON.stringify(report.state, null, 2)));
      }
    }));
    requestAnimationFrame(() => draw(true));
    return section;
  }
})();
"""
