"""Encoding: an event's JSON to the bytes of one protobuf ``Event`` message, and the frame
of the HTTP + Protobuf binding (the 4-byte big-endian length, then the message)."""

from __future__ import annotations

import math
import struct
from collections.abc import Mapping
from typing import Any

import msgspec

from agui_msgspec._errors import UsageError
from agui_msgspec._versions import LATEST_VERSION, VersionLike
from agui_msgspec._wire.protobuf.tables import (
    MAX_NESTING,
    WireField,
    WireMessage,
    WireTables,
    wire_tables,
)

_pack_double = struct.Struct("<d").pack


def _put_varint(out: bytearray, value: int) -> None:
    value &= 0xFFFFFFFFFFFFFFFF
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _double(value: Any) -> bytes:
    """A double's 8 bytes (a double field's, a JSON value's number): never NaN or an infinity."""
    if not math.isfinite(value):
        raise UsageError(f"{value!r} is no JSON number: the wire's readers refuse it")
    return _pack_double(value)


def _put_len(out: bytearray, tag: int, body: bytes | bytearray) -> None:
    _put_varint(out, tag)
    _put_varint(out, len(body))
    out += body


class _Encoder:
    """An event's JSON to protobuf bytes, fields in number order as ``@ag-ui/proto`` writes
    them: a plain (non-``optional``) scalar at its default is left out, as proto3 does.

    ``depth`` counts nested messages and JSON values as the reader does, so nothing is
    written that the reader would refuse for nesting past ``MAX_NESTING``.

    A member the wire has no field for is refused (``UsageError``), never left out: the
    event is from a schema this wire predates. ``with_defaults`` (an event from a Struct,
    whose builtins leave out a field at its default) writes the schema's defaults the
    Struct holds, so a Struct and the same event's JSON give the same bytes."""

    def __init__(self, tables: WireTables, *, with_defaults: bool = False) -> None:
        self.tables = tables
        self.with_defaults = with_defaults

    def refuse_unknown(
        self, spec: WireMessage, obj: Mapping[str, Any], also: frozenset[str] | set[str]
    ) -> None:
        if obj.keys() <= spec.by_json.keys():  # the common case: one set comparison
            return
        unknown = [key for key in obj if key not in spec.by_json and key not in also]
        if unknown:
            raise UsageError(
                f"the protocol {self.tables.version} wire has no field for "
                f"{', '.join(map(repr, unknown))} in {spec.name}: the event is from a newer "
                "schema (encode it with the bindings it came from)"
            )

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
            out += _double(float(value))
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

    def field(self, out: bytearray, wire_field: WireField, value: Any, depth: int) -> None:
        """``value`` as ``wire_field`` of a message at ``depth``."""
        kind = wire_field.kind
        if wire_field.label == "repeated":
            if wire_field.packed:
                if value:  # no items: no run, as proto3 writes it
                    run = bytearray()
                    for item in value:
                        self.number(run, wire_field, item)
                    _put_len(out, wire_field.tag, run)
                return
            for item in value:
                self.single(out, wire_field, item, depth)
            return
        if wire_field.label == "" and kind in ("string", "int64", "double", "bool", "enum"):
            if kind == "enum":
                value = self.enum_number(wire_field, value)
            if not value:
                return  # proto3: a plain scalar at its default is not written
        self.single(out, wire_field, value, depth)

    def enum_number(self, wire_field: WireField, value: Any) -> int:
        numbers = self.tables.enum_numbers[wire_field.ref]
        number = numbers.get(value.upper() if isinstance(value, str) else value)
        if number is None:
            raise UsageError(f"{value!r} has no number in {wire_field.ref}")
        return number

    def number(self, out: bytearray, wire_field: WireField, value: Any) -> None:
        """A numeric scalar's value without its tag: a field's, or an item's of a packed run."""
        kind = wire_field.kind
        if kind == "double":
            out += _double(value)
        elif kind == "enum":
            _put_varint(
                out, value if isinstance(value, int) else self.enum_number(wire_field, value)
            )
        else:  # int64, bool
            _put_varint(out, int(value))

    def single(self, out: bytearray, wire_field: WireField, value: Any, depth: int) -> None:
        kind = wire_field.kind
        if kind == "string":
            _put_len(out, wire_field.tag, value.encode())
        elif kind in ("int64", "double", "bool", "enum"):
            _put_varint(out, wire_field.tag)
            self.number(out, wire_field, value)
        elif kind == "value":
            _put_len(out, wire_field.tag, self.value(value, depth + 1))
        elif kind == "struct":
            if isinstance(value, Mapping):
                _put_len(out, wire_field.tag, self.struct(value, depth + 1))
        else:
            _put_len(out, wire_field.tag, self.object(wire_field.ref, value, depth + 1))

    def object(
        self, name: str, obj: Mapping[str, Any], depth: int, also: frozenset[str] = frozenset()
    ) -> bytearray:
        """``obj`` as message ``name``; ``also``: members its parent carries (a tag, the
        base event's fields), which this message has no field for."""
        self.bounded(depth)
        spec = self.tables.messages[name]
        if spec.shape == "oneof":
            tag_value = obj.get(spec.tag)
            arm = next((f for f in spec.fields if f.json == tag_value), None)
            if arm is None:
                raise UsageError(f"{name} has no wire arm for {spec.tag} {tag_value!r}")
            out = bytearray()
            _put_len(out, arm.tag, self.object(arm.ref, obj, depth + 1, frozenset((spec.tag,))))
            return out
        for json_name, members in spec.flatten.items():
            obj = self.unfold(json_name, members, obj)
        if self.with_defaults and spec.defaults:
            obj = {**spec.defaults, **obj}
        # a JSON Patch operation's other members are ignored by its readers (RFC 6902 §4)
        if spec.shape != "tagged":
            self.refuse_unknown(spec, obj, also)
        out = bytearray()
        for wire_field in spec.fields:
            value = obj.get(wire_field.json)
            if value is None and (wire_field.kind != "value" or wire_field.json not in obj):
                continue  # absent; JSON null is a value only where any JSON value goes
            if len(spec.by_json[wire_field.json]) > 1 and not self.takes(
                spec, wire_field, value, obj
            ):
                continue
            self.field(out, wire_field, value, depth)
        return out

    @staticmethod
    def takes(spec: WireMessage, wire_field: WireField, value: Any, obj: Mapping[str, Any]) -> bool:
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
            own = members.get(flat[json_name], ((), ()))[0]
            unknown = [key for key in outcome if key != "type" and key not in own]
            if unknown:
                raise UsageError(
                    f"the wire has no field for {', '.join(map(repr, unknown))} in {json_name} "
                    f"{flat[json_name]!r}: the event is from a newer schema"
                )
            for name in own:
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
        for wire_field in self.tables.base_event.fields:
            value = obj.get(wire_field.json)
            if value is not None:  # rawEvent and metadata are never null
                self.field(base, wire_field, value, 2)  # BaseEvent is read at depth 2
        body = bytearray()
        _put_len(body, 10, base)  # base_event is field 1 of every event message
        body += self.object(arm.ref, obj, 1, self.tables.base_names)
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
    written; an empty list is not written either (protobuf cannot tell it from absent). A
    Struct's field at its schema default (``role`` ``"assistant"`` on ``TEXT_MESSAGE_START``)
    is written, as the same event's JSON gives it: one event, one encoding.

    ``version`` picks the wire: a version string, or bindings (their generated
    ``<module>_wire`` tables). Raises ``UsageError`` for an event the wire has no form for:
    an event type, union member or field the wire lacks (an event of a newer schema than
    the wire's: nothing is left out silently), a value of the wrong JSON type in a known
    field.
    """
    tables = wire_tables(version)
    try:
        if isinstance(event, Mapping):
            return _Encoder(tables).event(event)
        return _Encoder(tables, with_defaults=True).event(_to_builtins(event))
    except (AttributeError, TypeError, ValueError, OverflowError) as problem:
        raise UsageError(f"the protobuf wire cannot carry this event as given: {problem}") from None
    except RecursionError:
        raise UsageError("the protobuf wire cannot carry this event: it nests too deeply") from None


def proto_frame(
    event: msgspec.Struct | Mapping[str, Any],
    version: VersionLike | WireTables = LATEST_VERSION,
) -> bytes:
    """One frame of the HTTP + Protobuf binding: the 4-byte big-endian length, then
    :func:`encode_proto` of ``event``."""
    body = encode_proto(event, version)
    return len(body).to_bytes(4, "big") + body
