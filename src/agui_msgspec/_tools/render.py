"""A :class:`~agui_msgspec._tools.verify.Report` as text for people, or as JSON, SARIF 2.1.0
or JUnit XML for CI: each renderer takes the report and returns the document."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict
from typing import Any

import msgspec

from agui_msgspec._errors import inert, inert_json
from agui_msgspec._pipeline.consumer import Result
from agui_msgspec._pipeline.run import Run
from agui_msgspec._rules import RULES
from agui_msgspec._tools.verify import Finding, Report, ReportEvent, checked_report

_VALUE_CHARS = 200  # a value in a timeline line is cut to this many characters
_SAMPLES = 5  # indexes a grouped line shows
# The field a timeline line names its event by, first, unquoted: the first one it carries.
_ID_KEYS = ("messageId", "toolCallId", "stepName", "subagentRunId", "runId", "name")
_SARIF_LEVELS = {"violation": "error", "warning": "warning", "hint": "note"}
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def render_json(report: Report) -> str:
    """The report as one JSON document: the verdict, the counts, every finding (camelCase:
    ``receivedIndex``, ``deliveredIndex``, ``relatedIndex``, ``specUrl``), every event read,
    the state history, and the consumer's result (``outcome``, ``violation``, ``runs``,
    ``messages``, ``state``, ``warnings``) at the top level."""
    checked_report("render_json()", report)
    return json_text(report_document(report))


def json_text(value: Any) -> str:
    """``value`` as compact JSON, with what a terminal would act on (C1 controls, bidi
    overrides, ...) written as ``\\u`` escapes: exactly the same document."""
    return inert_json(msgspec.json.encode(value).decode())


def report_document(report: Report, *, events: bool = True) -> dict[str, Any]:
    """:func:`render_json`'s document as values; ``events=False`` leaves the events out."""
    document: dict[str, Any] = {
        "verdict": report.verdict,
        "counts": {
            "violations": len(report.violations),
            "warnings": len(report.warnings),
            "hints": len(report.hints),
        },
        "findings": report.findings,
        **result_document(report.result),
    }
    if events:
        document["events"] = report.events
        document["states"] = report.states
    return document


def where(finding: Finding) -> str:
    """The event a finding names, as the timeline numbers it: the delivered index, with the
    received frame where it differs; a frame only for an event set aside or dropped."""
    delivered, received = finding.delivered_index, finding.received_index
    if delivered is not None:
        frame = f" (frame {received})" if received is not None and received != delivered else ""
        return f"event {delivered}{frame}"
    return "end of stream" if received is None else f"frame {received}"


def finding_line(finding: Finding) -> str:
    """One line for a finding: its severity, rule, event, path, message, related event, link."""
    at = f" at {finding.path}" if finding.path else ""
    related = "" if finding.related_index is None else f" (see event {finding.related_index})"
    after = " [after the first violation]" if finding.after_violation else ""
    link = f" {finding.spec_url}" if finding.spec_url else ""
    return inert(
        f"{finding.severity.upper()} [{finding.rule}] {where(finding)}{at}: "
        f"{finding.message}{related}{after}{link}"
    )


def event_line(event: ReportEvent) -> str:
    """One timeline line: the delivered index (the received frame where it differs), the
    type, its id, and every field, values cut short."""
    received, delivered = event.received_index, event.delivered_index
    if delivered is None:
        number = f"{'-':>4}  (frame {received}, {event.status})"
    else:
        number = f"{delivered:>4}" + (f"  (frame {received})" if received != delivered else "")
    document = event.event
    shown = next((key for key in _ID_KEYS if isinstance(document.get(key), str)), None)
    line = f"  {number}  {event.type or '(no type)'}"
    if shown is not None:
        line += f" {shown}={document[shown]}"
    for name, value in document.items():
        if name not in ("type", shown):
            line += f" {name}={_value_text(value)}"
    return inert(line)


def _value_text(value: Any) -> str:
    if isinstance(value, str):
        if len(value) <= _VALUE_CHARS:
            return repr(value)
        return f"{value[:_VALUE_CHARS]!r}...(+{len(value) - _VALUE_CHARS} chars)"
    text = msgspec.json.encode(value).decode()
    if len(text) <= _VALUE_CHARS:
        return text
    return f"{text[:_VALUE_CHARS]}...(+{len(text) - _VALUE_CHARS} chars)"


