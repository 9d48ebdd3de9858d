"""The upstream consumer-conformance fixtures, and the runner that judges them.

Every fixture in ``shared/agui/conformance/1.1/streams`` (format: ../FORMAT.md)
runs through ``run_fixture``. Normative fixtures must pass, and so must the
``era-*`` fixtures, which test shims for pre-1.0 peers and are consumed with the
peer version they pin. The runner is tested too: a fixture whose
expectation the consumer does not meet must be reported as failed, and the
``agui-msgspec conformance`` command must say so in its last line and exit code.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from agui_msgspec import v1_0
from agui_msgspec._tools.cli import main
from agui_msgspec._tools.conformance import FOLLOWS_PROSE, run_corpus, run_fixture

SHARED = Path(__file__).resolve().parents[3] / "shared"  # ../shared beside the repository
STREAMS = SHARED / "agui" / "conformance" / "1.1" / "streams"
ABSENT = f"the conformance corpus is absent ({STREAMS})"


def fixtures(era: bool) -> list[Any]:
    if not STREAMS.is_dir():
        return [pytest.param(None, id="no-corpus", marks=pytest.mark.skip(reason=ABSENT))]
    return [
        pytest.param(path, id=path.stem)
        for path in sorted(STREAMS.glob("*.json"))
        if path.stem.startswith("era-") is era
    ]


@pytest.mark.parametrize("path", fixtures(era=False))
def test_normative_fixture_passes(path: Path) -> None:
    report = run_fixture(path)
    assert report.passed, "; ".join(report.problems)


@pytest.mark.parametrize("path", fixtures(era=True))
def test_era_fixture_passes_with_the_peer_version_it_pins(path: Path) -> None:
    report = run_fixture(path)
    assert report.passed, "; ".join(report.problems)


# --- the runner can fail ---------------------------------------------------------------------


STREAM = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
    {"type": "TEXT_MESSAGE_START", "messageId": "m1"},
    {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "hi"},
    {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r1"},
]
TRUE_EXPECTATION: dict[str, Any] = {
    "outcome": "completed",
    "noWarnings": True,
    "eventTypes": [event["type"] for event in STREAM],
    "messageCount": 1,
    "messages": [{"id": "m1", "role": "assistant", "content": "hi"}],
    "state": {},
}


def write_fixture(
    folder: Path, name: str, expect: dict[str, Any], stream: list[Any] | None = None, **extra: Any
) -> Path:
    path = folder / f"{name}.json"
    fixture = {"name": name, "stream": STREAM if stream is None else stream, "expect": expect}
    path.write_text(json.dumps({**fixture, **extra}), encoding="utf-8")
    return path


def test_runner_passes_a_true_expectation(tmp_path: Path) -> None:
    report = run_fixture(write_fixture(tmp_path, "true-expectation", TRUE_EXPECTATION))
    assert report.passed, report.problems


WRONG_EXPECTATIONS = [
    pytest.param({"outcome": "failed"}, id="outcome"),
    pytest.param({"eventTypes": ["RUN_STARTED", "RUN_FINISHED"]}, id="eventTypes"),
    pytest.param({"eventTypesAbsent": ["TEXT_MESSAGE_CONTENT"]}, id="eventTypesAbsent"),
    pytest.param({"eventPaths": {"2.delta": "bye"}}, id="eventPaths"),
    pytest.param({"eventPaths": {"9.delta": "hi"}}, id="eventPaths-missing"),
    pytest.param({"eventAbsentPaths": ["1.messageId"]}, id="eventAbsentPaths"),
    pytest.param({"warnings": ["/something"]}, id="warnings"),
    pytest.param({"messageCount": 2}, id="messageCount"),
    pytest.param({"messages": [{"id": "m1", "content": "bye"}]}, id="messages-content"),
    pytest.param({"messages": []}, id="messages-length"),
    pytest.param({"state": {"n": 1}}, id="state"),
    pytest.param({"runError": True}, id="runError"),
    pytest.param({"request": {"protocolVersion": "1.0"}}, id="request"),
    pytest.param({"requestAbsentPaths": ["threadId"]}, id="requestAbsentPaths"),
]


@pytest.mark.parametrize("wrong", WRONG_EXPECTATIONS)
def test_runner_fails_a_wrong_expectation(tmp_path: Path, wrong: dict[str, Any]) -> None:
    report = run_fixture(write_fixture(tmp_path, "wrong", {**TRUE_EXPECTATION, **wrong}))
    assert not report.passed
    assert len(report.problems) == 1, report.problems


def test_runner_fails_a_warning_where_none_is_expected(tmp_path: Path) -> None:
    stream = [{**STREAM[0], "vendorX": 1}, *STREAM[1:]]
    report = run_fixture(write_fixture(tmp_path, "noisy", {"noWarnings": True}, stream))
    assert not report.passed


def test_runner_fails_a_rejection_for_the_wrong_rule(tmp_path: Path) -> None:
    # a fixture the runner knows by name must be rejected for its own rule
    stream = [STREAM[0], {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m9", "delta": "x"}]
    path = write_fixture(tmp_path, "first-chunk-missing-id-fatal", {"outcome": "failed"}, stream)
    report = run_fixture(path)
    assert not report.passed
    assert any("text-message-not-open" in problem for problem in report.problems)


def test_runner_fails_an_accepted_stream_expected_to_fail(tmp_path: Path) -> None:
    path = write_fixture(tmp_path, "first-chunk-missing-id-fatal", {"outcome": "failed"})
    assert not run_fixture(path).passed


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        pytest.param(b'{"name": "x"}', "no `stream` array", id="no-stream"),
        pytest.param(b"[1, 2]", "got an array", id="an-array"),
        pytest.param(b"nope", "not JSON", id="not-json"),
        pytest.param(b"\xff\xfe", "not JSON", id="not-utf8"),
        pytest.param(b'{"stream": [], "expect": 3}', "`expect` is not an object", id="bad-expect"),
    ],
)
def test_a_file_that_is_not_a_fixture_fails_saying_so(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    path = tmp_path / "stray.json"
    path.write_bytes(content)
    report = run_fixture(path)
    assert not report.passed
    assert len(report.problems) == 1
    assert report.problems[0].startswith("not a conformance fixture: ")
    assert reason in report.problems[0]


# --- the corpus report and the command line ---------------------------------------------------


def last_line(text: str) -> str:
    return text.rstrip("\n").rsplit("\n", 1)[-1]


def test_cli_reports_a_passing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_fixture(tmp_path, "one", TRUE_EXPECTATION)
    write_fixture(tmp_path, "two", {"outcome": "completed"})
    code = main(["conformance", str(tmp_path)])
    assert last_line(capsys.readouterr().out) == "2 passed, 0 failed"
    assert code == 0


def test_cli_reports_a_failing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_fixture(tmp_path, "good", TRUE_EXPECTATION)
    write_fixture(tmp_path, "bad", {"outcome": "failed"})
    code = main(["conformance", str(tmp_path)])
    out = capsys.readouterr().out
    assert last_line(out) == "1 passed, 1 failed"
    assert re.search(r"^FAIL bad: ", out, re.MULTILINE)
    assert code == 1


def test_cli_shows_a_name_that_is_not_utf8_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = os.fsdecode(b"bad\xff\xfe")  # as Python reads it: lone surrogates
    try:
        write_fixture(tmp_path, name, {"outcome": "failed"})
    except OSError:
        pytest.skip("this file system takes only UTF-8 names")
    assert main(["conformance", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    out.encode("utf-8")  # what a strict UTF-8 standard output can write
    assert re.search(r"^FAIL bad\\udcff\\udcfe: ", out, re.MULTILINE)


def test_cli_counts_era_fixtures_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_fixture(tmp_path, "good", TRUE_EXPECTATION)
    write_fixture(tmp_path, "era-unsupported", {"outcome": "failed"})
    code = main(["conformance", str(tmp_path)])
    out = capsys.readouterr().out
    assert last_line(out) == "1 passed, 0 failed"
    assert (
        "era fixtures (shims for pre-1.0 peers, with the peer's version given): 0 of 1 passed"
        in out
    )
    assert code == 0


def test_cli_rejects_a_missing_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conformance", str(tmp_path / "nowhere")])
    assert code == 2
    assert "nowhere" in capsys.readouterr().err


@pytest.mark.skipif(not STREAMS.is_dir(), reason=ABSENT)
def test_cli_on_the_corpus(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["conformance", str(STREAMS)])
    out = capsys.readouterr().out
    normative = [p for p in STREAMS.glob("*.json") if not p.stem.startswith("era-")]
    prose = [p for p in normative if p.stem in FOLLOWS_PROSE]
    assert last_line(out) == f"{len(normative) - len(prose)} passed, 0 failed"
    assert code == 0
    corpus = run_corpus(STREAMS)
    assert sorted(report.name for report in corpus.prose) == sorted(p.stem for p in prose)


# --- the runner judges rejections by what the fixture names (issue 13, item 12) -----------

NESTED = [STREAM[0], {**STREAM[0], "runId": "r2"}]


def test_an_unpinned_fixture_rejected_for_a_rule_of_its_page_passes(tmp_path: Path) -> None:
    path = write_fixture(
        tmp_path,
        "second-start-inside-a-run",
        {"outcome": "failed"},
        NESTED,
        specPage="/spec/1.1/events/lifecycle",
    )
    report = run_fixture(path)
    assert report.passed, report.problems


def test_an_unpinned_fixture_rejected_for_a_rule_of_another_page_fails(tmp_path: Path) -> None:
    path = write_fixture(
        tmp_path,
        "second-start-inside-a-run",
        {"outcome": "failed"},
        NESTED,
        specPage="/spec/1.1/basic/patterns/interrupt-resume",
    )
    (problem,) = run_fixture(path).problems
    assert "rejected for 'nested-run', expected" in problem


def test_a_fixture_whose_name_spells_a_rule_must_be_rejected_for_it(tmp_path: Path) -> None:
    spelled = write_fixture(tmp_path, "a-nested-run-fatal", {"outcome": "failed"}, NESTED)
    assert run_fixture(spelled).passed
    other = write_fixture(tmp_path, "first-event-fatal", {"outcome": "failed"}, NESTED)
    (problem,) = run_fixture(other).problems
    assert problem == "rejected for 'nested-run', expected 'first-event'"


def test_a_fixture_naming_nothing_is_judged_by_its_verdict(tmp_path: Path) -> None:
    assert run_fixture(write_fixture(tmp_path, "bad-stream", {"outcome": "failed"}, NESTED)).passed


def test_an_admitted_gap_is_recognised_by_its_description(tmp_path: Path) -> None:
    stream = [
        STREAM[0],
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "narrator"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        STREAM[-1],
    ]
    gap = "ADMITTED GAP: the reference client fails this"
    path = write_fixture(
        tmp_path, "unknown-enum-value-role-fatal", {"outcome": "failed"}, stream, description=gap
    )
    report = run_fixture(path)
    assert (report.passed, report.admitted_gap) == (True, True)
    unknown = write_fixture(tmp_path, "another-gap", {"outcome": "failed"}, stream, description=gap)
    assert not run_fixture(unknown).passed  # no reading of the prose for it: not passed silently
    plain = write_fixture(tmp_path, "not-a-gap", {"outcome": "failed"}, stream)
    assert not run_fixture(plain).admitted_gap


def test_fixtures_of_one_name_in_two_folders_are_reported_apart(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    write_fixture(tmp_path / "a", "same", TRUE_EXPECTATION)
    write_fixture(tmp_path / "b", "same", {"outcome": "failed"})
    corpus = run_corpus(tmp_path)
    assert corpus.passed == ["a/same"]
    assert [report.name for report in corpus.failed] == ["b/same"]


@pytest.mark.parametrize("version", ["1.0", v1_0])
def test_the_runner_consumes_as_the_version_it_is_given(tmp_path: Path, version: Any) -> None:
    # 1.0 has no encryptedValueType: consumed as 1.0 it is stripped with a warning
    stream = [
        STREAM[0],
        {
            "type": "REASONING_ENCRYPTED_VALUE",
            "subtype": "message",
            "entityId": "x",
            "encryptedValue": "e",
            "encryptedValueType": "t",
        },
        STREAM[-1],
    ]
    path = write_fixture(
        tmp_path, "one", {"outcome": "completed", "warnings": ["/encryptedValueType"]}, stream
    )
    assert run_fixture(path, version).passed
    assert not run_fixture(path).passed


def test_cli_conformance_takes_a_version(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_fixture(tmp_path, "one", TRUE_EXPECTATION)
    assert main(["conformance", str(tmp_path), "--version", "1.0"]) == 0
    assert last_line(capsys.readouterr().out) == "1 passed, 0 failed"


def test_an_era_fixture_is_consumed_with_the_peer_version_it_pins(tmp_path: Path) -> None:
    stream = [
        STREAM[0],
        {"type": "SUBAGENT_STARTED", "subagentRunId": "s", "name": "n"},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "s"},
        STREAM[-1],
    ]
    expect = {"outcome": "completed", "eventTypesAbsent": ["SUBAGENT_STARTED"]}
    path = write_fixture(
        tmp_path, "era-old", expect, stream, client={"maxProtocolVersion": "0.0.57"}
    )
    assert run_fixture(path).passed
    modern = write_fixture(tmp_path, "era-new", expect, stream)
    assert not run_fixture(modern).passed


def test_an_admitted_gap_is_reported_by_its_path_with_the_reading_it_follows(
    tmp_path: Path,
) -> None:
    stream = [
        STREAM[0],
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "narrator"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        STREAM[-1],
    ]
    fixture = {
        "name": "unknown-enum-value-role-fatal",
        "description": "ADMITTED GAP: pinned",
        "stream": stream,
        "expect": {"outcome": "failed"},
    }
    (tmp_path / "renamed.json").write_text(json.dumps(fixture), encoding="utf-8")
    lines = list(run_corpus(tmp_path).lines())
    assert lines[0].startswith("FOLLOWS SPEC PROSE renamed: accepted: an unrecognised value")
    assert lines[-1] == "0 passed, 0 failed"


# --- any version's pages (issue 23, item 8) -------------------------------------------------


def _fixture(folder: Path, name: str, page: str, stream: list[dict[str, object]]) -> None:
    document = {"name": name, "specPage": page, "stream": stream, "expect": {"outcome": "failed"}}
    (folder / f"{name}.json").write_text(json.dumps(document))


def test_a_draft_fixture_maps_its_page_as_the_same_page_of_1_1(tmp_path: Path) -> None:
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}
    finish = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}
    _fixture(tmp_path, "finish-names-another-run", "/spec/draft/events/lifecycle", [start, finish])
    corpus = run_corpus(tmp_path)
    assert corpus.passed == ["finish-names-another-run"], list(corpus.lines())


def test_a_page_with_no_rule_filed_under_it_says_so(tmp_path: Path) -> None:
    start = {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"}
    finish = {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"}
    _fixture(tmp_path, "finish-names-another-run", "/spec/draft/events/state", [start, finish])
    corpus = run_corpus(tmp_path)
    assert not corpus.failed
    assert any(line.startswith("NOTE finish-names-another-run: its specPage 'events/state'")
               for line in corpus.lines())  # fmt: skip
