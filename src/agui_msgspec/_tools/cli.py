"""The ``agui-msgspec`` command line: ``check`` a recorded stream, run ``conformance`` fixtures,
``run`` a live agent over HTTP, ``generate`` bindings from a schema file.

Exit codes: 0 accepted (or every fixture passed), 1 rejected (or a fixture
failed, or the live run failed), 2 usage error. A closed standard output
(``| head``) silences the rest of the output, not the verdict: the stream is
still read to its end and the exit code is the verdict's.

``check`` and ``run`` print each event as it passes and keep none: memory holds
what the result needs (runs, messages, state, warnings), not the stream.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import uuid
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import msgspec

from agui_msgspec._errors import (
    HttpAgentError,
    MalformedEvent,
    ProtocolViolation,
    RunFailed,
    TransportError,
    UsageError,
)
from agui_msgspec._http.client import HttpAgent
from agui_msgspec._pipeline.consumer import Consumer, Result
from agui_msgspec._pipeline.lifecycle import Run
from agui_msgspec._tools.conformance import run_corpus
from agui_msgspec._tools.generate import generate_files
from agui_msgspec._versions import LATEST_VERSION, SUPPORTED_VERSIONS, VersionLike, load_bindings

EXIT_ACCEPTED, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
READ_CHUNK = 1024 * 1024
"""``check`` reads its input at most this many bytes at a time."""
_SUMMARY_ITEMS = 5  # messages, warnings and runs a summary lists one by one, at most
_VALUE_CHARS = 200  # a value in a timeline line is cut to this many characters


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C: the person asked to stop, no traceback
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="agui-msgspec", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check", help="verdict on a recorded stream (SSE, JSON lines or protobuf frames)"
    )
    check.add_argument("file", help="the recorded stream, or - for standard input")
    check.add_argument("--json", action="store_true", help="print the result as JSON")
    check.add_argument(
        "--summary", action="store_true", help="no timeline: the verdict, counts, runs, messages"
    )
    check.add_argument(
        "--input", type=Path, help="the RunAgentInput (JSON) the run started from: seeds history"
    )
    _add_version_options(check)
    conformance = commands.add_parser("conformance", help="run fixtures in the upstream format")
    conformance.add_argument("folder", type=Path)
    _add_version_options(conformance)
    run = commands.add_parser("run", help="run a live agent over HTTP + SSE (needs the http extra)")
    run.add_argument("url", help="the agent endpoint")
    run.add_argument("--message", help="send one user message with this text")
    run.add_argument("--thread", help="the thread id (default: a new uuid4)")
    run.add_argument("--json", action="store_true", help="print the result as JSON at the end")
    _add_version_options(run)
    run.add_argument(
        "--timeout", type=_seconds, default=60.0, help="seconds to wait for each byte (default 60)"
    )
    run.add_argument(
        "--deadline", type=_seconds, default=None, help="seconds the whole run may take (no bound)"
    )
    gen = commands.add_parser("generate", help="write bindings for an AG-UI schema file")
    gen.add_argument("schema", type=Path, help="the AG-UI schema.json to read")
    gen.add_argument("--out", type=Path, required=True, help="the folder to write the module into")
    gen.add_argument("--module", help="the module name (default: from $id, e.g. v1_1)")
    gen.add_argument("--protocol-version", metavar="X.Y", help="PROTOCOL_VERSION (default: $id's)")
    gen.add_argument(
        "--freeze",
        type=Path,
        metavar="FILE",
        help="the protobuf field-number freeze you keep, updated in place "
        "(default: MODULE.proto-freeze.txt in --out, started fresh)",
    )
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return EXIT_USAGE if exit_.code else EXIT_ACCEPTED
    try:
        if args.command == "generate":
            options = {
                "module": args.module,
                "protocol_version": args.protocol_version,
                "freeze": args.freeze,
            }
            print(*generate_files(args.schema, args.out, **options), sep="\n")
            return EXIT_ACCEPTED
        bindings = None if args.bindings is None else load_bindings(args.bindings)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    out = _Output()
    version = bindings or args.version
    if args.command == "check":
        return _check(args.file, version, args.input, out, as_json=args.json, summary=args.summary)
    if args.command == "conformance":
        return _conformance(args.folder, version, out)
    agent_options = {"timeout": args.timeout, "deadline": args.deadline}
    return _run(args.url, args.message, args.thread, version, agent_options, out, as_json=args.json)


_BINDINGS_HELP = "a bindings module written by `agui-msgspec generate`, instead of --version"


def _add_version_options(command: argparse.ArgumentParser) -> None:
    choice = command.add_mutually_exclusive_group()
    choice.add_argument("--version", default=LATEST_VERSION, choices=SUPPORTED_VERSIONS)
    choice.add_argument("--bindings", metavar="PATH.py", help=_BINDINGS_HELP)


def _seconds(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text}")
    return value


# Control characters (C0, DEL, C1) and the bidirectional overrides: from a stream, they could
# retitle the window, write the clipboard, or fake a line (a CR, then "ACCEPTED").
_INERT = {
    code: f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
    for code in (*range(0x20), *range(0x7F, 0xA0), *range(0x202A, 0x202F), *range(0x2066, 0x206A))
}


def _inert(text: str) -> str:
    """``text`` with every control character shown escaped, never sent raw to a terminal."""
    return text.translate(_INERT)


def _error(text: str) -> None:
    print(f"agui-msgspec: {_inert(text)}", file=sys.stderr)


class _Output:
    """Standard output that a closed pipe (``| head``) silences instead of failing.

    ``line`` is for people: control characters are shown escaped. ``json`` writes as is
    (JSON escapes what it must)."""

    def __init__(self) -> None:
        self.closed = False

    def line(self, text: str) -> None:
        self.json(_inert(text))

    def json(self, text: str) -> None:
        if not self.closed:
            try:
                sys.stdout.write(text + "\n")
            except BrokenPipeError:
                self._silence()

    def flush(self) -> None:
        if not self.closed:
            try:
                sys.stdout.flush()
            except BrokenPipeError:
                self._silence()

    def _silence(self) -> None:
        self.closed = True
        # What is still buffered would fail again at exit: send it, and the rest, nowhere.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError):  # not a real file (a test's capture, say)
            pass


class _Tally:
    """What a timeline or a summary needs of the events, without keeping them."""

    def __init__(self, out: _Output, *, timeline: bool, as_json: bool) -> None:
        self.out = out
        self.timeline = timeline
        self.as_json = as_json
        self.count = 0
        self.by_type: Counter[str] = Counter()

    def start(self) -> None:
        if self.as_json and self.timeline:
            self.out.json('{"events":[')

    def show(self, events: list[Any]) -> None:
        for event in events:
            self.by_type[event.type] += 1
            if self.timeline:
                if self.as_json:
                    comma = "," if self.count else ""
                    self.out.json(comma + msgspec.json.encode(event).decode())
                else:
                    self.out.line(f"  {self.count:>4}  {_live_detail(event)}")
            self.count += 1

    def end_json(self, document: dict[str, Any]) -> None:
        """The JSON document's other fields; the events, streamed, came first."""
        text = msgspec.json.encode(document).decode()
        if self.timeline:
            self.out.json("]," + text[1:] if len(document) else "]}")
        else:
            self.out.json(text)


