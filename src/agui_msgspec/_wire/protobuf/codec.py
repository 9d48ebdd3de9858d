"""The HTTP + Protobuf binding: length-prefixed protobuf frames, read and written.

AG-UI basic/transports/http-protobuf: a response of ``application/vnd.ag-ui.event+proto``
is a run of frames, each a 4-byte big-endian length and one encoded ``Event`` message.
The wire schema is generated from the JSON Schema (``agui_msgspec._codegen.proto``); this module is
a table-driven codec over the generated tables (``agui_msgspec.v1_1_wire``), pure Python,
so the binding needs no dependency.

Decoding turns a frame back into the event's JSON, wire names and all, and the reader
hands that JSON on: a frame enters the consumer exactly where an SSE payload does
(compatibility, middleware, enforcement, expansion, verification, reducer), so one event
gets one verdict on both wires. Open payloads (outcome, metadata, state, ``rawEvent``)
reach enforcement as they came: an unknown outcome is stripped there with a warning.

What the binary wire narrows, as the spec admits:

- a field this build's wire schema predates is skipped by decoding, silently, and so is
  material the wire schema does not model (a JSON Patch operation's extension members);
- an empty list and an absent optional one are the same bytes (absent on decode, ``[]``
  where the field is required); a required string left out reads as ``""``;
- a JSON number is a double: an integral value within 2^53 decodes as an int, as JSON
  readers do;
- an ``Event`` whose only arm this build does not know is dropped with a warning;
- a content part whose ``oneof`` arm this build does not know is dropped with a warning.

Decided here: bytes that are not a well-formed ``Event`` message (a bad varint, a length
past the frame, a known field with the wrong wire type, invalid UTF-8, groups, a frame
naming two event types, a non-finite number, nesting past ``MAX_NESTING``) are fatal:
``TransportError(rule="malformed-frame")``.
"""

from __future__ import annotations

import importlib
import math
import struct
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any

import msgspec

from agui_msgspec._errors import TransportError, UsageError
from agui_msgspec._versions import LATEST_VERSION, VersionLike, bindings_for
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE

PROTOBUF_MEDIA_TYPE = "application/vnd.ag-ui.event+proto"
MAX_NESTING = 200
"""Nested messages and JSON values one frame may hold, counted from the envelope."""

_SAFE_INTEGER = 2**53
_VARINT, _FIXED64, _LEN, _FIXED32 = 0, 1, 2, 5
# The wire type each field kind travels as.
_WIRE_TYPE = {
    "string": _LEN,
    "int64": _VARINT,
    "bool": _VARINT,
    "enum": _VARINT,
    "value": _LEN,
    "struct": _LEN,
    "message": _LEN,
    "base": _LEN,
}
_ABSENT: Any = object()
_pack_double = struct.Struct("<d").pack
_unpack_double = struct.Struct("<d").unpack_from
_unpack_length = struct.Struct(">I").unpack_from
_TAILS_KEPT = 64
"""Timestamp tails the hot path keeps: a stream needs one per 16 s of events."""
_json_encode = msgspec.json.Encoder().encode


class _Malformed(Exception):
    """Internal: the frame's bytes are not a well-formed message; the reader says where."""


# --------------------------------------------------------------------------- tables


class _Field:
    __slots__ = ("json", "kind", "label", "name", "number", "ref", "required", "tag")

    def __init__(self, row: tuple[int, str, str, str, str, str, bool]) -> None:
        self.number, self.name, self.kind, self.label, self.json, self.ref, self.required = row
        self.tag = (self.number << 3) | _WIRE_TYPE[self.kind]


class _Message:
    __slots__ = (
        "by_json",
        "by_number",
        "content_forms",
        "fields",
        "flatten",
        "name",
        "shape",
        "tag",
    )

    def __init__(self, name: str, shape: str, tag: str, fields: tuple[_Field, ...]) -> None:
        self.name, self.shape, self.tag, self.fields = name, shape, tag, fields
        self.by_number = {f.number: f for f in fields}
        self.by_json: dict[str, list[_Field]] = {}
        for wire_field in fields:
            self.by_json.setdefault(wire_field.json, []).append(wire_field)
        self.flatten: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {}
        self.content_forms: dict[str, tuple[str, ...]] = {}


class WireTables:
    """One protocol version's wire schema, ready for the codec."""

    def __init__(self, module: ModuleType) -> None:
        self.version: str = module.PROTOCOL_VERSION
        self.enums: dict[str, dict[int, str]] = module.ENUMS
        self.enum_numbers: dict[str, dict[str, int]] = {
            name: {value: number for number, value in values.items()}
            for name, values in module.ENUMS.items()
        }
        self.messages = {
            name: _Message(name, shape, tag, tuple(_Field(row) for row in rows))
            for name, (shape, tag, rows) in module.MESSAGES.items()
        }
        for (name, json_name), members in module.FLATTEN.items():
            self.messages[name].flatten[json_name] = members
        for name, forms in module.CONTENT_FORMS.items():
            self.messages[name].content_forms = forms
        self.envelope = self.messages["Event"]
        self.arm_by_type = {arm.json: arm for arm in self.envelope.fields}


_TABLES: dict[str, WireTables] = {}


