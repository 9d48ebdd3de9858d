"""The ``agui-msgspec`` command line: ``check`` a recorded stream, run ``conformance`` fixtures.

Exit codes: 0 accepted (or every fixture passed), 1 rejected (or a fixture
failed), 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec

from agui_msgspec._conformance import run_corpus
from agui_msgspec._consumer import Consumer, Result
from agui_msgspec._errors import ProtocolViolation
from agui_msgspec._lifecycle import Run
from agui_msgspec._transports import JSONLinesReader, SSEReader, sniff_format
from agui_msgspec._versions import LATEST_VERSION, SUPPORTED_VERSIONS

EXIT_ACCEPTED, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agui-msgspec", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="verdict on a recorded stream (SSE or JSON lines)")
    check.add_argument("file", help="the recorded stream, or - for standard input")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.add_argument("--version", default=LATEST_VERSION, choices=SUPPORTED_VERSIONS)
    conformance = commands.add_parser("conformance", help="run fixtures in the upstream format")
    conformance.add_argument("folder", type=Path)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code else EXIT_ACCEPTED
    if args.command == "check":
        return _check(args.file, args.version, as_json=args.json)
    return _conformance(args.folder)


def _check(file: str, version: str, *, as_json: bool) -> int:
    try:
        body = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        print(f"agui-msgspec: cannot read {file}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    result = check_bytes(body, version)
    if as_json:
        sys.stdout.write(msgspec.json.encode(_as_json(result)).decode() + "\n")
    else:
        for line in _timeline(result):
            print(line)
    return EXIT_ACCEPTED if result.outcome == "completed" else EXIT_REJECTED


def check_bytes(body: bytes, version: str = LATEST_VERSION) -> Result:
    """A whole recorded body through the reader it looks like and the full pipeline."""
    reader = SSEReader() if sniff_format(body[:64]) == "sse" else JSONLinesReader()
    consumer = Consumer(version)
    delivered: list[msgspec.Struct] = []
    try:
        for payload in [*reader.feed(body), *reader.close()]:
            consumer._feed_into(payload, delivered)
        consumer.close()
    except ProtocolViolation:
        pass
    return consumer.result(delivered)


def _describe_run(run: Run) -> str:
    parts = [f"run {run.run_id or '(none)'} on thread {run.thread_id or '(none)'}: {run.status}"]
    if run.interrupts:
        parts.append(
            f"{len(run.interrupts)} interrupt(s): " + ", ".join(i.reason for i in run.interrupts)
        )
    if run.error is not None:
        parts.append(f"error {run.error.message!r}")
    total = run.total_tokens()
    if run.usage:
        parts.append(f"tokens {total if total is not None else 'partly reported'}")
    return "; ".join(parts)


def _timeline(result: Result) -> list[str]:
    lines = [f"{len(result.events)} event(s) delivered"]
    for index, event in enumerate(result.events):
        lines.append(f"  {index:>4}  {type(event).__struct_config__.tag}{_event_detail(event)}")
    lines += ["runs:", *(f"  {_describe_run(run)}" for run in result.runs)]
    lines.append(f"messages: {len(result.messages)}")
    for message in result.messages:
        content = getattr(message, "content", "")
        text = content if isinstance(content, str) else f"{len(content)} part(s)"
        calls = getattr(message, "tool_calls", None) or []
        extra = f" +{len(calls)} tool call(s)" if calls else ""
        lines.append(f"  [{type(message).__struct_config__.tag}] {text[:100]!r}{extra}")
    lines += [f"warning: {warning}" for warning in result.warnings]
    if result.violation is not None:
        lines.append(f"REJECTED {result.violation}")
    else:
        lines.append("ACCEPTED")
    return lines


def _event_detail(event: Any) -> str:
    for attr in ("message_id", "tool_call_id", "step_name", "subagent_run_id", "run_id", "name"):
        value = getattr(event, attr, msgspec.UNSET)
        if isinstance(value, str):
            return f" {attr}={value}"
    return ""


def _as_json(result: Result) -> dict[str, Any]:
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
        "runs": [
            {
                "threadId": run.thread_id,
                "runId": run.run_id,
                "status": run.status,
                "outcome": run.outcome,
                "error": run.error,
                "usage": run.usage,
                "totalTokens": run.total_tokens(),
            }
            for run in result.runs
        ],
        "events": result.events,
        "messages": result.messages,
        "state": result.state,
    }


def _conformance(folder: Path) -> int:
    if not folder.is_dir():
        print(f"agui-msgspec: no such folder {folder}", file=sys.stderr)
        return EXIT_USAGE
    corpus = run_corpus(folder)
    for line in corpus.lines():
        print(line)
    return EXIT_ACCEPTED if not corpus.failed else EXIT_REJECTED


if __name__ == "__main__":
    sys.exit(main())
