"""Runs upstream consumer-conformance fixtures through the public API.

The fixture format is upstream's (spec/1.1/conformance/streams): a stream, an
optional input, and ``expect`` assertions. The TypeScript client's error wording
is not matched; a rejected stream must instead be rejected, at an event, for the
rule the fixture is about: the one ``EXPECTED_RULES`` pins for an upstream name,
else the rule id its name spells, else one filed under its ``specPage``.
Fixtures whose description starts "ADMITTED GAP" pin a reference client's
deviation; the project meets what ``FOLLOWS_PROSE`` says the prose asks instead.
``era-*`` fixtures are consumed with the peer version they pin
(``client.maxProtocolVersion``) and reported on their own line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agui_msgspec._json import json_kind
from agui_msgspec._pipeline.consumer import Result, consume
from agui_msgspec._pipeline.input import build_run_input
from agui_msgspec._versions import LATEST_VERSION, VersionLike

# Upstream fixtures whose names do not spell the rule they pin: the rule, in this project's ids.
EXPECTED_RULES = {
    "chunk-conflicting-role-fatal": "chunk-conflicting-repeat",
    "chunk-conflicting-tool-name-fatal": "chunk-conflicting-repeat",
    "content-without-start-fatal": "text-message-not-open",
    "custom-closes-chunk-stream-fatal": "chunk-missing-first-field",
    "first-chunk-missing-id-fatal": "chunk-missing-first-field",
    "first-tool-chunk-missing-name-fatal": "chunk-missing-first-field",
    "malformed-known-field-fatal": "malformed-event",
    "open-message-at-run-finished-fatal": "open-at-run-finished",
    "reasoning-message-wrong-role-fatal": "malformed-event",
    "run-finished-with-active-subagent-fatal": "open-at-run-finished",
    "step-finished-without-start-fatal": "step-not-open",
    "subagent-finished-unstarted-fatal": "subagent-not-open",
    "subagent-started-missing-name-fatal": "malformed-event",
    "unknown-outcome-array-fatal": "malformed-event",
}

_ITEM_KINDS = ("text-message", "tool-call", "reasoning", "reasoning-message", "step", "subagent")
_STREAMING_PAGES = (
    "basic/patterns/streaming",
    "events/text-messages",
    "events/tool-calls",
    "events/reasoning",
    "events/lifecycle",
    "events/subagents",
)
# Every rule a stream can be rejected for → the spec pages it comes from. For a fixture
# that neither spells its rule nor has a pin above, a rejection matches when its rule is
# filed under the fixture's specPage ("*": the schema's rules, which hold on every page).
RULE_PAGES: dict[str, tuple[str, ...]] = {
    "invalid-json": ("basic/processing", "basic/transports"),
    "invalid-utf8": ("basic/processing", "basic/transports"),
    "not-an-object": ("basic/processing", "basic/transports"),
    "malformed-event": ("*",),
    "too-deep": (),
    "event-too-large": (),
    "first-event": ("events/lifecycle",),
    "nested-run": ("events/lifecycle",),
    "event-after-run-finished": ("events/lifecycle",),
    "event-after-run-error": ("events/lifecycle",),
    "open-at-run-finished": _STREAMING_PAGES,
    **{f"{kind}-already-open": _STREAMING_PAGES for kind in _ITEM_KINDS},
    **{f"{kind}-not-open": _STREAMING_PAGES for kind in _ITEM_KINDS},
    "attribution-mismatch": ("events/subagents", "events/tool-calls", "events/activity"),
    "run-id-mismatch": ("basic/run-input", "events/lifecycle"),
    "thread-id-mismatch": ("basic/run-input", "events/lifecycle"),
    "duplicate-interrupt-id": ("basic/patterns/interrupt-resume", "events/lifecycle"),
    "too-many-open-items": (),
    "too-many-closed-items": (),
    "chunk-missing-first-field": ("basic/patterns/streaming",),
    "chunk-conflicting-repeat": ("basic/patterns/streaming", "events/tool-calls"),
    "chunk-ambiguous": ("basic/patterns/streaming",),
    "truncated": ("events/lifecycle", "basic/transports"),
}

ADMITTED_GAP = "ADMITTED GAP"
"""The description prefix of a fixture pinning a reference client's known deviation (FORMAT.md)."""

# Admitted-gap fixtures, where this project follows the specification's prose instead:
# fixture → what the project does, and why, as the expectation it meets.
FOLLOWS_PROSE: dict[str, tuple[str, dict[str, Any]]] = {
    "unknown-enum-value-role-fatal": (
        "accepted: an unrecognised value of a closed string set in an optional position is "
        "stripped with a warning (basic/processing), so the message reads as an assistant message",
        {"outcome": "completed", "warnings": ["/role"], "messages": [{"role": "assistant"}]},
    ),
}


