"""Where the ``state`` workload's time goes: the full pipeline with its two costly stages
taken out in turn, against the official SDK's decode alone (issue 14's target).

    python benchmarks/state_floor.py [--repeat 5]

Stages are taken out by replacing them with no-ops in this process only (the reducer's
``STATE_DELTA`` handler; enforcement's check of the JSON Patch operations against their
union), so the rows bound what any faster version of a stage could win. CPU time, the best
of ``--repeat`` runs, µs per event; the measurements go in interleaved rounds.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import workloads
from ag_ui.core import Event as OfficialEvent
from pydantic import TypeAdapter

from agui_msgspec import consume_body
from agui_msgspec._pipeline import enforce as _enforce
from agui_msgspec._pipeline import reduce as _reduce


@contextmanager
def without(owner: object, name: str, stand_in: object) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, stand_in)
    try:
        yield
    finally:
        setattr(owner, name, original)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    workload = workloads.load("state")
    validate = TypeAdapter(OfficialEvent).validate_json

    def official() -> None:
        for payload in workload.payloads:
            validate(payload)

    def full() -> None:
        consume_body(workloads.chunked(workload.body), keep_events=False)

    def no_patch() -> None:
        with without(_reduce.Reducer, "_state_delta", lambda self, event, index: None):
            full()

    def no_operation_check() -> None:
        with without(_enforce, "_open_union_error", lambda event, checks: None):
            full()

    def neither() -> None:
        with without(_enforce, "_open_union_error", lambda event, checks: None):
            no_patch()

    rows: dict[str, Callable[[], None]] = {
        "official SDK decode alone (TypeAdapter(Event).validate_json)": official,
        "ours, full pipeline": full,
        "ours, without applying the patches": no_patch,
        "ours, without checking the operations": no_operation_check,
        "ours, without either": neither,
    }
    best = dict.fromkeys(rows, float("inf"))
    for _ in range(args.repeat):
        for name, run in rows.items():
            started = time.process_time()
            run()
            best[name] = min(best[name], time.process_time() - started)
    print("| pipeline | µs/event |\n|---|--:|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds / workload.events * 1e6:.2f} |")


if __name__ == "__main__":
    main()