def _check(
    file: str,
    version: VersionLike,
    input_path: Path | None,
    out: _Output,
    *,
    as_json: bool,
    summary: bool,
) -> int:
    try:
        input = None if input_path is None else msgspec.json.decode(input_path.read_bytes())
        stream = sys.stdin.buffer if file == "-" else open(file, "rb")  # noqa: SIM115
    except OSError as exc:
        _error(f"cannot read {exc.filename or file}: {exc.strerror}")
        return EXIT_USAGE
    except msgspec.DecodeError as exc:
        _error(f"{input_path} is not JSON: {exc}")
        return EXIT_USAGE
    except RecursionError:
        _error(f"{input_path} nests too deeply")
        return EXIT_USAGE
    try:
        consumer = Consumer(version, input=input)
    except MalformedEvent as exc:
        stream.close()
        _error(f"{input_path} is not a RunAgentInput: {exc}")
        return EXIT_USAGE
    tally = _Tally(out, timeline=not summary, as_json=as_json)
    tally.start()
    with stream:
        try:
            _feed_file(stream, consumer, tally)
        except OSError as exc:
            _error(f"cannot read {file}: {exc.strerror}")
            return EXIT_USAGE
    result = consumer.result([])
    if as_json:
        document = _as_json(result)
        del document["events"]
        if summary:
            document["eventCount"] = tally.count
            document["eventTypes"] = dict(tally.by_type.most_common())
        tally.end_json(document)
    else:
        lines = _summary(result, tally) if summary else _timeline(result, tally.count)
        for line in lines:
            out.line(line)
    out.flush()
    return EXIT_ACCEPTED if result.outcome == "completed" else EXIT_REJECTED