def wire_tables(version: VersionLike | WireTables = LATEST_VERSION) -> WireTables:
    """The wire tables of a protocol version (a version string or a bindings module)."""
    if isinstance(version, WireTables):
        return version
    protocol_version = bindings_for(version).PROTOCOL_VERSION
    tables = _TABLES.get(protocol_version)
    if tables is None:
        stem = "v" + protocol_version.replace(".", "_")
        try:
            module = importlib.import_module(f"agui_msgspec.{stem}_wire")
        except ImportError:
            raise UsageError(f"no protobuf wire schema for protocol {protocol_version}") from None
        tables = _TABLES[protocol_version] = WireTables(module)
    return tables


# --------------------------------------------------------------------------- decoding


def _varint(data: bytes, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise _Malformed("a varint runs past its bounds")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & 0xFFFFFFFFFFFFFFFF, pos
        shift += 7


def _fields(data: bytes, pos: int, end: int) -> list[tuple[int, int, int, int]]:
    """The fields of one message: (tag, value or start, end, wire type); length-delimited
    values as the span of their bytes, varints as the value."""
    out: list[tuple[int, int, int, int]] = []
    while pos < end:
        if data[pos] < 0x80:
            tag = data[pos]
            pos += 1
        else:
            tag, pos = _varint(data, pos, end)
        wire_type = tag & 7
        if tag >> 3 == 0:
            raise _Malformed("field number 0")
        if wire_type == _LEN:
            if pos < end and data[pos] < 0x80:
                length = data[pos]
                pos += 1
            else:
                length, pos = _varint(data, pos, end)
            if pos + length > end:
                raise _Malformed("a length runs past the frame")
            out.append((tag, pos, pos + length, _LEN))
            pos += length
        elif wire_type == _VARINT:
            value, pos = _varint(data, pos, end)
            out.append((tag, value, pos, _VARINT))
        elif wire_type == _FIXED64:
            if pos + 8 > end:
                raise _Malformed("a fixed64 runs past the frame")
            out.append((tag, pos, pos + 8, _FIXED64))
            pos += 8
        elif wire_type == _FIXED32:
            if pos + 4 > end:
                raise _Malformed("a fixed32 runs past the frame")
            out.append((tag, pos, pos + 4, _FIXED32))
            pos += 4
        else:
            raise _Malformed(f"wire type {wire_type} (groups are not used by this wire)")
    return out


def _text(data: bytes, start: int, end: int) -> str:
    try:
        return data[start:end].decode()
    except UnicodeDecodeError:
        raise _Malformed("a string is not UTF-8") from None


class _Decoder:
    """The general decoder: every message shape the tables describe, protobuf's merging of a
    singular message met twice included. Fields are listed first, then turned into JSON."""

    def __init__(self, tables: WireTables, warn: Callable[[str], None]) -> None:
        self.tables = tables
        self.warn = warn

    def value(self, data: bytes, start: int, end: int, depth: int) -> Any:
        if depth > MAX_NESTING:
            raise _Malformed(f"nests deeper than {MAX_NESTING} levels")
        result: Any = _ABSENT
        for tag, a, b, _ in _fields(data, start, end):
            if tag == 8:  # null_value
                result = None
            elif tag == 17:  # number_value
                number = _unpack_double(data, a)[0]
                if not math.isfinite(number):
                    raise _Malformed("a number is not finite")
                result = (
                    int(number) if number.is_integer() and abs(number) <= _SAFE_INTEGER else number
                )
            elif tag == 26:
                result = _text(data, a, b)
            elif tag == 32:
                result = a != 0
            elif tag == 42:
                result = self.struct(data, a, b, depth + 1)
            elif tag == 50:
                result = [
                    None if (item := self.value(data, x, y, depth + 1)) is _ABSENT else item
                    for t, x, y, _ in _fields(data, a, b)
                    if t == 10
                ]
            elif tag >> 3 in (1, 2, 3, 4, 5, 6):
                raise _Malformed("a google.protobuf.Value field has the wrong wire type")
        return result

    def struct(self, data: bytes, start: int, end: int, depth: int) -> dict[str, Any]:
        if depth > MAX_NESTING:
            raise _Malformed(f"nests deeper than {MAX_NESTING} levels")
        out: dict[str, Any] = {}
        for tag, a, b, _ in _fields(data, start, end):
            if tag != 10:
                if tag >> 3 == 1:
                    raise _Malformed("a google.protobuf.Struct entry has the wrong wire type")
                continue
            key, value = "", _ABSENT
            for entry_tag, x, y, _ in _fields(data, a, b):
                if entry_tag == 10:
                    key = _text(data, x, y)
                elif entry_tag == 18:
                    value = self.value(data, x, y, depth + 1)
            if value is not _ABSENT:
                out[key] = value
        return out

    def scalar(self, wire_field: _Field, data: bytes, a: int, b: int) -> Any:
        kind = wire_field.kind
        if kind == "string":
            return _text(data, a, b)
        if kind == "int64":
            return a - (1 << 64) if a >= 1 << 63 else a
        if kind == "bool":
            return a != 0
        # enum: int32 on the wire, sign-extended to 64 bits when negative
        number = a - (1 << 64) if a >= 1 << 63 else a
        name = self.tables.enums[wire_field.ref].get(number)
        return str(number) if name is None else name

    def message(self, name: str, data: bytes, start: int, end: int, depth: int) -> dict[str, Any]:
        """One message's fields by proto name: scalars decoded, messages as byte spans
        (a singular one met twice merges, as protobuf does: its spans concatenated)."""
        if depth > MAX_NESTING:
            raise _Malformed(f"nests deeper than {MAX_NESTING} levels")
        spec = self.tables.messages[name]
        by_number = spec.by_number
        raw: dict[str, Any] = {}
        for tag, a, b, wire_type in _fields(data, start, end):
            wire_field = by_number.get(tag >> 3)
            if wire_field is None:
                continue  # a field this build predates
            if wire_type != wire_field.tag & 7:
                raise _Malformed(f"{name}.{wire_field.name} has the wrong wire type")
            kind = wire_field.kind
            if kind in ("message", "base", "value", "struct"):
                raw.setdefault(wire_field.name, []).append((a, b))
            elif wire_field.label == "repeated":
                raw.setdefault(wire_field.name, []).append(self.scalar(wire_field, data, a, b))
            else:
                raw[wire_field.name] = self.scalar(wire_field, data, a, b)
        return raw

    def nested(
        self, wire_field: _Field, data: bytes, spans: list[tuple[int, int]], depth: int
    ) -> Any:
        """A singular message/value field from its spans (merged), or a repeated one's list."""
        if wire_field.label == "repeated":
            out = []
            for a, b in spans:
                item = self.decode_kind(wire_field, data, a, b, depth)
                if item is not _ABSENT:
                    out.append(item)
            return out
        if len(spans) == 1:
            a, b = spans[0]
            return self.decode_kind(wire_field, data, a, b, depth)
        joined = b"".join(data[a:b] for a, b in spans)
        return self.decode_kind(wire_field, joined, 0, len(joined), depth)

    def decode_kind(self, wire_field: _Field, data: bytes, a: int, b: int, depth: int) -> Any:
        kind = wire_field.kind
        if kind == "value":
            return self.value(data, a, b, depth + 1)
        if kind == "struct":
            return self.struct(data, a, b, depth + 1)
        return self.object(wire_field.ref, data, a, b, depth + 1)

    def object(self, name: str, data: bytes, start: int, end: int, depth: int) -> Any:
        """A message as its JSON value; _ABSENT for a oneof member this build does not know."""
        spec = self.tables.messages[name]
        raw = self.message(name, data, start, end, depth)
        if spec.shape == "oneof":
            present = [f for f in spec.fields if f.name in raw]
            if not present:
                self.warn(
                    f"dropped a {name} whose protobuf arm this build does not know "
                    "(a union member from a later protocol)"
                )
                return _ABSENT
            if len(present) > 1:
                raise _Malformed(f"a {name} carries more than one arm")
            arm = present[0]
            member = self.nested(arm, data, raw[arm.name], depth)
            return {spec.tag: arm.json, **member}
        out: dict[str, Any] = {}
        self.fill(spec, raw, data, depth, out)
        return out

    def fill(
        self, spec: _Message, raw: dict[str, Any], data: bytes, depth: int, out: dict[str, Any]
    ) -> None:
        """The JSON members of a decoded message, into ``out``."""
        shared: dict[str, list[tuple[_Field, Any]]] = {}
        for wire_field in spec.fields:
            value = raw.get(wire_field.name, _ABSENT)
            kind = wire_field.kind
            if kind == "base":
                continue
            if value is _ABSENT:
                if wire_field.label == "":
                    value = _DEFAULT.get(kind, _ABSENT)
                    if kind == "enum":
                        value = self.tables.enums[wire_field.ref].get(0, "0")
                elif wire_field.label == "repeated" and wire_field.required:
                    value = []
                if value is _ABSENT:
                    if len(spec.by_json[wire_field.json]) > 1:
                        shared.setdefault(wire_field.json, [])
                    continue
            elif kind in ("message", "value", "struct"):
                value = self.nested(wire_field, data, value, depth)
                if value is _ABSENT:
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
                raise _Malformed(f"{spec.name}.{json_name} is carried in two forms")
            if present:
                out[json_name] = present[0][1]
            elif self.parts_by_default(spec, json_name, out):
                out[json_name] = []
        for json_name, members in spec.flatten.items():
            self.fold(json_name, members, out)

    @staticmethod
    def parts_by_default(spec: _Message, json_name: str, out: dict[str, Any]) -> bool:
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
        """One frame's event as its JSON object; None for an event this build does not know."""
        envelope = self.tables.envelope
        arms: dict[int, list[tuple[int, int]]] = {}
        unknown = 0
        for tag, a, b, wire_type in _fields(frame, 0, len(frame)):
            arm = envelope.by_number.get(tag >> 3)
            if arm is None:
                if wire_type == _LEN:
                    _fields(frame, a, b)  # a future arm is a message, else these are not events
                    unknown += 1
                continue
            if wire_type != _LEN:
                raise _Malformed(f"the Event arm {arm.name} has the wrong wire type")
            arms.setdefault(arm.number, []).append((a, b))
        if not arms:
            if unknown:
                return None
            raise _Malformed("the frame carries no event")
        if len(arms) > 1:
            raise _Malformed("the frame carries more than one event")
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
            raise _Malformed(f"the {arm.json} event has no base_event")
        base_data = b"".join(data[a:b] for a, b in base_spans)
        base_spec = self.tables.messages["BaseEvent"]
        base_raw = self.message("BaseEvent", base_data, 0, len(base_data), 2)
        out: dict[str, Any] = {}
        self.fill(base_spec, base_raw, base_data, 2, out)
        if out["type"] != arm.json:
            raise _Malformed(
                f"the envelope carries {arm.json} but base_event.type says {out['type']}"
            )
        self.fill(spec, raw, data, 1, out)
        return out


_DEFAULT: dict[str, Any] = {"string": "", "int64": 0, "bool": False}


# The single-pass decoder: one loop per message, writing JSON members as fields arrive.
# It covers plain messages (events, their objects); a message of another shape (merged,
# oneof, tagged, flattened) and the rare wire spellings (a singular message met twice,
# merged by protobuf) go to _Decoder, which handles every case.
# Length-delimited kinds first, varint kinds (_INT and after) last: one comparison tells them.
_STR, _STR_REP, _VALUE, _STRUCT, _MSG, _MSG_REP, _SLOW, _SLOW_REP, _BASE, _INT, _BOOL, _ENUM = (
    range(12)
)


class _NeedsSlowPath(Exception):
    """Internal: this frame takes the general decoder."""


class _Plan:
    __slots__ = ("defaults", "numbers", "slots")

    def __init__(self) -> None:
        self.slots: dict[int, tuple[int, str, Any]] = {}  # by tag: number and wire type
        self.numbers: frozenset[int] = frozenset()
        self.defaults: tuple[tuple[str, Any], ...] = ()


class _FastDecoder:
    """Decodes a frame in one pass where every message on its path is plain; hands the rest
    to ``slow``. Each plain message has a plan: its slots by tag, and its defaults."""

    def __init__(self, tables: WireTables, slow: _Decoder) -> None:
        self.tables = tables
        self.slow = slow
        self.plans: dict[str, _Plan] = {}
        for name, spec in tables.messages.items():
            if spec.shape in ("object", "event") and not spec.flatten:
                shared = any(len(fields) > 1 for fields in spec.by_json.values())
                if not shared:
                    self.plans[name] = _Plan()
        for name, plan in self.plans.items():
            self._fill_plan(tables.messages[name], plan)
        # The hot path: events of strings alone (text, tool-call args, reasoning deltas...),
        # by their envelope tag: (type number, JSON name by tag byte, the event's defaults).
        numbers = tables.enum_numbers["EventType"]
        self.hot: dict[int, tuple[int, dict[int, str], dict[str, Any]]] = {}
        self.tails: dict[bytes, int] = {}  # a timestamp's varint bytes after its first two
        for arm in tables.envelope.fields:
            spec = tables.messages[arm.ref]
            strings = [f for f in spec.fields if f.kind != "base"]
            if (
                arm.tag < 0x4000
                and arm.ref in self.plans
                and numbers[arm.json] < 0x80
                and all(f.kind == "string" and f.label != "repeated" for f in strings)
                and all(f.tag < 0x80 for f in strings)
            ):
                names = {f.tag: f.json for f in strings}
                plan = self.plans[arm.ref]
                template = {"type": arm.json, **dict(plan.defaults)}
                self.hot[arm.tag] = (numbers[arm.json], names, template)

    def _fill_plan(self, spec: _Message, plan: _Plan) -> None:
        defaults: list[tuple[str, Any]] = []
        for f in spec.fields:
            repeated = f.label == "repeated"
            ref: Any = None
            if f.kind == "string":
                op = _STR_REP if repeated else _STR
            elif f.kind == "int64":
                op = _INT
            elif f.kind == "bool":
                op = _BOOL
            elif f.kind == "enum":
                op, ref = _ENUM, self.tables.enums[f.ref]
            elif f.kind == "value":
                op = _VALUE
            elif f.kind == "struct":
                op = _STRUCT
            elif f.kind == "base":
                op, ref = _BASE, self.plans["BaseEvent"]
            elif f.ref in self.plans:
                op, ref = (_MSG_REP if repeated else _MSG), self.plans[f.ref]
            else:
                op, ref = (_SLOW_REP if repeated else _SLOW), f
            if repeated and op not in (_STR_REP, _MSG_REP, _SLOW_REP):
                raise AssertionError(f"no repeated {f.kind} in the wire")  # none is generated
            plan.slots[f.tag] = (op, f.json, ref)
            if f.label == "" and f.kind in _DEFAULT:
                defaults.append((f.json, _DEFAULT[f.kind]))
            elif f.label == "" and f.kind == "enum":
                defaults.append((f.json, self.tables.enums[f.ref].get(0, "0")))
            elif repeated and f.required:
                defaults.append((f.json, []))
        plan.defaults = tuple(defaults)
        plan.numbers = frozenset(f.number for f in spec.fields)

    def object(
        self, plan: _Plan, data: bytes, pos: int, end: int, depth: int, out: dict[str, Any]
    ) -> None:
        if depth > MAX_NESTING:
            raise _Malformed(f"nests deeper than {MAX_NESTING} levels")
        slots = plan.slots
        while pos < end:
            tag = data[pos]
            if tag < 0x80:
                pos += 1
            else:
                tag, pos = _varint(data, pos, end)
            slot = slots.get(tag)
            if slot is None:
                if tag >> 3 in plan.numbers:
                    raise _Malformed("a known field has the wrong wire type")
                pos = _skip(data, pos, end, tag)
                continue
            op, json_name, ref = slot
            if op >= _INT:
                if pos < end and data[pos] < 0x80:
                    value = data[pos]
                    pos += 1
                else:
                    value, pos = _varint(data, pos, end)
                if op == _INT:
                    out[json_name] = value - (1 << 64) if value >= 1 << 63 else value
                elif op == _BOOL:
                    out[json_name] = value != 0
                else:
                    number = value - (1 << 64) if value >= 1 << 63 else value
                    name = ref.get(number)
                    out[json_name] = str(number) if name is None else name
                continue
            if pos < end and data[pos] < 0x80:
                length = data[pos]
                pos += 1
            else:
                length, pos = _varint(data, pos, end)
            stop = pos + length
            if stop > end:
                raise _Malformed("a length runs past the frame")
            if op == _STR:
                try:
                    out[json_name] = data[pos:stop].decode()
                except UnicodeDecodeError:
                    raise _Malformed("a string is not UTF-8") from None
            elif op == _BASE:
                self.object(ref, data, pos, stop, depth + 1, out)
            elif json_name in out and op in (_VALUE, _STRUCT, _MSG, _SLOW):
                raise _NeedsSlowPath  # a singular message met twice: protobuf merges them
            elif op == _VALUE:
                value = self.slow.value(data, pos, stop, depth + 1)
                if value is not _ABSENT:
                    out[json_name] = value
            elif op == _STRUCT:
                out[json_name] = self.slow.struct(data, pos, stop, depth + 1)
            elif op == _MSG:
                inner: dict[str, Any] = {}
                self.object(ref, data, pos, stop, depth + 1, inner)
                out[json_name] = inner
            elif op == _MSG_REP:
                inner = {}
                self.object(ref, data, pos, stop, depth + 1, inner)
                items = out.get(json_name)
                if items is None:
                    out[json_name] = [inner]
                else:
                    items.append(inner)
            elif op == _STR_REP:
                try:
                    text = data[pos:stop].decode()
                except UnicodeDecodeError:
                    raise _Malformed("a string is not UTF-8") from None
                out.setdefault(json_name, []).append(text)
            else:  # a message of another shape: the general decoder
                item = self.slow.object(ref.ref, data, pos, stop, depth + 1)
                if op == _SLOW_REP:
                    if item is not _ABSENT:
                        out.setdefault(json_name, []).append(item)
                elif item is not _ABSENT:
                    out[json_name] = item
            pos = stop
        for json_name, default in plan.defaults:
            if json_name not in out:
                out[json_name] = [] if default == [] else default

    def hot_frames(self, data: bytes, pos: int, end: int, limit: int, out: list[bytes]) -> int:
        """Frames from ``pos`` while each is whole, within ``limit`` and a hot event in its
        usual spelling (the arm; a base_event of type, then a timestamp of 3 to 8 varint
        bytes, or none; then strings, lengths under 16 KiB), each appended to ``out`` as
        JSON; returns where it stopped. Anything else, malformed bytes included, is left for
        ``event`` to say what it is."""
        hot, tails, unpack, append = self.hot, self.tails, _unpack_length, out.append
        while end - pos >= 4:
            length = unpack(data, pos)[0]
            stop = pos + 4 + length
            if stop > end or length > limit or not length:
                return pos
            at = pos + 4
            try:
                tag = data[at]
                if tag >= 0x80:
                    tag = (tag & 0x7F) | (data[at + 1] << 7)
                    at += 1
                arm = hot.get(tag)
                if arm is None:
                    return pos
                type_number, names, template = arm
                size = data[at + 1]
                at += 2
                if size >= 0x80:
                    if data[at] >= 0x80:
                        return pos
                    size = (size & 0x7F) | (data[at] << 7)
                    at += 1
                if at + size != stop or data[at] != 0x0A or data[at + 1] >= 0x80:
                    return pos
                base_end = at + 2 + data[at + 1]
                if base_end > stop:
                    return pos
                at += 2
                if at < base_end and data[at] == 0x08:
                    if data[at + 1] != type_number:
                        return pos
                    at += 2
                elif type_number:
                    return pos  # type 0 (the default) is the only one left out
                event = template.copy()  # its defaults: a field the frame has overwrites one
                if at < base_end:
                    # The timestamp ends the base. Its first two varint bytes change from one
                    # event to the next, the rest (16 s and up) rarely: those come from a cache.
                    if data[at] != 0x10 or data[at + 1] < 0x80 or data[at + 2] < 0x80:
                        return pos
                    high = tails.get(tail := data[at + 3 : base_end])
                    if high is None:
                        high = _varint_tail(tail)
                        if high is None:
                            return pos
                        if len(tails) >= _TAILS_KEPT:
                            tails.clear()
                        tails[tail] = high
                    event["timestamp"] = high | (data[at + 2] & 0x7F) << 7 | data[at + 1] & 0x7F
                    at = base_end
                elif at != base_end:
                    return pos
                while at < stop:
                    name = names.get(data[at])
                    size = data[at + 1]
                    at += 2
                    if size >= 0x80:
                        if data[at] >= 0x80:
                            return pos
                        size = (size & 0x7F) | (data[at] << 7)
                        at += 1
                    if name is None or at + size > stop:
                        return pos
                    event[name] = data[at : at + size].decode()  # met twice: the last wins
                    at += size
            except (IndexError, UnicodeDecodeError):
                return pos
            append(_json_encode(event))
            pos = stop
        return pos

    def event(self, frame: bytes) -> dict[str, Any] | None:
        end = len(frame)
        if end < 2 or frame[0] >= 0x80 or frame[0] & 7 != _LEN:
            return self.slow.event(frame)
        arm = self.tables.envelope.by_number.get(frame[0] >> 3)
        plan = None if arm is None else self.plans.get(arm.ref)
        if arm is None or plan is None:
            return self.slow.event(frame)
        if frame[1] < 0x80:
            length, pos = frame[1], 2
        else:
            length, pos = _varint(frame, 1, end)
        if pos + length != end:  # anything beside the one arm: the general decoder
            return self.slow.event(frame)
        out: dict[str, Any] = {"type": arm.json}
        try:
            self.object(plan, frame, pos, end, 1, out)
        except _NeedsSlowPath:
            return self.slow.event(frame)
        if out["type"] != arm.json:
            raise _Malformed(
                f"the envelope carries {arm.json} but base_event.type says {out['type']}"
            )
        return out


def _varint_tail(tail: bytes) -> int | None:
    """The bytes of a varint after its first two, as their part of its value; None unless
    they end it, in 8 bytes at most (56 bits: never negative)."""
    if not 0 < len(tail) <= 6 or tail[-1] >= 0x80 or min(tail[:-1], default=0x80) < 0x80:
        return None
    return sum((byte & 0x7F) << (14 + 7 * i) for i, byte in enumerate(tail))


def _skip(data: bytes, pos: int, end: int, tag: int) -> int:
    """Past an unknown field's value (a field this build predates)."""
    wire_type = tag & 7
    if tag >> 3 == 0:
        raise _Malformed("field number 0")
    if wire_type == _VARINT:
        return _varint(data, pos, end)[1]
    if wire_type == _LEN:
        length, pos = _varint(data, pos, end)
        pos += length
    elif wire_type == _FIXED64:
        pos += 8
    elif wire_type == _FIXED32:
        pos += 4
    else:
        raise _Malformed(f"wire type {wire_type} (groups are not used by this wire)")
    if pos > end:
        raise _Malformed("a field runs past the frame")
    return pos


def decode_frame(
    frame: bytes,
    version: VersionLike = LATEST_VERSION,
    on_warning: Callable[[str], None] | None = None,
) -> dict[str, Any] | None:
    """One encoded ``Event`` message (no length prefix) as its wire-named JSON object, or
    None for an event whose arm this build does not know. Raises ``TransportError``
    (``malformed-frame``) for bytes that are not such a message."""
    tables = wire_tables(version)
    decoder = _FastDecoder(tables, _Decoder(tables, on_warning or (lambda _: None)))
    try:
        return decoder.event(bytes(frame))
    except _Malformed as problem:
        raise TransportError("malformed-frame", f"the frame does not decode: {problem}") from None


# --------------------------------------------------------------------------- encoding


def _put_varint(out: bytearray, value: int) -> None:
    value &= 0xFFFFFFFFFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _put_len(out: bytearray, tag: int, body: bytes | bytearray) -> None:
    _put_varint(out, tag)
    _put_varint(out, len(body))
    out += body


class _Encoder:
    """An event's JSON to protobuf bytes, fields in number order as ``@ag-ui/proto`` writes
    them: a plain (non-``optional``) scalar at its default is left out, as proto3 does.

    ``depth`` counts nested messages and JSON values as the reader does, so nothing is
    written that the reader would refuse for nesting past ``MAX_NESTING``."""

    def __init__(self, tables: WireTables) -> None:
        self.tables = tables

    @staticmethod
    def bounded(depth: int) -> None:
        if depth > MAX_NESTING:
            raise UsageError(f"the event nests deeper than {MAX_NESTING} levels")

    def value(self, value: Any, depth: int) -> bytearray:
        self.bounded(depth)
        out = bytearray()
        if value is None:
            out += b"\x08\x00"
        elif value is True or value is False:
            out.append(32)
            out.append(1 if value else 0)
        elif isinstance(value, (int, float)):
            out.append(17)
            out += _pack_double(float(value))
        elif isinstance(value, str):
            _put_len(out, 26, value.encode())
        elif isinstance(value, Mapping):
            _put_len(out, 42, self.struct(value, depth + 1))
        elif isinstance(value, (list, tuple)):
            body = bytearray()
            for item in value:
                _put_len(body, 10, self.value(item, depth + 1))
            _put_len(out, 50, body)
        else:
            raise UsageError(f"no JSON value for {type(value).__name__}")
        return out

    def struct(self, mapping: Mapping[str, Any], depth: int) -> bytearray:
        self.bounded(depth)
        out = bytearray()
        for key, item in mapping.items():
            entry = bytearray()
            if key != "":
                _put_len(entry, 10, key.encode())
            _put_len(entry, 18, self.value(item, depth + 1))
            _put_len(out, 10, entry)
        return out

    def field(self, out: bytearray, wire_field: _Field, value: Any, depth: int) -> None:
        """``value`` as ``wire_field`` of a message at ``depth``."""
        kind = wire_field.kind
        if wire_field.label == "repeated":
            for item in value:
                self.single(out, wire_field, item, depth)
            return
        if wire_field.label == "" and kind in ("string", "int64", "bool", "enum"):
            if kind == "enum":
                value = self.enum_number(wire_field, value)
            if not value:
                return  # proto3: a plain scalar at its default is not written
        self.single(out, wire_field, value, depth)

    def enum_number(self, wire_field: _Field, value: Any) -> int:
        numbers = self.tables.enum_numbers[wire_field.ref]
        number = numbers.get(value.upper() if isinstance(value, str) else value)
        if number is None:
            raise UsageError(f"{value!r} has no number in {wire_field.ref}")
        return number

    def single(self, out: bytearray, wire_field: _Field, value: Any, depth: int) -> None:
        kind = wire_field.kind
        if kind == "string":
            _put_len(out, wire_field.tag, value.encode())
        elif kind in ("int64", "bool"):
            _put_varint(out, wire_field.tag)
            _put_varint(out, int(value))
        elif kind == "enum":
            _put_varint(out, wire_field.tag)
            _put_varint(
                out, value if isinstance(value, int) else self.enum_number(wire_field, value)
            )
        elif kind == "value":
            _put_len(out, wire_field.tag, self.value(value, depth + 1))
        elif kind == "struct":
            if isinstance(value, Mapping):
                _put_len(out, wire_field.tag, self.struct(value, depth + 1))
        else:
            _put_len(out, wire_field.tag, self.object(wire_field.ref, value, depth + 1))

    def object(self, name: str, obj: Mapping[str, Any], depth: int) -> bytearray:
        self.bounded(depth)
        spec = self.tables.messages[name]
        if spec.shape == "oneof":
            tag_value = obj.get(spec.tag)
            arm = next((f for f in spec.fields if f.json == tag_value), None)
            if arm is None:
                raise UsageError(f"{name} has no wire arm for {spec.tag} {tag_value!r}")
            out = bytearray()
            _put_len(out, arm.tag, self.object(arm.ref, obj, depth + 1))
            return out
        for json_name, members in spec.flatten.items():
            obj = self.unfold(json_name, members, obj)
        out = bytearray()
        for wire_field in spec.fields:
            value = obj.get(wire_field.json, _ABSENT)
            if value is _ABSENT or (value is None and wire_field.kind != "value"):
                continue  # JSON null is a value only where any JSON value goes
            if len(spec.by_json[wire_field.json]) > 1 and not self.takes(
                spec, wire_field, value, obj
            ):
                continue
            self.field(out, wire_field, value, depth)
        return out

    @staticmethod
    def takes(spec: _Message, wire_field: _Field, value: Any, obj: Mapping[str, Any]) -> bool:
        """Which of the wire fields sharing one JSON property carries this value: parts for
        a list, the open-object form for an object, the string form for a string."""
        if wire_field.label == "repeated":
            return isinstance(value, (list, tuple))
        if wire_field.kind == "struct":
            return isinstance(value, Mapping)
        return isinstance(value, str)

    @staticmethod
    def unfold(
        json_name: str,
        members: dict[str, tuple[tuple[str, ...], tuple[str, ...]]],
        obj: Mapping[str, Any],
    ) -> Mapping[str, Any]:
        """A flattened union's object spread into its parent: the tag, its member's fields."""
        outcome = obj.get(json_name)
        flat = {k: v for k, v in obj.items() if k != json_name}
        for own, _ in members.values():
            for name in own:
                flat.pop(name, None)
        if outcome is not None and not isinstance(outcome, Mapping):
            raise UsageError(f"{json_name} is not an object: the protobuf wire has no form for it")
        if isinstance(outcome, Mapping):
            tag = outcome.get("type")
            flat[json_name] = tag if isinstance(tag, str) else ""
            for name in members.get(flat[json_name], ((), ()))[0]:
                if name in outcome:
                    flat[name] = outcome[name]
        return flat

    def event(self, obj: Mapping[str, Any]) -> bytes:
        event_type = obj.get("type")
        arm = self.tables.arm_by_type.get(event_type)  # type: ignore[arg-type]
        if arm is None:
            raise UsageError(
                f"event type {event_type!r} has no arm in the protocol {self.tables.version} wire"
            )
        base = bytearray()
        for wire_field in self.tables.messages["BaseEvent"].fields:
            value = obj.get(wire_field.json)
            if value is not None:  # rawEvent and metadata are never null
                self.field(base, wire_field, value, 2)  # BaseEvent is read at depth 2
        body = bytearray()
        _put_len(body, 10, base)  # base_event is field 1 of every event message
        body += self.object(arm.ref, obj, 1)
        out = bytearray()
        _put_len(out, arm.tag, body)
        return bytes(out)


_to_builtins = msgspec.to_builtins


def encode_proto(
    event: msgspec.Struct | Mapping[str, Any],
    version: VersionLike | WireTables = LATEST_VERSION,
) -> bytes:
    """One event as the bytes of a protobuf ``Event`` message (no length prefix).

    ``event`` is an event Struct, or its wire-named JSON object. Absent fields are not
    written; an empty list is not written either (protobuf cannot tell it from absent).
    Raises ``UsageError`` for an event the wire has no form for: an unknown type or
    union member, a value of the wrong JSON type in a known field.
    """
    encoder = _Encoder(wire_tables(version))
    try:
        return encoder.event(event if isinstance(event, Mapping) else _to_builtins(event))
    except (AttributeError, TypeError, ValueError, OverflowError) as problem:
        raise UsageError(f"the protobuf wire cannot carry this event as given: {problem}") from None


def proto_frame(
    event: msgspec.Struct | Mapping[str, Any],
    version: VersionLike | WireTables = LATEST_VERSION,
) -> bytes:
    """One frame of the HTTP + Protobuf binding: the 4-byte big-endian length, then
    :func:`encode_proto` of ``event``."""
    body = encode_proto(event, version)
    return len(body).to_bytes(4, "big") + body


# --------------------------------------------------------------------------- reading


class ProtobufReader:
    """Incremental reader of an ``application/vnd.ag-ui.event+proto`` body: frames in, one
    payload per event out, the event's JSON (wire names), as :class:`SSEReader` gives.

    Frames split across chunks and several frames in one chunk both work. A frame's length
    is checked against ``max_event_size`` as soon as its 4-byte header is in, before its
    bytes are held: a larger one raises ``TransportError(rule="event-too-large")``. Bytes
    that do not decode raise ``TransportError(rule="malformed-frame")``; payloads completed
    earlier in the same chunk are returned first, and the error is raised by the next
    ``feed`` or ``close``. A frame carrying only an event type this build does not know is
    dropped, and ``on_warning`` (and :attr:`warnings`) says so, as the frame is decoded.
    ``on_warning_before`` gets the same warning with the index of the payload it comes
    before (counted from this reader's first): a consumer says it once it has taken the
    payloads before that one, so a body gives the same warnings in the same order however
    it is chunked. ``close()`` never returns a payload; :attr:`discarded_partial` is then
    True if the body ended inside a frame, which the consumer reports as truncation.
    """

    def __init__(
        self,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        version: VersionLike = LATEST_VERSION,
        on_warning: Callable[[str], None] | None = None,
        *,
        on_warning_before: Callable[[int, str], None] | None = None,
    ) -> None:
        if max_event_size < 1:
            raise UsageError(f"max_event_size must be at least 1, not {max_event_size}")
        self.max_event_size = max_event_size
        self.discarded_partial = False
        self.warnings: list[str] = []
        self._on_warning = on_warning
        self._on_warning_before = on_warning_before
        self._position = 0  # the index of the payload the frame being decoded would be
        tables = wire_tables(version)
        self._decoder = _FastDecoder(tables, _Decoder(tables, self._warn))
        # Bytes after the last whole frame, in pieces; _need is what the next step waits for.
        self._pieces: list[bytes] = []
        self._held = 0
        self._need = 4
        self._emitted = 0
        self._closed = False
        self._violation: TransportError | None = None

    @property
    def inside_event(self) -> bool:
        """Whether the bytes read so far end inside a frame."""
        return self._held > 0

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        if self._on_warning is not None:
            self._on_warning(message)
        if self._on_warning_before is not None:
            self._on_warning_before(self._position, message)

    def feed(self, chunk: bytes) -> list[bytes]:
        """Take the next bytes of the body; return the payloads they complete, in order."""
        self._check_usable()
        if self._held + len(chunk) < self._need:
            if chunk:
                self._pieces.append(bytes(chunk))
                self._held += len(chunk)
            return []
        data = b"".join((*self._pieces, chunk)) if self._pieces else bytes(chunk)
        out: list[bytes] = []
        try:
            pos = self._frames(data, out)
        except TransportError as violation:
            self._violation = violation
            self._pieces, self._held = [], 0
            if not out:
                raise
            self._emitted += len(out)
            return out
        rest = data[pos:]
        self._pieces = [rest] if rest else []
        self._held = len(rest)
        self._emitted += len(out)
        return out

    def _frames(self, data: bytes, out: list[bytes]) -> int:
        pos, end, limit = 0, len(data), self.max_event_size
        event, hot_frames = self._decoder.event, self._decoder.hot_frames
        while end - pos >= 4:
            pos = hot_frames(data, pos, end, limit, out)
            if end - pos < 4:
                break
            length = _unpack_length(data, pos)[0]
            if length > limit:
                raise TransportError(
                    "event-too-large",
                    f"a frame of {length} bytes is larger than max_event_size ({limit} bytes)",
                    index=self._emitted + len(out),
                )
            if end - pos - 4 < length:
                self._need = 4 + length
                return pos
            self._position = self._emitted + len(out)
            try:
                decoded = event(data[pos + 4 : pos + 4 + length])
            except _Malformed as problem:
                raise TransportError(
                    "malformed-frame",
                    f"the frame does not decode: {problem}",
                    index=self._emitted + len(out),
                ) from None
            except RecursionError:
                raise TransportError(
                    "malformed-frame", "the frame nests too deeply", index=self._emitted + len(out)
                ) from None
            if decoded is None:
                self._warn(
                    f"dropped a protobuf frame before event {self._position}: its "
                    "event type is one this build does not know (no Event arm it was built with)"
                )
            else:
                out.append(_json_encode(decoded))
            pos += 4 + length
        self._need = 4
        return pos

    def close(self) -> list[bytes]:
        """The body has ended: nothing more to return; a frame cut short is discarded."""
        self._check_usable()
        self._closed = True
        self.discarded_partial = self._held > 0
        self._pieces, self._held = [], 0
        return []

    def _check_usable(self) -> None:
        if self._violation is not None:
            raise self._violation
        if self._closed:
            raise UsageError("the reader is closed; use a new reader for each stream")
