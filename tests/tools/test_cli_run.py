"""``agui-msgspec run`` takes what a second turn needs (issue 23, item 7): ``--input``,
``--tool``, ``--state``, ``--resume``/``--abandon`` and ``--next``, combined with
``--message``/``--thread``; exit codes as ``check``'s for the stream the agent sent."""

from __future__ import annotations

import http.server
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from serving import serve_handler

from agui_msgspec._tools.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@contextmanager
def agent(body: bytes) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """An endpoint answering every POST with ``body``; yields its URL and the inputs it got."""
    received: list[dict[str, Any]] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with serve_handler(Handler) as url:
        yield f"{url}/", received


def sse(*documents: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(d).encode() + b"\n\n" for d in documents)


def answer(thread: str = "thread-1", *middle: dict[str, Any]) -> bytes:
    return sse(
        {"type": "RUN_STARTED", "threadId": thread, "runId": "r"},
        *middle,
        {"type": "RUN_FINISHED", "threadId": thread, "runId": "r"},
    )


def test_input_tools_state_and_message_combine(tmp_path: Path) -> None:
    given = {
        "threadId": "thread-1",
        "runId": "run-2",
        "messages": [{"id": "u1", "role": "user", "content": "before"}],
        "tools": [{"name": "a", "description": "A", "parameters": {}}],
    }
    (tmp_path / "input.json").write_text(json.dumps(given))
    (tmp_path / "tools.json").write_text(json.dumps([{"name": "b", "description": "B"}]))
    (tmp_path / "tool.json").write_text(json.dumps({"name": "c", "description": "C"}))
    options = ["--input", str(tmp_path / "input.json"), "--message", "now", "--state", '{"k":1}']
    options += ["--tool", str(tmp_path / "tools.json"), "--tool", str(tmp_path / "tool.json")]
    with agent(answer()) as (url, received):
        assert main(["run", url, *options]) == 0
    [sent] = received
    assert (sent["threadId"], sent["runId"], sent["state"]) == ("thread-1", "run-2", {"k": 1})
    assert [m["content"] for m in sent["messages"]] == ["before", "now"]
    assert [tool["name"] for tool in sent["tools"]] == ["a", "b", "c"]


def test_thread_overrides_the_input_and_state_reads_a_file(tmp_path: Path) -> None:
    (tmp_path / "input.json").write_text(json.dumps({"threadId": "old", "messages": []}))
    (tmp_path / "state.json").write_text(json.dumps({"from": "file"}))
    options = ["--input", str(tmp_path / "input.json"), "--thread", "new"]
    with agent(answer("new")) as (url, received):
        assert main(["run", url, *options, "--state", str(tmp_path / "state.json")]) == 0
    assert (received[0]["threadId"], received[0]["state"]) == ("new", {"from": "file"})
    assert received[0]["runId"]  # a new one, the file had none


def test_an_interrupt_is_shown_and_the_next_turn_resumes_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    interrupted = (EXAMPLES / "interrupted-run.sse").read_bytes()
    next_input = tmp_path / "next.json"
    with agent(interrupted) as (url, _):
        args = ["run", url, "--thread", "thread-1", "--message", "clean up", "--state", "{}"]
        assert main([*args, "--next", str(next_input)]) == 0
    out = capsys.readouterr().out
    assert "interrupt int-1 (approval): Delete 3 invoices older than 2020?" in out
    assert "--resume ID=JSON or --abandon ID" in out
    turn = json.loads(next_input.read_text())
    assert turn["threadId"] == "thread-1"
    assert [m["role"] for m in turn["messages"]] == ["user", "assistant"]
    assert turn["state"] == {}

    with agent(answer()) as (url, received):
        resume = ["--resume", 'int-1={"approved": true}', "--abandon", "int-2"]
        assert main(["run", url, "--input", str(next_input), *resume]) == 0
    [sent] = received
    assert sent["resume"] == [
        {"interruptId": "int-1", "status": "resolved", "payload": {"approved": True}},
        {"interruptId": "int-2", "status": "cancelled"},
    ]
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant"]
    assert sent["runId"] == turn["runId"]  # the fresh run id --next wrote
    assert "resume" not in turn


def test_a_resume_without_a_payload_is_resolved_without_one() -> None:
    with agent(answer()) as (url, received):
        assert main(["run", url, "--thread", "thread-1", "--resume", "int-1"]) == 0
    assert received[0]["resume"] == [{"interruptId": "int-1", "status": "resolved"}]


def test_a_run_that_failed_by_run_error_exits_0_as_check_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = sse(
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "r"},
        {"type": "RUN_ERROR", "message": "model overloaded"},
    )
    with agent(body) as (url, _):
        assert main(["run", url, "--thread", "thread-1"]) == 0
    assert "RUN FAILED 'model overloaded'" in capsys.readouterr().out
    recorded = tmp_path / "failed.sse"
    recorded.write_bytes(body)
    assert main(["check", str(recorded)]) == 0


def test_a_rejected_stream_exits_1() -> None:
    body = sse(
        {"type": "RUN_STARTED", "threadId": "thread-1", "runId": "r"},
        {"type": "TEXT_MESSAGE_END", "messageId": "never-started"},
    )
    with agent(body) as (url, _):
        assert main(["run", url, "--thread", "thread-1"]) == 1


@pytest.mark.parametrize(
    ("options", "said"),
    [
        (["--input", "missing.json"], "--input: cannot read"),
        (["--input", "bad.json"], "is not JSON"),
        (["--input", "list.json"], "is not a JSON object"),
        (["--input", "malformed.json"], "the input is not a RunAgentInput"),
        (["--state", "{not json"], "not JSON"),
        (["--resume", "int-1={nope"], "not JSON"),
        (["--tool", "bad.json"], "--tool: "),
    ],
)
def test_a_bad_option_is_a_usage_error_and_nothing_is_sent(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    options: list[str],
    said: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.json").write_text("{")
    (tmp_path / "list.json").write_text("[]")
    (tmp_path / "malformed.json").write_text(json.dumps({"threadId": 3, "messages": []}))
    with agent(answer()) as (url, received):
        assert main(["run", url, *options]) == 2
    assert received == []
    assert said in capsys.readouterr().err
