"""What ``import agui_msgspec`` costs a fresh interpreter, against ``import msgspec`` and none.

    python benchmarks/import_time.py        # nox -s bench runs it

Each of the three commands (``python -c pass``, ``-c "import msgspec"``,
``-c "import agui_msgspec"``) starts :data:`STARTS` times, in interleaved rounds so load that
drifts on a shared machine skews no ratio, after one warm-up start each; the median wall
time and CPU time of each are printed, then the
modules ``-X importtime`` charges most to ``import agui_msgspec`` beyond msgspec's own (the
median self time of each over :data:`TRACES` traces). Target: ``import agui_msgspec`` within
1.5x ``import msgspec``; it prints PASS or MISS, and a miss never fails the run.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time

STARTS = 15
TRACES = 5
TOP = 12
TARGET_RATIO = 1.5
# What a user's interpreter does: read the cached bytecode, written once by a warm-up start
# (pip writes it at install; an environment that forbids writing it would time the compiler).
ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
COMMANDS = {
    "bare interpreter": "pass",
    "import msgspec": "import msgspec",
    "import agui_msgspec": "import agui_msgspec",
}


def start_time(code: str) -> tuple[float, float]:
    """Seconds from spawning a fresh interpreter running ``code`` to its exit, and the CPU
    seconds it used (user + system: what other load on the machine does not stretch)."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
    wall = time.perf_counter() - began
    now = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (now.ru_utime - used.ru_utime) + (now.ru_stime - used.ru_stime)


def import_trace(code: str) -> dict[str, tuple[int, int]]:
    """Module → (self, cumulative) microseconds, as ``-X importtime`` reports ``code``'s imports."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env=ENV,
    )
    trace = {}
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, total, name = line.removeprefix("import time:").split("|")
        trace[name.strip()] = (int(own), int(total))
    return trace


def main() -> None:
    for code in COMMANDS.values():
        start_time(code)  # the warm-up: bytecode cached, files in the page cache
    runs: dict[str, list[tuple[float, float]]] = {label: [] for label in COMMANDS}
    for _ in range(STARTS):
        for label, code in COMMANDS.items():
            runs[label].append(start_time(code))
    wall = {label: statistics.median(w for w, _ in times) for label, times in runs.items()}
    cpu = {label: statistics.median(c for _, c in times) for label, times in runs.items()}
    print(f"median of {STARTS} fresh starts ({sys.executable}, {sys.version.split()[0]})")
    print(f"  {'':<22} {'wall ms':>8} {'CPU ms':>8}")
    for label in COMMANDS:
        print(f"  {label:<22} {wall[label] * 1000:8.1f} {cpu[label] * 1000:8.1f}")
    ratio = wall["import agui_msgspec"] / wall["import msgspec"]
    cpu_ratio = cpu["import agui_msgspec"] / cpu["import msgspec"]
    verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"
    print(
        f"  import agui_msgspec / import msgspec: {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU"
        f"  {verdict} (target {TARGET_RATIO}x wall)"
    )

    baseline = set(import_trace("import msgspec"))
    traces = [import_trace("import agui_msgspec") for _ in range(TRACES)]
    names = [name for name in traces[0] if name not in baseline]
    own = {name: statistics.median(t.get(name, (0, 0))[0] for t in traces) for name in names}
    total = {name: statistics.median(t.get(name, (0, 0))[1] for t in traces) for name in names}
    heavy = {"asyncio", "ssl", "socket", "httpx", "agui_msgspec.v1_0"} & set(names)
    print(f"\n-X importtime, beyond msgspec's: {len(names)} modules, median of {TRACES} traces")
    print(f"  {'self ms':>8} {'cumul. ms':>9}  module")
    for name in sorted(names, key=own.__getitem__, reverse=True)[:TOP]:
        print(f"  {own[name] / 1000:8.2f} {total[name] / 1000:9.2f}  {name}")
    print(f"  asyncio, ssl, socket, httpx, v1_0 imported: {', '.join(sorted(heavy)) or 'none'}")


if __name__ == "__main__":
    main()