def verdict_line(report: Report) -> str:
    """The verdict, the counts, and the violation that decided it."""
    counts = (
        f"{len(report.violations)} violation(s), {len(report.warnings)} warning(s), "
        f"{len(report.hints)} hint(s)"
    )
    first = next((f for f in report.violations if not f.after_violation), None)
    if report.verdict == "accepted":
        return f"ACCEPTED: {counts}"
    decided = "" if first is None else f"; [{first.rule}] {where(first)}: {first.message}"
    return inert(f"REJECTED: {counts}{decided}")


def render_text(report: Report, group: bool = False) -> str:
    """For people: every event with its findings under it, then the runs, the messages and
    the verdict; ``group``: one line per rule with a count and sample events instead.
    Control characters from the stream are shown escaped (``\\x1b``, ``\\x0a``): a report
    line is one terminal line."""
    checked_report("render_text()", report)
    lines = grouped_lines(report) if group else timeline_lines(report)
    lines += summary_lines(report)
    return "\n".join(lines) + "\n"


def timeline_lines(report: Report) -> list[str]:
    by_event: dict[tuple[int | None, int | None], list[Finding]] = defaultdict(list)
    for finding in report.findings:
        by_event[finding.received_index, finding.delivered_index].append(finding)
    lines = []
    for event in report.events:
        lines.append(event_line(event))
        for finding in by_event.pop((event.received_index, event.delivered_index), ()):
            lines.append(f"        {finding_line(finding)}")
    for findings in by_event.values():  # about the end, or no one event
        lines += [finding_line(finding) for finding in findings]
    return lines


def grouped_lines(report: Report) -> list[str]:
    """One line per rule: severity, rule, how many, the first events it names, its link."""
    groups: dict[str, list[Finding]] = {}
    for finding in report.findings:
        groups.setdefault(finding.rule, []).append(finding)
    lines = []
    for rule, findings in groups.items():
        first = findings[0]
        samples = ", ".join(where(f) for f in findings[:_SAMPLES])
        more = ", ..." if len(findings) > _SAMPLES else ""
        link = f" {first.spec_url}" if first.spec_url else ""
        lines.append(f"{first.severity.upper()} [{rule}] x{len(findings)}: {samples}{more}{link}")
    return lines


def summary_lines(report: Report) -> list[str]:
    """What follows the events: the runs, the messages, the verdict."""
    result = report.result
    delivered = sum(1 for event in report.events if event.delivered_index is not None)
    lines = [f"{delivered} event(s) delivered, {len(report.events)} read"]
    lines += ["runs:", *(f"  {describe_run(run)}" for run in result.runs)]
    lines.append(f"messages: {len(result.messages)}")
    lines += [f"  {message_line(message)}" for message in result.messages]
    lines.append(verdict_line(report))
    return lines


def describe_run(run: Run) -> str:
    parts = [f"run {run.run_id or '(none)'} on thread {run.thread_id or '(none)'}: {run.status}"]
    if run.interrupts:
        parts.append(
            f"{len(run.interrupts)} interrupt(s): " + ", ".join(i.reason for i in run.interrupts)
        )
    if run.error is not None:
        parts.append(f"error {run.error.message!r}")
    if run.pending_tool_calls:
        calls = run.pending_tool_calls
        parts.append(f"{len(calls)} tool call(s) pending: " + ", ".join(calls[:_SAMPLES]))
    total = run.total_tokens()
    if run.usage:
        parts.append(f"tokens {total if total is not None else 'partly reported'}")
    return inert("; ".join(parts))


def message_line(message: Any) -> str:
    content = getattr(message, "content", msgspec.UNSET)
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = f"{len(content)} part(s)"
    else:
        text = "" if content is msgspec.UNSET else f"{len(content)} key(s)"  # activity content
    calls = getattr(message, "tool_calls", None) or []
    extra = f" +{len(calls)} tool call(s)" if calls else ""
    return inert(f"[{message.role}] {text[:100]!r}{extra}")


