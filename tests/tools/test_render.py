"""The report's renderers and ``check``'s formats (issue 23, item 2): SARIF 2.1.0 valid
against the official schema, JUnit XML that parses, --group, the CI policy's exit codes,
several formats from one run, --first."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agui_msgspec._tools.cli import main
from agui_msgspec._tools.render import render_json, render_junit, render_sarif, render_text
from agui_msgspec._tools.render_html import render_html
from agui_msgspec._tools.verify import verify

ROOT = Path(__file__).resolve().parents[2]
SARIF_SCHEMA = json.loads((ROOT / "tests/data/sarif/sarif-schema-2.1.0.json").read_text())
STREAMS = ROOT.parent / "shared/agui/conformance/1.1/streams"
START = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
FINISH = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"}
TWO_VIOLATIONS = [
    START,
    {"type": "TOOL_CALL_END", "toolCallId": "x"},
    {"type": "STEP_FINISHED", "stepName": "s"},
    {"type": "TOOL_CALL_START", "toolCallId": "c", "toolCallName": "f"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "c", "delta": '"a"}'},
    {"type": "TOOL_CALL_END", "toolCallId": "c"},
    {"type": "CUSTOM", "name": "x", "value": 1, "extra": 1},
    FINISH,
]

# Control characters, a line break and the noncharacters XML refuses, in ids and in a
# property's name (which a warning's path shows)
WILD = "a\x1b[2J\x00\nACCEPTED\ufffe"
HOSTILE = [
    {"type": "RUN_STARTED", "threadId": WILD, "runId": WILD},
    {"type": "CUSTOM", "name": WILD, "value": 1, WILD: 1},
    {"type": "STEP_FINISHED", "stepName": WILD},
]


def sse(*documents: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(d).encode() + b"\n\n" for d in documents)


def bodies() -> list[tuple[str, bytes]]:
    found = [(p.name, p.read_bytes()) for p in sorted((ROOT / "examples").glob("*.sse"))]
    found.append(("two-violations", sse(*TWO_VIOLATIONS)))
    found.append(("control-characters", sse(*HOSTILE)))
    if STREAMS.is_dir():
        for path in sorted(STREAMS.glob("*.json")):
            found.append((path.name, sse(*json.loads(path.read_text())["stream"])))
    return found


@pytest.mark.parametrize(("name", "body"), bodies(), ids=lambda v: str(v)[:40])
def test_sarif_is_valid_and_junit_parses(name: str, body: bytes) -> None:
    report = verify(body)
    sarif = json.loads(render_sarif(report, artifact=name))
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(sarif)
    (run,) = sarif["runs"]
    assert len(run["results"]) == len(report.findings)
    assert all(
        "helpUri" in rule
        for rule in run["tool"]["driver"]["rules"]
        if rule["id"] != "too-many-violations"
    )
    suite = ET.fromstring(render_junit(report, name=name)).find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    assert int(suite.get("tests", "0")) == len(cases)
    verdict = cases[0]
    assert (verdict.find("failure") is not None) == (report.verdict == "rejected")


def test_every_format_renders_a_payload_that_is_no_text() -> None:
    # JSON text given as a str with a lone surrogate: the report shows it escaped, as UTF-8
    # cannot hold it
    report = verify(['{"type":"RUN_STARTED","threadId":"t","runId":"\ud800"}'])
    assert report.findings[0].rule == "invalid-utf8"
    assert "\\ud800" in report.events[0].event["payload"]
    for render in (render_text, render_json, render_sarif, render_junit, render_html):
        assert render(report).encode("utf-8")


def test_junit_stays_xml_whatever_the_streams_name() -> None:
    junit = render_junit(verify(sse(*HOSTILE)), name="run\x1b\x00.sse")
    suite = ET.fromstring(junit)[0]
    assert suite.get("name") == "agui-msgspec run\\x1b\\x00.sse"


@pytest.mark.parametrize("group", [False, True])
def test_text_shows_control_characters_escaped_one_line_each(group: bool) -> None:
    text = render_text(verify(sse(*HOSTILE)), group=group)
    assert all(line.isprintable() for line in text.splitlines())
    assert not any(line.startswith("ACCEPTED") for line in text.splitlines())
    if not group:
        assert "a\\x1b[2J\\x00\\x0aACCEPTED\\ufffe" in text


def test_the_schema_rejects_what_it_should() -> None:
    broken = json.loads(render_sarif(verify(sse(*TWO_VIOLATIONS))))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft4Validator(SARIF_SCHEMA).validate(broken)


def test_sarif_results_carry_their_rule_and_link() -> None:
    sarif = json.loads(render_sarif(verify(sse(*TWO_VIOLATIONS))))
    (run,) = sarif["runs"]
    levels = {(r["ruleId"], r["level"]) for r in run["results"]}
    assert {("tool-call-not-open", "error"), ("step-not-open", "error"),
            ("tool-arguments-not-json", "note"), ("stripped-content", "warning")} <= levels  # fmt: skip
    uris = {rule["id"]: rule.get("helpUri") for rule in run["tool"]["driver"]["rules"]}
    assert uris["step-not-open"] == "https://docs.ag-ui.com/spec/1.1/events/lifecycle#steps"


def test_text_lists_each_finding_under_its_event_and_group_counts() -> None:
    report = verify(sse(*TWO_VIOLATIONS))
    text = render_text(report)
    lines = text.splitlines()
    aside = next(i for i, line in enumerate(lines) if "(frame 1, set-aside)" in line)
    assert "VIOLATION [tool-call-not-open] frame 1" in lines[aside + 1]
    assert "https://docs.ag-ui.com/spec/1.1/events/tool-calls#error-handling" in lines[aside + 1]
    grouped = render_text(report, group=True)
    assert "VIOLATION [step-not-open] x1: frame 2" in grouped
    assert "RUN_STARTED" not in grouped.splitlines()[0]


def test_check_reports_both_violations_and_first_stops(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "two.sse"
    body.write_bytes(sse(*TWO_VIOLATIONS))
    assert main(["check", str(body)]) == 1
    out = capsys.readouterr().out
    assert "[tool-call-not-open]" in out
    assert "[step-not-open]" in out
    assert "REJECTED: 2 violation(s)" in out
    assert main(["check", "--first", str(body)]) == 1
    out = capsys.readouterr().out
    assert "[tool-call-not-open]" in out
    assert "[step-not-open]" not in out


def test_check_writes_several_formats_in_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = tmp_path / "two.sse"
    body.write_bytes(sse(*TWO_VIOLATIONS))
    sarif, junit = tmp_path / "out.sarif", tmp_path / "out.xml"
    arguments = ["--format", "sarif", "--output", str(sarif), "--format", "junit"]
    assert main(["check", *arguments, "--output", str(junit), "--format", "json", str(body)]) == 1
    jsonschema.Draft4Validator(SARIF_SCHEMA).validate(json.loads(sarif.read_text()))
    ET.fromstring(junit.read_text())
    document = json.loads(capsys.readouterr().out)  # the format without an --output
    assert document["counts"] == {"violations": 2, "warnings": 1, "hints": 1}
    assert [f["receivedIndex"] for f in document["findings"] if f["severity"] == "violation"] == [
        1,
        2,
    ]


@pytest.mark.parametrize(
    ("options", "code"),
    [
        ([], 0),
        (["--fail-on", "warning"], 1),
        (["--fail-on", "hint"], 1),
        (["--max-warnings", "0"], 1),
        (["--max-warnings", "1"], 0),
        (["--rule", "tool-arguments-not-json=violation"], 1),
        (["--rule", "tool-arguments-not-json=off", "--fail-on", "hint"], 1),  # the warning
        (
            [
                "--rule",
                "tool-arguments-not-json=off",
                "--rule",
                "stripped-content=off",
                "--fail-on",
                "hint",
            ],
            0,
        ),
        (["--rule", "tool-call-not-open=off"], 2),
        (["--rule", "nonsense"], 2),
        (["--format", "json", "--output", "a.json", "--output", "b.json"], 2),  # a --format each
        (["--format", "json", "--format", "sarif"], 2),  # one of them to standard output only
    ],
)
def test_the_policy_decides_the_exit_code(
    tmp_path: Path, options: list[str], code: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    stream = [START, *TWO_VIOLATIONS[3:6]]  # arguments that do not parse: a hint
    stream += [{"type": "CUSTOM", "name": "x", "value": 1, "extra": 1}, FINISH]  # a warning
    body = tmp_path / "hinted.sse"
    body.write_bytes(sse(*stream))
    assert main(["check", *options, str(body)]) == code


def test_help_documents_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--help"]) == 0
    out = capsys.readouterr().out
    assert "0  pass" in out
    assert "1  fail" in out
    assert "2  usage" in out