def _feed_file(stream: IO[bytes], consumer: Consumer, tally: _Tally) -> None:
    """Read ``stream`` chunk by chunk into ``consumer``, each chunk's events shown and dropped
    before the next chunk is read; a violation ends the reading (the consumer holds it)."""
    # read1: what one read gives, so a pipe (curl -N ... | check -) shows events as they come
    read = getattr(stream, "read1", stream.read)
    try:
        for chunk in iter(lambda: read(READ_CHUNK), b""):
            tally.show(consumer.receive(chunk))
            tally.out.flush()
        tally.show(consumer.close())
    except ProtocolViolation as violation:
        tally.show(violation.delivered)


def _describe_run(run: Run) -> str:
    parts = [f"run {run.run_id or '(none)'} on thread {run.thread_id or '(none)'}: {run.status}"]
    if run.interrupts:
        parts.append(
            f"{len(run.interrupts)} interrupt(s): " + ", ".join(i.reason for i in run.interrupts)
        )
    if run.error is not None:
        parts.append(f"error {run.error.message!r}")
    if run.pending_tool_calls:
        calls = run.pending_tool_calls
        parts.append(f"{len(calls)} tool call(s) pending: " + ", ".join(calls[:_SUMMARY_ITEMS]))
    total = run.total_tokens()
    if run.usage:
        parts.append(f"tokens {total if total is not None else 'partly reported'}")
    return "; ".join(parts)


def _timeline(result: Result, count: int) -> list[str]:
    """What follows the events: the runs, the messages, the warnings, the verdict."""
    lines = [f"{count} event(s) delivered"]
    lines += ["runs:", *(f"  {_describe_run(run)}" for run in result.runs)]
    lines.append(f"messages: {len(result.messages)}")
    lines += [f"  {_message_line(message)}" for message in result.messages]
    lines += [f"warning: {warning}" for warning in result.warnings]
    lines.append(_verdict(result))
    return lines


def _summary(result: Result, tally: _Tally) -> list[str]:
    """The verdict and what the stream carried, in a screenful whatever its length."""
    lines = [_verdict(result), f"events: {tally.count}"]
    lines += [f"  {name} {count}" for name, count in sorted(tally.by_type.items())]
    statuses = Counter(run.status for run in result.runs)
    lines.append(
        f"runs: {len(result.runs)}"
        + "".join(f", {status} {count}" for status, count in sorted(statuses.items()))
    )
    lines += [f"  {_describe_run(run)}" for run in result.runs[-_SUMMARY_ITEMS:]]
    roles = Counter(message.role for message in result.messages)
    lines.append(
        f"messages: {len(result.messages)}"
        + "".join(f", {role} {count}" for role, count in sorted(roles.items()))
    )
    lines += [f"  {_message_line(message)}" for message in result.messages[-_SUMMARY_ITEMS:]]
    lines.append(f"warnings: {len(result.warnings)}")
    lines += [f"  {warning[:_VALUE_CHARS]}" for warning in result.warnings[:_SUMMARY_ITEMS]]
    return lines


def _verdict(result: Result) -> str:
    return "ACCEPTED" if result.violation is None else f"REJECTED {result.violation}"


def _message_line(message: Any) -> str:
    content = getattr(message, "content", msgspec.UNSET)
    text = content if isinstance(content, str) else _content_summary(content)
    calls = getattr(message, "tool_calls", None) or []
    extra = f" +{len(calls)} tool call(s)" if calls else ""
    return f"[{message.role}] {text[:100]!r}{extra}"


def _content_summary(content: Any) -> str:
    if isinstance(content, list):
        return f"{len(content)} part(s)"
    return "" if content is msgspec.UNSET else f"{len(content)} key(s)"  # activity content


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
                "pendingToolCalls": run.pending_tool_calls,
            }
            for run in result.runs
        ],
        "events": result.events,
        "messages": result.messages,
        "state": result.state,
    }


