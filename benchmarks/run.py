"""Benchmark agui-msgspec against the JSON parse floor and the official AG-UI Python SDK.

    python benchmarks/run.py [--quick] [--repeat N] [--only text,state] [--json out.json]
    python benchmarks/run.py --profile text      # cProfile + stage breakdown, no table

Per workload (see ``workloads.py``), in one process, the median of ``--repeat``
runs (default 5), after a warm-up on a small stream of the same shape; the runs
go in interleaved rounds (each measurement once per round), so load that drifts
on a shared machine skews no ratio:

1. parse floor: ``orjson.loads`` on each payload (payloads already split out);
2. official SDK decode: ag-ui-protocol's ``TypeAdapter(Event).validate_json`` on
   each payload, which types the event and verifies nothing else;
3. ours, decode only: enforcement as the consumer runs it, on batches of 1,024
   payloads (one strict msgspec decode call per batch; payload by payload, with the
   slow path, for a batch where that fails);
4. ours, full pipeline: the SSE body in 64 KiB chunks through
   ``consume_body(..., keep_events=False)``: SSE framing, compatibility, enforcement,
   expansion, lifecycle verification and the reducer;
5. encoding to an SSE frame: ``b"data: " + encoder.encode(struct) + b"\\n\\n"``
   against the SDK's ``EventEncoder().encode(event)``, on the same events
   (decoded once, outside timing).

Then the scaling check (the text workload's full pipeline at 10k and at 1M
events, interleaved; ``--quick`` skips the 1M runs) and the memory check (a 1M-event text
stream made on the fly and consumed with ``keep_events=False`` in a fresh
subprocess; ``--quick`` skips it too). Targets print PASS or MISS; a miss never
fails the run. The garbage collector stays on, as in an application; each run
starts after ``gc.collect()``.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import json
import os
import platform
import pstats
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import msgspec
import orjson
import workloads
from ag_ui.core import Event as OfficialEvent
from ag_ui.encoder import EventEncoder
from pydantic import TypeAdapter
from workloads import Workload, chunked

import agui_msgspec
from agui_msgspec import Consumer, Result, SSEReader, consume_body
from agui_msgspec._pipeline.enforce import Enforcer

CHUNK_SIZE = 64 * 1024
BATCH = 1024
"""Payloads per batch for "ours decode": the consumer's own batch size for a list of payloads."""
SMALL_MESSAGES, LARGE_MESSAGES, DELTAS = 20, 2_000, 500
"""The scaling variants of the text workload: 20 and 2,000 messages of 500 deltas (10k, 1M)."""
SMALL_STREAMS = 10
"""A sample of the 10k variant consumes it this many times over (each with a new consumer)."""
BINDINGS = agui_msgspec.v1_1

OFFICIAL_DECODE: Callable[[bytes], Any] = TypeAdapter(OfficialEvent).validate_json


# --- the measurements ------------------------------------------------------------------


def _full_pipeline(body: bytes) -> Result:
    """What a client does with a response body: 64 KiB chunks → consume_body(keep_events=False)."""
    return consume_body(chunked(body, CHUNK_SIZE), keep_events=False)


def _floor(payloads: list[bytes]) -> None:
    loads = orjson.loads
    for payload in payloads:
        loads(payload)


def _official_decode(payloads: list[bytes]) -> None:
    validate = OFFICIAL_DECODE
    for payload in payloads:
        validate(payload)


def _batch_decoder() -> Callable[[list[bytes]], object]:
    """Enforcement as the consumer runs it: a batch through the strict decoder at once, or,
    if some payload needs more (the slow path), payload by payload."""
    consumer = Consumer()
    decode_conformant, decode = consumer._enforcer.decode_conformant, consumer._enforcer.decode

    def decode_batch(payloads: list[bytes]) -> object:
        events = decode_conformant(payloads)
        return events if events is not None else [decode(p, i) for i, p in enumerate(payloads)]

    return decode_batch


def _our_decode(payloads: list[bytes]) -> None:
    decode = _batch_decoder()
    for start in range(0, len(payloads), BATCH):
        decode(payloads[start : start + BATCH])


def _bare_decode(decoder: msgspec.json.Decoder[Any], payloads: list[bytes]) -> int:
    """The strict decode alone; on a payload it rejects (unknown material), the failed attempt.

    Returns how many it rejected.
    """
    decode = decoder.decode
    rejected = 0
    for payload in payloads:
        try:
            decode(payload)
        except msgspec.ValidationError:
            rejected += 1
    return rejected