def expected_rules(fixture: dict[str, Any]) -> tuple[str, ...] | None:
    """The rules a rejection of ``fixture`` may name: its pin, or the rule its name spells,
    or those filed under its spec page; None when the fixture names nothing to judge by."""
    name = str(fixture.get("name", ""))
    if name in EXPECTED_RULES:
        return (EXPECTED_RULES[name],)
    words = f"-{name}-"
    spelled = [rule for rule in RULE_PAGES if f"-{rule}-" in words]
    if spelled:
        return (max(spelled, key=len),)
    page = spec_page(fixture)
    if not page or unmapped_page(fixture):
        return None
    return tuple(rule for rule, pages in RULE_PAGES.items() if page in pages or "*" in pages)


_VERSIONED_PAGE = re.compile(r"^/?spec/[^/]+/")


def spec_page(fixture: dict[str, Any]) -> str:
    """The fixture's ``specPage`` as a page of any version's spec (``/spec/1.1/...``,
    ``/spec/draft/...``): the version is left out, as the pages keep their names."""
    return _VERSIONED_PAGE.sub("", str(fixture.get("specPage", "")).removeprefix("/"))


def unmapped_page(fixture: dict[str, Any]) -> str:
    """The fixture's page when no rule is filed under it (only the schema's, which hold on
    every page): its rejection cannot be judged by page. Empty when it maps, or has none."""
    page = spec_page(fixture)
    if not page or any(page in pages for pages in RULE_PAGES.values()):
        return ""
    return page


@dataclass
class FixtureReport:
    name: str
    problems: list[str] = field(default_factory=list)
    admitted_gap: bool = False
    """The fixture pins a reference client's admitted gap (its description says so)."""
    follows_prose: str = ""
    """For an admitted gap: what the project does instead, and why."""
    note: str = ""
    """What the runner could not judge, and why (a spec page no rule is filed under)."""

    @property
    def passed(self) -> bool:
        return not self.problems


def run_fixture(
    path: Path, version: VersionLike = LATEST_VERSION, *, name: str | None = None
) -> FixtureReport:
    """Judge one fixture, consumed as ``version`` (a version string or generated bindings);
    ``name`` reports it under another name (the corpus gives its path, to tell folders apart)."""
    try:
        return _run_fixture(path, version, name)
    except _NotAFixture as exc:
        return FixtureReport(name or path.stem, [f"not a conformance fixture: {exc}"])
    except Exception as exc:  # a fixture that crashes the runner is a failed fixture, not a crash
        return FixtureReport(name or path.stem, [f"{type(exc).__name__}: {exc}"])


class _NotAFixture(Exception):
    """A file in the folder without the shape FORMAT.md gives a fixture."""


def _load_fixture(path: Path) -> dict[str, Any]:
    try:
        fixture = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeError, ValueError) as exc:
        raise _NotAFixture(f"not JSON ({exc})") from None
    if not isinstance(fixture, dict):
        raise _NotAFixture(f"a fixture is a JSON object, got {json_kind(fixture)}")
    if not isinstance(fixture.get("stream"), list):
        raise _NotAFixture("it has no `stream` array of events")
    for key in ("expect", "client", "input"):
        if not isinstance(fixture.get(key, {}), dict):
            raise _NotAFixture(f"its `{key}` is not an object")
    return fixture


def _run_fixture(path: Path, version: VersionLike, name: str | None) -> FixtureReport:
    fixture = _load_fixture(path)
    fixture_name = str(fixture.get("name", path.stem))
    gap = str(fixture.get("description", "")).startswith(ADMITTED_GAP)
    report = FixtureReport(name or fixture_name, admitted_gap=gap)
    expect: dict[str, Any] = fixture.get("expect", {})
    if gap:
        if fixture_name not in FOLLOWS_PROSE:
            report.problems.append(
                "pins a reference client's admitted gap this runner has no spec reading for"
            )
            return report
        report.follows_prose, expect = FOLLOWS_PROSE[fixture_name]
    peer = fixture.get("client", {}).get("maxProtocolVersion")
    input = _full_input(fixture.get("input"), fixture["stream"])
    payloads = [msgspec.json.encode(event) for event in fixture["stream"]]
    result = consume(payloads, version, input=input, peer_version=peer)
    warnings = list(result.warnings)
    if "request" in expect or "requestAbsentPaths" in expect or peer is not None:
        report.problems += list(_check_request(input, expect, version, peer, warnings))
    report.problems += list(_check_verdict(fixture, expect, result))
    page = unmapped_page(fixture)
    if page and expect.get("outcome") == "failed" and result.violation is not None:
        report.note = (
            f"its specPage {page!r} has no rule filed under it: the rejection for "
            f"{result.violation.rule!r} is not judged by page"
        )
    report.problems += list(_check_events(expect, result, warnings))
    report.problems += list(_check_reducer(expect, result))
    return report


