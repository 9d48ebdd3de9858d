"""Pure Python against mypyc-compiled modules, per workload, in one run.

    python benchmarks/compiled.py [--quick]     # pure, and the set AGUI_MSGSPEC_COMPILE=1 builds
    python benchmarks/compiled.py --each        # also each candidate alone, and all of them

Each variant is the package's source copied into a scratch folder with its extension modules
beside it, built by ``hatch_build.compile_modules`` (what the compiled wheel holds); each is
timed in a fresh process of its own, and the processes go in interleaved rounds, so load that
drifts on a shared machine falls on every variant alike. Per workload (``workloads.py``
shapes, about 20k events each) the whole pipeline in µs/event, CPU time of the process:
``consume_body(..., keep_events=False)`` on the SSE body in 64 KiB chunks, on the same events
as a protobuf body, and ``ProtobufReader`` alone on that body. Needs mypy, setuptools and
hatchling (``nox -s bench`` installs them) and a C compiler.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "agui_msgspec"
CHUNK = 64 * 1024
CANDIDATES = [
    "src/agui_msgspec/_errors.py",
    "src/agui_msgspec/_pipeline/warnings.py",
    "src/agui_msgspec/_pipeline/patch.py",
    "src/agui_msgspec/_pipeline/lifecycle.py",
    "src/agui_msgspec/_pipeline/reduce.py",
    "src/agui_msgspec/_pipeline/compat.py",
    "src/agui_msgspec/_pipeline/enforce.py",
    "src/agui_msgspec/_pipeline/expand.py",
    "src/agui_msgspec/_pipeline/consumer.py",
    "src/agui_msgspec/_wire/text.py",
    "src/agui_msgspec/_wire/protobuf/decode.py",
    "src/agui_msgspec/_wire/protobuf/fast.py",
    "src/agui_msgspec/_wire/protobuf/reader.py",
]
"""The modules a consumed stream runs through that mypyc compiles as they stand (the
reducer's ``list`` and ``dict`` subclasses live in ``_pipeline/containers.py``, which it
cannot compile as native classes)."""
COLUMNS = ["text", "short", "tools", "state", "mixed", "pb text", "pb tools", "pb mixed"]
COLUMNS += ["reader text", "reader tools", "reader mixed"]


def shipped() -> list[str]:
    """The source paths ``AGUI_MSGSPEC_COMPILE=1`` compiles (pyproject.toml)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return list(config["tool"]["hatch"]["build"]["targets"]["wheel"]["hooks"]["custom"]["compile"])


def build_variant(name: str, paths: list[str], scratch: Path) -> Path:
    """A folder holding the package with ``paths`` compiled: what goes on PYTHONPATH."""
    sys.path.insert(0, str(ROOT))
    from hatch_build import compile_modules  # noqa: PLC0415 (the wheel's own build step)

    folder = scratch / name
    shutil.copytree(PACKAGE, folder / "agui_msgspec", ignore=shutil.ignore_patterns("__pycache__"))
    if paths:
        built = scratch / f"{name}-build"
        for library in compile_modules(ROOT, paths, built):
            target = folder / library.relative_to(built / "lib")
            shutil.copyfile(library, target)
    return folder


# --- the child: one variant's timings ------------------------------------------------------


def _chunks(body: bytes) -> Iterator[bytes]:
    return (body[i : i + CHUNK] for i in range(0, len(body), CHUNK))


def _us(run: Callable[[], object], events: int, repeat: int) -> float:
    try:
        run()  # warm-up: the first pass pays for imports, caches and the allocator's growth
    except Exception as error:  # a compiled module whose annotations lie: said, not timed
        print(f"failed: {error!r}", file=sys.stderr)
        return math.nan
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return statistics.median(times) / events * 1e6


