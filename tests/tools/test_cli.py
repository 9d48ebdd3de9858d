"""``agui-msgspec check`` and ``run`` on real traffic: summaries, seeded input, closed pipes,
every event type's substance, and memory that does not grow with the stream (issue 12, item 3;
issue 14, item 11). Memory is measured with tracemalloc, never time."""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import io
import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from serving import serve_handler, trickling_server

from agui_msgspec._tools import cli
from agui_msgspec._tools.cli import main

START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
MiB = 1024 * 1024


def sse(*documents: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(d).encode() + b"\n\n" for d in documents)


def long_body(events: int, value: str = "x") -> bytes:
    """A run of ``events`` events in all: text, tool calls and custom events that assemble
    little."""
    middle: list[dict[str, Any]] = [
        {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hello"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    ]
    custom = b"data: " + json.dumps({"type": "CUSTOM", "name": "tick", "value": value}).encode()
    return b"".join(
        [
            sse(START, *middle),
            (custom + b"\n\n") * (events - len(middle) - 2),
            sse(FINISH),
        ]
    )


def test_summary_of_a_100k_event_body_fits_a_screen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "long.sse"
    body.write_bytes(long_body(100_000))
    assert main(["check", "--summary", str(body)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) < 40
    assert lines[0] == "ACCEPTED: 0 violation(s), 0 warning(s), 0 hint(s)"
    assert "events: 100000" in lines
    assert "  CUSTOM 99995" in lines
    assert "  TEXT_MESSAGE_CONTENT 1" in lines
    assert "runs: 1, completed 1" in lines
    assert "messages: 1, assistant 1" in lines


def test_summary_of_a_rejected_stream_leads_with_the_violation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "bad.sse"
    body.write_bytes(sse(START, {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": "{"}))
    assert main(["check", "--summary", str(body)]) == 1
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("REJECTED: 2 violation(s)")  # the set-aside call, then truncation
    assert "[tool-call-not-open] frame 1: " in first


def test_summary_as_json_counts_instead_of_listing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "long.sse"
    body.write_bytes(long_body(1_000))
    assert main(["check", "--summary", "--json", str(body)]) == 0
    document = json.loads(capsys.readouterr().out)
    assert "events" not in document
    assert document["eventCount"] == 1_000
    assert document["eventTypes"]["CUSTOM"] == 995


def test_json_streams_the_events_and_stays_one_document(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "bad.sse"
    body.write_bytes(sse(START, {"type": "TEXT_MESSAGE_END", "messageId": "nope"}))
    assert main(["check", "--json", str(body)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert [(event["type"], event["status"]) for event in document["events"]] == [
        ("RUN_STARTED", "delivered"),
        ("TEXT_MESSAGE_END", "set-aside"),
    ]
    assert document["violation"]["rule"] == "text-message-not-open"
    assert document["outcome"] == "failed"


def test_input_seeds_the_history_a_snapshot_restates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = {"id": "u1", "role": "user", "content": "What is 2+2?"}
    answer = {"id": "a1", "role": "assistant", "content": "4"}
    body = tmp_path / "snapshot.sse"
    body.write_bytes(sse(START, {"type": "MESSAGES_SNAPSHOT", "messages": [user, answer]}, FINISH))
    seed = tmp_path / "input.json"
    seed.write_text(json.dumps({"threadId": "t", "runId": "r", "messages": [user]}))
    assert main(["check", "--input", str(seed), str(body)]) == 0
    out = capsys.readouterr().out
    assert out.index("[user] 'What is 2+2?'") < out.index("[assistant] '4'")
    assert "messages: 2" in out


def test_input_seeds_the_state_a_delta_patches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    delta = {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/n", "value": 2}]}
    body = tmp_path / "delta.sse"
    body.write_bytes(sse(START, delta, FINISH))
    seed = tmp_path / "input.json"
    seed.write_text(json.dumps({"threadId": "t", "runId": "r", "messages": [], "state": {"n": 1}}))
    assert main(["check", "--json", "--input", str(seed), str(body)]) == 0
    assert json.loads(capsys.readouterr().out)["state"] == {"n": 2}


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (b"{not json", "not JSON"),
        (b'{"threadId": 5}', "not a RunAgentInput"),
        (b"[" * 100_000, "nests too deeply"),
    ],
    ids=["not-json", "not-input", "too-deep"],
)
def test_an_unusable_input_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, says: str
) -> None:
    body = tmp_path / "plain.sse"
    body.write_bytes(sse(START, FINISH))
    seed = tmp_path / "input.json"
    seed.write_bytes(content)
    assert main(["check", "--input", str(seed), str(body)]) == 2
    assert says in capsys.readouterr().err


def test_a_missing_input_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "plain.sse"
    body.write_bytes(sse(START, FINISH))
    assert main(["check", "--input", str(tmp_path / "nowhere.json"), str(body)]) == 2
    assert "nowhere.json" in capsys.readouterr().err


# --- the timeline shows what every event carries -------------------------------------------


def test_the_timeline_shows_the_substance_of_every_event_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events: list[dict[str, Any]] = [
        START,
        {"type": "RAW", "event": {"vendor": "acme", "n": 1}, "source": "acme-llm"},
        {"type": "CUSTOM", "name": "progress", "value": {"done": 3, "of": 7}},
        {"type": "STATE_SNAPSHOT", "snapshot": {"city": "Paris"}},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/zip", "value": "75001"}]},
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "a1",
            "activityType": "plan",
            "content": {"steps": ["look"]},
        },
        {
            "type": "ACTIVITY_DELTA",
            "messageId": "a1",
            "activityType": "plan",
            "patch": [{"op": "add", "path": "/steps/1", "value": "book"}],
        },
        {"type": "REASONING_START", "messageId": "r1"},
        {"type": "REASONING_MESSAGE_START", "messageId": "rm1", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "rm1", "delta": "hmm"},
        {"type": "REASONING_MESSAGE_END", "messageId": "rm1"},
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "rm1",
            "encryptedValue": "opaque-blob-123",
        },
        {"type": "REASONING_END", "messageId": "r1"},
        {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "search"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"q":"hotels"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        {"type": "TOOL_CALL_RESULT", "messageId": "t1", "toolCallId": "c1", "content": "3 found"},
        {"type": "MESSAGES_SNAPSHOT", "messages": [{"id": "u9", "role": "user", "content": "hi"}]},
        {"type": "STEP_STARTED", "stepName": "plan"},
        {"type": "STEP_FINISHED", "stepName": "plan"},
        {**FINISH, "result": {"booked": True}},
    ]
    body = tmp_path / "all.sse"
    body.write_bytes(sse(*events))
    assert main(["check", str(body)]) == 0
    out = capsys.readouterr().out
    for shown in [
        'RAW event={"vendor":"acme","n":1} source=\'acme-llm\'',
        'CUSTOM name=progress value={"done":3,"of":7}',
        'STATE_SNAPSHOT snapshot={"city":"Paris"}',
        'STATE_DELTA delta=[{"op":"add","path":"/zip","value":"75001"}]',
        'ACTIVITY_SNAPSHOT messageId=a1 activityType=\'plan\' content={"steps":["look"]}',
        'ACTIVITY_DELTA messageId=a1 activityType=\'plan\' patch=[{"op":"add","path":"/steps/1","value":"book"}]',
        "REASONING_MESSAGE_CONTENT messageId=rm1 delta='hmm'",
        "REASONING_ENCRYPTED_VALUE subtype='message' entityId='rm1' encryptedValue='opaque-blob-123'",
        "TOOL_CALL_START toolCallId=c1 toolCallName='search'",
        'TOOL_CALL_ARGS toolCallId=c1 delta=\'{"q":"hotels"}\'',
        "TOOL_CALL_RESULT messageId=t1 toolCallId='c1' content='3 found'",
        'MESSAGES_SNAPSHOT messages=[{"role":"user","id":"u9","content":"hi"}]',
        "STEP_STARTED stepName=plan",
        "RUN_FINISHED runId=r threadId='t' result={\"booked\":true}",
    ]:
        assert shown in out, shown


def test_a_long_value_is_cut_in_the_timeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "long-value.sse"
    body.write_bytes(sse(START, {"type": "CUSTOM", "name": "blob", "value": "z" * 5000}, FINISH))
    assert main(["check", str(body)]) == 0
    (line,) = [line for line in capsys.readouterr().out.splitlines() if "CUSTOM" in line]
    assert len(line) < 300
    assert "(+4800 chars)" in line


# --- a closed pipe, a closed or full standard output --------------------------------------


def first_line_then_close(command: list[str]) -> tuple[str, int, str]:
    """Run the CLI, read one line of its output, close the pipe (as ``| head -1`` does)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "agui_msgspec._tools.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    first = process.stdout.readline().decode()
    process.stdout.close()
    err = process.stderr.read().decode()
    return first, process.wait(timeout=120), err


@pytest.mark.parametrize(("verdict", "code"), [("accepted", 0), ("rejected", 1)])
def test_check_into_a_closed_pipe_ends_quietly_with_the_verdict(
    tmp_path: Path, verdict: str, code: int
) -> None:
    body = tmp_path / "long.sse"
    content = long_body(50_000)
    body.write_bytes(content if verdict == "accepted" else content[: -len(sse(FINISH))])
    first, returned, err = first_line_then_close(["check", str(body)])
    assert "RUN_STARTED" in first
    assert err == ""
    assert returned == code


@contextlib.contextmanager
def long_stream_server(events: int, value: str = "x") -> Iterator[str]:
    body = long_body(events, value)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            # a conformant agent answers on the thread it was asked about (basic/run-input):
            # the boundary events are rewritten, the rest is sent from the body uncopied
            thread = {"threadId": request["threadId"]}
            middle = memoryview(body)[len(sse(START)) : len(body) - len(sse(FINISH))]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            with contextlib.suppress(OSError):
                self.wfile.write(sse({**START, **thread}))
                for start in range(0, len(middle), 64 * 1024):
                    self.wfile.write(middle[start : start + 64 * 1024])
                self.wfile.write(sse({**FINISH, **thread}))

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler) as url:
        yield f"{url}/"


def check_into(stdout: str, options: list[str], body: Path) -> subprocess.CompletedProcess[str]:
    """``check`` run by a shell with its standard output redirected: ``>&-``, ``>/dev/full``."""
    command = [sys.executable, "-m", "agui_msgspec._tools.cli", "check", *options, str(body)]
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {stdout}', "sh", *command],
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full to fill")
@pytest.mark.parametrize(
    ("options", "verdict", "code"), [([], "accepted", 0), (["--json"], "rejected", 1)]
)
def test_check_into_a_full_disk_says_so_and_exits_with_the_verdict(
    tmp_path: Path, options: list[str], verdict: str, code: int
) -> None:
    body = tmp_path / "long.sse"
    content = long_body(5_000)
    body.write_bytes(content if verdict == "accepted" else content[: -len(sse(FINISH))])
    done = check_into(">/dev/full", options, body)
    assert done.stderr == "agui-msgspec: cannot write to standard output: No space left on device\n"
    assert done.returncode == code


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell closes the descriptor")
def test_check_with_standard_output_closed_says_so_and_exits_with_the_verdict(
    tmp_path: Path,
) -> None:
    body = tmp_path / "run.sse"
    body.write_bytes(sse(START, FINISH))
    done = check_into(">&-", [], body)
    assert done.stderr == "agui-msgspec: cannot write to standard output: it is closed\n"
    assert done.returncode == 0


def test_run_into_a_closed_pipe_ends_quietly_with_the_verdict() -> None:
    with long_stream_server(20_000) as url:
        first, returned, err = first_line_then_close(["run", url])
    assert "RUN_STARTED" in first
    assert err == ""
    assert returned == 0


# --- memory: the stream is not kept --------------------------------------------------------


def test_check_first_keeps_no_events(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    body = tmp_path / "long.sse"
    body.write_bytes(long_body(60_000, value="v" * 300))  # 21 MB of events that assemble nothing
    assert body.stat().st_size > 20 * MiB
    with open(os.devnull, "w") as devnull:
        monkeypatch.setattr(sys, "stdout", devnull)
        tracemalloc.start()
        try:
            assert main(["check", "--first", str(body)]) == 0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 8 * MiB  # a read chunk and its events, not the body or the event list


def test_run_keeps_no_events(monkeypatch: pytest.MonkeyPatch) -> None:
    with long_stream_server(30_000, value="v" * 300) as url, open(os.devnull, "w") as devnull:
        monkeypatch.setattr(sys, "stdout", devnull)
        tracemalloc.start()
        try:
            assert main(["run", url]) == 0
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert peak < 8 * MiB  # the 30,000 events (about 10 MB) are printed and dropped


def test_check_reads_standard_input_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    content = long_body(10_000)

    class Stdin:
        buffer = io.BytesIO(content)

    reads: list[int] = []
    original = Stdin.buffer.read1

    def read1(size: int = -1) -> bytes:
        reads.append(size)
        return original(size)

    monkeypatch.setattr(Stdin.buffer, "read1", read1)
    monkeypatch.setattr(sys, "stdin", Stdin)
    with open(os.devnull, "w") as devnull:
        monkeypatch.setattr(sys, "stdout", devnull)
        assert main(["check", "--summary", "-"]) == 0
    assert reads
    assert all(0 < size <= MiB for size in reads)


def test_check_from_a_pipe_tells_the_format_past_a_first_blank_read(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A pipe's first read may hold only a keep-alive line end: the format is told from the
    first byte past it, as consume_body tells it, not from that read alone."""
    json_lines = (json.dumps(START) + "\n" + json.dumps(FINISH) + "\n").encode()
    pieces = iter([b"\n", json_lines])

    class Stdin:
        buffer = io.BytesIO()

    monkeypatch.setattr(Stdin.buffer, "read1", lambda size=-1: next(pieces, b""))
    monkeypatch.setattr(sys, "stdin", Stdin)
    assert main(["check", "--summary", "-"]) == 0
    assert "ACCEPTED" in capsys.readouterr().out


def test_check_from_a_pipe_shows_each_event_as_it_arrives() -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "agui_msgspec._tools.cli", "check", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(sse(START))
    process.stdin.flush()
    assert "RUN_STARTED" in process.stdout.readline().decode()  # before the rest was written
    process.stdin.write(sse(FINISH))
    process.stdin.close()
    assert "RUN_FINISHED" in process.stdout.readline().decode()
    process.stdout.read()
    assert process.wait(timeout=60) == 0


# --- text from a stream is inert on a terminal -----------------------------------------------

HOSTILE = "\x1b]0;owned\x07\x1b]52;c;cGF3bmVk\x07\r\nACCEPTED\u202e"


def hostile_body() -> bytes:
    """A rejected stream whose ids, names, text and a property's name (a warning's path)
    carry escape sequences, CR and LF."""
    return sse(
        {"type": "RUN_STARTED", "threadId": HOSTILE, "runId": HOSTILE},
        {"type": "CUSTOM", "name": HOSTILE, "value": 1, HOSTILE: 1},
        {"type": "TEXT_MESSAGE_START", "messageId": HOSTILE},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": HOSTILE, "delta": HOSTILE},
        {"type": "TEXT_MESSAGE_END", "messageId": HOSTILE},
        {"type": "STEP_FINISHED", "stepName": HOSTILE},  # never started: rejected
    )


def assert_inert(output: str) -> None:
    assert not any(ch in output for ch in "\x1b\x07\r\u202e")
    assert not any(line.startswith("ACCEPTED") for line in output.splitlines())
    assert "\\x1b]0;owned" in output  # shown, escaped


@pytest.mark.parametrize("options", [[], ["--summary"], ["--group"], ["--format", "junit"]])
def test_check_shows_control_characters_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    body = tmp_path / "hostile.sse"
    body.write_bytes(hostile_body())
    assert main(["check", *options, str(body)]) == 1
    assert_inert(capsys.readouterr().out)


def test_check_json_stays_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = tmp_path / "hostile.sse"
    body.write_bytes(hostile_body())
    assert main(["check", "--json", str(body)]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["events"][0]["event"]["threadId"] == HOSTILE


# DEL, CSI and OSC as C1 (which a UTF-8 terminal may honour), bidi overrides and marks, the
# line separator, the BOM, a tag character
C1_AND_BIDI = "\x7f\x9b2J\x9d0;owned\x9c\u202e\u2066\u200e\u061c\u2028\ufeff\U000e0041"


@pytest.mark.parametrize(
    "options", [["--json"], ["--summary", "--json"], ["--format", "sarif"], ["--format", "html"]]
)
def test_json_and_html_write_what_a_terminal_acts_on_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], options: list[str]
) -> None:
    body = tmp_path / "c1.sse"
    unknown = {"type": "CUSTOM", "name": "n", "value": 1, C1_AND_BIDI: 1}  # a warning's path
    events = [{**START, "runId": C1_AND_BIDI}, unknown, {**FINISH, "runId": C1_AND_BIDI}]
    body.write_bytes(sse(*events))  # json.dumps escapes them; the consumer reads them back
    assert main(["check", *options, str(body)]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in C1_AND_BIDI if not ch.isprintable())
    if "--json" in options:  # the same document
        assert json.loads(out)["runs"][0]["runId"] == C1_AND_BIDI


def test_run_shows_control_characters_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    body = hostile_body()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler) as url:
        assert main(["run", f"{url}/"]) == 1
    captured = capsys.readouterr()
    assert_inert(captured.out + captured.err)


def test_an_error_message_from_the_server_is_shown_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(500)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(HOSTILE.encode())

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler) as url:
        assert main(["run", f"{url}/"]) == 1
    captured = capsys.readouterr()
    assert not any(ch in captured.err for ch in "\x1b\x07\r\u202e")


# --- what the command line quotes is inert too: file names, URLs, arguments -------------------


@pytest.mark.parametrize("count", ["-5", "x", "1.5"])
def test_max_warnings_takes_a_count(count: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--max-warnings", count, "stream.sse"]) == 2
    assert f"--max-warnings: not a count (0 or more): '{count}'" in capsys.readouterr().err


def test_a_hostile_file_name_is_inert_in_the_html_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / f"{HOSTILE}.sse"
    body.write_bytes(sse(START, FINISH))
    assert main(["check", "--format", "html", str(body)]) == 0
    page = capsys.readouterr().out
    assert_inert(page)
    assert "<title>" in page


def test_format_characters_from_a_stream_are_shown_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # bidi marks (LRM, RLM, ALM), an isolate, the BOM, an annotation, a tag: all invisible
    marks = "\u200e\u200f\u061c\u2066\ufeff\ufff9\U000e0041"
    body = tmp_path / "marks.sse"
    body.write_bytes(sse({**START, "threadId": f"t{marks}"}, {**FINISH, "threadId": f"t{marks}"}))
    assert main(["check", str(body)]) == 0
    out = capsys.readouterr().out
    assert not any(ch in out for ch in marks)
    assert "t\\u200e\\u200f\\u061c\\u2066\\ufeff\\ufff9\\U000e0041" in out


NOT_UTF8 = os.fsdecode(b"b\xff\xfe.sse")  # a name that is not UTF-8, as Python reads it
WARNED = sse(START, {"type": "CUSTOM", "name": "n", "value": 1, "extra": 1}, FINISH)


def written(path: Path, content: bytes) -> Path:
    try:
        path.write_bytes(content)
    except OSError:
        pytest.skip("this file system takes only UTF-8 names")
    return path


def test_a_name_that_is_not_utf8_is_shown_escaped_in_every_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = written(tmp_path / NOT_UTF8, WARNED)
    for kind in ("text", "json", "sarif", "junit", "html"):
        assert main(["check", "--format", kind, str(body)]) == 0
        out = capsys.readouterr().out
        out.encode("utf-8")  # what a strict UTF-8 standard output can write
        if kind in ("junit", "html"):
            assert "b\\udcff\\udcfe.sse" in out


@pytest.mark.parametrize(
    ("name", "uri"),
    [
        (NOT_UTF8, "b%FF%FE.sse"),
        ("my run #1: 50%.sse", "my%20run%20%231%3A%2050%25.sse"),
        ("\x1b]0;owned\x07.sse", "%1B%5D0%3Bowned%07.sse"),
    ],
)
def test_sarif_locates_a_finding_by_a_uri_reference(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    uri: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    written(tmp_path / name, WARNED)
    assert main(["check", "--format", "sarif", name]) == 0
    [result] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == uri


def test_a_hostile_url_is_inert_in_the_probe_page(capsys: pytest.CaptureFixture[str]) -> None:
    # nothing listens on port 1: every step fails, and the page still names the URL
    url = "http://127.0.0.1:1/\u202e\x9b2J"
    assert main(["probe", "--timeout", "5", "--format", "html", url]) == 1
    page = capsys.readouterr().out
    assert not any(ch in page for ch in "\u202e\x9b")
    assert "/\\u202e\\x9b2J</title>" in page


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "stream.sse", HOSTILE],  # unrecognized arguments
        ["check", f"--{HOSTILE}", "stream.sse"],  # an unknown option
        ["check", "--format", HOSTILE, "stream.sse"],  # invalid choice
        ["run", "--timeout", HOSTILE, "http://localhost/"],  # a type's own error
    ],
)
def test_argument_errors_quote_the_arguments_inert(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert_inert(capsys.readouterr().err)


def started_with_sigint(handler: str) -> list[str]:
    """``python -m agui_msgspec`` with SIGINT's handler set first: ``default_int_handler`` is a
    start from a terminal, whatever this process inherited (a CI job may ignore SIGINT, and a
    child inherits that); ``SIG_IGN`` a background job of a script."""
    start = f"signal.signal(signal.SIGINT, signal.{handler})"
    module = "runpy.run_module('agui_msgspec', run_name='__main__', alter_sys=True)"
    return [sys.executable, "-c", f"import runpy, signal; {start}; {module}"]


@contextlib.contextmanager
def run_interrupted(handler: str) -> Iterator[subprocess.Popen[bytes]]:
    """``run`` against a run that never ends, started with SIGINT's ``handler``
    (:func:`started_with_sigint`), and sent SIGINT once its RUN_STARTED is out."""
    with serve_handler(trickling_server(b"", b": keepalive\n\n", 0.1)) as url:
        process = subprocess.Popen(
            [*started_with_sigint(handler), "run", f"{url}/"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None
        assert "RUN_STARTED" in process.stdout.readline().decode()
        process.send_signal(signal.SIGINT)
        yield process


def test_ctrl_c_on_run_exits_130_without_a_traceback() -> None:
    with run_interrupted("default_int_handler") as process:
        _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    assert "Traceback" not in err.decode()


def test_ctrl_c_in_a_finalizer_still_stops_the_run() -> None:
    """Python 3.10's default handler raises the interrupt wherever the interpreter is; in a
    finalizer it is swallowed and the run went on (a flaky CI hang). The event loop's own
    handler cancels the run instead."""

    class InterruptedWhenCollected:
        def __del__(self) -> None:
            signal.raise_signal(signal.SIGINT)

    async def run() -> int:
        InterruptedWhenCollected()  # collected at once: the signal arrives inside __del__
        await asyncio.sleep(5)
        return 0

    started = time.monotonic()
    # as from a terminal, whatever this process inherited (a CI job may ignore SIGINT)
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            asyncio.run(cli._interruptible(run()))
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert time.monotonic() - started < 4


def test_a_run_started_with_sigint_ignored_keeps_ignoring_it() -> None:
    with run_interrupted("SIG_IGN") as process:
        with pytest.raises(subprocess.TimeoutExpired):
            process.communicate(timeout=1)
        process.terminate()
        process.communicate(timeout=30)


# --- check: a message with only tool calls, a body ending inside an event ------------------------


def test_check_prints_a_message_that_has_only_tool_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = [
        START,
        {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
        {"type": "TOOL_CALL_END", "toolCallId": "c"},
        FINISH,
    ]
    body = tmp_path / "calls.jsonl"
    body.write_bytes(b"\n".join(msgspec.json.encode(e) for e in events) + b"\n")
    assert main(["check", str(body)]) == 0
    assert "+1 tool call(s)" in capsys.readouterr().out


def test_check_reads_a_body_ending_inside_an_event_as_truncated(tmp_path: Path) -> None:
    frames = [b"data: " + msgspec.json.encode(e) + b"\n\n" for e in (START, FINISH)]
    body = tmp_path / "cut.sse"
    body.write_bytes(b"".join(frames) + b"data: " + msgspec.json.encode(START) + b"\n")
    assert main(["check", "--json", str(body)]) == 1
