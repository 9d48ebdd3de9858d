"""What bounds ``decode`` where issue 24's goals are missed: each piece of the path alone.

    python benchmarks/decode_floor.py [--repeat 5]

- **One unknown property on every event** (the text workload; goal ≤ 2x the conformant
  decode, met since the twins of ``_pipeline/ahead``): the strict decode of the conformant
  payloads, then the pieces of the generic path (a generic JSON decode of the payload, the
  strict conversion of the trimmed dict into the event's Struct, one warning per event
  through the bounded log), and the twins' one decode of a batch, which replaces the first
  two.
- **State deltas** (goals ≥ 5x the official decode, ≤ 1.5x the strict decode): the strict
  decode of each batch of 1,024 into a list, as ``decode`` returns them; the check the spec
  asks of every JSON Patch operation (an unknown ``op`` stripped, a malformed one fatal), as
  the one conversion of a batch's operations into their union with the pointer pattern left
  out, and as the gathering of each batch's pointers to match; the strict decode with the
  operations typed as Structs (what DESIGN.md rules out), and the official decode.

- **The realistic mix** (goal ≥ 5x the official decode): the same reference and kept
  batches, and the plain decoder a batch goes through (it refuses a run's start and the
  JSON Patch events, which are then decoded alone) on the events it takes.

µs per event, the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import operator
import time
import typing
from collections.abc import Callable
from typing import Any

import msgspec
import workloads
from ag_ui.core import Event as OfficialEvent
from pydantic import TypeAdapter

from agui_msgspec import v1_1
from agui_msgspec._pipeline.ahead import decode_ahead, make_twins
from agui_msgspec._pipeline.decode import Decoder
from agui_msgspec._pipeline.enforce import _event_holder, _open_union_tables, _plain_decoder
from agui_msgspec._pipeline.warnings import WarningLog

BATCH = 1024
STRICT = v1_1.event_decoder.decode


def best(run: Callable[[], object], repeat: int, events: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) / events * 1e6


def warn_each(events: int) -> None:
    warn_about = WarningLog().warn_about
    for index in range(events):
        warn_about(index, f" /{workloads.UNKNOWN_PROPERTY}: removed unrecognised property")


def each(function: Callable[[bytes], object], payloads: list[bytes]) -> None:
    """``function`` on every payload, each result dropped at once (as the official loop does)."""
    for payload in payloads:
        function(payload)


def batches(items: list[bytes]) -> list[list[bytes]]:
    return [items[start : start + BATCH] for start in range(0, len(items), BATCH)]


def decode(payloads: list[bytes]) -> None:
    """``Decoder().decode_many`` on each batch of 1,024, as the bench's ``decode`` column."""
    decode_many = Decoder().decode_many
    for batch in batches(payloads):
        decode_many(batch)


def kept(payloads: list[bytes], decode: Callable[[bytes], object] = STRICT) -> None:
    """The strict decode of each batch of 1,024 into a list, as ``decode_many`` returns it,
    each let go when the next is made."""
    for batch in batches(payloads):
        list(map(decode, batch))


def convert_batches(documents: list[Any]) -> None:
    """The documents converted into events, a batch of 1,024 per call, each let go in turn."""
    holder = _event_holder(v1_1.event_decoder)
    for start in range(0, len(documents), BATCH):
        msgspec.convert({"items": documents[start : start + BATCH]}, holder)


def unknown_rows() -> dict[str, tuple[int, Callable[[], object]]]:
    documents = list(workloads.text_events(40, 500))
    conformant = [msgspec.json.encode(document) for document in documents]
    unknown = [msgspec.json.encode(document) for document in workloads.unknown_events(40, 500)]
    trimmed = [msgspec.json.decode(payload) for payload in conformant]
    structs = [v1_1.EVENT_TYPES[document["type"]] for document in trimmed]
    events = len(unknown)
    twins = make_twins(v1_1, (workloads.UNKNOWN_PROPERTY,))
    assert twins is not None

    return {
        "strict decode, conformant (the reference)": (events, lambda: each(STRICT, conformant)),
        "decode, conformant": (events, lambda: decode(conformant)),
        "decode, one unknown property": (events, lambda: decode(unknown)),
        "generic JSON decode of the payload": (
            events,
            lambda: each(msgspec.json.decode, unknown),
        ),
        "strict convert of the trimmed dict": (
            events,
            lambda: list(map(msgspec.convert, trimmed, structs)),
        ),
        "strict convert of the trimmed dicts, 1,024 in one call (as decode does)": (
            events,
            lambda: convert_batches(trimmed),
        ),
        "one warning per event (WarningLog.warn_about)": (events, lambda: warn_each(events)),
        "the twins' decode of the batches (_pipeline/ahead)": (
            events,
            lambda: [decode_ahead(twins, batch) for batch in batches(unknown)],
        ),
    }