def _conformance(folder: Path, version: VersionLike, out: _Output) -> int:
    if not folder.is_dir():
        _error(f"no such folder {folder}")
        return EXIT_USAGE
    corpus = run_corpus(folder, version)
    for line in corpus.lines():
        out.line(line)
    out.flush()
    return EXIT_ACCEPTED if not corpus.failed else EXIT_REJECTED


def _run(
    url: str,
    text: str | None,
    thread: str | None,
    version: VersionLike,
    agent_options: dict[str, Any],
    out: _Output,
    *,
    as_json: bool,
) -> int:
    try:
        agent = HttpAgent(url, version=version, **agent_options)
    except (ImportError, UsageError) as exc:
        _error(str(exc))
        return EXIT_USAGE
    messages = [] if text is None else [{"id": str(uuid.uuid4()), "role": "user", "content": text}]
    input = {
        "threadId": thread or str(uuid.uuid4()),
        "runId": str(uuid.uuid4()),
        "messages": messages,
    }
    return asyncio.run(_run_live(agent, input, out, as_json=as_json))


async def _run_live(agent: HttpAgent, input: dict[str, Any], out: _Output, *, as_json: bool) -> int:
    tally = _Tally(out, timeline=True, as_json=as_json)
    violation: ProtocolViolation | None = None
    try:
        async with agent.run(input) as stream:
            tally.start()
            try:
                async for event in stream:
                    tally.show([event])
                    out.flush()
                await stream.result()
            except RunFailed:
                pass  # the summary shows the failed run
            except ProtocolViolation as exc:
                violation = exc
    except HttpAgentError as exc:
        _error(str(exc))
        return EXIT_REJECTED
    except TransportError as exc:  # before any event: nothing to summarise
        reach = "cannot reach " if exc.rule == "connect" else "REJECTED "
        _error(f"{reach}{agent!r}: {exc}")  # the repr leaves out a user:password
        return EXIT_REJECTED
    result = Result(
        outcome="failed" if violation is not None else "completed",
        violation=violation,
        warnings=stream.warnings,
        runs=stream.runs,
        messages=list(stream.messages),
        state=stream.state,
    )
    if as_json:
        document = _as_json(result)
        del document["events"]
        tally.end_json(document)
    else:
        for line in _run_summary(result, {m["id"] for m in input["messages"]}):
            out.line(line)
    out.flush()
    failed = violation is not None or not result.runs or result.runs[-1].status == "failed"
    return EXIT_REJECTED if failed else EXIT_ACCEPTED


_ID_ATTRS = ("message_id", "tool_call_id", "step_name", "subagent_run_id", "run_id", "name")


def _live_detail(event: Any) -> str:
    """One line for an event: its type, its id, and every field it carries, values cut short."""
    line: str = event.type
    shown = next((a for a in _ID_ATTRS if isinstance(getattr(event, a, None), str)), None)
    if shown is not None:
        line += f" {shown}={getattr(event, shown)}"
    for attr in event.__struct_fields__:
        value = getattr(event, attr)
        if attr == shown or value is msgspec.UNSET:
            continue
        line += f" {attr}={_value_text(value)}"
    return line


def _value_text(value: Any) -> str:
    """A field's value for a timeline: text quoted, the rest compact JSON; cut when long."""
    if isinstance(value, str):
        if len(value) <= _VALUE_CHARS:
            return repr(value)
        return f"{value[:_VALUE_CHARS]!r}...(+{len(value) - _VALUE_CHARS} chars)"
    if isinstance(value, msgspec.Struct) and not value.__struct_fields__:
        return str(value.__struct_config__.tag)  # a bare tagged value (an outcome): its name
    text = msgspec.json.encode(value).decode()
    return (
        text
        if len(text) <= _VALUE_CHARS
        else f"{text[:_VALUE_CHARS]}...(+{len(text) - _VALUE_CHARS} chars)"
    )


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
        first, *more = content.split("\n")
        lines = [f"{head} {first}", *(f"      {line}" for line in more)]
    elif content is msgspec.UNSET:
        lines = [head]
    else:
        lines = [f"{head} {len(content)} content part(s)"]
    for call in getattr(message, "tool_calls", None) or []:
        lines.append(f"      calls {call.function.name}({call.function.arguments}) id={call.id}")
    return lines


if __name__ == "__main__":
    sys.exit(main())
