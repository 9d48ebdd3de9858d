"""Hostile input costs O(n) time and bounded memory (issue 14, the consumer's items).

Memory is measured structurally (tracemalloc peaks), never by the clock.
"""

from __future__ import annotations

import gc
import itertools
import json
import re
import tracemalloc
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agui_msgspec import Consumer, consume, consume_body
from agui_msgspec._pipeline.warnings import WarningLog

ROOT = Path(__file__).resolve().parents[1]
SCHEMA_POINTER = json.loads((ROOT / "schema" / "1.1" / "schema.json").read_text())
MiB = 1024 * 1024


def peak_bytes(action: Callable[[], Any]) -> tuple[Any, int]:
    """What ``action`` returns, and the peak of memory it allocated on the way."""
    tracemalloc.start()
    try:
        result = action()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def event(**fields: Any) -> bytes:
    return msgspec.json.encode(fields)


def in_run(*payloads: bytes) -> list[bytes]:
    return [
        event(type="RUN_STARTED", threadId="t", runId="r"),
        *payloads,
        event(type="RUN_FINISHED", threadId="t", runId="r"),
    ]


# --- the JSON Pointer check (item 7) ----------------------------------------------------------


def _schema_pointer_pattern() -> str:
    def find(node: Any) -> str | None:
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                return str(node["pattern"])
            return next(filter(None, map(find, node.values())), None)
        if isinstance(node, list):
            return next(filter(None, map(find, node)), None)
        return None

    pattern = find(SCHEMA_POINTER)
    assert pattern is not None
    return pattern


# ECMA-262 reading of the schema's pattern: "$" only at the very end.
SCHEMA_PATTERN = re.compile(_schema_pointer_pattern().removesuffix("$") + r"\Z")


def pointer_accepted(pointer: str) -> bool:
    delta = [{"op": "add", "path": pointer, "value": 1}]
    result = consume(in_run(event(type="STATE_DELTA", delta=delta)))
    if result.violation is None:
        return True
    assert result.violation.rule == "malformed-event", result.violation
    return False


def test_the_pointer_check_accepts_what_the_schema_pattern_accepts_exhaustively() -> None:
    alphabet = "/~01a\n"
    for length in range(6):
        for letters in itertools.product(alphabet, repeat=length):
            pointer = "".join(letters)
            expected = SCHEMA_PATTERN.match(pointer) is not None
            assert pointer_accepted(pointer) is expected, repr(pointer)


@given(st.text(alphabet=st.sampled_from("/~01a\n\u00e9\ud7ff"), max_size=24))
@settings(max_examples=300, deadline=None)
def test_the_pointer_check_agrees_with_the_schema_pattern(pointer: str) -> None:
    assert pointer_accepted(pointer) is (SCHEMA_PATTERN.match(pointer) is not None)


@pytest.mark.parametrize(
    "pointer",
    [
        "/" + "a" * (4 * MiB),  # accepted
        "/a" * (2 * MiB),  # accepted
        "/" + "~0" * (2 * MiB) + "~",  # a near miss at the very end
        "/" + "a" * (4 * MiB) + "~2",
    ],
    ids=["long-token", "many-tokens", "near-miss-tildes", "near-miss-end"],
)
def test_a_long_pointer_is_checked_in_bounded_memory(pointer: str) -> None:
    body = in_run(event(type="STATE_DELTA", delta=[{"op": "add", "path": pointer, "value": 1}]))
    _, peak = peak_bytes(lambda: consume(body, keep_events=False))
    # The body itself is 4 MB; the schema's pattern in re took ~180 bytes per character.
    assert peak < 3 * len(pointer) + 4 * MiB


# --- JSON Patch amplification and depth (items 1 and 9) ---------------------------------------


def doubling(count: int, key: str = "k") -> list[dict[str, Any]]:
    """Each operation copies the whole document into itself: 2**count values from a short patch."""
    return [{"op": "copy", "from": "", "path": f"/{key}{n}"} for n in range(count)]


