"""Arrays of integers, booleans and enums on the protobuf wire: a packed ``repeated int64`` or
``repeated bool``, as proto3 writes every repeated numeric scalar (one length-delimited run of
varints). Bindings are generated from 1.1 with such arrays added to RUN_STARTED; both decoders
read what the encoder writes, packed or unpacked, and refuse alike a run cut short."""

from __future__ import annotations

import json
import runpy
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest
from protobuf_by_hand import generated_with, length_delimited, read_alike, run_started, varint

from agui_msgspec import TransportError, encode_proto
from agui_msgspec._wire.protobuf import decode_frame, wire_tables
from agui_msgspec._wire.protobuf.decode import Budget, GeneralDecoder, Malformed, TooLarge
from agui_msgspec._wire.protobuf.fast import FastDecoder
from agui_msgspec._wire.protobuf.tables import WireTables

MODULE = "packed_v1_2"
ARRAYS = {
    "codes": {"type": "array", "items": {"type": "integer"}},
    "flags": {"type": "array", "items": {"type": "boolean"}},
    "roles": {"type": "array", "items": {"$ref": "#/$defs/TextMessageRole"}},
    # not scalars: a repeated google.protobuf.Value and Struct, which the fast decoder hands over
    "blobs": {"type": "array", "items": {}},
    "records": {"type": "array", "items": {"type": "object"}},
}
ROLES = ["developer", "system", "assistant", "user"]
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@pytest.fixture(scope="module")
def bindings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    yield from generated_with(tmp_path_factory.mktemp("packed"), MODULE, ARRAYS, list(ARRAYS))


def started(bindings: Any, **arrays: Any) -> Any:
    return bindings.RunStartedEvent(
        thread_id="t",
        run_id="r",
        **{"codes": [], "flags": [], "roles": [], "blobs": [], "records": [], **arrays},
    )


def unpacked(number: int, values: list[int]) -> bytes:
    """Each value a varint field of its own, as a proto2 writer (or any, before packing) does."""
    return b"".join(varint(number << 3) + varint(value) for value in values)


def test_arrays_of_integers_and_booleans_are_repeated_scalars_in_the_proto(bindings: Any) -> None:
    proto = Path(bindings.__file__).with_suffix(".proto").read_text(encoding="utf-8")
    assert "  repeated int64 codes = 7;" in proto
    assert "  repeated bool flags = 8;" in proto
    # an enum of the schema is a string on this wire, its array a repeated string
    assert "  repeated string roles = 9;" in proto
    fields = {f.name: f.type for f in msgspec.structs.fields(bindings.RunStartedEvent)}
    assert fields["codes"] == list[int]
    assert fields["flags"] == list[bool]


def test_the_fast_decoder_builds_for_repeated_scalars(bindings: Any) -> None:
    tables = wire_tables(bindings)
    assert [f.name for f in tables.messages["RunStartedEvent"].fields if f.packed] == [
        "codes",
        "flags",
    ]
    FastDecoder(tables, lambda _: None)  # it raised AssertionError: no repeated int64


@pytest.mark.parametrize(
    "arrays",
    [
        {},
        {"codes": [0], "flags": [False], "roles": ["user"]},
        {"codes": [-1, 1, 300, INT64_MAX, INT64_MIN], "flags": [True, False, True], "roles": ROLES},
        {"codes": [2**53 + 1, -(2**53) - 1]},
        {"blobs": [1, "a", None, [2], {"k": {}}], "records": [{}, {"a": [1, {"b": None}]}]},
    ],
)
def test_repeated_scalars_read_back_as_written_by_both_decoders(
    bindings: Any, arrays: dict[str, Any]
) -> None:
    event = started(bindings, **arrays)
    kind, decoded = read_alike(wire_tables(bindings), encode_proto(event, bindings))
    assert kind == "read"
    assert msgspec.convert(msgspec.json.decode(decoded), bindings.RunStartedEvent) == event


def test_repeated_scalars_are_written_as_one_packed_run_and_none_when_empty(bindings: Any) -> None:
    tables = wire_tables(bindings)
    assert encode_proto(started(bindings), bindings) == run_started(tables, b"")
    written = encode_proto(started(bindings, codes=[1, -1], flags=[True, False]), bindings)
    minus_one = b"\xff" * 9 + b"\x01"  # an int64's two's complement, in 10 varint bytes
    codes, flags = length_delimited(7, b"\x01" + minus_one), length_delimited(8, b"\x01\x00")
    assert written == run_started(tables, codes + flags)