def render_sarif(report: Report, artifact: str = "stream") -> str:
    """SARIF 2.1.0: one run of the ``agui-msgspec`` tool, a reporting descriptor per rule
    found (with its ``helpUri``), a result per finding located in ``artifact`` by the
    event's index (``logicalLocations``) and JSON Pointer."""
    checked_report("render_sarif()", report, artifact=artifact)
    found = list(dict.fromkeys(finding.rule for finding in report.findings))
    rules = []
    for rule_id in found:
        rule = RULES.get(rule_id)
        descriptor: dict[str, Any] = {"id": rule_id}
        if rule is not None:
            descriptor["shortDescription"] = {"text": rule.summary}
            descriptor["defaultConfiguration"] = {"level": _SARIF_LEVELS[rule.severity]}
            if rule.spec_url:
                descriptor["helpUri"] = rule.spec_url
        rules.append(descriptor)
    results = []
    for finding in report.findings:
        location: dict[str, Any] = {
            "physicalLocation": {"artifactLocation": {"uri": artifact}},
            "logicalLocations": [{"name": where(finding), "kind": "element"}],
        }
        result: dict[str, Any] = {
            "ruleId": finding.rule,
            "ruleIndex": found.index(finding.rule),
            "level": _SARIF_LEVELS[finding.severity],
            "message": {"text": f"{where(finding)}: {finding.message}"},
            "locations": [location],
            "properties": {
                "receivedIndex": finding.received_index,
                "deliveredIndex": finding.delivered_index,
                "relatedIndex": finding.related_index,
                "path": finding.path,
                "afterViolation": finding.after_violation,
            },
        }
        results.append(result)
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "agui-msgspec", "rules": rules}},
                "results": results,
                "properties": {"verdict": report.verdict},
            }
        ],
    }
    return json_text(document)


def render_junit(report: Report, name: str = "stream") -> str:
    """JUnit XML: one test suite for the stream, one test case per rule found (a violation's
    fails, a warning's or a hint's passes with its findings as output), and one for the
    verdict, so a CI's test view shows the stream's result and each rule's findings."""
    checked_report("render_junit()", report, name=name)
    name = inert(name)  # a file's name may hold what XML cannot
    suite = ET.Element("testsuite", name=f"agui-msgspec {name}")
    verdict = ET.SubElement(suite, "testcase", classname=name, name="verdict")
    failures = 0
    if report.verdict == "rejected":
        failures += 1
        ET.SubElement(verdict, "failure", message=verdict_line(report), type="rejected")
    groups: dict[str, list[Finding]] = {}
    for finding in report.findings:
        groups.setdefault(finding.rule, []).append(finding)
    for rule, findings in groups.items():
        case = ET.SubElement(suite, "testcase", classname=name, name=rule)
        text = "\n".join(finding_line(finding) for finding in findings)
        if findings[0].severity == "violation":
            failures += 1
            failure = ET.SubElement(
                case, "failure", message=f"{len(findings)} finding(s)", type=rule
            )
            failure.text = text
        else:
            ET.SubElement(case, "system-out").text = text
    suite.set("tests", str(len(groups) + 1))
    suite.set("failures", str(failures))
    suite.set("errors", "0")
    suites = ET.Element("testsuites")
    suites.append(suite)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def result_document(result: Result) -> dict[str, Any]:
    """A consumer's result as JSON-ready values: the verdict, runs, messages and state."""
    violation = result.violation
    return {
        "outcome": result.outcome,
        "violation": None
        if violation is None
        else {
            "rule": violation.rule,
            "index": violation.index,
            "path": violation.path,
            "message": str(violation),
        },
        "warnings": result.warnings,
        "runs": [_run_document(run) for run in result.runs],
        "messages": result.messages,
        "state": result.state,
    }


def _run_document(run: Run) -> dict[str, Any]:
    return {
        "threadId": run.thread_id,
        "runId": run.run_id,
        "status": run.status,
        "outcome": run.outcome,
        "error": run.error,
        "usage": run.usage,
        "totalTokens": run.total_tokens(),
        "pendingToolCalls": run.pending_tool_calls,
    }
