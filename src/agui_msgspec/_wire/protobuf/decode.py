"""Decoding a frame: the rules every decoder of the wire applies, each written once, and the
general decoder, which reads every message shape the wire tables describe.

The general decoder is the reference: the single-pass decoder (``fast.py``) reads the frames
it can as this one does and hands it every other, a malformed one included, so that what is
wrong with a frame is said in one way.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Iterator
from typing import Any

import msgspec

from agui_msgspec._wire.protobuf.tables import (
    FIXED32,
    FIXED64,
    LEN,
    MAX_NESTING,
    VARINT,
    WireField,
    WireMessage,
    WireTables,
)
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE

ABSENT: Any = object()
"""What a field the bytes do not carry reads as (``None`` is JSON null)."""

_SAFE_INTEGER = 2**53
_DEFAULTS: dict[str, Any] = {"string": "", "int64": 0, "double": 0.0, "bool": False}
_FIXED_SIZE = {FIXED64: (8, "fixed64"), FIXED32: (4, "fixed32")}
_unpack_double = struct.Struct("<d").unpack_from
_json_encode = msgspec.json.Encoder().encode
_FLOORS: dict[str, dict[str, int]] = {}  # by protocol version


DROPPED_UNKNOWN_ARM = (
    "dropped a protobuf frame before this event: its Event arm is one this build does not "
    "know (an event type from a later protocol)"
)
DROPPED_NO_ARM = (
    "dropped a protobuf frame before this event: it carries no Event arm (a zero-length "
    "frame: an event its producer could not encode, or of a type this build predates)"
)


class Malformed(Exception):
    """Internal: the frame's bytes are not a well-formed message; the reader says where."""


class TooLarge(Exception):
    """Internal: the frame decodes into more JSON than its budget; the reader says where."""