@pytest.mark.parametrize(
    ("number", "values"),
    [(7, [1, 2**64 - 1, 2**63 - 1, 2**63]), (8, [1, 0, 2])],  # codes; flags (2 is true)
    ids=["codes", "flags"],
)
def test_a_repeated_scalar_reads_alike_packed_unpacked_or_both(
    bindings: Any, number: int, values: list[int]
) -> None:
    tables = wire_tables(bindings)
    packed = run_started(tables, length_delimited(number, b"".join(map(varint, values))))
    kind, decoded = read_alike(tables, packed)
    assert kind == "read"
    assert read_alike(tables, run_started(tables, unpacked(number, values))) == (kind, decoded)
    # protobuf concatenates the runs and fields of one repeated field
    mixed = length_delimited(number, varint(values[0])) + unpacked(number, values[1:])
    assert read_alike(tables, run_started(tables, mixed)) == (kind, decoded)


@pytest.mark.parametrize(
    "run",
    [b"\x01\x80", b"\xff" * 11, b"\x80"],
    ids=["truncated", "overlong", "only-a-continuation"],
)
@pytest.mark.parametrize("number", [7, 8], ids=["codes", "flags"])
def test_a_varint_cut_short_in_a_packed_run_is_malformed_to_both_decoders(
    bindings: Any, number: int, run: bytes
) -> None:
    tables = wire_tables(bindings)
    message = run_started(tables, length_delimited(number, run))
    assert read_alike(tables, message) == ("refused", Malformed, "a varint runs past its bounds")
    with pytest.raises(TransportError, match=r"malformed-frame.*a varint runs past its bounds"):
        decode_frame(message, bindings)


def test_a_repeated_scalar_of_another_wire_type_is_still_malformed(bindings: Any) -> None:
    tables = wire_tables(bindings)
    as_fixed64 = run_started(tables, bytes([7 << 3 | 1]) + bytes(8))  # codes as a double
    refused = ("refused", Malformed, "RunStartedEvent.codes has the wrong wire type")
    assert read_alike(tables, as_fixed64) == refused


def test_each_packed_item_is_charged_to_the_budget_as_an_item_of_a_list(bindings: Any) -> None:
    tables = wire_tables(bindings)
    message = run_started(tables, length_delimited(8, bytes(1000)))  # a thousand false flags
    for limit, outcome in ((2000, TooLarge), (10_000, None)):
        general = GeneralDecoder(tables, lambda _: None, Budget(limit))
        fast = FastDecoder(tables, lambda _: None, limit)
        for decoder in (general, fast):
            if outcome is None:
                assert decoder.event(message)["flags"] == [False] * 1000  # type: ignore[index]
            else:
                with pytest.raises(outcome):
                    decoder.event(message)


@pytest.fixture
def enum_tables(bindings: Any) -> WireTables:
    """The wire with ``roles`` a repeated enum, as a hand-written table may have it: codegen
    makes a schema enum a string, so only the envelope's and a tagged union's are enums."""
    generated = runpy.run_path(str(Path(bindings.__file__).with_name(f"{MODULE}_wire.py")))
    module: Any = ModuleType("packed_enum_wire")
    module.PROTOCOL_VERSION = "1.2+repeated-enum"  # floors are kept by version
    module.ENUMS = {**generated["ENUMS"], "Role": {0: "DEVELOPER", 1: "SYSTEM", 2: "USER"}}
    shape, tag, rows = generated["MESSAGES"]["RunStartedEvent"]
    rows = tuple(
        (number, name, "enum", label, json_name, "Role", required)
        if name == "roles"
        else (number, name, kind, label, json_name, ref, required)
        for number, name, kind, label, json_name, ref, required in rows
    )
    module.MESSAGES = {**generated["MESSAGES"], "RunStartedEvent": (shape, tag, rows)}
    module.FLATTEN, module.CONTENT_FORMS = generated["FLATTEN"], generated["CONTENT_FORMS"]
    return WireTables(module)


def test_a_repeated_enum_is_packed_and_read_by_the_enum_rules(enum_tables: WireTables) -> None:
    event = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "roles": ["USER", "SYSTEM"]}
    written = encode_proto(event, enum_tables)
    assert written == run_started(enum_tables, length_delimited(9, b"\x02\x01"))
    kind, decoded = read_alike(enum_tables, written)
    assert (kind, json.loads(decoded)["roles"]) == ("read", ["USER", "SYSTEM"])
    # every value, a number this build lacks (as its number), and the same unpacked
    values = [0, 1, 2, 7, 2**64 - 1]
    every = ["DEVELOPER", "SYSTEM", "USER", "7", "-1"]
    for fields in (length_delimited(9, b"".join(map(varint, values))), unpacked(9, values)):
        kind, decoded = read_alike(enum_tables, run_started(enum_tables, fields))
        assert (kind, json.loads(decoded)["roles"]) == ("read", every)
    cut = run_started(enum_tables, length_delimited(9, b"\x02\x81"))
    assert read_alike(enum_tables, cut) == ("refused", Malformed, "a varint runs past its bounds")
