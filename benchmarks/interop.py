"""What converting the official SDK's pydantic events costs, per event, route by route.

    python benchmarks/interop.py [--repeat N] [--events N]

The events are the ``mixed`` workload's first ``--events`` (default 20,000: steps,
reasoning, text, tool calls, state deltas, subagent chunks, usage), validated once into
``ag_ui.core`` models outside timing. Per route, the median of ``--repeat`` (default 5)
interleaved rounds:

official → Struct
  1. ``from_official``: ours, the model's attributes through a per-class plan into a
     wire-named dict, then ``msgspec.convert`` into the Struct;
  2. ``model_dump(by_alias=True, mode="json")`` + ``msgspec.convert``;
  3. ``model_dump_json(by_alias=True)`` + the strict decoder: the model_dump + decode route.
     (``msgspec.convert(model, Struct, from_attributes=True)`` is not a route: it takes
     neither the ``EventType`` enum nor ``None`` for an absent field.)
Struct → official
  4. ``to_official``: ours, ``model_validate(msgspec.to_builtins(struct))``;
  5. ``model_validate_json(encoder.encode(struct))``.
The consumer
  6. ``consume(models)``: the whole pipeline, official objects in;
  7. ``consume(json payloads)``: the same events as JSON bytes, for reference.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

import msgspec
import workloads
from ag_ui.core import Event as OfficialEvent
from pydantic import TypeAdapter

import agui_msgspec
from agui_msgspec import consume, from_official, to_official

BINDINGS = agui_msgspec.v1_1


def _routes(
    models: list[Any], structs: list[Any], payloads: list[bytes]
) -> dict[str, Callable[[], object]]:
    classes = [getattr(BINDINGS, type(model).__name__) for model in models]
    decoders = {cls: msgspec.json.Decoder(cls) for cls in set(classes)}
    official = [type(model) for model in models]
    encode = BINDINGS.encoder.encode
    pairs = list(zip(models, classes, strict=True))

    def ours() -> object:
        return [from_official(model) for model in models]

    def dump_convert() -> object:
        return [msgspec.convert(m.model_dump(by_alias=True, mode="json"), c) for m, c in pairs]

    def dump_json_decode() -> object:
        return [decoders[c].decode(m.model_dump_json(by_alias=True)) for m, c in pairs]

    def ours_back() -> object:
        return [to_official(struct) for struct in structs]

    def validate_json() -> object:
        return [
            cls.model_validate_json(encode(s)) for cls, s in zip(official, structs, strict=True)
        ]

    return {
        "from_official (ours)": ours,
        "model_dump(mode=json) + convert": dump_convert,
        "model_dump_json + decode": dump_json_decode,
        "to_official (ours)": ours_back,
        "encode + model_validate_json": validate_json,
        "consume(official models)": lambda: consume(models, keep_events=False),
        "consume(JSON payloads)": lambda: consume(payloads, keep_events=False),
    }


def medians(routes: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    for run in routes.values():
        run()  # warm-up: plans, caches, decoders
    samples: dict[str, list[float]] = {label: [] for label in routes}
    for _ in range(repeat):
        for label, run in routes.items():
            gc.collect()
            start = time.perf_counter()
            run()
            samples[label].append(time.perf_counter() - start)
    return {label: statistics.median(times) for label, times in samples.items()}


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--events", type=int, default=20_000, help="events (default 20,000)")
    arguments, _ = parser.parse_known_args(list(argv) if argv is not None else None)
    documents = list(itertools.islice(workloads.mixed_events(), arguments.events))
    payloads = [msgspec.json.encode(document) for document in documents]
    models = [TypeAdapter(OfficialEvent).validate_json(payload) for payload in payloads]
    structs = [BINDINGS.event_decoder.decode(payload) for payload in payloads]
    assert [from_official(model) for model in models] == structs
    results = medians(_routes(models, structs, payloads), arguments.repeat)
    print(f"{len(models):,} events of the mixed workload, median of {arguments.repeat} rounds")
    print(f"{'route':34} {'µs/event':>9}")
    for label, seconds in results.items():
        print(f"{label:34} {seconds / len(models) * 1e6:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