@pytest.mark.parametrize("kind", ["state", "activity"])
def test_a_doubling_patch_is_refused_before_it_builds_the_state(kind: str) -> None:
    if kind == "state":
        body = in_run(
            event(type="STATE_SNAPSHOT", snapshot={"seed": "x" * 64}),
            event(type="STATE_DELTA", delta=doubling(30)),
        )
        field = "/delta"
    else:
        body = in_run(
            event(type="ACTIVITY_SNAPSHOT", messageId="a", activityType="plan", content={"s": 1}),
            event(type="ACTIVITY_DELTA", messageId="a", activityType="plan", patch=doubling(30)),
        )
        field = "/patch"
    result, peak = peak_bytes(lambda: consume(body, max_state_size=256 * 1024))
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"
    assert result.violation.index == 2
    assert result.violation.path.startswith(field + "/")
    assert peak < 8 * MiB  # 30 doublings would be 2**30 values


def test_with_the_defaults_a_small_patch_builds_little() -> None:
    body = in_run(event(type="STATE_DELTA", delta=doubling(40)))
    result, peak = peak_bytes(lambda: consume(body))
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"
    # A 1.7 KB patch may build 1 MiB + 16 times its size: a few MB of memory at most.
    assert peak < 16 * MiB


def test_the_default_bound_applies_to_a_snapshot_too() -> None:
    # Over 2 million values: past the default 16 MiB, as every value counts at least 8.
    body = in_run(event(type="STATE_SNAPSHOT", snapshot=[0] * (2 * MiB + 1)))
    result = consume(body, keep_events=False)
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"
    assert (result.violation.index, result.violation.path) == (1, "/snapshot")
    assert consume(body, keep_events=False, max_state_size=32 * MiB).violation is None


def test_a_patch_ending_in_a_failing_test_does_bounded_work_and_keeps_the_state() -> None:
    delta = [*doubling(30), {"op": "test", "path": "/k0", "value": 0}]
    body = in_run(
        event(type="STATE_SNAPSHOT", snapshot={"a": 1}),
        event(type="STATE_DELTA", delta=delta),
        event(type="STATE_DELTA", delta=[{"op": "add", "path": "/b", "value": 2}]),
    )
    result, peak = peak_bytes(lambda: consume(body, max_state_size=256 * 1024))
    # The copies pass the bound before the test is reached: refused, not 2**30 values built.
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"
    assert peak < 8 * MiB


def test_a_failing_patch_within_bounds_leaves_the_state_as_it_was() -> None:
    delta = [
        *doubling(5),
        {"op": "remove", "path": "/seed"},
        {"op": "test", "path": "/k0", "value": 0},
    ]
    body = in_run(
        event(type="STATE_SNAPSHOT", snapshot={"seed": [1, 2]}),
        event(type="STATE_DELTA", delta=delta),
        event(type="STATE_DELTA", delta=[{"op": "add", "path": "/b", "value": 2}]),
    )
    result = consume(body)
    assert result.violation is None
    assert result.state == {"seed": [1, 2], "b": 2}
    assert any("does not apply" in warning for warning in result.warnings)


def test_a_failing_patch_undoes_every_kind_of_scalar_write() -> None:
    start = {"a": {"n": 1, "s": "x", "list": [1], "gone": True}}
    delta = [
        {"op": "replace", "path": "/a/n", "value": 2},
        {"op": "add", "path": "/a/new", "value": "y"},
        {"op": "add", "path": "/a/s", "value": "z"},  # add over an existing member
        {"op": "remove", "path": "/a/gone"},
        {"op": "add", "path": "/a/list/-", "value": 2},
        {"op": "test", "path": "/a/n", "value": 2},
        {"op": "test", "path": "/a/list/1", "value": 3},  # fails: every write above is undone
    ]
    consumer = Consumer()
    delivered = consumer.feed_many([START, event(type="STATE_SNAPSHOT", snapshot=start)])
    consumer.feed(event(type="STATE_DELTA", delta=delta))
    assert consumer.violation is None
    assert consumer.state == start
    consumer.feed(event(type="STATE_DELTA", delta=delta[:-1]))
    assert consumer.state == {"a": {"n": 2, "s": "z", "list": [1, 2], "new": "y"}}
    assert delivered[1].snapshot == start


def test_scalar_writes_keep_the_state_size_exact() -> None:
    """Writes that replace or remove what they added do not grow the accounted size; a
    write that would pass the bound is refused."""
    note = "x" * 200
    churn = [
        event(type="STATE_DELTA", delta=[{"op": "add", "path": "/note", "value": note}]),
        event(type="STATE_DELTA", delta=[{"op": "replace", "path": "/note", "value": note}]),
        event(type="STATE_DELTA", delta=[{"op": "remove", "path": "/note"}]),
    ]
    body = in_run(event(type="STATE_SNAPSHOT", snapshot={"n": 0}), *churn * 200)
    assert consume(body, max_state_size=1024).violation is None
    too_big = event(type="STATE_DELTA", delta=[{"op": "add", "path": "/big", "value": "x" * 2048}])
    result = consume(
        in_run(event(type="STATE_SNAPSHOT", snapshot={"n": 0}), too_big), max_state_size=1024
    )
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("state-too-large", 2)


