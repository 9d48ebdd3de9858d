"""Runs upstream consumer-conformance fixtures through the public API.

The fixture format is upstream's (spec/1.1/conformance/streams): a stream, an
optional input, and ``expect`` assertions. The TypeScript client's error wording
is not matched; a rejected stream must instead be rejected for the rule the
fixture is about, which ``EXPECTED_RULES`` names in this project's rule ids.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec

from agui_msgspec._consumer import Result, consume
from agui_msgspec._input import prepare_input
from agui_msgspec._versions import LATEST_VERSION

EXPECTED_RULES = {
    "chunk-conflicting-role-fatal": "chunk-conflicting-repeat",
    "chunk-conflicting-tool-name-fatal": "chunk-conflicting-repeat",
    "content-without-start-fatal": "text-message-not-open",
    "custom-closes-chunk-stream-fatal": "chunk-missing-first-field",
    "event-after-run-finished-fatal": "event-after-run-finished",
    "first-chunk-missing-id-fatal": "chunk-missing-first-field",
    "first-event-not-run-started-fatal": "first-event",
    "first-tool-chunk-missing-name-fatal": "chunk-missing-first-field",
    "malformed-known-field-fatal": "malformed-event",
    "nested-run-started-fatal": "nested-run",
    "open-message-at-run-finished-fatal": "open-at-run-finished",
    "reasoning-message-wrong-role-fatal": "malformed-event",
    "run-finished-with-active-subagent-fatal": "open-at-run-finished",
    "step-finished-without-start-fatal": "step-not-open",
    "subagent-attribution-mismatch-fatal": "attribution-mismatch",
    "subagent-finished-unstarted-fatal": "subagent-not-open",
    "subagent-started-missing-name-fatal": "malformed-event",
    "unknown-outcome-array-fatal": "malformed-event",
}

# Fixtures pinning a reference client's admitted gap, where this project follows the
# specification's prose instead: fixture → what the project does, and why.
FOLLOWS_PROSE: dict[str, tuple[str, dict[str, Any]]] = {
    "unknown-enum-value-role-fatal": (
        "accepted: an unrecognised value of a closed string set in an optional position is "
        "stripped with a warning (basic/processing), so the message reads as an assistant message",
        {"outcome": "completed", "warnings": ["/role"], "messages": [{"role": "assistant"}]},
    ),
}


@dataclass
class FixtureReport:
    name: str
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


def run_fixture(path: Path, bindings: ModuleType | None = None) -> FixtureReport:
    """One fixture's report; ``bindings`` (a generated module) replaces the 1.1 bindings."""
    try:
        return _run_fixture(path, bindings)
    except Exception as exc:  # a fixture that crashes the runner is a failed fixture, not a crash
        return FixtureReport(path.stem, [f"{type(exc).__name__}: {exc}"])


def _run_fixture(path: Path, bindings: ModuleType | None) -> FixtureReport:
    fixture = json.loads(path.read_text(encoding="utf-8"))
    report = FixtureReport(fixture.get("name", path.stem))
    expect: dict[str, Any] = fixture.get("expect", {})
    if report.name in FOLLOWS_PROSE:
        expect = FOLLOWS_PROSE[report.name][1]
    # a fixture's version pin (an era's, say) decides what the request declares
    version: str | ModuleType = fixture.get("client", {}).get(
        "maxProtocolVersion", bindings or "1.1"
    )
    payloads = [msgspec.json.encode(event) for event in fixture["stream"]]
    result = consume(payloads, bindings or LATEST_VERSION, input=_full_input(fixture.get("input")))
    report.problems += list(_check_verdict(report.name, expect, result))
    report.problems += list(_check_events(expect, result))
    report.problems += list(_check_reducer(expect, result))
    if "request" in expect or "requestAbsentPaths" in expect:
        report.problems += list(_check_request(fixture, expect, version))
    return report


def _check_verdict(name: str, expect: dict[str, Any], result: Result) -> Iterator[str]:
    wanted = expect.get("outcome")
    if wanted is not None and wanted != result.outcome:
        yield f"outcome {result.outcome!r}, expected {wanted!r} ({result.violation})"
    violation, rule = result.violation, EXPECTED_RULES.get(name)
    if wanted == "failed" and violation is not None:
        if rule is None:
            yield f"rejected for {violation.rule!r}, but no rule is mapped for this fixture"
        elif violation.rule != rule:
            yield f"rejected for {violation.rule!r}, expected rule {rule!r}"
    run_error = expect.get("runError")
    if run_error is not None:
        errors = [run.error.message for run in result.runs if run.error is not None]
        if not errors or (isinstance(run_error, str) and not any(run_error in e for e in errors)):
            yield f"expected a run to report RUN_ERROR {run_error!r}, got {errors}"