def _our_encode(events: list[msgspec.Struct]) -> None:
    encode = BINDINGS.encoder.encode
    for event in events:
        b"data: " + encode(event) + b"\n\n"


def _official_encode(events: list[Any]) -> None:
    encode = EventEncoder().encode
    for event in events:
        encode(event)


def _our_events(payloads: list[bytes]) -> list[msgspec.Struct]:
    """Every payload as our typed event (through enforcement, so unknown material is gone)."""
    decode = Enforcer(BINDINGS, lambda _: None).decode
    events = [decode(payload, index) for index, payload in enumerate(payloads)]
    return [event for event in events if event is not None]


@dataclass(frozen=True)
class Timing:
    run: Callable[[], object]
    warmup: Callable[[], object]


def interleaved_medians(
    timings: dict[str, Timing], repeat: int, progress: Callable[[str], None]
) -> tuple[dict[str, float], dict[str, object]]:
    """Median seconds per timing, and each one's last result.

    Every timing is warmed up once; then ``repeat`` rounds run each timing once,
    in turn, so load that drifts during the run (a shared machine) falls on every
    measurement of a workload alike instead of skewing their ratios.
    """
    for timing in timings.values():
        timing.warmup()
    samples: dict[str, list[float]] = {label: [] for label in timings}
    results: dict[str, object] = {}
    for round_ in range(repeat):
        progress(f"round {round_ + 1} of {repeat}")
        for label, timing in timings.items():
            gc.collect()
            start = time.perf_counter()
            results[label] = timing.run()
            samples[label].append(time.perf_counter() - start)
    return {label: statistics.median(times) for label, times in samples.items()}, results


@dataclass
class Row:
    """One workload's median seconds per measurement."""

    workload: str
    events: int
    floor: float
    official_decode: float
    our_decode: float
    full_pipeline: float
    our_encode: float
    official_encode: float

    def per_event_us(self, seconds: float) -> float:
        return seconds / self.events * 1e6


def measure(
    workload: Workload, warm: Workload, repeat: int, progress: Callable[[str], None]
) -> Row:
    """Every measurement of ``workload``, each warmed up on ``warm``, a small stream like it."""
    payloads, body = workload.payloads, workload.body
    progress(f"{workload.name}: decoding the events to encode")
    our_events = _our_events(payloads)
    # The SDK raises here on any payload it does not accept: every workload is valid for it too.
    official_events = [OFFICIAL_DECODE(payload) for payload in payloads]
    our_warm = _our_events(warm.payloads)
    official_warm = [OFFICIAL_DECODE(payload) for payload in warm.payloads]
    timings = {
        "floor": Timing(lambda: _floor(payloads), lambda: _floor(warm.payloads)),
        "official_decode": Timing(
            lambda: _official_decode(payloads), lambda: _official_decode(warm.payloads)
        ),
        "our_decode": Timing(lambda: _our_decode(payloads), lambda: _our_decode(warm.payloads)),
        "full_pipeline": Timing(lambda: _full_pipeline(body), lambda: _full_pipeline(warm.body)),
        "our_encode": Timing(lambda: _our_encode(our_events), lambda: _our_encode(our_warm)),
        "official_encode": Timing(
            lambda: _official_encode(official_events), lambda: _official_encode(official_warm)
        ),
    }
    medians, results = interleaved_medians(
        timings, repeat, lambda message: progress(f"{workload.name}: {message}")
    )
    result = results["full_pipeline"]
    if not isinstance(result, Result):
        raise TypeError(f"consume_body() returned {type(result).__name__}")
    _check(workload, result)
    return Row(workload.name, workload.events, **medians)


def _check(workload: Workload, result: Result) -> None:
    """The workload is what it claims: accepted, with warnings only where it means to have them."""
    if result.outcome != "completed":
        raise SystemExit(f"{workload.name}: the consumer rejected the workload: {result.violation}")
    # unknown: a warning on every event, kept as the lines of its kind with their counts
    # (RUN_STARTED's own is counted before its run begins)
    warned = sum(_times(warning) for warning in result.warnings)
    expected_warnings = workload.events if workload.name == "unknown" else 0
    if warned != expected_warnings:
        raise SystemExit(
            f"{workload.name}: {warned} warning(s), expected {expected_warnings}: "
            f"{result.warnings[:3]}"
        )


