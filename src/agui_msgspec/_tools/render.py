"""A :class:`~agui_msgspec._tools.verify.Report` as text for people, or as JSON, SARIF 2.1.0
or JUnit XML for CI: each renderer takes the report and returns the document."""

from __future__ import annotations

from typing import Any

import msgspec

from agui_msgspec._pipeline.consumer import Result
from agui_msgspec._pipeline.lifecycle import Run
from agui_msgspec._tools.verify import Report


def render_json(report: Report) -> str:
    """The report as one JSON document: the verdict, the counts, every finding (camelCase:
    ``receivedIndex``, ``deliveredIndex``, ``relatedIndex``, ``specUrl``), every event read,
    the state history, and the consumer's result (runs, messages, state, warnings)."""
    document = {
        "verdict": report.verdict,
        "counts": {
            "violations": len(report.violations),
            "warnings": len(report.warnings),
            "hints": len(report.hints),
        },
        "findings": report.findings,
        "events": report.events,
        "states": report.states,
        "result": result_document(report.result),
    }
    return msgspec.json.encode(document).decode()


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