def test_a_copy_and_remove_cycle_is_bounded_by_the_work_a_patch_may_do() -> None:
    cycle = [{"op": "copy", "from": "/big", "path": "/c"}, {"op": "remove", "path": "/c"}]
    body = in_run(
        event(type="STATE_SNAPSHOT", snapshot={"big": ["x" * 100] * 2000}),
        event(type="STATE_DELTA", delta=cycle * 1000),
    )
    result = consume(body, max_state_size=1 * MiB)
    assert result.violation is not None
    assert result.violation.rule == "state-too-large"


def nesting(levels: int) -> list[dict[str, Any]]:
    """Each operation adds an object one level below the last: ``levels`` levels in all."""
    return [{"op": "add", "path": "/n" * (level + 1), "value": {}} for level in range(levels)]


def test_a_patch_may_not_nest_state_deeper_than_the_bound() -> None:
    body = in_run(event(type="STATE_DELTA", delta=nesting(1300)))
    result = consume(body)
    assert result.violation is not None
    assert result.violation.rule == "too-deep"
    assert result.violation.index == 1
    assert result.violation.path == "/delta/511"
    # What was kept can still be encoded and sent as the next run's input.
    msgspec.json.encode(result.state)


def test_a_copy_or_move_deeper_is_refused_as_too_deep() -> None:
    copy_down = [*nesting(300), {"op": "copy", "from": "/n", "path": "/n" * 300 + "/m"}]
    result = consume(in_run(event(type="STATE_DELTA", delta=copy_down)))
    assert result.violation is not None
    assert result.violation.rule == "too-deep"
    move_down = [
        *nesting(300),
        {"op": "add", "path": "/o", "value": {}},
        {"op": "move", "from": "/n", "path": "/o/n"},
    ]
    result = consume(in_run(event(type="STATE_DELTA", delta=move_down)), max_state_depth=300)
    assert result.violation is not None
    assert result.violation.rule == "too-deep"


def test_state_up_to_the_bound_passes() -> None:
    result = consume(in_run(event(type="STATE_DELTA", delta=nesting(511))))
    assert result.violation is None
    msgspec.json.encode(result.state)


# --- warnings: the per-consumer text cache (item 5), the bound and the collapse (item 8) -------


def test_nothing_a_stream_chose_is_kept_after_it() -> None:
    import gc  # noqa: PLC0415

    def stream(name: str) -> list[bytes]:
        return in_run(event(type="CUSTOM", name="c", value=1, **{name: 1}))

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
    return in_run(*(event(type="CUSTOM", name="c", value=1, **{f"x{n}": 1}) for n in range(count)))


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
        in_run(event(type="CUSTOM", name="c", value=1, **{name: 1})), on_warning=seen.append
    )
    assert len(result.warnings) == 1
    assert len(result.warnings[0]) == len(seen[0]) == 1000
    assert result.warnings[0].startswith("event 1 /nnnn")