def measure(quick: bool, repeat: int) -> dict[str, float]:
    """µs/event per column, for the package this process imports."""
    import msgspec  # noqa: PLC0415 (the child imports the variant on PYTHONPATH)
    from workloads import build, mixed_events, state_events, text_events, tool_events  # noqa: PLC0415

    from agui_msgspec import ProtobufReader, consume_body, proto_frame  # noqa: PLC0415

    scale = 5 if quick else 1
    workloads = {
        "text": build("text", text_events(40 // scale, 500)),
        "short": build("short", text_events(7_000 // scale, 1)),
        "tools": build("tools", tool_events(400 // scale)),
        "state": build("state", state_events(2_000 // scale)),
        "mixed": build("mixed", mixed_events(50 // scale)),
    }
    times: dict[str, float] = {}
    for name, workload in workloads.items():
        n, body = workload.events, workload.body
        times[name] = _us(lambda: consume_body(_chunks(body), keep_events=False), n, repeat)  # noqa: B023
    for name in ("text", "tools", "mixed"):
        workload = workloads[name]
        binary = b"".join(proto_frame(msgspec.json.decode(p)) for p in workload.payloads)
        n = workload.events
        run = lambda: consume_body(_chunks(binary), keep_events=False)  # noqa: B023, E731
        times[f"pb {name}"] = _us(run, n, repeat)
        times[f"reader {name}"] = _us(lambda: ProtobufReader().feed(binary), n, repeat)  # noqa: B023
    return times


# --- the parent: build, run the rounds, print the tables -----------------------------------


def _child(folder: Path, quick: bool, repeat: int) -> dict[str, float]:
    path = os.pathsep.join([str(folder), str(ROOT / "benchmarks")])
    command = [sys.executable, __file__, "--measure", *(["--quick"] if quick else [])]
    command += ["--repeat", str(repeat)]
    out = subprocess.run(
        command, env={**os.environ, "PYTHONPATH": path}, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.splitlines()[-1])


def _label(paths: list[str]) -> str:
    if not paths:
        return "pure"
    return " + ".join(Path(p).stem for p in paths) if len(paths) <= 4 else f"{len(paths)} modules"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a fifth of the events, one round")
    parser.add_argument("--each", action="store_true", help="each candidate alone, then all")
    parser.add_argument("--rounds", type=int, help="processes per variant (default 3; quick 1)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per process")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        import agui_msgspec  # noqa: PLC0415

        print(f"agui_msgspec from {agui_msgspec.__file__}", file=sys.stderr)
        print(json.dumps(measure(args.quick, args.repeat)))
        return 0
    rounds = args.rounds or (1 if args.quick else 3)
    variants = {"pure": [], f"shipped: {_label(shipped())}": shipped()}
    if args.each:
        variants |= {Path(p).stem: [p] for p in CANDIDATES} | {"all candidates": CANDIDATES}
    with tempfile.TemporaryDirectory(prefix="agui-bench-compiled-") as tmp:
        start = time.perf_counter()
        with ProcessPoolExecutor(2) as pool:  # the machine's two cores; mypyc uses one each
            futures = {
                name: pool.submit(build_variant, f"v{index}", paths, Path(tmp))
                for index, (name, paths) in enumerate(variants.items())
            }
            folders = {name: future.result() for name, future in futures.items()}
        print(
            f"built {len(folders)} variants in {time.perf_counter() - start:.0f} s", file=sys.stderr
        )
        samples: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        for round_ in range(rounds):
            print(f"round {round_ + 1} of {rounds}", file=sys.stderr)
            for name, folder in folders.items():
                samples[name].append(_child(folder, args.quick, args.repeat))
    medians = {
        name: {c: statistics.median(s[c] for s in runs) for c in COLUMNS}
        for name, runs in samples.items()
    }
    print(f"Python {sys.version.split()[0]}, {rounds} round(s) of {args.repeat} runs, "
          f"quick={args.quick}; µs/event, median; in brackets the time against pure")  # fmt: skip
    print()
    print(f"| variant | {' | '.join(COLUMNS)} |")
    print(f"| --- |{' ---: |' * len(COLUMNS)}")
    pure = medians["pure"]
    for name, row in medians.items():
        cells = [
            f"{row[c]:.2f}" if name == "pure" else f"{row[c]:.2f} ({row[c] / pure[c]:.2f})"
            for c in COLUMNS
        ]
        print(f"| {name} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