def state_rows() -> dict[str, tuple[int, Callable[[], object]]]:
    payloads = [msgspec.json.encode(document) for document in workloads.state_events(10_000)]
    events = len(payloads)
    holder = _open_union_tables(v1_1).validators[v1_1.StateDeltaEvent]["delta"][1]
    pattern_free = _open_union_tables(v1_1).pattern_free[holder].holder
    decoded = [list(map(STRICT, batch)) for batch in batches(payloads)]
    operations = [
        [op for event in batch if type(event) is v1_1.StateDeltaEvent for op in event.delta]
        for batch in decoded
    ]
    converted = [msgspec.convert({"items": ops}, pattern_free).items for ops in operations]
    official = TypeAdapter(OfficialEvent).validate_json

    typed = typed_operations_decoder(v1_1.JsonPatchOperation)
    held = typing.get_args(msgspec.structs.fields(pattern_free)[0].type)[0]  # list[union]
    free_union = typing.get_args(held)[0]
    typed_free = typed_operations_decoder(free_union)

    def pointers() -> None:
        for items in converted:
            for attr in ("path", "from_"):
                set(map(getattr, items, itertools.repeat(attr), itertools.repeat(None)))

    return {
        "strict decode, one by one (the reference)": (events, lambda: each(STRICT, payloads)),
        "strict decode, each batch kept until the next": (events, lambda: kept(payloads)),
        "the operations converted, pattern left out": (
            events,
            lambda: [msgspec.convert({"items": ops}, pattern_free) for ops in operations],
        ),
        "the operations converted with the pattern (msgspec's own check)": (
            events,
            lambda: [msgspec.convert({"items": ops}, holder) for ops in operations],
        ),
        "each batch's pointers gathered": (events, pointers),
        "strict decode, operations typed (not this design), each batch kept": (
            events,
            lambda: kept(payloads, typed),
        ),
        "the same, the pointer pattern left out of the Structs": (
            events,
            lambda: kept(payloads, typed_free),
        ),
        "decode": (events, lambda: decode(payloads)),
        "official decode": (events, lambda: each(official, payloads)),
    }


def typed_operations_decoder(operation: Any) -> Callable[[bytes], object]:
    """The strict decoder with ``STATE_DELTA``'s operations as ``operation`` Structs (the
    generated ``JsonPatchOperation``, or it without its pointer pattern): what decoding would
    cost if the operations were typed, which DESIGN.md rules out (RFC 6902 §4 lets members
    through that a Struct would drop)."""
    fields = [
        (f.name, list[operation] if f.name == "delta" else f.type, f.default)
        for f in msgspec.structs.fields(v1_1.StateDeltaEvent)
    ]
    typed_delta = msgspec.defstruct(
        "StateDeltaEvent",
        [
            (name, kind, msgspec.field(name=name) if default is msgspec.NODEFAULT else default)
            for name, kind, default in fields
        ],
        kw_only=True,
        tag_field="type",
        tag="STATE_DELTA",
        forbid_unknown_fields=True,
        rename="camel",
    )
    members = [
        typed_delta if member is v1_1.StateDeltaEvent else member
        for member in v1_1.EVENT_TYPES.values()
    ]
    return msgspec.json.Decoder(functools.reduce(operator.or_, members)).decode  # type: ignore[no-any-return]


def mix_rows() -> dict[str, tuple[int, Callable[[], object]]]:
    payloads = [msgspec.json.encode(document) for document in workloads.mixed_events(250)]
    events = len(payloads)
    plain = _plain_decoder(v1_1)[0].decode
    refused = _plain_decoder(v1_1)[1]
    plain_payloads = [p for p in payloads if type(STRICT(p)) not in refused]
    official = TypeAdapter(OfficialEvent).validate_json

    return {
        "strict decode, one by one (the reference)": (events, lambda: each(STRICT, payloads)),
        "strict decode, each batch kept until the next": (events, lambda: kept(payloads)),
        "the plain decoder (every type but a run's start and JSON Patch events), kept": (
            events,
            lambda: kept(plain_payloads, plain),
        ),
        "decode": (events, lambda: decode(payloads)),
        "official decode": (events, lambda: each(official, payloads)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for title, rows in (
        ("one unknown property on every event (text)", unknown_rows()),
        ("state deltas", state_rows()),
        ("realistic mix (decode ≥ 5x official)", mix_rows()),
    ):
        print(f"\n{title}\n\n| piece | µs/event |\n|---|--:|")
        for label, (events, run) in rows.items():
            print(f"| {label} | {best(run, args.repeat, events):.2f} |")


if __name__ == "__main__":
    main()