class Budget:
    """The JSON bytes a frame may still decode into: what each value made costs at least,
    charged as it is made, so a frame of empty messages stops at ``max_event_size`` of JSON
    rather than at its byte count's worth of objects (a 2-byte item is a 24-byte object)."""

    __slots__ = ("left", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = self.left = limit

    def spend(self, size: int) -> None:
        self.left -= size
        if self.left < 0:
            raise TooLarge


# --------------------------------------------------------------------------- the rules


def check_depth(depth: int) -> None:
    """Nesting past ``MAX_NESTING`` is malformed, not a stack overflow."""
    if depth > MAX_NESTING:
        raise Malformed(f"nests deeper than {MAX_NESTING} levels")


def varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos``, as 64 bits, and where it ends."""
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise Malformed("a varint runs past its bounds")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7


def field_value(data: bytes, pos: int, end: int, tag: int) -> tuple[int, int]:
    """The value of the field whose ``tag`` ends at ``pos``: a varint as (its value, where it
    ends), any other as the span of its bytes."""
    if tag >> 3 == 0:
        raise Malformed("field number 0")
    wire_type = tag & 7
    if wire_type == LEN:
        if pos < end and data[pos] < 0x80:
            length = data[pos]
            pos += 1
        else:
            length, pos = varint(data, pos, end)
        if pos + length > end:
            raise Malformed("a length runs past the frame")
        return pos, pos + length
    if wire_type == VARINT:
        return varint(data, pos, end)
    if wire_type not in _FIXED_SIZE:
        raise Malformed(f"wire type {wire_type} (groups are not used by this wire)")
    size, name = _FIXED_SIZE[wire_type]
    if pos + size > end:
        raise Malformed(f"a {name} runs past the frame")
    return pos, pos + size


def text(data: bytes, start: int, end: int) -> str:
    """A string field's value: UTF-8, or the frame is malformed."""
    try:
        return data[start:end].decode()
    except UnicodeDecodeError:
        raise Malformed("a string is not UTF-8") from None


def signed(value: int) -> int:
    """An int64 (or an enum's int32, sign-extended to 64 bits) from its varint."""
    return value - (1 << 64) if value >= 1 << 63 else value


def double(data: bytes, pos: int) -> float:
    """The double at ``pos``: a JSON number, so never NaN or an infinity."""
    number: float = _unpack_double(data, pos)[0]
    if not math.isfinite(number):
        raise Malformed("a number is not finite")
    return number


def packed_doubles(data: bytes, start: int, end: int) -> list[float]:
    """A packed run of doubles: whole 8-byte values, or the frame is malformed."""
    if (end - start) % 8:
        raise Malformed("a packed run of doubles is not a whole number of 8-byte values")
    return [double(data, pos) for pos in range(start, end, 8)]


def packed_varints(data: bytes, start: int, end: int) -> list[int]:
    """A packed run of varints: whole varints, or the frame is malformed."""
    values = []
    while start < end:
        value, start = varint(data, start, end)
        values.append(value)
    return values


def enum_value(names: dict[int, str], value: int) -> str:
    """An enum field's JSON: its value's name, or the number of one this build lacks."""
    number = signed(value)
    name = names.get(number)
    return str(number) if name is None else name


def default_of(tables: WireTables, wire_field: WireField) -> Any:
    """What an absent field reads as: proto3's default for a plain scalar, no items for a
    required list, else ``ABSENT``."""
    if wire_field.label == "":
        if wire_field.kind == "enum":
            return tables.enums[wire_field.ref].get(0, "0")
        return _DEFAULTS.get(wire_field.kind, ABSENT)
    if wire_field.label == "repeated" and wire_field.required:
        return []
    return ABSENT


def check_envelope(arm: WireField, event: dict[str, Any]) -> None:
    """The envelope's arm and the base_event's type name one event type, or it is malformed."""
    if event["type"] != arm.json:
        raise Malformed(f"the envelope carries {arm.json} but base_event.type says {event['type']}")


# --------------------------------------------------------------------------- the decoder


def fields_of(data: bytes, pos: int, end: int) -> Iterator[tuple[int, int, int, int]]:
    """The fields of one message, one at a time (a message of millions holds no list):
    (tag, value or start, end, wire type); length-delimited values as the span of their
    bytes, varints as the value."""
    while pos < end:
        if data[pos] < 0x80:
            tag = data[pos]
            pos += 1
        else:
            tag, pos = varint(data, pos, end)
        value, pos = field_value(data, pos, end, tag)
        yield tag, value, pos, tag & 7


def check_message(data: bytes, pos: int, end: int) -> None:
    """Bytes that must be a message (an arm this build does not know): read, or malformed."""
    for _ in fields_of(data, pos, end):
        pass


class GeneralDecoder:
    """The general decoder: every message shape the tables describe, protobuf's merging of a
    singular message met twice included. Fields are listed first, then turned into JSON."""

    def __init__(
        self, tables: WireTables, warn: Callable[[str], None], budget: Budget | None = None
    ) -> None:
        self.tables = tables
        self.warn = warn
        self.budget = Budget(DEFAULT_MAX_EVENT_SIZE) if budget is None else budget
        # One text a union, so that repeats are the same warning, made once.
        self.dropped_arm = {
            name: f"dropped a {name} whose protobuf arm this build does not know "
            "(a union member from a later protocol)"
            for name, spec in tables.messages.items()
            if spec.shape == "oneof"
        }
        self.floors: dict[str, int] = {}
        self.floors = _FLOORS.get(tables.version) or _FLOORS.setdefault(
            tables.version, self._floors()
        )

    def _floors(self) -> dict[str, int]:
        """The least JSON each message is, with the comma after it as a list's item: what an
        empty one decodes into (no field makes a message shorter), 3 for one that is dropped."""
        budget, warn = self.budget, self.warn
        self.budget, self.warn = Budget(1 << 30), lambda _: None
        floors = {}
        try:
            for name in self.tables.messages:
                try:
                    empty = self.object(name, b"", 0, 0, 0)
                except Malformed:
                    empty = ABSENT
                floors[name] = 3 if empty is ABSENT else max(3, len(_json_encode(empty)) + 1)
        finally:
            self.budget, self.warn = budget, warn
        return floors

    def value(self, data: bytes, start: int, end: int, depth: int) -> Any:
        check_depth(depth)
        self.budget.spend(2)  # the least JSON a value is, with the comma after it
        result: Any = ABSENT
        for tag, a, b, _ in fields_of(data, start, end):
            if tag == 8:  # null_value
                result = None
            elif tag == 17:  # number_value
                number = double(data, a)
                result = (
                    int(number) if number.is_integer() and abs(number) <= _SAFE_INTEGER else number
                )
            elif tag == 26:
                result = text(data, a, b)
            elif tag == 32:
                result = a != 0
            elif tag == 42:
                result = self.struct(data, a, b, depth + 1)
            elif tag == 50:
                result = [
                    None if (item := self.value(data, x, y, depth + 1)) is ABSENT else item
                    for t, x, y, _ in fields_of(data, a, b)
                    if t == 10
                ]
            elif tag >> 3 in (1, 2, 3, 4, 5, 6):
                raise Malformed("a google.protobuf.Value field has the wrong wire type")
        return result

    def struct(self, data: bytes, start: int, end: int, depth: int) -> dict[str, Any]:
        check_depth(depth)
        out: dict[str, Any] = {}
        for tag, a, b, _ in fields_of(data, start, end):
            if tag != 10:
                if tag >> 3 == 1:
                    raise Malformed("a google.protobuf.Struct entry has the wrong wire type")
                continue
            self.budget.spend(3)  # an entry's quotes and colon
            key, value = "", ABSENT
            for entry_tag, x, y, _ in fields_of(data, a, b):
                if entry_tag == 10:
                    key = text(data, x, y)
                elif entry_tag == 18:
                    value = self.value(data, x, y, depth + 1)
            if value is not ABSENT:
                out[key] = value
        return out

    def scalar(self, wire_field: WireField, data: bytes, a: int, b: int) -> Any:
        kind = wire_field.kind
        if kind == "string":
            return text(data, a, b)
        if kind == "int64":
            return signed(a)
        if kind == "double":
            return double(data, a)
        if kind == "bool":
            return a != 0
        return enum_value(self.tables.enums[wire_field.ref], a)

    def packed(self, wire_field: WireField, data: bytes, start: int, end: int) -> list[Any]:
        """The items of a packed run, each charged as an item of any list."""
        if wire_field.kind == "double":
            items: list[Any] = packed_doubles(data, start, end)
        else:  # varints, each read as the field of one would be
            values = packed_varints(data, start, end)
            items = [self.scalar(wire_field, data, value, end) for value in values]
        self.budget.spend(3 * len(items))
        return items

    def message(self, name: str, data: bytes, start: int, end: int, depth: int) -> dict[str, Any]:
        """One message's fields by proto name: scalars decoded, messages as byte spans
        (a singular one met twice merges, as protobuf does: its spans concatenated)."""
        check_depth(depth)
        spec = self.tables.messages[name]
        by_number = spec.by_number
        raw: dict[str, Any] = {}
        for tag, a, b, wire_type in fields_of(data, start, end):
            wire_field = by_number.get(tag >> 3)
            if wire_field is None:
                continue  # a field this build predates
            # a packed field's items may also come unpacked, one a field: protobuf reads both
            if wire_type != wire_field.tag & 7 and not (
                wire_field.packed and wire_type == wire_field.wire_type
            ):
                raise Malformed(f"{name}.{wire_field.name} has the wrong wire type")
            kind = wire_field.kind
            if kind in ("message", "base", "value", "struct"):
                if wire_field.label == "repeated":  # an item: the least it decodes into
                    self.budget.spend(self.floors[wire_field.ref] if kind == "message" else 3)
                elif wire_field.name in raw:  # a span to merge, bounded as an item is
                    self.budget.spend(3)
                raw.setdefault(wire_field.name, []).append((a, b))
            elif wire_field.packed and wire_type == LEN:
                raw.setdefault(wire_field.name, []).extend(self.packed(wire_field, data, a, b))
            elif wire_field.label == "repeated":
                self.budget.spend(3)  # an item's quotes and comma
                raw.setdefault(wire_field.name, []).append(self.scalar(wire_field, data, a, b))
            else:
                raw[wire_field.name] = self.scalar(wire_field, data, a, b)
        return raw

    def nested(
        self, wire_field: WireField, data: bytes, spans: list[tuple[int, int]], depth: int
    ) -> Any:
        """A singular message/value field from its spans (merged), or a repeated one's list."""
        if wire_field.label == "repeated":
            out = []
            for a, b in spans:
                item = self.decode_kind(wire_field, data, a, b, depth)
                if item is not ABSENT:
                    out.append(item)
            return out
        if len(spans) == 1:
            a, b = spans[0]
            return self.decode_kind(wire_field, data, a, b, depth)
        joined = b"".join(data[a:b] for a, b in spans)
        return self.decode_kind(wire_field, joined, 0, len(joined), depth)

    def decode_kind(self, wire_field: WireField, data: bytes, a: int, b: int, depth: int) -> Any:
        kind = wire_field.kind
        if kind == "value":
            return self.value(data, a, b, depth + 1)
        if kind == "struct":
            return self.struct(data, a, b, depth + 1)
        return self.object(wire_field.ref, data, a, b, depth + 1)

    def object(self, name: str, data: bytes, start: int, end: int, depth: int) -> Any:
        """A message as its JSON value; ABSENT for a oneof member this build does not know."""
        spec = self.tables.messages[name]
        raw = self.message(name, data, start, end, depth)
        if spec.shape == "oneof":
            present = [f for f in spec.fields if f.name in raw]
            if not present:
                self.warn(self.dropped_arm[name])
                return ABSENT
            if len(present) > 1:
                raise Malformed(f"a {name} carries more than one arm")
            arm = present[0]
            member = self.nested(arm, data, raw[arm.name], depth)
            self.budget.spend(len(spec.tag) + len(arm.json) + 6)
            return {spec.tag: arm.json, **member}
        out: dict[str, Any] = {}
        self.fill(spec, raw, data, depth, out)
        # each member as "key":value, (a string's quotes and characters, else a byte at
        # least), less the floor its maker charged before it was made
        size = sum(len(k) + (len(v) + 6 if type(v) is str else 4) for k, v in out.items())
        floor = self.floors.get(name, 0)
        if size > floor:
            self.budget.spend(size - floor)
        return out

    def fill(
        self, spec: WireMessage, raw: dict[str, Any], data: bytes, depth: int, out: dict[str, Any]
    ) -> None:
        """The JSON members of a decoded message, into ``out``."""
        shared: dict[str, list[tuple[WireField, Any]]] = {}
        for wire_field in spec.fields:
            value = raw.get(wire_field.name, ABSENT)
            kind = wire_field.kind
            if kind == "base":
                continue
            if value is ABSENT:
                value = default_of(self.tables, wire_field)
                if value is ABSENT:
                    if len(spec.by_json[wire_field.json]) > 1:
                        shared.setdefault(wire_field.json, [])
                    continue
            elif kind in ("message", "value", "struct"):
                value = self.nested(wire_field, data, value, depth)
                if value is ABSENT:
                    continue
            if spec.shape == "tagged" and kind == "enum":
                value = value.lower()
            if len(spec.by_json[wire_field.json]) > 1:
                shared.setdefault(wire_field.json, []).append((wire_field, value))
            else:
                out[wire_field.json] = value
        for json_name, candidates in shared.items():
            present = [(f, v) for f, v in candidates if not (f.label == "repeated" and v == [])]
            if len(present) > 1:
                raise Malformed(f"{spec.name}.{json_name} is carried in two forms")
            if present:
                out[json_name] = present[0][1]
            elif self.parts_by_default(spec, json_name, out):
                out[json_name] = []
        for json_name, members in spec.flatten.items():
            self.fold(json_name, members, out)

    @staticmethod
    def parts_by_default(spec: WireMessage, json_name: str, out: dict[str, Any]) -> bool:
        """Whether an absent string-or-parts field reads as no parts: it is required, or the
        message's role takes parts."""
        if spec.content_forms:
            forms = spec.content_forms.get(out.get(spec.tag, ""), ())
            return any(f.label == "repeated" and f.name in forms for f in spec.by_json[json_name])
        return any(f.label == "repeated" and f.required for f in spec.by_json[json_name])

    @staticmethod
    def fold(
        json_name: str,
        members: dict[str, tuple[tuple[str, ...], tuple[str, ...]]],
        out: dict[str, Any],
    ) -> None:
        """A flattened union back into one object: the tag string and its member's fields."""
        tag = out.pop(json_name, "")
        carried = {
            name: out.pop(name) for own, _ in members.values() for name in own if name in out
        }
        carried = {k: v for k, v in carried.items() if v != []}
        if not tag:
            out.update(carried)  # fields without an outcome: enforcement judges them
            return
        outcome: dict[str, Any] = {"type": tag}
        own, required = members.get(tag, ((), ()))
        for name in required:
            outcome[name] = carried.pop(name, [])
        if tag in members:
            outcome.update((k, v) for k, v in carried.items() if k in own)
        else:
            outcome.update(carried)
        out[json_name] = outcome

    def event(self, frame: bytes) -> dict[str, Any] | None:
        """One frame's event as its JSON object; None for an event this build does not know.
        Raises ``TooLarge`` once what it decodes into passes the budget's limit."""
        self.budget.left = self.budget.limit
        envelope = self.tables.envelope
        arms: dict[int, list[tuple[int, int]]] = {}
        unknown = 0
        for tag, a, b, wire_type in fields_of(frame, 0, len(frame)):
            arm = envelope.by_number.get(tag >> 3)
            if arm is None:
                if wire_type == LEN:
                    check_message(frame, a, b)  # a future arm is a message, else not an event
                    unknown += 1
                continue
            if wire_type != LEN:
                raise Malformed(f"the Event arm {arm.name} has the wrong wire type")
            self.budget.spend(3)  # a span to merge: bounded as the items of a list are
            arms.setdefault(arm.number, []).append((a, b))
        if not arms:  # dropped, as the spec has a consumer drop an event type it does not know
            self.warn(DROPPED_UNKNOWN_ARM if unknown else DROPPED_NO_ARM)
            return None
        if len(arms) > 1:
            raise Malformed("the frame carries more than one event")
        ((number, spans),) = arms.items()
        arm = envelope.by_number[number]
        if len(spans) == 1:
            data, (start, end) = frame, spans[0]
        else:
            data = b"".join(frame[a:b] for a, b in spans)
            start, end = 0, len(data)
        spec = self.tables.messages[arm.ref]
        raw = self.message(arm.ref, data, start, end, 1)
        base_spans = raw.get("base_event")
        if base_spans is None:
            raise Malformed(f"the {arm.json} event has no base_event")
        base_data = b"".join(data[a:b] for a, b in base_spans)
        base_spec = self.tables.messages["BaseEvent"]
        base_raw = self.message("BaseEvent", base_data, 0, len(base_data), 2)
        out: dict[str, Any] = {}
        self.fill(base_spec, base_raw, base_data, 2, out)
        check_envelope(arm, out)
        self.fill(spec, raw, data, 1, out)
        return out
