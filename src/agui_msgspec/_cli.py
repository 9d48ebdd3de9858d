"""The ``agui-msgspec`` command line: ``check`` a recorded stream, run ``conformance`` fixtures,
``run`` a live agent over HTTP, ``generate`` bindings from a schema file.

Exit codes: 0 accepted (or every fixture passed), 1 rejected (or a fixture
failed, or the live run failed), 2 usage error.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec

from agui_msgspec._client import HttpAgent, HttpAgentError, RunFailed
from agui_msgspec._conformance import run_corpus
from agui_msgspec._consumer import Result, consume_body
from agui_msgspec._errors import ProtocolViolation, UsageError
from agui_msgspec._generate import generate
from agui_msgspec._lifecycle import Run
from agui_msgspec._versions import LATEST_VERSION, SUPPORTED_VERSIONS, load_bindings

EXIT_ACCEPTED, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="agui-msgspec", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="verdict on a recorded stream (SSE or JSON lines)")
    check.add_argument("file", help="the recorded stream, or - for standard input")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_version_options(check)
    conformance = commands.add_parser("conformance", help="run fixtures in the upstream format")
    conformance.add_argument("folder", type=Path)
    conformance.add_argument("--bindings", metavar="PATH.py", help=_BINDINGS_HELP)
    run = commands.add_parser("run", help="run a live agent over HTTP + SSE (needs the http extra)")
    run.add_argument("url", help="the agent endpoint")
    run.add_argument("--message", help="send one user message with this text")
    run.add_argument("--thread", help="the thread id (default: a new uuid4)")
    run.add_argument("--json", action="store_true", help="print the result as JSON at the end")
    _add_version_options(run)
    gen = commands.add_parser("generate", help="write bindings for an AG-UI schema file")
    gen.add_argument("schema", type=Path, help="the AG-UI schema.json to read")
    gen.add_argument("--out", type=Path, required=True, help="the folder to write the module into")
    gen.add_argument("--module", help="the module name (default: from $id, e.g. v1_1)")
    gen.add_argument("--protocol-version", metavar="X.Y", help="PROTOCOL_VERSION (default: $id's)")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code else EXIT_ACCEPTED
    try:
        if args.command == "generate":
            options = {"module": args.module, "protocol_version": args.protocol_version}
            print(generate(args.schema, args.out, **options))
            return EXIT_ACCEPTED
        bindings = None if args.bindings is None else load_bindings(args.bindings)
    except UsageError as exc:
        print(f"agui-msgspec: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "conformance":
        return _conformance(args.folder, bindings)
    version = bindings or args.version
    if args.command == "check":
        return _check(args.file, version, as_json=args.json)
    return _run(args.url, args.message, args.thread, version, as_json=args.json)


_BINDINGS_HELP = "a bindings module written by `agui-msgspec generate`, instead of --version"


def _add_version_options(command: argparse.ArgumentParser) -> None:
    choice = command.add_mutually_exclusive_group()
    choice.add_argument("--version", default=LATEST_VERSION, choices=SUPPORTED_VERSIONS)
    choice.add_argument("--bindings", metavar="PATH.py", help=_BINDINGS_HELP)


def _check(file: str, version: str | ModuleType, *, as_json: bool) -> int:
    try:
        body = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        print(f"agui-msgspec: cannot read {file}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
    result = consume_body(body, version)
    if as_json:
        sys.stdout.write(msgspec.json.encode(_as_json(result)).decode() + "\n")
    else:
        for line in _timeline(result):
            print(line)
    return EXIT_ACCEPTED if result.outcome == "completed" else EXIT_REJECTED


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
        lines.append(f"  {index:>4}  {_live_detail(event)}")
    lines += ["runs:", *(f"  {_describe_run(run)}" for run in result.runs)]
    lines.append(f"messages: {len(result.messages)}")
    for message in result.messages:
        content = getattr(message, "content", msgspec.UNSET)
        text = content if isinstance(content, str) else _content_summary(content)
        calls = getattr(message, "tool_calls", None) or []
        extra = f" +{len(calls)} tool call(s)" if calls else ""
        lines.append(f"  [{message.role}] {text[:100]!r}{extra}")
    lines += [f"warning: {warning}" for warning in result.warnings]
    if result.violation is not None:
        lines.append(f"REJECTED {result.violation}")
    else:
        lines.append("ACCEPTED")
    return lines


def _content_summary(content: Any) -> str:
    if isinstance(content, list):
        return f"{len(content)} part(s)"
    return "" if content is msgspec.UNSET else f"{len(content)} key(s)"  # activity content


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


def _conformance(folder: Path, bindings: ModuleType | None) -> int:
    if not folder.is_dir():
        print(f"agui-msgspec: no such folder {folder}", file=sys.stderr)
        return EXIT_USAGE
    corpus = run_corpus(folder, bindings)
    for line in corpus.lines():
        print(line)
    return EXIT_ACCEPTED if not corpus.failed else EXIT_REJECTED


def _run(
    url: str, text: str | None, thread: str | None, version: str | ModuleType, *, as_json: bool
) -> int:
    try:
        agent = HttpAgent(url, version=version)
    except (ImportError, UsageError) as exc:
        print(f"agui-msgspec: {exc}", file=sys.stderr)
        return EXIT_USAGE
    messages = [] if text is None else [{"id": str(uuid.uuid4()), "role": "user", "content": text}]
    input = {
        "threadId": thread or str(uuid.uuid4()),
        "runId": str(uuid.uuid4()),
        "messages": messages,
    }
    return asyncio.run(_run_live(agent, input, as_json=as_json))


async def _run_live(agent: HttpAgent, input: dict[str, Any], *, as_json: bool) -> int:
    import httpx  # noqa: PLC0415  (HttpAgent was made, so the http extra is there)

    delivered: list[msgspec.Struct] = []
    violation: ProtocolViolation | None = None
    try:
        async with agent.run(input) as stream:
            try:
                async for event in stream:
                    if not as_json:
                        print(f"  {len(delivered):>4}  {_live_detail(event)}", flush=True)
                    delivered.append(event)
                await stream.result()
            except RunFailed:
                pass  # the summary shows the failed run
            except ProtocolViolation as exc:
                violation = exc
    except HttpAgentError as exc:
        print(f"agui-msgspec: {exc}", file=sys.stderr)
        return EXIT_REJECTED
    except httpx.HTTPError as exc:
        print(f"agui-msgspec: cannot reach {agent.url}: {exc!r}", file=sys.stderr)
        return EXIT_REJECTED
    result = Result(
        outcome="failed" if violation is not None else "completed",
        violation=violation,
        events=delivered,
        warnings=stream.warnings,
        runs=stream.runs,
        messages=stream.messages,
        state=stream.state,
    )
    if as_json:
        sys.stdout.write(msgspec.json.encode(_as_json(result)).decode() + "\n")
    else:
        for line in _run_summary(result, {m["id"] for m in input["messages"]}):
            print(line)
    failed = violation is not None or not result.runs or result.runs[-1].status == "failed"
    return EXIT_REJECTED if failed else EXIT_ACCEPTED


def _live_detail(event: Any) -> str:
    """One line for an event: its type, its id, and what it carries."""
    line = f"{event.type}{_event_detail(event)}"
    for attr in ("tool_call_name", "role", "delta", "content", "message"):
        value = getattr(event, attr, msgspec.UNSET)
        if isinstance(value, str):
            line += f" {attr}={value!r}"
    outcome = getattr(event, "outcome", msgspec.UNSET)
    if outcome is not msgspec.UNSET:
        line += f" outcome={outcome.type}"
    return line


def _run_summary(result: Result, sent_ids: set[str]) -> list[str]:
    lines = ["runs:", *(f"  {_describe_run(run)}" for run in result.runs)]
    new = [message for message in result.messages if message.id not in sent_ids]
    lines.append(f"new messages: {len(new)}")
    for message in new:
        lines += _message_lines(message)
    lines += [f"warning: {warning}" for warning in result.warnings]
    last = result.runs[-1] if result.runs else None
    if result.violation is not None:
        lines.append(f"REJECTED {result.violation}")
    elif last is not None and last.status == "failed":
        lines.append(f"RUN FAILED {last.error.message!r}")
    else:
        lines.append(f"ACCEPTED ({last.status if last else 'no run'})")
    return lines


def _message_lines(message: Any) -> list[str]:
    """The assembled message, its text in full: what a person reads back."""
    content = getattr(message, "content", msgspec.UNSET)
    head = f"  [{message.role}]"
    tool_call_id = getattr(message, "tool_call_id", msgspec.UNSET)
    if isinstance(tool_call_id, str):
        head += f" result of {tool_call_id}:"
    if isinstance(content, str):
        lines = [f"{head} {content}".replace("\n", "\n      ")]
    elif content is msgspec.UNSET:
        lines = [head]
    else:
        lines = [f"{head} {len(content)} content part(s)"]
    for call in getattr(message, "tool_calls", None) or []:
        lines.append(f"      calls {call.function.name}({call.function.arguments}) id={call.id}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