def _check_events(expect: dict[str, Any], result: Result) -> Iterator[str]:
    delivered = [msgspec.to_builtins(event) for event in result.events]
    types = [event["type"] for event in delivered]
    if "eventTypes" in expect and types != expect["eventTypes"]:
        yield f"event types {types}, expected {expect['eventTypes']}"
    for absent in expect.get("eventTypesAbsent", []):
        if absent in types:
            yield f"event type {absent} was delivered"
    for where, value in expect.get("eventPaths", {}).items():
        found = _lookup(delivered, where)
        if found is _MISSING or found != value:
            yield f"event path {where} is {found!r}, expected {value!r}"
    for where in expect.get("eventAbsentPaths", []):
        if _lookup(delivered, where) is not _MISSING:
            yield f"event path {where} should be absent"
    for text in expect.get("warnings", []):
        if not any(text in warning for warning in result.warnings):
            yield f"no warning contains {text!r}: {result.warnings}"
    if expect.get("noWarnings") and result.warnings:
        yield f"expected no warnings, got {result.warnings}"


def _check_reducer(expect: dict[str, Any], result: Result) -> Iterator[str]:
    messages = [msgspec.to_builtins(message) for message in result.messages]
    if "messageCount" in expect and len(messages) != expect["messageCount"]:
        yield f"{len(messages)} messages, expected {expect['messageCount']}: {messages}"
    if "messages" in expect and not _subset(expect["messages"], messages):
        yield f"messages {messages} do not match {expect['messages']}"
    if "state" in expect and not _subset(expect["state"], result.state):
        yield f"state {result.state!r} does not match {expect['state']!r}"


def _check_request(
    fixture: dict[str, Any], expect: dict[str, Any], version: str | ModuleType
) -> Iterator[str]:
    warnings: list[str] = []
    request = msgspec.to_builtins(
        prepare_input(_full_input(fixture.get("input")), version, warnings.append)
    )
    if "request" in expect and not _subset(expect["request"], request):
        yield f"request {request} does not match {expect['request']}"
    for where in expect.get("requestAbsentPaths", []):
        if _lookup([request], f"0.{where}") is not _MISSING:
            yield f"request path {where} should be absent"


def _full_input(partial: dict[str, Any] | None) -> dict[str, Any]:
    """Fixtures give only the input's interesting parts; the ids are filled in."""
    return {
        "threadId": "conformance-thread",
        "runId": "conformance-run",
        "messages": [],
        **(partial or {}),
    }


class _Missing:
    def __repr__(self) -> str:
        return "absent"


_MISSING = _Missing()


def _lookup(root: list[Any], dotted: str) -> Any:
    node: Any = root
    for part in dotted.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return _MISSING
    return node


def _subset(expected: Any, actual: Any) -> bool:
    """Objects: every expected key matches; arrays: same length, element-wise; else equal."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and _subset(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(_subset(e, a) for e, a in zip(expected, actual, strict=True))
        )
    return bool(type(expected) is type(actual) and expected == actual)


@dataclass
class CorpusReport:
    passed: list[str] = field(default_factory=list)
    failed: list[FixtureReport] = field(default_factory=list)
    prose: list[str] = field(default_factory=list)
    era_passed: list[str] = field(default_factory=list)
    era_failed: list[FixtureReport] = field(default_factory=list)

    def lines(self) -> Iterator[str]:
        for report in self.failed:
            yield f"FAIL {report.name}: " + "; ".join(report.problems)
        for name in self.prose:
            yield f"FOLLOWS SPEC PROSE {name}: {FOLLOWS_PROSE[name][0]}"
        for report in self.era_failed:
            yield f"era (optional pre-1.0 shim) not supported {report.name}: " + "; ".join(
                report.problems
            )
        era_total = len(self.era_passed) + len(self.era_failed)
        if era_total:
            yield f"era fixtures (optional shims for pre-1.0 peers): {len(self.era_passed)} of {era_total} passed"
        if self.prose:
            yield f"{len(self.prose)} fixture(s) deliberately follow the spec's prose over a reference client's gap"
        yield f"{len(self.passed)} passed, {len(self.failed)} failed"


def run_corpus(folder: Path, bindings: ModuleType | None = None) -> CorpusReport:
    corpus = CorpusReport()
    for path in sorted(folder.glob("*.json")):
        report = run_fixture(path, bindings)
        if report.name.startswith("era-"):
            (
                corpus.era_passed.append(report.name)
                if report.passed
                else corpus.era_failed.append(report)
            )
        elif report.name in FOLLOWS_PROSE and report.passed:
            corpus.prose.append(report.name)
        elif report.passed:
            corpus.passed.append(report.name)
        else:
            corpus.failed.append(report)
    return corpus