def _times(warning: str) -> int:
    """How many warnings one kept line stands for: ``... (N times in this run)``, or one."""
    count = warning.rpartition(" (")[2]
    return int(count.split()[0]) if count.endswith(" times in this run)") else 1


# --- scaling and memory ----------------------------------------------------------------


@dataclass
class Scaling:
    small_events: int
    small_seconds: float
    large_events: int | None = None
    large_seconds: float | None = None

    @property
    def ratio(self) -> float | None:
        if self.large_events is None or self.large_seconds is None:
            return None
        return (self.large_seconds / self.large_events) / (self.small_seconds / self.small_events)


def measure_scaling(repeat: int, quick: bool, progress: Callable[[str], None]) -> Scaling:
    """The text workload's full pipeline at 10k and at 1M events, in interleaved rounds."""
    small = workloads.build("text-10k", workloads.text_events(SMALL_MESSAGES, DELTAS))
    warm = workloads.load("text", warmup=True).body

    # One 10k-event stream takes ~20 ms, short enough for a scheduler hiccup on a shared machine
    # to dominate a sample, so each sample consumes it SMALL_STREAMS times, each time afresh.
    def small_streams() -> None:
        for _ in range(SMALL_STREAMS):
            _full_pipeline(small.body)

    timings = {"small": Timing(small_streams, lambda: _full_pipeline(warm))}
    large: Workload | None = None
    if not quick:
        progress("scaling: generating the 1M-event text stream")
        large = workloads.build("text-1m", workloads.text_events(LARGE_MESSAGES, DELTAS))
        body = large.body
        timings["large"] = Timing(lambda: _full_pipeline(body), lambda: None)
    medians, _ = interleaved_medians(
        timings, repeat, lambda message: progress(f"scaling: 10k and 1M events, {message}")
    )
    scaling = Scaling(small.events, medians["small"] / SMALL_STREAMS)
    if large is not None:
        scaling.large_events, scaling.large_seconds = large.events, medians["large"]
    return scaling


def _maxrss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024  # Linux reports KiB