def _check_verdict(
    fixture: dict[str, Any], expect: dict[str, Any], result: Result[Any, Any, Any]
) -> Iterator[str]:
    wanted = expect.get("outcome")
    if wanted is not None and wanted != result.outcome:
        yield f"outcome {result.outcome!r}, expected {wanted!r} ({result.violation})"
    violation = result.violation
    if wanted == "failed" and violation is not None:
        rules = expected_rules(fixture)
        if rules is not None and violation.rule not in rules:
            yield f"rejected for {violation.rule!r}, expected {' or '.join(map(repr, rules))}"
        if violation.index is None and "truncated" not in (rules or ()):
            yield f"rejected at the end of the stream ({violation.rule!r}), not at an event"
    run_error = expect.get("runError")
    if run_error is not None:
        errors = [run.error.message for run in result.runs if run.error is not None]
        if not errors or (isinstance(run_error, str) and not any(run_error in e for e in errors)):
            yield f"expected a run to report RUN_ERROR {run_error!r}, got {errors}"


def _check_events(
    expect: dict[str, Any], result: Result[Any, Any, Any], warnings: list[str]
) -> Iterator[str]:
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
        if not any(text in warning for warning in warnings):
            yield f"no warning contains {text!r}: {warnings}"
    if expect.get("noWarnings") and warnings:
        yield f"expected no warnings, got {warnings}"


def _check_reducer(expect: dict[str, Any], result: Result[Any, Any, Any]) -> Iterator[str]:
    messages = [msgspec.to_builtins(message) for message in result.messages]
    if "messageCount" in expect and len(messages) != expect["messageCount"]:
        yield f"{len(messages)} messages, expected {expect['messageCount']}: {messages}"
    if "messages" in expect and not _subset(expect["messages"], messages):
        yield f"messages {messages} do not match {expect['messages']}"
    if "state" in expect and not _subset(expect["state"], result.state):
        yield f"state {result.state!r} does not match {expect['state']!r}"


def _check_request(
    input: dict[str, Any],
    expect: dict[str, Any],
    version: VersionLike,
    peer: str | None,
    warnings: list[str],
) -> Iterator[str]:
    """The input as the consumer sends it; its warnings join the run's, as one client's."""
    request = msgspec.to_builtins(
        build_run_input(input, version, on_warning=warnings.append, peer_version=peer)
    )
    if "request" in expect and not _subset(expect["request"], request):
        yield f"request {request} does not match {expect['request']}"
    for where in expect.get("requestAbsentPaths", []):
        if _lookup([request], f"0.{where}") is not _MISSING:
            yield f"request path {where} should be absent"


def _full_input(partial: dict[str, Any] | None, stream: list[Any]) -> dict[str, Any]:
    """Fixtures give only the input's interesting parts; the ids are those of the stream's
    first run, as the run this input requested."""
    first = next((e for e in stream if isinstance(e, dict) and e.get("type") == "RUN_STARTED"), {})
    return {
        "threadId": first.get("threadId", "conformance-thread"),
        "runId": first.get("runId", "conformance-run"),
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
    prose: list[FixtureReport] = field(default_factory=list)
    era_passed: list[str] = field(default_factory=list)
    era_failed: list[FixtureReport] = field(default_factory=list)
    noted: list[FixtureReport] = field(default_factory=list)

    def lines(self) -> Iterator[str]:
        for report in self.failed:
            yield f"FAIL {report.name}: " + "; ".join(report.problems)
        for report in self.noted:
            yield f"NOTE {report.name}: {report.note}"
        for report in self.prose:
            yield f"FOLLOWS SPEC PROSE {report.name}: {report.follows_prose}"
        for report in self.era_failed:
            yield f"FAIL era {report.name}: " + "; ".join(report.problems)
        era_total = len(self.era_passed) + len(self.era_failed)
        if era_total:
            yield (
                f"era fixtures (shims for pre-1.0 peers, with the peer's version given): "
                f"{len(self.era_passed)} of {era_total} passed"
            )
        if self.prose:
            yield f"{len(self.prose)} fixture(s) deliberately follow the spec's prose over a reference client's gap"
        yield f"{len(self.passed)} passed, {len(self.failed)} failed"


def run_corpus(folder: Path, version: VersionLike = LATEST_VERSION) -> CorpusReport:
    """Every fixture under ``folder``, subfolders included, each reported by its path
    relative to ``folder`` (without ``.json``), so two of one name in two folders stay apart."""
    corpus = CorpusReport()
    for path in sorted(folder.rglob("*.json")):
        name = path.relative_to(folder).with_suffix("").as_posix()
        report = run_fixture(path, version, name=name)
        if report.note:
            corpus.noted.append(report)
        if path.stem.startswith("era-"):
            (corpus.era_passed.append(name) if report.passed else corpus.era_failed.append(report))
        elif report.admitted_gap and report.passed:
            corpus.prose.append(report)
        elif report.passed:
            corpus.passed.append(name)
        else:
            corpus.failed.append(report)
    return corpus