def test_repeated_warnings_collapse_within_a_run() -> None:
    thinking = [
        event(type="THINKING_TEXT_MESSAGE_START"),
        *(event(type="THINKING_TEXT_MESSAGE_CONTENT", delta="x") for _ in range(5000)),
        event(type="THINKING_TEXT_MESSAGE_END"),
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
    start = event(type="THINKING_TEXT_MESSAGE_START")
    end = event(type="THINKING_TEXT_MESSAGE_END")
    body = [*in_run(start, end), *in_run(start, end)]
    assert len(consume(body).warnings) == 4


def test_a_warning_about_a_run_started_event_belongs_to_the_run_it_starts() -> None:
    start = event(type="RUN_STARTED", threadId="t", runId="r", vendorTrace="x")
    finish = event(type="RUN_FINISHED", threadId="t", runId="r")
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
    start = event(type="RUN_STARTED", threadId="t", runId="r", vendorTrace="x")
    custom = event(type="CUSTOM", name="c", value=1, vendorTrace="x")
    finish = event(type="RUN_FINISHED", threadId="t", runId="r")
    result = consume([start, custom, finish, start, custom, custom, finish])
    assert result.warnings == [
        "event 0 /vendorTrace: removed unrecognised property (2 times in this run)",
        "event 3 /vendorTrace: removed unrecognised property (3 times in this run)",
    ]


def test_a_dropped_consumer_is_freed_at_once_without_the_cyclic_collector() -> None:
    """Its messages and state go with it: a server dropping a consumer per stream must not
    hold each conversation until the collector's next full pass."""
    consumer = Consumer(on_warning=lambda message: None)
    for payload in in_run(
        event(type="TEXT_MESSAGE_START", messageId="m", role="assistant", vendor=1),
        event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="x" * 10_000),
        event(type="TEXT_MESSAGE_END", messageId="m"),
        event(type="STATE_DELTA", delta=[{"op": "add", "path": "/a", "value": [1]}]),
    ):
        consumer.feed(payload)
    consumer.close()
    assert consumer.warnings  # the stages warned through it
    dropped = weakref.ref(consumer)
    gc.disable()
    try:
        del consumer
        assert dropped() is None
    finally:
        gc.enable()


# --- a whole body is framed in slices (item 10) ------------------------------------------------


