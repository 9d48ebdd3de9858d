"""The ``agui-msgspec`` command line: ``check`` a recorded stream, run ``conformance`` fixtures,
``run`` a live agent over HTTP, ``probe`` one with a battery of runs, ``generate`` bindings
from a schema file.

Exit codes: 0 accepted (or every fixture or probe step passed), 1 rejected (or a fixture or
a probe step failed, or the agent sent no stream), 2 usage error. A closed standard output
(``| head``) silences the rest of the output, not the verdict: the stream is
still read to its end and the exit code is the verdict's; so does one that cannot be
written (``>&-``, a full disk), said on standard error.

``check`` and ``run`` print each event as it passes and keep none: memory holds
what the result needs (runs, messages, state, warnings), not the stream.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import urllib.parse
import uuid
from collections import Counter
from collections.abc import Coroutine, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NoReturn

import msgspec

from agui_msgspec._errors import (
    HttpAgentError,
    MalformedEvent,
    ProtocolViolation,
    StreamError,
    TransportError,
    UsageError,
    inert,
    wrong_type,
)
from agui_msgspec._http.client import HttpAgent, checked_url, sendable_header
from agui_msgspec._pipeline.consumer import Result
from agui_msgspec._tools.conformance import run_corpus
from agui_msgspec._tools.generate import generate_files
from agui_msgspec._tools.probe import (
    DEFAULT_GAP,
    probe,
    probe_document,
    render_probe_junit,
    render_probe_sarif,
    render_probe_text,
)
from agui_msgspec._tools.probe import failed as probe_failed
from agui_msgspec._tools.render import (
    describe_run,
    event_line,
    finding_line,
    grouped_lines,
    json_text,
    message_line,
    render_json,
    render_junit,
    render_sarif,
    render_text,
    report_document,
    result_document,
    summary_lines,
    verdict_line,
)
from agui_msgspec._tools.render_html import render_html, render_html_steps
from agui_msgspec._tools.verify import (
    DEFAULT_MAX_VIOLATIONS,
    Report,
    ReportEvent,
    _levels,
    _Verifier,
)
from agui_msgspec._versions import (
    LATEST_VERSION,
    SUPPORTED_VERSIONS,
    VersionLike,
    bindings_for,
    load_bindings,
)
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE

EXIT_ACCEPTED, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2
FORMATS = ("text", "json", "sarif", "junit", "html")
CHECK_EXIT_CODES = """exit codes:
  0  pass: accepted, and no finding at --fail-on or above, nor more than --max-warnings
  1  fail: rejected, or failed by --fail-on / --max-warnings
  2  usage: a bad option, an unreadable file or --input, an unwritable --output"""
RUN_EXIT_CODES = """exit codes (check's, for the stream the agent sent):
  0  accepted, however the run ended: a run that failed by RUN_ERROR is a conformant
     stream (check says 0 on its bytes too); the summary says RUN FAILED and --json
     gives the run's status
  1  rejected, or no stream: the agent cannot be reached or answered an HTTP error
  2  usage: a bad option, a URL no request can go to, an unreadable or malformed --input,
     --tool or --state"""
PROBE_FORMATS = ("text", "json", "sarif", "junit", "html")
PROBE_EXIT_CODES = """exit codes:
  0  every step passed or was skipped (a skipped step says why)
  1  a step failed: a rejected stream, a transport violation, no answer
  2  usage: a bad option, a URL or --header no request can carry, an unwritable --output"""
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports it
READ_CHUNK = 1024 * 1024
"""``check`` reads its input at most this many bytes at a time."""
_SUMMARY_ITEMS = 5  # messages, warnings and runs a summary lists one by one, at most
_VALUE_CHARS = 200  # a value in a timeline line is cut to this many characters


def main(argv: Sequence[str] | None = None) -> int:
    """The ``agui-msgspec`` command: ``argv`` without the program name (default:
    ``sys.argv[1:]``); returns the exit status. Wrong arguments exit through argparse
    (``SystemExit(2)``), as a command line does."""
    if argv is not None and (
        isinstance(argv, (str, bytes))
        or not isinstance(argv, Sequence)
        or not all(isinstance(arg, str) for arg in argv)
    ):
        raise wrong_type("main()", argv, "a sequence of str arguments or None")
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C: the person asked to stop, no traceback
        return EXIT_INTERRUPTED


class _Parser(argparse.ArgumentParser):
    """argparse, with what its errors quote from the command line (a file name, an unknown
    option) shown inert, as the rest of the output is."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {inert(message)}\n")


