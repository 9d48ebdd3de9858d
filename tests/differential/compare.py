"""Both consumers' results as one comparable view, and what differs between them.

Normalisations (each is a place where the two sides say the same thing differently):

- verdict: ours `outcome == "completed"` is "accepted"; the reference client's
  `runAgent()` resolving is "accepted", rejecting is "rejected".
- index: ours `violation.index`; the client's is the raw event it was processing when
  it failed (`None` for both when the failure came at the end of the stream). Compared
  only when both sides rejected.
- event types: the `type` of each event delivered to the application (ours:
  `result.events`; the client: its `onEvent` subscriber).
- messages and state: as wire JSON. Absent and `undefined` are the same (the client's
  `JSON.stringify` drops `undefined` members, ours omits unset ones); a number is
  compared by value, so `1.0` (Python float) equals `1` (JavaScript has one number
  type); `true` never equals `1` (compared as canonical JSON, not with Python `==`).
- run status: the client keeps no run list, so its statuses are derived from the
  events it delivered, by the rule ours follows: RUN_STARTED opens a run; RUN_FINISHED
  makes it `completed`, `interrupted` or `cancelled` by its outcome's type; RUN_ERROR
  makes the last run `failed` (or is a failed run of its own when none was opened).
  A run still open when the client resolved `runAgent()` is reported `completed`,
  because success is what the client told its caller.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import msgspec
from corpus import Case

import agui_msgspec

FIELDS = ("verdict", "index", "types", "messages", "state", "runs")


@dataclass
class View:
    verdict: str  # "accepted" | "rejected"
    index: int | None
    types: list[str]
    messages: Any
    state: Any
    runs: list[str]
    detail: str = ""  # ours: the rule id; the client: its error message
    warnings: list[str] = field(default_factory=list)
    events: list[Any] = field(default_factory=list)  # wire dicts, for classifiers


def _numbers(value: Any) -> Any:
    """Integral floats as ints, recursively: JSON has one number type."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_numbers(v) for v in value]
    return value


def canonical(value: Any) -> str:
    return json.dumps(_numbers(value), sort_keys=True, ensure_ascii=False)


MINTABLE = ("id", "toolCallId")


def unmint(messages: Any, wire: set[str]) -> Any:
    """Minted ids replaced by their order of first appearance (see the module docstring)."""
    names: dict[str, str] = {}

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            out = {}
            for key, member in value.items():
                minted = key in MINTABLE and isinstance(member, str) and member not in wire
                if minted:
                    out[key] = names.setdefault(member, f"<minted-{len(names) + 1}>")
                else:
                    out[key] = walk(member)
            return out
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(messages)


def ours(case: Case) -> View:
    payloads = [msgspec.json.encode(event) for event in case.stream]
    result = agui_msgspec.consume(payloads, input=case.input, peer_version=case.peer)
    violation = result.violation
    events = msgspec.to_builtins(result.events)
    return View(
        verdict="accepted" if result.outcome == "completed" else "rejected",
        index=violation.index if violation is not None else None,
        types=[e["type"] for e in events],
        messages=unmint(_numbers(msgspec.to_builtins(result.messages)), case.wire),
        state=_numbers(msgspec.to_builtins(result.state)),
        runs=[run.status for run in result.runs],
        detail=violation.rule if violation is not None else "",
        warnings=list(result.warnings),
        events=events,
    )


def reference(case: Case, report: dict[str, Any]) -> View:
    events = report.get("events", [])
    accepted = report["verdict"] == "accepted"
    return View(
        verdict="accepted" if accepted else "rejected",
        index=report.get("index"),
        types=[e.get("type") if isinstance(e, dict) else repr(e) for e in events],
        messages=unmint(_numbers(report.get("messages")), case.wire),
        state=_numbers(report.get("state")),
        runs=run_statuses(events, accepted),
        detail=report.get("error") or "",
        warnings=report.get("warnings", []),
        events=events,
    )


FINISHED_STATUS = {"interrupt": "interrupted", "cancelled": "cancelled"}


def run_statuses(events: list[Any], accepted: bool) -> list[str]:
    runs: list[str] = []
    for event in events:
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "RUN_STARTED":
            runs.append("active")
        elif kind == "RUN_FINISHED" and runs:
            outcome = event.get("outcome")
            outcome_type = outcome.get("type") if isinstance(outcome, dict) else None
            runs[-1] = FINISHED_STATUS.get(str(outcome_type), "completed")
        elif kind == "RUN_ERROR":
            if runs and runs[-1] != "failed":
                runs[-1] = "failed"
            else:
                runs.append("failed")
    if accepted and runs and runs[-1] == "active":
        runs[-1] = "completed"
    return runs


def differences(a: View, b: View) -> list[str]:
    """The fields on which the two views disagree, in FIELDS order."""
    out = []
    if a.verdict != b.verdict:
        out.append("verdict")
    elif a.verdict == "rejected" and a.index != b.index:
        out.append("index")
    if a.types != b.types:
        out.append("types")
    if canonical(a.messages) != canonical(b.messages):
        out.append("messages")
    if canonical(a.state) != canonical(b.state):
        out.append("state")
    if a.runs != b.runs:
        out.append("runs")
    return out
