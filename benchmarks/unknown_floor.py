"""What bounds ``decode`` on events with one unknown property (issue 24's ≤ 2x goal).

    python benchmarks/unknown_floor.py [--repeat 5]

On the text workload with one unknown property on every event, the pieces the tolerant
path cannot skip, each alone: the strict decode of the conformant payloads (the cost the
goal is relative to), a generic JSON decode of the payload (to learn the property's name),
the strict conversion of the trimmed dict into the event's Struct, and saying one warning
per event through the bounded log. µs per event, the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import msgspec
import workloads

from agui_msgspec import v1_1
from agui_msgspec._pipeline.decode import Decoder
from agui_msgspec._pipeline.warnings import WarningLog


def best(run: Callable[[], object], repeat: int, events: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) / events * 1e6


def warn_each(events: int) -> None:
    warn = WarningLog().warn
    for index in range(events):
        warn(f"event {index} /xVendorTrace: removed unrecognised property")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    documents = list(workloads.text_events(40, 500))
    conformant = [msgspec.json.encode(document) for document in documents]
    unknown = [msgspec.json.encode(document) for document in workloads.unknown_events(40, 500)]
    trimmed = [msgspec.json.decode(payload) for payload in conformant]
    structs = [v1_1.EVENT_TYPES[document["type"]] for document in trimmed]
    strict = v1_1.event_decoder.decode
    rows = {
        "strict decode, conformant (the reference)": lambda: list(map(strict, conformant)),
        "decode, conformant": lambda: Decoder().decode_many(conformant),
        "decode, one unknown property": lambda: Decoder().decode_many(unknown),
        "generic JSON decode of the payload": lambda: list(map(msgspec.json.decode, unknown)),
        "strict convert of the trimmed dict": lambda: list(map(msgspec.convert, trimmed, structs)),
        "one warning per event (WarningLog.warn)": lambda: warn_each(len(unknown)),
    }
    print("| piece | µs/event |\n|---|--:|")
    for label, run in rows.items():
        print(f"| {label} | {best(run, args.repeat, len(unknown)):.2f} |")


if __name__ == "__main__":
    main()
