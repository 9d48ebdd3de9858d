"""The warnings a stream leaves: bounded in count and length, repeats collapsed within a run,
and nothing a stream chose kept after it (memory measured with tracemalloc)."""

from __future__ import annotations

import gc
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from measure import MiB
from payloads import in_run, wire_event

from agui_msgspec import consume
from agui_msgspec._pipeline.warnings import WarningLog, cut


def test_nothing_a_stream_chose_is_kept_after_it() -> None:

    def stream(name: str) -> list[bytes]:
        return in_run(wire_event(type="CUSTOM", name="c", value=1, **{name: 1}))

    tracemalloc.start()
    try:
        consume(stream("warm-up"))
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        for n in range(3):
            result = consume(stream(str(n) * MiB))
            assert result.violation is None
            del result
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024


def unknown_properties(count: int) -> list[bytes]:
    return in_run(
        *(wire_event(type="CUSTOM", name="c", value=1, **{f"x{n}": 1}) for n in range(count))
    )


@pytest.mark.parametrize("keep_events", [True, False])
def test_warnings_kept_are_bounded_then_counted(keep_events: bool) -> None:
    seen: list[str] = []
    result = consume(
        unknown_properties(5000), keep_events=keep_events, on_warning=seen.append, max_warnings=100
    )
    assert result.violation is None
    assert len(seen) == 5000  # the callback sees each
    assert len(result.warnings) == 101
    assert result.warnings[:100] == seen[:100]
    assert result.warnings[100] == "4900 more warnings not kept (max_warnings=100)"


def test_the_default_bound_on_warnings() -> None:
    result = consume(unknown_properties(1500), keep_events=False)
    assert len(result.warnings) == 1001
    assert result.warnings[-1].startswith("500 more warnings not kept")


def test_a_long_warning_is_cut() -> None:
    name = "n" * MiB
    seen: list[str] = []
    result = consume(
        in_run(wire_event(type="CUSTOM", name="c", value=1, **{name: 1})), on_warning=seen.append
    )
    assert len(result.warnings) == 1
    assert len(result.warnings[0]) == len(seen[0]) == 1000
    assert result.warnings[0].startswith("event 1 /nnnn")


def test_repeated_warnings_collapse_within_a_run() -> None:
    thinking = [
        wire_event(type="THINKING_TEXT_MESSAGE_START"),
        *(wire_event(type="THINKING_TEXT_MESSAGE_CONTENT", delta="x") for _ in range(5000)),
        wire_event(type="THINKING_TEXT_MESSAGE_END"),
    ]
    seen: list[str] = []
    result = consume(in_run(*thinking), on_warning=seen.append)
    assert result.violation is None
    assert len(seen) == 5002
    assert result.warnings == [
        "event 1: translated retired THINKING_TEXT_MESSAGE_START to REASONING_MESSAGE_START",
        "event 2: translated retired THINKING_TEXT_MESSAGE_CONTENT to REASONING_MESSAGE_CONTENT"
        " (5000 times in this run)",
        "event 5002: translated retired THINKING_TEXT_MESSAGE_END to REASONING_MESSAGE_END",
    ]


def test_the_same_warning_in_another_run_is_kept_again() -> None:
    start = wire_event(type="THINKING_TEXT_MESSAGE_START")
    end = wire_event(type="THINKING_TEXT_MESSAGE_END")
    body = [*in_run(start, end), *in_run(start, end)]
    assert len(consume(body).warnings) == 4


def test_a_warning_about_a_run_started_event_belongs_to_the_run_it_starts() -> None:
    start = wire_event(type="RUN_STARTED", threadId="t", runId="r", vendorTrace="x")
    finish = wire_event(type="RUN_FINISHED", threadId="t", runId="r")
    result = consume([start, finish, start, finish])
    assert result.violation is None
    assert result.warnings == [
        "event 0 /vendorTrace: removed unrecognised property",
        "event 2 /vendorTrace: removed unrecognised property",
    ]


def test_warnings_of_a_run_started_event_collapse_with_each_other_in_the_new_run() -> None:
    log = WarningLog()
    log.warn("event 0 /x: removed unrecognised property")  # run 1's RUN_STARTED, decoding
    log.run_started(0, 1)
    log.warn("event 5 /x: removed unrecognised property")
    log.warn("event 9 /x: removed unrecognised property")  # run 2's RUN_STARTED, decoding
    log.warn("event 9 /x: removed unrecognised property")
    log.warn("event 9 /y: removed unrecognised property")
    log.warn("event 9 /y: removed unrecognised property")
    log.run_started(9, 2)
    assert log.kept == [
        "event 0 /x: removed unrecognised property (2 times in this run)",
        "event 9 /y: removed unrecognised property (2 times in this run)",
        "event 9 /x: removed unrecognised property (2 times in this run)",
    ]


def test_a_run_started_warning_repeated_within_its_run_still_collapses() -> None:
    start = wire_event(type="RUN_STARTED", threadId="t", runId="r", vendorTrace="x")
    custom = wire_event(type="CUSTOM", name="c", value=1, vendorTrace="x")
    finish = wire_event(type="RUN_FINISHED", threadId="t", runId="r")
    result = consume([start, custom, finish, start, custom, custom, finish])
    assert result.warnings == [
        "event 0 /vendorTrace: removed unrecognised property (2 times in this run)",
        "event 3 /vendorTrace: removed unrecognised property (3 times in this run)",
    ]


@pytest.mark.parametrize("detail", [" /traceId: removed unrecognised property", " /" + "x" * 2000])
def test_a_warning_about_an_event_reads_as_the_same_warning_said_whole(detail: str) -> None:
    told: list[str] = []
    apart, whole = WarningLog(on_warning=told.append), WarningLog()
    for index in (3, 4, 4, 9):
        apart.warn_about(index, detail)
        whole.warn(f"event {index}{detail}")
    apart.run_started(9, 1)
    whole.run_started(9, 1)
    assert apart.kept == whole.kept
    assert len(apart.kept) == 2  # the repeats of run 0 collapsed; event 9's is run 1's
    assert told == [cut(f"event {index}{detail}") for index in (3, 4, 4, 9)]


@settings(max_examples=300, deadline=None)
@given(
    st.integers(0, 3),
    st.lists(
        # a control character is escaped when said, and escaping can take a detail past the cut
        st.sampled_from([" /a: x", " /b: y", ": z", " /\x00: c", " /" + "\x01" * 300 + ": w"]),
        min_size=1,
        max_size=3,
        unique=True,
    ),
    st.integers(1, 8),
    st.integers(0, 12),
    st.integers(0, 998),
    st.booleans(),
)
def test_warnings_about_many_events_at_once_read_as_said_one_by_one(
    said_before: int, details: list[str], max_warnings: int, count: int, index: int, told: bool
) -> None:
    heard: list[list[str]] = [[], []]
    logs = [
        WarningLog(max_warnings, heard[0].append if told else None),
        WarningLog(max_warnings, heard[1].append if told else None),
    ]
    for log in logs:
        for earlier in range(said_before):
            log.warn(f"event {earlier}: dropped event {earlier}")
    logs[0].warn_each(index, count, details)
    for event in range(index, index + count):
        for detail in details:
            logs[1].warn_about(event, detail)
    for log in logs:  # what is kept of the latest event moves with a run it starts
        log.run_started(index + count - 1, 1)
        log.warn_about(index + count, details[0])
    assert logs[0].kept == logs[1].kept
    assert heard[0] == heard[1]