def _vm_hwm_bytes() -> int | None:
    """Linux's peak RSS of this address space (VmHWM), as a cross-check; None elsewhere."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def memory_probe(messages: int, keep_events: bool) -> dict[str, Any]:
    """Runs in a fresh subprocess: peak RSS growth consuming a text stream made on the fly."""
    warm = workloads.sse_chunks(workloads.text_events(2, DELTAS), CHUNK_SIZE)
    consume_body(warm, keep_events=keep_events)
    gc.collect()
    before, hwm_before = _maxrss_bytes(), _vm_hwm_bytes()
    chunks = workloads.sse_chunks(workloads.text_events(messages, DELTAS), CHUNK_SIZE)
    result = consume_body(chunks, keep_events=keep_events)
    after, hwm_after = _maxrss_bytes(), _vm_hwm_bytes()
    text = sum(sys.getsizeof(message.content) for message in result.messages)
    return {
        "events": 2 + messages * (DELTAS + 2),
        "outcome": result.outcome,
        "keep_events": keep_events,
        "rss_before": before,
        "rss_after": after,
        "message_text": text,
        "growth_beyond_text": after - before - text,
        "vm_hwm_before": hwm_before,
        "vm_hwm_after": hwm_after,
    }


# Linux carries a process's peak RSS across exec (getrusage's ru_maxrss starts at the peak of
# the address space the child was forked from), so a probe forked straight from this large
# process would read this process's peak as its own. The probe is forked from this small
# launcher instead.
_LAUNCHER = "import subprocess, sys; sys.exit(subprocess.call(sys.argv[1:]))"


def run_memory_probe(messages: int, keep_events: bool) -> dict[str, Any]:
    command = [sys.executable, "-c", _LAUNCHER, sys.executable, __file__]
    command += ["--memory-probe", str(messages)]
    if keep_events:
        command.append("--keep-events")
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    probe: dict[str, Any] = json.loads(done.stdout)
    return probe


# --- the report ------------------------------------------------------------------------


def _version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed (source tree)"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, str]:
    return {
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "msgspec": msgspec.__version__,
        "pydantic": _version("pydantic"),
        "pydantic-core": _version("pydantic-core"),
        "orjson": orjson.__version__,
        "ag-ui-protocol": _version("ag-ui-protocol"),
        "agui-msgspec": _version("agui-msgspec"),
        "cpu": f"{_cpu_model()} ({os.cpu_count()} logical CPUs)",
        "os": platform.platform(),
        "source": _source(),
        "load average at start (1, 5, 15 min)": _load(),
    }


def _source() -> str:
    """The commit measured, and whether src/ or generated/ differed from it (read-only git)."""
    commit = _git("rev-parse", "--short", "HEAD")
    if not commit:
        return "unknown (not a git checkout)"
    # --no-optional-locks: status must not refresh the index, so this reads and never writes.
    dirty = _git("--no-optional-locks", "status", "--porcelain", "--", "src", "generated")
    return f"commit {commit}" + (" with uncommitted changes in src/ or generated/" if dirty else "")


def _git(*arguments: str) -> str:
    try:
        done = subprocess.run(
            ["git", *arguments],
            cwd=Path(__file__).resolve().parent.parent,
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def _load() -> str:
    return ", ".join(f"{load:.2f}" for load in os.getloadavg())


def _rate(events: float, seconds: float) -> str:
    return f"{events / seconds:,.0f}"


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(rows: list[Row]) -> list[str]:
    lines = [
        "Events per second (median); higher is better.",
        "",
        "| workload | events | parse floor (orjson) | official decode | ours decode | "
        "ours full pipeline | ours encode | official encode |",
        "|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for row in rows:
        rates = (
            row.floor,
            row.official_decode,
            row.our_decode,
            row.full_pipeline,
            row.our_encode,
            row.official_encode,
        )
        lines.append(
            f"| {row.workload} | {row.events:,} | "
            + " | ".join(_rate(row.events, seconds) for seconds in rates)
            + " |"
        )
    lines += [
        "",
        "Per workload: full pipeline speed-up over official decode-only, full-pipeline time over "
        "parse-floor time, encode speed-up over official.",
        "",
        "| workload | full µs/event | full ÷ official (speed) | full ÷ floor (time) | "
        "encode speed-up |",
        "|---|--:|--:|--:|--:|",
    ]
    for row in rows:
        lines.append(
            f"| {row.workload} | {row.per_event_us(row.full_pipeline):.2f} | "
            f"{row.official_decode / row.full_pipeline:.2f}x | "
            f"{row.full_pipeline / row.floor:.2f}x | "
            f"{row.official_encode / row.our_encode:.2f}x |"
        )
    return lines


def targets(rows: list[Row], scaling: Scaling | None, memory: dict[str, Any] | None) -> list[str]:
    by_name = {row.workload: row for row in rows}
    lines = ["| target | measured | goal | verdict |", "|---|--:|--:|---|"]

    def add(
        name: str, value: float | None, goal: str, ok: Callable[[float], bool], unit: str
    ) -> None:
        if value is None:
            lines.append(f"| {name} | not measured | {goal} | - |")
        else:
            lines.append(f"| {name} | {value:.2f}{unit} | {goal} | {_verdict(ok(value))} |")

    text = by_name.get("text")
    unknown = by_name.get("unknown")
    add(
        "text: full pipeline speed ÷ official decode-only speed",
        None if text is None else text.official_decode / text.full_pipeline,
        "≥ 10x",
        lambda v: v >= 10,
        "x",
    )
    add(
        "text: full pipeline time ÷ parse floor time",
        None if text is None else text.full_pipeline / text.floor,
        "≤ 1.5x",
        lambda v: v <= 1.5,
        "x",
    )
    add(
        "unknown ÷ text, full pipeline time per event",
        None
        if text is None or unknown is None
        else (unknown.full_pipeline / unknown.events) / (text.full_pipeline / text.events),
        "≤ 5x",
        lambda v: v <= 5,
        "x",
    )
    add(
        "text: our encode speed ÷ official encode speed",
        None if text is None else text.official_encode / text.our_encode,
        "≥ 10x",
        lambda v: v >= 10,
        "x",
    )
    add(
        "text: per-event time at 1M ÷ at 10k (full pipeline)",
        None if scaling is None else scaling.ratio,
        "≤ 1.3x",
        lambda v: v <= 1.3,
        "x",
    )
    add(
        "1M-event text stream, keep_events=False: peak RSS growth beyond message text",
        None if memory is None else memory["growth_beyond_text"] / 2**20,
        "< 50 MB",
        lambda v: v < 50,
        " MB",
    )
    return lines


def details(scaling: Scaling | None, memory: list[dict[str, Any]]) -> list[str]:
    lines = []
    if scaling is not None:
        small = scaling.small_seconds / scaling.small_events * 1e6
        lines.append(f"- scaling: {scaling.small_events:,} events at {small:.2f} µs/event (median)")
        if scaling.large_events is not None and scaling.large_seconds is not None:
            large = scaling.large_seconds / scaling.large_events * 1e6
            lines.append(
                f"- scaling: {scaling.large_events:,} events at {large:.2f} µs/event (median, "
                f"{scaling.large_seconds:.1f} s a run)"
            )
    for probe in memory:
        lines.append(
            f"- memory, keep_events={probe['keep_events']}: {probe['events']:,} events, "
            f"peak RSS {probe['rss_before'] / 2**20:.1f} → {probe['rss_after'] / 2**20:.1f} MB, "
            f"message text {probe['message_text'] / 2**20:.1f} MB, growth beyond it "
            f"{probe['growth_beyond_text'] / 2**20:.1f} MB ({probe['outcome']})"
            + (
                ""
                if probe["vm_hwm_before"] is None
                else f"; VmHWM cross-check {probe['vm_hwm_before'] / 2**20:.1f} → "
                f"{probe['vm_hwm_after'] / 2**20:.1f} MB"
            )
        )
    return lines


# --- profiling -------------------------------------------------------------------------


def _stage_loops(body: bytes) -> dict[str, Callable[[], object]]:
    """The full pipeline cut after each stage, to attribute time without a profiler's overhead.

    Reaches into the Consumer's private enforcer: a diagnostic, not an API. Verification
    and the reducer run fused in the consumer's loop (a repeated delta skips both), so they
    are measured together, as the rest of the full pipeline.
    """

    def reader() -> None:
        framer = SSEReader()
        for chunk in chunked(body, CHUNK_SIZE):
            framer.feed(chunk)

    def reader_and_decode() -> None:
        framer, decode = SSEReader(), _batch_decoder()
        for chunk in chunked(body, CHUNK_SIZE):
            decode(framer.feed(chunk))

    return {
        "SSEReader (framing only)": reader,
        "+ enforcement (strict decode per chunk)": reader_and_decode,
        "+ expansion, verification, reducer: consume_body()": lambda: _full_pipeline(body),
    }


def profile(name: str, repeat: int, top: int) -> None:
    """Stage breakdown (no profiler), then cProfile, of the full pipeline on one workload."""
    workload, warm = workloads.load(name), workloads.load(name, warmup=True)
    head = warm.body
    head_loops = _stage_loops(head)
    timings = {
        label: Timing(run, head_loops[label]) for label, run in _stage_loops(workload.body).items()
    }
    unavailable = ""
    try:
        head_loops["+ enforcement (strict decode per chunk)"]()
    except AttributeError as exc:  # the Consumer's private enforcer was renamed
        unavailable = f"(stage breakdown unavailable: {exc})"
        timings = {}
    payloads, decoder = workload.payloads, BINDINGS.event_decoder
    references = {
        "orjson.loads per payload (the parse floor)": Timing(
            lambda: _floor(payloads), lambda: _floor(warm.payloads)
        ),
        "event_decoder.decode per payload (msgspec alone)": Timing(
            lambda: _bare_decode(decoder, payloads), lambda: _bare_decode(decoder, warm.payloads)
        ),
        "official TypeAdapter(Event).validate_json": Timing(
            lambda: _official_decode(payloads), lambda: _official_decode(warm.payloads)
        ),
    }
    medians, _ = interleaved_medians({**timings, **references}, repeat, lambda message: None)
    print(f"## {name}: {workload.events:,} events, full pipeline ({_source()})\n")
    print(f"Stage breakdown, median of {repeat}, no profiler: µs/event up to each stage\n")
    if unavailable:
        print(unavailable)
    else:
        print("| pipeline up to | µs/event | increment |")
        print("|---|--:|--:|")
        previous = 0.0
        for label in timings:
            per_event = medians[label] / workload.events * 1e6
            print(f"| {label} | {per_event:.2f} | {per_event - previous:+.2f} |")
            previous = per_event
        print(
            "\nThe consumer's loop runs expansion (only while a chunk stream is open), "
            "verification and the reducer together."
        )
    print("\nFor reference, payloads already split out:\n")
    print("| alone | µs/event |")
    print("|---|--:|")
    for label in references:
        print(f"| {label} | {medians[label] / workload.events * 1e6:.2f} |")
    profiler = cProfile.Profile()
    _full_pipeline(head)
    profiler.enable()
    _full_pipeline(workload.body)
    profiler.disable()
    stats: Any = pstats.Stats(profiler)  # typeshed omits .stats and .total_tt
    entries: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats
    total = stats.total_tt
    print(f"\ncProfile: {total:.2f} s in all (profiler overhead included)\n")
    for title, key in (("cumulative", 3), ("self (tottime)", 2)):
        print(f"Top {top} by {title} time:\n")
        print("| function | file:line | calls | self % | cumulative % |")
        print("|---|---|--:|--:|--:|")
        ranked = sorted(entries.items(), key=lambda item: item[1][key], reverse=True)
        for (file, line, function), (_, calls, self_time, cumulative, _) in ranked[:top]:
            print(
                f"| `{function}` | {_short(file)}:{line} | {calls:,} | "
                f"{self_time / total:.1%} | {cumulative / total:.1%} |"
            )
        print()


def _short(file: str) -> str:
    for marker in ("agui_msgspec/", "benchmarks/", "site-packages/"):
        if marker in file:
            return file[file.index(marker) :]
    return file if file.startswith("~") else Path(file).name


# --- main ------------------------------------------------------------------------------


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="skip the 1M-event runs")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per median (default 5)")
    parser.add_argument(
        "--only", default=",".join(workloads.WORKLOADS), help="comma-separated workloads"
    )
    parser.add_argument("--json", type=Path, help="also write the results here as JSON")
    parser.add_argument("--profile", metavar="WORKLOAD", help="profile the full pipeline instead")
    parser.add_argument("--top", type=int, default=25, help="rows per profile listing")
    parser.add_argument("--memory-probe", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--keep-events", action="store_true", help=argparse.SUPPRESS)
    arguments = sys.argv[1:] if argv is None else list(argv)
    args = parser.parse_args(arguments)
    if args.memory_probe is not None:
        print(json.dumps(memory_probe(args.memory_probe, args.keep_events)))
        return 0
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.profile is not None:
        if args.profile not in workloads.WORKLOADS:
            parser.error(f"--profile: choose from {', '.join(workloads.WORKLOADS)}")
        profile(args.profile, args.repeat, args.top)
        return 0
    names = [name for name in args.only.split(",") if name]
    unknown_names = [name for name in names if name not in workloads.WORKLOADS]
    if unknown_names:
        parser.error(f"--only: no workload {', '.join(unknown_names)}")

    def progress(message: str) -> None:
        print(f"  … {message}", file=sys.stderr, flush=True)

    started = datetime.now(timezone.utc)
    info = machine()
    rows = []
    for name in names:
        progress(f"{name}: generating")
        workload, warm = workloads.load(name), workloads.load(name, warmup=True)
        rows.append(measure(workload, warm, args.repeat, progress))
        gc.collect()
    scaling = measure_scaling(args.repeat, args.quick, progress)
    probes: list[dict[str, Any]] = []
    if not args.quick:
        progress("memory: 1M events, keep_events=False (subprocess)")
        probes.append(run_memory_probe(LARGE_MESSAGES, keep_events=False))
        progress("memory: 1M events, keep_events=True, for contrast (subprocess)")
        probes.append(run_memory_probe(LARGE_MESSAGES, keep_events=True))
    bounded = probes[0] if probes else None

    command = " ".join(["python", "benchmarks/run.py", *arguments])
    print(f"# agui-msgspec benchmarks — {started:%Y-%m-%d %H:%M} UTC\n")
    print(f"Command: `{command}` (median of {args.repeat} runs)\n")
    info["load average at end (1, 5, 15 min)"] = _load()
    if _source() != info["source"]:
        info["source at end (it changed during the run!)"] = _source()
    for key, value in info.items():
        print(f"- {key}: {value}")
    print()
    print("\n".join(table(rows)))
    print()
    print("Targets (a MISS never fails the run):\n")
    print("\n".join(targets(rows, scaling, bounded)))
    print()
    print("\n".join(details(scaling, probes)))
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "date": started.isoformat(),
                    "command": command,
                    "repeat": args.repeat,
                    "machine": info,
                    "rows": [asdict(row) for row in rows],
                    "scaling": asdict(scaling),
                    "memory": probes,
                },
                indent=2,
            )
            + "\n"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
