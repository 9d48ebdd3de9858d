"""A generated bindings module is accepted wherever a version is: ``Consumer``, ``consume``,
``consume_body``, ``build_run_input``, ``parse_run_input``, ``StrictWriter``, ``HttpAgent`` and the
CLI's ``--bindings``. The modules are generated at test time from each schema in ``schema/``
and from the pre-1.0 draft (when ``../shared`` is there), under names of their own."""

from __future__ import annotations

import asyncio
import http.server
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import msgspec
import pytest
from serving import serve_handler

import agui_msgspec
from agui_msgspec import (
    Consumer,
    HttpAgent,
    StrictWriter,
    build_run_input,
    consume,
    consume_body,
    parse_run_input,
)
from agui_msgspec._tools.cli import main
from agui_msgspec._versions import load_bindings

ROOT = Path(__file__).resolve().parents[2]
DRAFT = ROOT.parent / "shared" / "agui" / "schema" / "pre-1.0-draft" / "schema.json"
SCHEMAS = {
    **{p.parent.name: p for p in sorted((ROOT / "schema").glob("*/schema.json"))},
    "draft": DRAFT,
}
INPUT: dict[str, Any] = {
    "threadId": "t",
    "runId": "r",
    "messages": [{"id": "u1", "role": "user", "content": "Hi"}],
}