def _main(argv: Sequence[str] | None) -> int:
    parser = _Parser(prog="agui-msgspec", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser(
        "check",
        help="every finding of a recorded stream (SSE, JSON lines or protobuf frames)",
        description="Read a recorded stream and report every finding: the violations (read on "
        "past the first, the offending event set aside), what the consumer strips or drops "
        "(warnings), and likely producer mistakes (hints), each with its event and spec link.",
        epilog=CHECK_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("file", help="the recorded stream, or - for standard input")
    check.add_argument(
        "--first",
        action="store_true",
        help="stop at the first violation, as a consumer does (and keep no events: any length)",
    )
    check.add_argument(
        "--format",
        action="append",
        choices=FORMATS,
        help="text (default), json, sarif, junit or html; repeat for several, each with its --output",
    )
    check.add_argument(
        "--output",
        action="append",
        type=Path,
        metavar="FILE",
        help="where the --format of the same position goes (default: standard output)",
    )
    check.add_argument("--json", action="store_true", help="the same as --format json")
    check.add_argument(
        "--group", action="store_true", help="text: one line per rule, a count and sample events"
    )
    check.add_argument(
        "--summary", action="store_true", help="no timeline: the verdict, counts, runs, messages"
    )
    check.add_argument(
        "--fail-on",
        choices=("violation", "warning", "hint"),
        default="violation",
        help="the least severe finding that fails the check (default violation)",
    )
    check.add_argument(
        "--max-warnings", type=_count, metavar="N", help="fail on more than N warnings"
    )
    check.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="ID=LEVEL",
        help="a hint's or warning's level: violation, warning, hint or off (repeatable)",
    )
    check.add_argument(
        "--input", type=Path, help="the RunAgentInput (JSON) the run started from: seeds history"
    )
    _add_version_options(check)
    conformance = commands.add_parser("conformance", help="run fixtures in the upstream format")
    conformance.add_argument("folder", type=Path)
    _add_version_options(conformance)
    run = commands.add_parser(
        "run",
        help="run a live agent over HTTP + SSE (needs the http extra)",
        description="POST a RunAgentInput to an agent and show its events as they come. The "
        "input is --input's (or a new thread with no messages), then --thread, --state, each "
        "--tool, --message and --resume on top; a new runId unless --input has one.",
        epilog=RUN_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("url", help="the agent endpoint")
    run.add_argument("--input", type=Path, metavar="FILE", help="the RunAgentInput (JSON) to send")
    run.add_argument("--message", help="add a user message with this text")
    run.add_argument("--thread", help="the thread id (default: --input's, or a new uuid4)")
    run.add_argument(
        "--tool",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="offer the tool(s) in FILE (a Tool or a list of them, JSON); repeatable",
    )
    run.add_argument("--state", metavar="FILE|JSON", help="the state to send: a JSON file or text")
    run.add_argument(
        "--resume",
        action="append",
        default=[],
        metavar="ID[=JSON]",
        help="answer the previous run's interrupt ID (resolved, with the JSON payload if given); "
        "repeatable: every interrupt of that run needs an answer or an --abandon",
    )
    run.add_argument(
        "--abandon",
        action="append",
        default=[],
        metavar="ID",
        help="abandon the previous run's interrupt ID (a resume entry with status cancelled)",
    )
    run.add_argument(
        "--next",
        type=Path,
        metavar="FILE",
        help="write the next turn's RunAgentInput: this thread, every message, the final state, "
        "the tools (feed it back with --input; the run's interrupts are printed to --resume)",
    )
    run.add_argument("--json", action="store_true", help="print the result as JSON at the end")
    _add_version_options(run)
    run.add_argument(
        "--timeout", type=_seconds, default=60.0, help="seconds to wait for each byte (default 60)"
    )
    run.add_argument(
        "--deadline", type=_seconds, default=None, help="seconds the whole run may take (no bound)"
    )
    probe_command = commands.add_parser(
        "probe",
        help="a battery of runs against a live agent, with transport diagnostics",
        description="POST a battery of RunAgentInputs to an agent (a plain message, protobuf, "
        "a frontend tool and its answer, state, a client that leaves, a resume) and judge each "
        "stream and how it arrived (content type, data-less lines, one-chunk bodies, gaps, "
        "drops; each event's arrival time).",
        epilog=PROBE_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    probe_command.add_argument("url", help="the agent endpoint")
    _add_version_options(probe_command)
    probe_command.add_argument(
        "--format", action="append", choices=PROBE_FORMATS,
        help="text (default), json, sarif, junit or html; repeat for several, each with its "
        "--output",
    )  # fmt: skip
    probe_command.add_argument(
        "--output", action="append", type=Path, metavar="FILE",
        help="where the --format of the same position goes (default: standard output)",
    )  # fmt: skip
    probe_command.add_argument("--html", type=Path, metavar="FILE", help="also write the page")
    probe_command.add_argument(
        "--header", action="append", default=[], metavar="NAME:VALUE",
        help="a header sent with every request (authorization, say); repeatable",
    )  # fmt: skip
    probe_command.add_argument(
        "--timeout", type=_seconds, default=60.0, help="seconds to wait for each byte (default 60)"
    )
    probe_command.add_argument(
        "--gap", type=_seconds, default=DEFAULT_GAP,
        help=f"seconds without a byte that a keep-alive should fill (default {DEFAULT_GAP:g})",
    )  # fmt: skip
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
    out = _Output()
    try:
        if args.command == "generate":
            options = {
                "module": args.module,
                "protocol_version": args.protocol_version,
                "freeze": args.freeze,
            }
            for path in generate_files(args.schema, args.out, **options):
                out.line(str(path))
            out.flush()
            return EXIT_ACCEPTED
        bindings = None if args.bindings is None else load_bindings(args.bindings)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    version = bindings or args.version
    if args.command == "check":
        return _check(args, version, out)
    if args.command == "conformance":
        return _conformance(args.folder, version, out)
    if args.command == "probe":
        return _probe(args, version, out)
    agent_options = {"timeout": args.timeout, "deadline": args.deadline}
    try:
        input = run_input(args)
    except UsageError as exc:
        _error(str(exc))
        return EXIT_USAGE
    return _run(args.url, input, version, agent_options, out, as_json=args.json, next=args.next)


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


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a count (0 or more): {text!r}")
    return value


def _error(text: str) -> None:
    if sys.stderr is None:  # closed too (2>&-): there is no one to tell
        return
    with contextlib.suppress(OSError):  # a full disk, say: the exit code still tells
        print(f"agui-msgspec: {inert(text)}", file=sys.stderr)


class _Output:
    """Standard output that a closed pipe (``| head``) silences instead of failing; any other
    failure to write (a full disk, a descriptor closed with ``>&-``) silences it too, said once
    on standard error. Either way the exit code stays the verdict's.

    ``line`` is for people: control characters are shown escaped. ``json`` writes as is
    (the renderers escaped what a terminal would act on)."""

    def __init__(self) -> None:
        self.closed = False

    def line(self, text: str) -> None:
        self.json(inert(text))

    def json(self, text: str) -> None:
        if self._open():
            try:
                sys.stdout.write(text + "\n")
            except OSError as exc:
                self._failed(exc)

    def flush(self) -> None:
        if self._open():
            try:
                sys.stdout.flush()
            except OSError as exc:
                self._failed(exc)

    def _open(self) -> bool:
        if not self.closed and sys.stdout is None:  # started with it closed (>&-)
            self.closed = True
            _error("cannot write to standard output: it is closed")
        return not self.closed

    def _failed(self, exc: OSError) -> None:
        if not isinstance(exc, BrokenPipeError):  # | head: the reader left, nothing to say
            _error(f"cannot write to standard output: {exc.strerror or exc}")
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
                    self.out.json(comma + json_text(event))
                else:
                    self.out.line(f"  {self.count:>4}  {_live_detail(event)}")
            self.count += 1

    def end_json(self, document: dict[str, Any]) -> None:
        """The JSON document's other fields; the events, streamed, came first."""
        text = json_text(document)
        if self.timeline:
            self.out.json("]," + text[1:] if len(document) else "]}")
        else:
            self.out.json(text)


class _CheckTally:
    """check's counts of the delivered events by type, and its live timeline's lines."""

    def __init__(self, out: _Output, *, timeline: bool) -> None:
        self.out = out
        self.timeline = timeline
        self.count = 0
        self.read = 0
        self.by_type: Counter[str] = Counter()

    def show_event(self, event: ReportEvent) -> None:
        self.read += 1
        if event.delivered_index is not None:
            self.count += 1
            self.by_type[event.type] += 1
        if self.timeline:
            self.out.line(event_line(event))


def _check(args: argparse.Namespace, version: VersionLike, out: _Output) -> int:
    formats: list[str] = list(args.format or [])
    if args.json:
        formats.append("json")
    outputs: list[Path] = list(args.output or [])
    formats = formats or ["text"]
    if len(outputs) > len(formats):
        _error("each --output needs its --format")
        return EXIT_USAGE
    if len(formats) - len(outputs) > 1:
        _error("only one --format can go to standard output: give the others an --output")
        return EXIT_USAGE
    try:
        levels = _levels(dict(_rule_level(text) for text in args.rule))
    except (UsageError, ValueError) as exc:
        _error(str(exc))
        return EXIT_USAGE
    input_path = args.input
    try:
        input = None if input_path is None else msgspec.json.decode(input_path.read_bytes())
        stream = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as exc:
        _error(f"cannot read {exc.filename or args.file}: {exc.strerror}")
        return EXIT_USAGE
    except msgspec.DecodeError as exc:
        _error(f"{input_path} is not JSON: {exc}")
        return EXIT_USAGE
    except RecursionError:
        _error(f"{input_path} nests too deeply")
        return EXIT_USAGE
    live = formats[len(outputs) :] == ["text"] and not (args.group or args.summary)
    tally = _CheckTally(out, timeline=live)
    try:
        verifier = _Verifier(
            bindings_for(version), input, None, args.first, DEFAULT_MAX_VIOLATIONS, levels,
            keep_events=bool({"json", "html"} & set(formats)) and not args.summary,
            on_event=tally.show_event,
            on_finding=(lambda finding: out.line(f"        {finding_line(finding)}"))
            if live else None,
        )  # fmt: skip
    except UsageError as exc:
        stream.close()
        _error(str(exc))
        return EXIT_USAGE
    if verifier.consumer is None:  # the input is not a RunAgentInput
        stream.close()
        _error(f"{input_path} is not a RunAgentInput: {verifier.findings[0].message}")
        return EXIT_USAGE
    with stream:
        try:
            verifier.read_body(_chunks(stream, out), None, DEFAULT_MAX_EVENT_SIZE)
        except OSError as exc:
            _error(f"cannot read {args.file}: {exc.strerror}")
            return EXIT_USAGE
    report = verifier.report()
    name = "stdin" if args.file == "-" else args.file
    for position, kind in enumerate(formats):
        if kind == "text" and position == len(outputs) and live:
            out.line(f"{tally.count} event(s) delivered, {tally.read} read")
            for line in summary_lines(report)[1:]:  # the counts: the events were not kept
                out.line(line)
            continue
        if args.summary and kind in ("text", "json"):
            document = _summary_document(report, tally) if kind == "json" else None
            text = (
                "\n".join(_summary(report, tally)) + "\n"
                if document is None
                else json_text(document) + "\n"
            )
        else:
            text = _rendered(kind, report, name, group=args.group)
        if not _emit(text, kind, outputs[position] if position < len(outputs) else None, out):
            return EXIT_USAGE
    out.flush()
    failed = report.failed(args.fail_on, args.max_warnings)
    return EXIT_REJECTED if failed else EXIT_ACCEPTED


def _rule_level(text: str) -> tuple[str, Any]:
    rule, equals, level = text.partition("=")
    if not equals:
        raise UsageError(f"--rule takes ID=LEVEL, not {text!r}")
    return rule, level


def _rendered(kind: str, report: Report, name: str, *, group: bool) -> str:
    if kind == "json":
        return render_json(report) + "\n"
    if kind == "sarif":
        return render_sarif(report, artifact=_uri_reference(name)) + "\n"
    if kind == "junit":
        return render_junit(report, name=inert(name))
    if kind == "html":
        return render_html(report, title=inert(name))
    return render_text(report, group=group)


def _uri_reference(name: str) -> str:
    """A file's name as a relative URI reference, each byte that cannot stand in one
    percent-encoded (a space, ``#``, ``:``, a control, a byte that is not UTF-8)."""
    return urllib.parse.quote(os.fsencode(name))


def _emit(text: str, kind: str, target: Path | None, out: _Output) -> bool:
    """One rendering to its ``--output`` file, else to standard output; False (said) when
    the file cannot be written."""
    if target is not None:
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as exc:
            _error(f"cannot write {target}: {exc.strerror}")
            return False
    elif kind == "text":
        for line in text.splitlines():
            out.line(line)
    else:
        out.json(text.rstrip("\n"))
    return True


def _chunks(stream: IO[bytes], out: _Output) -> Iterator[bytes]:
    """``stream`` chunk by chunk; each chunk's events are shown before the next is read."""
    # read1: what one read gives, so a pipe (curl -N ... | check -) shows events as they come
    read = getattr(stream, "read1", stream.read)
    for chunk in iter(lambda: read(READ_CHUNK), b""):
        yield chunk
        out.flush()


def _summary(report: Report, tally: _CheckTally) -> list[str]:
    """The verdict and what the stream carried, in a screenful whatever its length."""
    result = report.result
    lines = [verdict_line(report), f"events: {tally.count}"]
    lines += [f"  {name} {count}" for name, count in sorted(tally.by_type.items())]
    statuses = Counter(run.status for run in result.runs)
    lines.append(
        f"runs: {len(result.runs)}"
        + "".join(f", {status} {count}" for status, count in sorted(statuses.items()))
    )
    lines += [f"  {describe_run(run)}" for run in result.runs[-_SUMMARY_ITEMS:]]
    roles = Counter(message.role for message in result.messages)
    lines.append(
        f"messages: {len(result.messages)}"
        + "".join(f", {role} {count}" for role, count in sorted(roles.items()))
    )
    lines += [f"  {message_line(message)}" for message in result.messages[-_SUMMARY_ITEMS:]]
    lines += grouped_lines(report)
    return lines


def _summary_document(report: Report, tally: _CheckTally) -> dict[str, Any]:
    document = report_document(report, events=False)
    document["eventCount"] = tally.count
    document["eventTypes"] = dict(tally.by_type.most_common())
    return document


def _as_json(result: Result) -> dict[str, Any]:
    return {**result_document(result), "events": result.events}


def _probe(args: argparse.Namespace, version: VersionLike, out: _Output) -> int:
    formats: list[str] = list(args.format or ["text"])
    outputs: list[Path] = list(args.output or [])
    if args.html is not None:  # after the pairs, so it shifts none of them
        formats.insert(len(outputs), "html")
        outputs.append(args.html)
    if len(outputs) > len(formats) or len(formats) - len(outputs) > 1:
        _error("each --output needs its --format, and only one goes to standard output")
        return EXIT_USAGE
    try:
        checked_url(args.url)
        headers = _checked_headers(args.header)
        steps = probe(
            args.url, headers=headers, timeout=args.timeout, gap=args.gap, version=version
        )
    except (ImportError, UsageError) as exc:
        _error(str(exc))
        return EXIT_USAGE
    for position, kind in enumerate(formats):
        if kind == "json":
            text = json_text(probe_document(steps)) + "\n"
        elif kind == "sarif":
            text = render_probe_sarif(steps, args.url) + "\n"
        elif kind == "junit":
            text = render_probe_junit(steps)
        elif kind == "html":
            text = render_html_steps(
                [(f"{s.name}: {s.outcome}", s.report) for s in steps if s.report is not None],
                title=f"AG-UI probe of {inert(args.url)}",
            )
        else:
            text = render_probe_text(steps)
        if not _emit(text, kind, outputs[position] if position < len(outputs) else None, out):
            return EXIT_USAGE
    out.flush()
    return EXIT_REJECTED if probe_failed(steps) else EXIT_ACCEPTED


def _checked_headers(texts: list[str]) -> dict[str, str]:
    """``--header``'s NAME:VALUE pairs, each one HTTP can send as it is (as ``HttpAgent``
    checks its ``headers=``), else a usage error naming the header, never its value (it may
    be a credential)."""
    import httpx  # noqa: PLC0415

    headers = {}
    for text in texts:
        name, colon, value = text.partition(":")
        if not colon:
            raise UsageError(f"--header takes NAME:VALUE, not {text!r}")
        name, value = name.strip(), value.strip()
        try:
            [(raw_name, raw_value)] = httpx.Headers({name: value}).raw
            sendable = sendable_header(raw_name, raw_value)
        except ValueError:  # not ASCII, which httpx encodes no other way
            sendable = False
        if not sendable:
            raise UsageError(f"--header {name[:100]!r}: HTTP cannot send it as it is")
        headers[name] = value
    return headers


def _conformance(folder: Path, version: VersionLike, out: _Output) -> int:
    if not folder.is_dir():
        _error(f"no such folder {folder}")
        return EXIT_USAGE
    corpus = run_corpus(folder, version)
    for line in corpus.lines():
        out.line(line)
    out.flush()
    return EXIT_ACCEPTED if not corpus.failed else EXIT_REJECTED


def run_input(args: argparse.Namespace) -> dict[str, Any]:
    """The RunAgentInput ``run`` sends: ``--input``'s, with the other options on top."""
    input: dict[str, Any] = {} if args.input is None else _json_file(args.input, "--input")
    if not isinstance(input, dict):
        raise UsageError(f"--input {args.input} is not a JSON object")
    if args.thread is not None:
        input["threadId"] = args.thread
    input.setdefault("threadId", str(uuid.uuid4()))
    input.setdefault("runId", str(uuid.uuid4()))
    input.setdefault("messages", [])
    if args.state is not None:
        path = Path(args.state)
        input["state"] = _json_file(path, "--state") if path.is_file() else _json(args.state)
    for tool_file in args.tool:
        tools = _json_file(tool_file, "--tool")
        input.setdefault("tools", []).extend(tools if isinstance(tools, list) else [tools])
    if args.message is not None:
        message = {"id": str(uuid.uuid4()), "role": "user", "content": args.message}
        input["messages"] = [*input["messages"], message]
    resume = [_resume_entry(text) for text in args.resume]
    resume += [{"interruptId": id, "status": "cancelled"} for id in args.abandon]
    if resume:
        input["resume"] = [*input.get("resume", []), *resume]
    return input


def _resume_entry(text: str) -> dict[str, Any]:
    interrupt_id, equals, payload = text.partition("=")
    entry: dict[str, Any] = {"interruptId": interrupt_id, "status": "resolved"}
    if equals:
        entry["payload"] = _json(payload)
    return entry


def _json(text: str) -> Any:
    try:
        return msgspec.json.decode(text)
    except msgspec.DecodeError as exc:
        raise UsageError(f"not JSON: {text[:80]!r} ({exc})") from None


def _json_file(path: Path, option: str) -> Any:
    try:
        return msgspec.json.decode(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"{option}: cannot read {path}: {exc.strerror}") from None
    except msgspec.DecodeError as exc:
        raise UsageError(f"{option}: {path} is not JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"{option}: {path} nests too deeply") from None


def _run(
    url: str,
    input: dict[str, Any],
    version: VersionLike,
    agent_options: dict[str, Any],
    out: _Output,
    *,
    as_json: bool,
    next: Path | None,
) -> int:
    try:
        agent = HttpAgent(url, version=version, **agent_options)
    except (ImportError, UsageError) as exc:
        _error(str(exc))
        return EXIT_USAGE
    return asyncio.run(_interruptible(_run_live(agent, input, out, as_json=as_json, next=next)))


async def _interruptible(work: Coroutine[Any, Any, int]) -> int:
    """``work``, with Ctrl-C cancelling it from the event loop, as ``asyncio.run`` itself
    does from Python 3.11 (its handler is then in place, and this adds none): before, the
    interrupt is raised wherever the interpreter is, in a finalizer too, which swallows it,
    and the run goes on. A process started with SIGINT ignored (a script's background job)
    keeps ignoring it."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return await work
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    interrupted = False

    def interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        if task is not None:
            task.cancel()

    try:
        loop.add_signal_handler(signal.SIGINT, interrupt)
    except (NotImplementedError, RuntimeError, ValueError):  # no Unix signals, or a thread
        return await work
    try:
        return await work
    except asyncio.CancelledError:
        if interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def _run_live(
    agent: HttpAgent[Any, Any, Any],
    input: dict[str, Any],
    out: _Output,
    *,
    as_json: bool,
    next: Path | None,
) -> int:
    tally = _Tally(out, timeline=True, as_json=as_json)
    violation: StreamError | None = None
    try:
        request = agent.run(input)
    except MalformedEvent as exc:  # refused before anything is sent
        _error(f"the input is not a RunAgentInput: {exc}")
        return EXIT_USAGE
    try:
        async with request as stream:
            tally.start()
            try:
                async for event in stream:
                    tally.show([event])
                    out.flush()
                await stream.result()  # a failed run is a result: the summary shows it
            except (ProtocolViolation, TransportError) as exc:
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
    if next is not None:
        try:
            next.write_bytes(msgspec.json.encode(_next_input(input, result)))
        except OSError as exc:
            _error(f"cannot write {next}: {exc.strerror}")
            return EXIT_USAGE
    # the stream's verdict, as check gives it: a run that failed by RUN_ERROR was conformant
    return EXIT_REJECTED if violation is not None or not result.runs else EXIT_ACCEPTED


def _next_input(sent: dict[str, Any], result: Result) -> dict[str, Any]:
    """The next turn on the thread: its messages so far, the state the run left, the same tools."""
    input: dict[str, Any] = {
        "threadId": sent["threadId"],
        "runId": str(uuid.uuid4()),
        "messages": result.messages,
    }
    if result.state is not None:
        input["state"] = result.state
    for key in ("tools", "context", "forwardedProps"):
        if key in sent:
            input[key] = sent[key]
    return input


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
    lines = ["runs:", *(f"  {describe_run(run)}" for run in result.runs)]
    new = [message for message in result.messages if message.id not in sent_ids]
    lines.append(f"new messages: {len(new)}")
    for message in new:
        lines += _message_lines(message)
    lines += [f"warning: {warning}" for warning in result.warnings]
    last = result.runs[-1] if result.runs else None
    for interrupt in last.interrupts if last is not None else []:
        asked = f": {interrupt.message}" if isinstance(interrupt.message, str) else ""
        lines.append(f"interrupt {interrupt.id} ({interrupt.reason}){asked}")
    if last is not None and last.interrupts:
        lines.append("  answer each in the next run: --resume ID=JSON or --abandon ID")
    if result.violation is not None:
        lines.append(f"REJECTED {result.violation}")
    elif last is not None and last.error is not None:  # the run failed: RUN_ERROR
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
