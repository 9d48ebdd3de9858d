"""``agui-msgspec probe`` (issue 23, item 5): the battery against the Starlette example and
against broken servers, each step saying what it sent, with the transport diagnostics
(wrong content type, data-less lines, a one-chunk body, a keep-alive gap, a drop) and
each event's arrival time."""

from __future__ import annotations

import http.server
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from serving import serve, serve_handler

from agui_msgspec import proto_frame
from agui_msgspec._tools.cli import main
from agui_msgspec._tools.probe import ProbeStep, probe
from agui_msgspec._wire.protobuf import PROTOBUF_MEDIA_TYPE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def starlette_url() -> Iterator[str]:
    pytest.importorskip("starlette")
    pytest.importorskip("uvicorn")
    sys.path.insert(0, str(EXAMPLES))
    try:
        from starlette_agent import app  # noqa: PLC0415
    finally:
        sys.path.remove(str(EXAMPLES))
    with serve(app) as url:
        yield url


def by_name(steps: list[ProbeStep]) -> dict[str, ProbeStep]:
    return {step.name: step for step in steps}


def kinds(step: ProbeStep) -> list[str]:
    return [diagnostic.kind for diagnostic in step.diagnostics]


def test_the_starlette_example_passes_every_step_it_can(starlette_url: str) -> None:
    steps = by_name(probe(f"{starlette_url}/agent"))
    assert list(steps) == [
        "plain message",
        "protobuf Accept",
        "frontend tool offered",
        "frontend tool answered",
        "state sent",
        "client disconnects",
        "resume",
    ]
    assert {name: step.outcome for name, step in steps.items()} == {
        "plain message": "passed",
        "protobuf Accept": "passed",
        "frontend tool offered": "passed",
        "frontend tool answered": "skipped",  # it calls its own get_weather, not ours
        "state sent": "passed",
        "client disconnects": "passed",
        "resume": "skipped",
    }
    assert steps["frontend tool answered"].note == "the agent did not call probe_echo"
    assert steps["resume"].note == "no run reported an interrupt"
    plain = steps["plain message"]
    assert plain.sent["accept"] == "text/event-stream"
    assert plain.sent["input"]["messages"][0]["role"] == "user"
    assert plain.content_type == "text/event-stream"
    assert kinds(plain) == []
    assert plain.report is not None
    arrivals = [event.arrived for event in plain.report.events]
    assert None not in arrivals
    assert arrivals == sorted(arrivals)
    assert steps["protobuf Accept"].content_type == "application/vnd.ag-ui.event+proto"
    assert steps["frontend tool offered"].sent["input"]["tools"][0]["name"] == "probe_echo"
    assert steps["state sent"].sent["input"]["state"]["items"] == [1, 2]
    assert steps["state sent"].note.startswith("1 state event(s); the final state is {")
    assert kinds(steps["client disconnects"]) == ["disconnected", "next-request"]