def test_a_whole_body_of_short_lines_is_framed_in_bounded_memory() -> None:
    line = b'{"type":"STEP_STARTED","stepName":"s"}\n{"type":"STEP_FINISHED","stepName":"s"}\n'
    start = b'{"type":"RUN_STARTED","threadId":"t","runId":"r"}\n'
    end = b'{"type":"RUN_FINISHED","threadId":"t","runId":"r"}\n'
    body = start + line * (8 * MiB // len(line)) + end
    result, peak = peak_bytes(lambda: consume_body(body, keep_events=False))
    assert result.violation is None
    # Split at once, the lines of 8 MB took ~100 MB; in 64 KiB slices, a slice's worth.
    assert peak < 4 * MiB


# --- the fuzzer: its seeds from anywhere, and the resource target (item 12) --------------------


def _load_fuzzer(path: Path) -> Any:
    import importlib.util  # noqa: PLC0415
    import sys  # noqa: PLC0415

    spec = importlib.util.spec_from_file_location("fuzz_consume", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SHARED = ROOT.parent / "shared"


@pytest.mark.skipif(not (SHARED / "agui").is_dir(), reason="needs ../shared/agui")
def test_the_fuzzer_finds_the_conformance_seeds_from_a_checkout_further_down(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "shared").symlink_to(SHARED.resolve())
    script = tmp_path / "ci" / "checkout" / "fuzz" / "fuzz_consume.py"
    script.parent.mkdir(parents=True)
    script.write_bytes((ROOT / "fuzz" / "fuzz_consume.py").read_bytes())
    monkeypatch.chdir(tmp_path / "ci")
    fuzz = _load_fuzzer(script)
    streams = len(list((SHARED / "agui" / "conformance" / "1.1" / "streams").glob("*.json")))
    assert len(fuzz.seed_inputs()) >= 2 * (len(fuzz.BUILTIN_STREAMS) + streams) - 10


def test_the_fuzzer_counts_a_slow_or_large_input_as_a_crash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fuzz = _load_fuzzer(ROOT / "fuzz" / "fuzz_consume.py")
    body = b"data: " + event(type="RUN_STARTED", threadId="t", runId="r") + b"\n\n"
    fuzz.check_bounded(body)
    monkeypatch.setattr(fuzz, "RESOURCE_CPU_SECONDS", -1.0)
    with pytest.raises(fuzz.ResourceExceeded, match="time"):
        fuzz.check_bounded(body)
    monkeypatch.setattr(fuzz, "RESOURCE_CPU_SECONDS", 1e9)
    monkeypatch.setattr(fuzz, "RESOURCE_MEMORY_BYTES", -(1 << 40))
    with pytest.raises(fuzz.ResourceExceeded, match="memory"):
        fuzz.check_bounded(body)
    fuzz.check_bounded(b"x" * (64 * 1024 + 1))  # larger inputs are not held to the target


def test_the_amplification_input_meets_the_fuzzers_resource_target() -> None:
    fuzz = _load_fuzzer(ROOT / "fuzz" / "fuzz_consume.py")
    body = b"".join(
        b"data: " + payload + b"\n\n"
        for payload in in_run(event(type="STATE_DELTA", delta=doubling(30)))
    )
    fuzz.check_bounded(body)


# --- per-event cost that does not grow with the stream (item 6) --------------------------------
# Work is counted structurally: the lines of the library's Python run for one event, and the
# memory it allocates, after a short and after a long prefix of the same stream.


def library_lines(action: Callable[[], Any]) -> int:
    """How many lines of agui_msgspec's Python ``action`` runs (each loop turn counts)."""
    import sys  # noqa: PLC0415

    count = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if "agui_msgspec" not in frame.f_code.co_filename:
            return None
        if event == "line":
            count += 1
        return tracer

    sys.settrace(tracer)
    try:
        action()
    finally:
        sys.settrace(None)
    return count


def cost_of_next(prefix: list[bytes], payload: bytes) -> int:
    """Lines of the library run by one more payload after ``prefix``."""
    consumer = Consumer()
    consumer.feed_many(prefix)
    return library_lines(lambda: consumer.feed(payload))


START = event(type="RUN_STARTED", threadId="t", runId="r")


def activities(count: int) -> list[bytes]:
    return [
        event(type="ACTIVITY_SNAPSHOT", messageId=f"a{n}", activityType="p", content={"n": n})
        for n in range(count)
    ]


def subagent_chunks(count: int) -> list[bytes]:
    return [
        payload
        for n in range(count)
        for payload in (
            event(type="SUBAGENT_STARTED", subagentRunId=f"s{n}", name="helper"),
            event(type="TEXT_MESSAGE_CHUNK", subagentRunId=f"s{n}", messageId=f"m{n}", delta="x"),
        )
    ]


SCENARIOS: dict[str, tuple[Callable[[int], list[bytes]], Callable[[int], bytes]]] = {
    "replace-a-message": (
        activities,
        lambda n: event(
            type="ACTIVITY_SNAPSHOT",
            messageId=f"a{n - 1}",
            activityType="p",
            content={},
            replace=True,
        ),
    ),
    "messages-snapshot": (activities, lambda n: event(type="MESSAGES_SNAPSHOT", messages=[])),
    "subagent-chunks": (
        subagent_chunks,
        lambda n: event(type="TEXT_MESSAGE_CHUNK", subagentRunId="s0", messageId="m0", delta="y"),
    ),
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_one_event_runs_the_same_code_however_long_the_stream(scenario: str) -> None:
    build, last = SCENARIOS[scenario]
    short = cost_of_next([START, *build(50)], last(50))
    long = cost_of_next([START, *build(2000)], last(2000))
    assert long <= short + 10, (short, long)


def test_reopening_a_long_message_does_not_copy_its_text() -> None:
    prefix = [
        START,
        event(type="TEXT_MESSAGE_START", messageId="m", role="assistant"),
        event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="x" * (4 * MiB)),
        event(type="TEXT_MESSAGE_END", messageId="m"),
    ]
    consumer = Consumer()
    consumer.feed_many(prefix)
    again = [
        event(type="TEXT_MESSAGE_START", messageId="m", role="assistant"),
        event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="y"),
        event(type="TEXT_MESSAGE_END", messageId="m"),
    ]
    _, peak = peak_bytes(lambda: [consumer.feed_many(again) for _ in range(3)])
    assert peak < MiB
    assert consumer.messages[0].content == "x" * (4 * MiB) + "yyy"


def test_a_delta_does_not_copy_the_whole_state() -> None:
    snapshot = {f"key{n}": {"n": n} for n in range(50_000)}
    consumer = Consumer()
    consumer.feed_many([START, event(type="STATE_SNAPSHOT", snapshot=snapshot)])
    first = event(type="STATE_DELTA", delta=[{"op": "replace", "path": "/key1/n", "value": -1}])
    consumer.feed(first)  # the first delta after a snapshot copies it: the event stays as it was
    delta = event(type="STATE_DELTA", delta=[{"op": "replace", "path": "/key2/n", "value": -2}])
    _, peak = peak_bytes(lambda: consumer.feed(delta))
    assert peak < 64 * 1024
    assert consumer.state["key1"] == {"n": -1}
    assert consumer.state["key2"] == {"n": -2}


def test_metadata_is_merged_key_by_key() -> None:
    big = {f"k{n}": n for n in range(50_000)}
    consumer = Consumer()
    consumer.feed_many(
        [
            START,
            event(type="TEXT_MESSAGE_START", messageId="m", role="assistant", metadata=big),
            event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="a", metadata={"x": 1}),
        ]
    )
    more = event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="b", metadata={"y": 2})
    _, peak = peak_bytes(lambda: consumer.feed(more))
    assert peak < 64 * 1024
    merged = consumer.messages[0].metadata
    assert merged == {**big, "x": 1, "y": 2}