@pytest.fixture(scope="module", params=sorted(SCHEMAS))
def generated(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The path of a module generated from one schema, named apart from the package's own."""
    schema = SCHEMAS[request.param]
    if not schema.is_file():
        pytest.skip(f"no schema at {schema} (the draft needs ../shared/agui/schema)")
    out = tmp_path_factory.mktemp("bindings")
    return agui_msgspec.generate(schema, out, module=f"generated_{request.param.replace('.', '_')}")


@pytest.fixture(scope="module")
def bindings(generated: Path) -> Iterator[ModuleType]:
    module = load_bindings(generated)
    yield module
    sys.modules.pop(module.__name__, None)


def is_draft(bindings: ModuleType) -> bool:
    return bindings.PROTOCOL_VERSION == "draft"


def answer(bindings: ModuleType) -> list[dict[str, Any]]:
    """A run whose producer declares what the bindings speak (1.1 for the draft)."""
    declared = "1.1" if is_draft(bindings) else bindings.PROTOCOL_VERSION
    return [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "protocolVersion": declared},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Hello"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]


def sse(events: list[dict[str, Any]]) -> bytes:
    return b"".join(b"data: " + json.dumps(event).encode() + b"\n\n" for event in events)


def assert_version_warnings(bindings: ModuleType, warnings: list[str]) -> None:
    """The draft's version is not MAJOR.MINOR: compared as unknown, with one warning."""
    if is_draft(bindings):
        assert len(warnings) == 1, warnings
        assert "'draft'" in warnings[0]
        assert "not MAJOR.MINOR" in warnings[0]
    else:
        assert warnings == []


def test_consume_consume_body_and_consumer_decode_into_the_module(bindings: ModuleType) -> None:
    payloads = [msgspec.json.encode(event) for event in answer(bindings)]
    for result in (consume(payloads, bindings), consume_body(sse(answer(bindings)), bindings)):
        assert result.outcome == "completed", result.violation
        assert type(result.events[0]) is bindings.RunStartedEvent
        assert type(result.messages[0]) is bindings.AssistantMessage
        assert result.messages[0].content == "Hello"
        assert_version_warnings(bindings, result.warnings)
    consumer = Consumer(version=bindings)
    delivered = consumer.feed_many(payloads)
    consumer.close()
    assert [event.type for event in delivered] == [event["type"] for event in answer(bindings)]


def test_build_run_input_declares_the_module_version(bindings: ModuleType) -> None:
    warnings: list[str] = []
    prepared = build_run_input(
        {**INPUT, "protocolVersion": "0.1"}, bindings, on_warning=warnings.append
    )
    assert type(prepared) is bindings.RunAgentInput
    if is_draft(bindings):
        assert prepared.protocol_version is msgspec.UNSET  # nothing to declare
        assert len(warnings) == 1
        assert "'draft' is not MAJOR.MINOR" in warnings[0]
    else:
        assert prepared.protocol_version == bindings.PROTOCOL_VERSION
        assert warnings == []


def test_parse_run_input_types_with_the_module(bindings: ModuleType) -> None:
    warnings: list[str] = []
    read = parse_run_input(
        json.dumps({**INPUT, "vendorTrace": "x"}), version=bindings, on_warning=warnings.append
    )
    assert type(read) is bindings.RunAgentInput
    assert type(read.messages[0]) is bindings.UserMessage
    assert len(warnings) == 1
    assert "/vendorTrace" in warnings[0]


def test_strict_writer_checks_the_module_events(bindings: ModuleType) -> None:
    writer = StrictWriter(bindings)
    start = bindings.RunStartedEvent(thread_id="t", run_id="r")
    assert writer.frame(start) == b'data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n'
    with pytest.raises(agui_msgspec.LifecycleViolation, match="nested-run"):
        writer.frame(start)


def test_http_agent_runs_on_the_module(bindings: ModuleType) -> None:
    sent: list[dict[str, Any]] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(
            200, headers={"content-type": "text/event-stream"}, content=sse(answer(bindings))
        )

    async def go() -> agui_msgspec.RunResult:
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as client:
            agent = HttpAgent("http://agent.test/run", version=bindings, client=client)
            return await agent.run_agent(INPUT)

    result = asyncio.run(go())
    assert type(result.messages[-1]) is bindings.AssistantMessage
    assert result.run.status == "completed"
    declared = sent[0].get("protocolVersion")
    assert declared == (None if is_draft(bindings) else bindings.PROTOCOL_VERSION)
    # the draft: the input declares nothing, and the producer's version cannot be compared
    assert len(result.warnings) == (2 if is_draft(bindings) else 0), result.warnings


def test_check_takes_bindings(
    generated: Path, bindings: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "answer.sse"
    body.write_bytes(sse(answer(bindings)))
    assert main(["check", str(body), "--bindings", str(generated), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["outcome"] == "completed"
    assert len(result["warnings"]) == (1 if is_draft(bindings) else 0)


def test_conformance_takes_bindings(
    generated: Path, bindings: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = {
        "name": "plain-answer",
        "stream": answer(bindings),
        "expect": {"outcome": "completed", "messages": [{"role": "assistant"}]},
    }
    (tmp_path / "plain-answer.json").write_text(json.dumps(fixture))
    assert main(["conformance", str(tmp_path), "--bindings", str(generated)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "1 passed, 0 failed"


def test_run_takes_bindings(
    generated: Path, bindings: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    body = sse(answer(bindings))
    received: list[dict[str, Any]] = []

    class Agent(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    with serve_handler(Agent) as url:
        flags = ["--message", "Hi", "--thread", "t", "--bindings", str(generated)]
        assert main(["run", f"{url}/", *flags]) == 0
    assert "ACCEPTED" in capsys.readouterr().out
    assert received[0].get("protocolVersion") == (
        None if is_draft(bindings) else bindings.PROTOCOL_VERSION
    )


@pytest.mark.parametrize("command", ["check", "run", "conformance"])
def test_bindings_that_are_not_bindings_are_usage_errors(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = {"check": "-", "run": "http://127.0.0.1:9/", "conformance": str(tmp_path)}[command]
    plain = tmp_path / "plain.py"
    plain.write_text("X = 1\n")
    broken = tmp_path / "broken.py"
    broken.write_text("raise RuntimeError('no')\n")
    cases = {
        str(tmp_path / "absent.py"): "no such file",
        str(plain): "is not generated AG-UI bindings",
        str(broken): "RuntimeError: no",
        str(tmp_path / "schema.json"): "not a Python module file",
        str(tmp_path / "json.py"): "a module named 'json' is already imported",
    }
    for path, complaint in cases.items():
        assert main([command, target, "--bindings", path]) == 2
        err = capsys.readouterr().err
        assert complaint in err, err
        assert "Traceback" not in err
    assert "plain" not in sys.modules
    assert "broken" not in sys.modules


def test_version_and_bindings_exclude_each_other(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", "-", "--version", "1.0", "--bindings", str(tmp_path / "x.py")]) == 2
    assert "not allowed with argument" in capsys.readouterr().err