def test_the_cli_prints_each_step_and_writes_json_and_html(
    starlette_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_json, out_html = tmp_path / "probe.json", tmp_path / "probe.html"
    args = ["probe", f"{starlette_url}/agent", "--format", "json", "--output", str(out_json)]
    assert main([*args, "--format", "text", "--html", str(out_html)]) == 0
    text = capsys.readouterr().out
    assert "PASSED plain message" in text
    assert "sent: Accept text/event-stream" in text
    assert "arrivals (ms after the first byte):" in text
    assert text.rstrip().endswith("5 passed, 0 failed, 2 skipped")
    document = json.loads(out_json.read_text())
    assert document[0]["report"]["verdict"] == "accepted"
    assert document[0]["report"]["events"][0]["arrived"] == 0.0
    assert "AG-UI probe of" in out_html.read_text()


def test_a_run_error_agent_still_passes(starlette_url: str) -> None:
    # the buggy agent's StrictWriter ends its run with RUN_ERROR: a conformant stream
    steps = by_name(probe(f"{starlette_url}/buggy-agent"))
    assert steps["plain message"].outcome == "passed"
    report = steps["plain message"].report
    assert report is not None
    assert report.result.runs[-1].status == "failed"


def handler(
    write: Callable[[Any, dict[str, Any]], None], content_type: str = "text/event-stream"
) -> type[http.server.BaseHTTPRequestHandler]:
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            write(self, request)

        def chunk(self, data: bytes) -> None:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.flush()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


def events(request: dict[str, Any]) -> list[bytes]:
    start = {"type": "RUN_STARTED", "threadId": request["threadId"], "runId": request["runId"]}
    finish = {"type": "RUN_FINISHED", "threadId": request["threadId"], "runId": request["runId"]}
    text = [
        {"type": "TEXT_MESSAGE_START", "messageId": "m"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
    ]
    return [json.dumps(d).encode() for d in (start, *text, finish)]


@contextmanager
def broken(
    write: Callable[[Any, dict[str, Any]], None], content_type: str = "text/event-stream"
) -> Iterator[str]:
    with serve_handler(handler(write, content_type)) as url:
        yield f"{url}/"


def one_chunk(server: Any, request: dict[str, Any]) -> None:
    server.chunk(b"".join(b"data: " + e + b"\n\n" for e in events(request)))
    server.chunk(b"")


def test_a_body_in_one_chunk_is_a_buffering_proxy_warning() -> None:
    with broken(one_chunk) as url:
        steps = probe(url)
    plain = steps[0]
    assert by_name(steps)["state sent"].note == "no state event came back"
    assert plain.outcome == "passed"  # a warning: the stream itself is fine
    assert kinds(plain) == ["one-chunk-body"]
    assert "buffering" in plain.diagnostics[0].message


WILD = "x\nFAKED\x1b]0;owned\x07\r\ufffe"


def wild_names(server: Any, request: dict[str, Any]) -> None:
    custom = {"type": "CUSTOM", "name": WILD, "value": 1, WILD: 1}
    start, *rest = events(request)
    body = [start, json.dumps(custom).encode(), *rest]
    server.chunk(b"".join(b"data: " + e + b"\n\n" for e in body))
    server.chunk(b"")


@pytest.mark.parametrize("form", ["text", "junit"])
def test_what_a_server_sends_is_shown_escaped_one_line_each(
    capsys: pytest.CaptureFixture[str], form: str
) -> None:
    with broken(wild_names) as url:
        main(["probe", url, "--format", form])
    lines = capsys.readouterr().out.splitlines()
    assert all(line.isprintable() for line in lines)
    assert not any(line.startswith("FAKED") for line in lines)
    assert any("x\\x0aFAKED\\x1b]0;owned" in line for line in lines)


# DEL, CSI and OSC as C1 (which a UTF-8 terminal may honour), a RLO, a RLM, a line separator
C1_AND_BIDI = "\x7f\x9b2J\x9d0;owned\x9c\u202e\u200f\u2028"


def c1_names(server: Any, request: dict[str, Any]) -> None:
    custom = {"type": "CUSTOM", "name": C1_AND_BIDI, "value": 1}
    start, *rest = events(request)
    body = [start, json.dumps(custom, ensure_ascii=False).encode(), *rest]
    server.chunk(b"".join(b"data: " + e + b"\n\n" for e in body))
    server.chunk(b"")


@pytest.mark.parametrize("form", ["json", "sarif", "html"])
def test_json_and_html_write_what_a_terminal_acts_on_escaped(
    capsys: pytest.CaptureFixture[str], form: str
) -> None:
    with broken(c1_names) as url:
        main(["probe", url, "--format", form])
    out = capsys.readouterr().out
    assert not any(ch in out for ch in C1_AND_BIDI if not ch.isprintable())
    if form == "json":  # the same document
        assert json.loads(out)[0]["report"]["events"][1]["event"]["name"] == C1_AND_BIDI


def test_a_wrong_content_type_fails() -> None:
    with broken(one_chunk, content_type="application/json") as url:
        plain = probe(url)[0]
    assert plain.outcome == "failed"
    assert "wrong-content-type" in kinds(plain)


def json_lines_as_sse(server: Any, request: dict[str, Any]) -> None:
    for event in events(request):
        server.chunk(event + b"\n")
    server.chunk(b"")


def test_json_lines_in_an_event_stream_are_data_less_lines() -> None:
    with broken(json_lines_as_sse) as url:
        plain = probe(url)[0]
    assert plain.outcome == "failed"
    assert "data-less-line" in kinds(plain)


def slow(server: Any, request: dict[str, Any]) -> None:
    first, *rest = events(request)
    server.chunk(b"data: " + first + b"\n\n")
    time.sleep(0.5)
    for event in rest:
        server.chunk(b"data: " + event + b"\n\n")
    server.chunk(b"")


def test_a_silence_longer_than_the_gap_is_a_keepalive_warning() -> None:
    with broken(slow) as url:
        plain = probe(url, gap=0.3)[0]
    assert plain.outcome == "passed"
    assert kinds(plain) == ["keepalive-gap"]
    assert plain.report is not None
    assert plain.report.events[1].arrived is not None
    assert plain.report.events[1].arrived > 0.3  # the arrival times show the silence


def dropping(server: Any, request: dict[str, Any]) -> None:
    first, second, *_ = events(request)
    server.chunk(b"data: " + first + b"\n\n")
    server.chunk(b"data: " + second + b"\n\n")
    server.wfile.write(b"ff\r\ndata: {")  # a chunk promised and cut off
    server.wfile.flush()
    server.close_connection = True


def test_a_drop_mid_run_fails() -> None:
    with broken(dropping) as url:
        plain = probe(url)[0]
    assert plain.outcome == "failed"
    assert "dropped" in kinds(plain)
    assert plain.report is not None
    assert [f.rule for f in plain.report.violations] == ["truncated"]


def garbage_frame(server: Any, request: dict[str, Any]) -> None:
    start, *_ = events(request)
    server.chunk(proto_frame(json.loads(start)) + b"\x00\x00\x00\x02\xff\xff")
    server.chunk(b"")


def test_a_frame_that_does_not_decode_fails() -> None:
    """verify() accepted a body its reader could not frame, so probe passed those steps."""
    with broken(garbage_frame, content_type=PROTOBUF_MEDIA_TYPE) as url:
        steps = probe(url)
    answered = [step for step in steps if step.report is not None]
    assert [step.outcome for step in answered] == ["failed"] * len(answered)
    plain = by_name(steps)["plain message"]
    assert plain.report is not None
    assert [f.rule for f in plain.report.violations] == ["malformed-frame"]


def test_the_sarif_validates_and_the_junit_has_a_suite_per_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import xml.etree.ElementTree as ET  # noqa: PLC0415

    import jsonschema  # noqa: PLC0415

    schema = json.loads(
        (
            Path(__file__).resolve().parents[2] / "tests/data/sarif/sarif-schema-2.1.0.json"
        ).read_text()
    )
    sarif, junit = tmp_path / "probe.sarif", tmp_path / "probe.xml"
    with broken(json_lines_as_sse) as url:
        args = ["probe", url, "--format", "sarif", "--output", str(sarif)]
        assert main([*args, "--format", "junit", "--output", str(junit)]) == 1
    document = json.loads(sarif.read_text())
    jsonschema.Draft4Validator(schema).validate(document)
    results = [r["ruleId"] for r in document["runs"][0]["results"]]
    assert "transport/data-less-line" in results
    suites = ET.parse(junit).getroot().findall("testsuite")
    assert len(suites) == 7  # one per step, the skipped ones too
    first = suites[0]
    assert int(first.get("failures", "0")) >= 1
    assert any(case.get("name") == "data-less-line" for case in first.iter("testcase"))
    skipped = [s for s in suites if s.find("testcase/skipped") is not None]
    assert [s.get("name") for s in skipped] == [
        "agui-msgspec frontend tool answered",
        "agui-msgspec resume",
    ]


def interrupting(server: Any, request: dict[str, Any]) -> None:
    """Every run stops on an interrupt, unless it resumes one; a resume must answer int-1."""
    start, *_, finish = (json.loads(e) for e in events(request))
    if request.get("resume"):
        assert request["resume"] == [{"interruptId": "int-1", "status": "cancelled"}]
    else:
        finish["outcome"] = {
            "type": "interrupt",
            "interrupts": [{"id": "int-1", "reason": "approval", "message": "Proceed?"}],
        }
    for event in (start, finish):
        server.chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
    server.chunk(b"")


def test_the_sarif_locates_each_step_by_a_uri_reference(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with broken(one_chunk) as url:
        main(["probe", f"{url}#ignored", "--format", "sarif"])
    uris = {
        location["physicalLocation"]["artifactLocation"]["uri"]
        for run in json.loads(capsys.readouterr().out)["runs"]
        for result in run["results"]
        for location in result["locations"]
    }
    assert f"{url}#plain%20message" in uris
    assert all(" " not in uri and uri.count("#") == 1 for uri in uris)


def test_a_run_that_stops_on_an_interrupt_is_resumed() -> None:
    with broken(interrupting) as url:
        steps = by_name(probe(url))
    resume = steps["resume"]
    assert resume.outcome == "passed"
    assert resume.note == "abandoned the interrupt(s) of 'plain message'"
    assert resume.sent["input"]["resume"] == [{"interruptId": "int-1", "status": "cancelled"}]
    assert resume.report is not None
    assert resume.report.result.runs[-1].status == "completed"


def calling_the_tool(server: Any, request: dict[str, Any]) -> None:
    """Calls probe_echo when offered it; answers its result in text on the second run."""
    start, *_, finish = (json.loads(e) for e in events(request))
    middle: list[dict[str, Any]] = []
    results = [m for m in request["messages"] if m["role"] == "tool"]
    if results:
        middle = [
            {"type": "TEXT_MESSAGE_START", "messageId": "a2"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "a2", "delta": results[0]["content"]},
            {"type": "TEXT_MESSAGE_END", "messageId": "a2"},
        ]
    elif request.get("tools"):
        middle = [
            {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "probe_echo"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "c1", "delta": '{"text":"ping"}'},
            {"type": "TOOL_CALL_END", "toolCallId": "c1"},
        ]
    for event in (start, *middle, finish):
        server.chunk(b"data: " + json.dumps(event).encode() + b"\n\n")
    server.chunk(b"")


def test_a_frontend_tool_call_is_answered_in_a_second_run() -> None:
    with broken(calling_the_tool) as url:
        steps = by_name(probe(url))
    offered, answered = steps["frontend tool offered"], steps["frontend tool answered"]
    assert offered.note == 'the agent called probe_echo({"text":"ping"})'
    assert answered.outcome == "passed"
    sent = answered.sent["input"]
    assert sent["threadId"] == offered.sent["input"]["threadId"]
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "tool"]
    assert sent["messages"][-1]["toolCallId"] == "c1"
    assert answered.report is not None
    assert answered.report.result.messages[-1].content == "ping"


UNUSABLE_URLS = [
    "http://127.0.0.1:1/?q=\x1b]0;owned\x07",  # httpx refuses a control character
    "http://[::1",
    "http://127.0.0.1:99999/",
    "http://127.0.0.1:1/\udcff",  # a byte of the command line that is not UTF-8
    "not a url",
    "ftp://127.0.0.1/",
]


@pytest.mark.parametrize("command", ["run", "probe"])  # the same usage errors
@pytest.mark.parametrize("url", UNUSABLE_URLS)
def test_a_url_no_request_can_go_to_is_a_usage_error(
    command: str, url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([command, "--timeout", "5", url]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("agui-msgspec: not ")
    assert captured.err[:-1].isprintable()  # one line, shown escaped


@pytest.mark.parametrize(
    "header", ["bad name: x", "X-Probe: a\r\nX-Forged: b", "X-Probe: \udcff", "X-Probe: caf\u00e9"]
)
def test_a_header_no_request_can_carry_is_a_usage_error(
    header: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["probe", "--timeout", "5", "--header", header, "http://127.0.0.1:1/"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agui-msgspec: --header ")
    assert err.endswith(": HTTP cannot send it as it is\n")
    # never the value: it may be a credential
    assert "X-Forged" not in err
    assert "caf" not in err