def test_reading_the_messages_costs_what_changed_not_the_conversation() -> None:
    """A live UI reads ``Consumer.messages`` after every event: with 20,000 messages, a read
    after nothing, after a new message or after a delta allocates nothing like the list."""
    consumer = Consumer()
    consumer.feed_many([START, *activities(20_000)])
    consumer.messages  # noqa: B018
    start = event(type="TEXT_MESSAGE_START", messageId="m", role="assistant")
    delta = event(type="TEXT_MESSAGE_CONTENT", messageId="m", delta="hello")
    for payload in (None, start, delta, delta):
        if payload is not None:
            consumer.feed(payload)
        messages, peak = peak_bytes(lambda: consumer.messages)
        assert peak < 4 * 1024, (payload, peak)
    assert len(messages) == 20_001
    assert messages[-1].content == "hellohello"


def test_the_messages_read_are_live_and_read_only() -> None:
    consumer = Consumer()
    consumer.feed_many([START, *activities(2)])
    messages = consumer.messages
    with pytest.raises(TypeError):
        messages.append(messages[0])  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        del messages[0]  # type: ignore[attr-defined]
    kept = list(messages)
    replace = event(
        type="ACTIVITY_SNAPSHOT", messageId="a0", activityType="p", content={"n": 9}, replace=True
    )
    consumer.feed_many([*activities(3)[2:], replace])
    assert [m.content for m in consumer.messages] == [{"n": 9}, {"n": 1}, {"n": 2}]
    assert consumer.messages is messages  # the same list, following the stream
    assert [m.content for m in kept] == [{"n": 0}, {"n": 1}]
    assert msgspec.json.decode(msgspec.json.encode(messages))[0]["content"] == {"n": 9}
    assert consumer.result([]).messages == list(messages)
    assert type(consumer.result([]).messages) is list


def test_a_delta_never_changes_the_input_or_a_delivered_snapshot() -> None:
    seed = {"threadId": "t", "runId": "r", "messages": [], "state": {"n": [1]}}
    delta = [{"op": "add", "path": "/n/-", "value": 2}]
    result = consume(in_run(event(type="STATE_DELTA", delta=delta)), input=seed)
    assert result.violation is None
    assert result.state == {"n": [1, 2]}
    assert seed["state"] == {"n": [1]}
    body = in_run(
        event(type="STATE_SNAPSHOT", snapshot={"n": [1]}), event(type="STATE_DELTA", delta=delta)
    )
    result = consume(body)
    assert result.state == {"n": [1, 2]}
    assert result.events[1].snapshot == {"n": [1]}


@pytest.mark.parametrize(
    "body",
    [
        # Found by the fuzzer: a tool result replacing the message that holds an open call.
        b'data:{"type":"RUN_STARTED","threadId":"","runId":"","":""}\n\n'
        b'data:{"type":"TOOL_CALL_START","toolCallId":"","toolCallName":"","parentMessageId":"msg-1"}\n\n'
        b'data:{"type":"TOOL_CALL_RESULT","messageId":"msg-1","toolCallId":"","content":"\\"\\"","":""}\n\n',
        b'data:{"type":"RUN_STARTED","threadId":"","runId":"","":""}\n\n'
        b'data:{"type":"TEXT_MESSAGE_START","messageId":"msg-1"}\n\n'
        b'data:{"type":"TOOL_CALL_START","toolCallId":"call-1","toolCallName":"","":""}\n\n'
        b'data:{"type":"TOOL_CALL_RESULT","messageId":"msg-1","toolCallId":"","content":"","":""}\n\n'
        b'data:{"type":"TOOL_CALL_ARGS","toolCallId":"call-1","delta":""}\n\n',
    ],
    ids=["result-replaces-the-calls-message", "args-after-the-replacement"],
)
def test_a_replaced_message_keeps_its_open_tool_call_addressable(body: bytes) -> None:
    fuzz = _load_fuzzer(ROOT / "fuzz" / "fuzz_consume.py")
    fuzz.check_bounded(body)
    result = consume_body(body)
    assert result.violation is not None
    assert result.violation.rule == "truncated"
