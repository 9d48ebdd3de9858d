"""Protobuf frames built by hand, and the two decoders compared on them: for the tests of
bindings generated with fields the shipped schemas do not have (numbers, packed arrays)."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

import agui_msgspec
from agui_msgspec._versions import load_bindings
from agui_msgspec._wire.protobuf.decode import GeneralDecoder
from agui_msgspec._wire.protobuf.fast import FastDecoder
from agui_msgspec._wire.protobuf.tables import WireTables

SCHEMA_1_1 = Path(__file__).resolve().parents[1] / "schema" / "1.1" / "schema.json"


def generated_with(
    directory: Path, module: str, properties: dict[str, Any], required: list[str]
) -> Iterator[Any]:
    """Bindings of 1.1 as a 1.2 with ``properties`` added to RUN_STARTED (those in
    ``required`` required), for as long as the caller holds them."""
    schema = json.loads(SCHEMA_1_1.read_text(encoding="utf-8"))
    schema["$id"] = "https://ag-ui.com/spec/1.2/schema.json"
    started = schema["$defs"]["RunStartedEvent"]
    started["properties"].update(properties)
    started["required"] += required
    source = directory / "schema.json"
    source.write_text(json.dumps(schema), encoding="utf-8")
    try:
        yield load_bindings(agui_msgspec.generate(source, directory / "out", module=module))
    finally:
        sys.modules.pop(module, None)
        sys.modules.pop(f"{module}_wire", None)


def varint(value: int) -> bytes:
    value &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def length_delimited(number: int, body: bytes) -> bytes:
    return varint(number << 3 | 2) + varint(len(body)) + body


def run_started(tables: WireTables, fields: bytes) -> bytes:
    """A RUN_STARTED message built by hand: thread "t", run "r", then ``fields``."""
    arm = tables.arm_by_type["RUN_STARTED"]
    base = length_delimited(1, bytes([0x08, tables.enum_numbers["EventType"]["RUN_STARTED"]]))
    body = base + length_delimited(2, b"t") + length_delimited(3, b"r") + fields
    return length_delimited(arm.number, body)


def reading_by(
    decoder: type[GeneralDecoder | FastDecoder], tables: WireTables, message: bytes
) -> Any:
    """What one decoder makes of a frame: its event as JSON, or what it raised."""
    try:
        event = decoder(tables, lambda _: None).event(message)
    except Exception as refused:
        return ("refused", type(refused), str(refused))
    return ("read", msgspec.json.encode(event, order="sorted"))


def read_alike(tables: WireTables, message: bytes) -> Any:
    """What both decoders make of a frame, the same or the test fails."""
    general = reading_by(GeneralDecoder, tables, message)
    assert reading_by(FastDecoder, tables, message) == general, message.hex()
    return general
