"""The single-pass decoder: one loop per message writing JSON members as fields arrive, and
before it the hot path, which reads whole frames of the commonest events straight to JSON.

It reads plain messages (events, their objects) and hands a message of another shape (merged,
oneof, tagged, flattened) to the general decoder. A frame it cannot read in one pass (a
singular message met twice, which protobuf merges; no base_event; any malformed byte) the
general decoder reads again from the start, and gives the event or says what is wrong: the
two decoders read every frame alike, by construction where it is handed over.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import msgspec

from agui_msgspec._wire.protobuf.decode import (
    ABSENT,
    DROPPED_NO_ARM,
    DROPPED_UNKNOWN_ARM,
    Budget,
    GeneralDecoder,
    Malformed,
    check_depth,
    check_envelope,
    check_message,
    default_of,
    double,
    enum_value,
    field_value,
    signed,
    text,
    varint,
)
from agui_msgspec._wire.protobuf.tables import LEN, WireMessage, WireTables
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE

_TAILS_KEPT = 64
"""Timestamp tails the hot path keeps: a stream needs one per 16 s of events."""
_unpack_length = struct.Struct(">I").unpack_from
_json_encode = msgspec.json.Encoder().encode

# What a slot does with its field. Length-delimited kinds first (_PACKED: a packed run of
# numbers; _GENERAL: a list of JSON values or objects, left to the general decoder), then the
# 8-byte double, varint kinds (_INT and after) last: one comparison tells them.
_STR, _STR_REP, _VALUE, _STRUCT, _MSG, _MSG_REP, _OTHER, _OTHER_REP, _BASE, _PACKED = range(10)
_GENERAL, _DOUBLE, _INT, _BOOL, _ENUM = range(10, 15)


class _HandOver(Exception):
    """Internal: this frame is the general decoder's to read."""


class _Plan:
    __slots__ = ("defaults", "floor", "lists", "numbers", "slots")

    def __init__(self) -> None:
        self.slots: dict[int, tuple[int, str, Any]] = {}  # by tag: number and wire type
        self.numbers: frozenset[int] = frozenset()
        self.defaults: tuple[tuple[str, Any], ...] = ()
        # The least JSON the object is (with a comma after it): each default's member is in
        # it, as "name":, a value of a byte at least, and a comma.
        self.floor = 2
        self.lists: tuple[str, ...] = ()  # the JSON names of its lists of messages


class FastDecoder:
    """Decodes a frame in one pass where every message on its path is plain; hands the rest
    to the general decoder. Each plain message has a plan: its slots by tag, and its defaults."""

    def __init__(
        self,
        tables: WireTables,
        warn: Callable[[str], None],
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        *,
        compact: bool = False,
    ) -> None:
        self.tables = tables
        # A list of messages as its items' JSON, not as dicts, which take 3x the memory (so
        # a frame's list of a bound's worth of items costs what SSE's event does): for a
        # reader, which hands JSON on; decode_frame gives plain values.
        self.compact = compact
        # What a frame decodes into is bounded as an SSE event is, by max_event_size of JSON.
        self.budget = Budget(max_event_size)
        self.general = GeneralDecoder(tables, warn, self.budget)
        # The parts it hands over warn when the frame is read: a frame handed over whole
        # after a part warned is read, and warns, again.
        self._held: list[str] = []
        self._parts = GeneralDecoder(tables, self._held.append, self.budget)
        self._type_zero = default_of(tables, tables.messages["BaseEvent"].by_number[1])
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
        # The first byte of each hot frame's message: a frame starting otherwise is not tried.
        self.hot_starts = frozenset(tag if tag < 0x80 else tag & 0x7F | 0x80 for tag in self.hot)

    def _fill_plan(self, spec: WireMessage, plan: _Plan) -> None:
        defaults: list[tuple[str, Any]] = []
        for f in spec.fields:
            repeated = f.label == "repeated"
            ref: Any = None
            if f.packed:  # read as written; a run that comes unpacked is handed over
                op, ref = _PACKED, f
            elif f.kind == "string":
                op = _STR_REP if repeated else _STR
            elif f.kind == "int64":
                op = _INT
            elif f.kind == "double":
                op = _DOUBLE
            elif f.kind == "bool":
                op = _BOOL
            elif f.kind == "enum":
                op, ref = _ENUM, self.tables.enums[f.ref]
            elif f.kind in ("value", "struct") and repeated:
                op = _GENERAL
            elif f.kind == "value":
                op = _VALUE
            elif f.kind == "struct":
                op = _STRUCT
            elif f.kind == "base":
                op, ref = _BASE, self.plans["BaseEvent"]
            elif f.ref in self.plans:
                op, ref = (_MSG_REP if repeated else _MSG), self.plans[f.ref]
            else:
                op, ref = (_OTHER_REP if repeated else _OTHER), f
            if repeated and op not in (_STR_REP, _MSG_REP, _OTHER_REP, _PACKED, _GENERAL):
                raise AssertionError(f"no repeated {f.kind} in the wire")  # none is generated
            plan.slots[f.tag] = (op, f.json, ref)
            default = default_of(self.tables, f)
            if default is not ABSENT:
                defaults.append((f.json, default))
        plan.defaults = tuple(defaults)
        plan.floor = 2 + sum(len(name) + 4 for name, _ in defaults)
        plan.lists = tuple(
            json for op, json, _ in plan.slots.values() if op in (_MSG_REP, _OTHER_REP)
        )
        plan.numbers = frozenset(f.number for f in spec.fields)

    def object(
        self, plan: _Plan, data: bytes, pos: int, end: int, depth: int, out: dict[str, Any]
    ) -> None:
        check_depth(depth)
        self.budget.spend(plan.floor)
        slots = plan.slots
        while pos < end:
            tag = data[pos]
            if tag < 0x80:
                pos += 1
            else:
                tag, pos = varint(data, pos, end)
            slot = slots.get(tag)
            if slot is None:
                if tag >> 3 in plan.numbers:
                    raise _HandOver  # a known field with another wire type: malformed
                pos = field_value(data, pos, end, tag)[1]  # a field this build predates
                continue
            op, json_name, ref = slot
            # Read inline, not by field_value: the call costs 8% of a plain frame (measured).
            if op >= _INT:
                if pos < end and data[pos] < 0x80:
                    value = data[pos]
                    pos += 1
                else:
                    value, pos = varint(data, pos, end)
                if op == _INT:
                    out[json_name] = signed(value)
                elif op == _BOOL:
                    out[json_name] = value != 0
                else:
                    out[json_name] = enum_value(ref, value)
                continue
            if op == _DOUBLE:
                if pos + 8 > end:
                    raise _HandOver  # a double past the frame: malformed
                out[json_name] = double(data, pos)
                pos += 8
                continue
            if pos < end and data[pos] < 0x80:
                length = data[pos]
                pos += 1
            else:
                length, pos = varint(data, pos, end)
            stop = pos + length
            if stop > end:
                raise _HandOver  # a length past the frame: malformed
            if op == _STR:
                out[json_name] = text(data, pos, stop)
            elif op == _BASE:
                if out["type"] is ABSENT:  # the first base_event: a type left out is type 0
                    out["type"] = self._type_zero
                self.object(ref, data, pos, stop, depth + 1, out)
            elif json_name in out and op in (_VALUE, _STRUCT, _MSG, _OTHER):
                raise _HandOver  # a singular message met twice: protobuf merges them
            elif op == _VALUE:
                decoded = self._parts.value(data, pos, stop, depth + 1)
                if decoded is not ABSENT:
                    out[json_name] = decoded
            elif op == _STRUCT:
                out[json_name] = self._parts.struct(data, pos, stop, depth + 1)
            elif op == _MSG:
                inner: dict[str, Any] = {}
                self.object(ref, data, pos, stop, depth + 1, inner)
                out[json_name] = inner
            elif op == _MSG_REP:
                inner = {}
                self.object(ref, data, pos, stop, depth + 1, inner)
                item = _json_encode(inner) if self.compact else inner
                items = out.get(json_name)
                if items is None:
                    out[json_name] = [item]
                else:
                    items.append(item)
            elif op == _STR_REP:
                self.budget.spend(3)  # an item's quotes and comma
                out.setdefault(json_name, []).append(text(data, pos, stop))
            elif op == _PACKED:
                out.setdefault(json_name, []).extend(self._parts.packed(ref, data, pos, stop))
            elif op == _GENERAL:
                raise _HandOver  # rare enough that one reading path is worth more than speed
            else:  # a message of another shape: the general decoder
                self.budget.spend(self._parts.floors[ref.ref])  # it charges the rest
                item = self._parts.object(ref.ref, data, pos, stop, depth + 1)
                if op == _OTHER_REP:
                    if item is not ABSENT:
                        if self.compact:
                            item = _json_encode(item)
                        out.setdefault(json_name, []).append(item)
                elif item is not ABSENT:
                    out[json_name] = item
            pos = stop
        if self.compact:  # the items' JSON, joined as the list's
            for json_name in plan.lists:
                items = out.get(json_name)
                if items:
                    out[json_name] = msgspec.Raw(b"[" + b",".join(items) + b"]")
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

    def _dropped(self, frame: bytes, end: int) -> dict[str, Any] | None:
        """A frame of no arm, or of one arm (a 2-byte tag) this build does not know, as the
        general decoder reads it, at a lower cost: a body of them costs no more than SSE's
        events of unknown types."""
        if end == 0:
            self.general.warn(DROPPED_NO_ARM)
            return None
        number = (frame[0] & 0x7F | frame[1] << 7) >> 3
        if not number or number in self.tables.envelope.by_number or frame[2] != end - 3:
            return self.general.event(frame)
        check_message(frame, 3, end)  # a future arm is a message, or the bytes are not an event
        self.general.warn(DROPPED_UNKNOWN_ARM)
        return None

    def event(self, frame: bytes) -> dict[str, Any] | None:
        """One frame's event as its JSON object, as the general decoder reads it; None for an
        event this build does not know."""
        end = len(frame)
        if end < 2 or frame[0] >= 0x80 or frame[0] & 7 != LEN:
            if end == 0 or (end >= 3 and frame[0] & 0x87 == 0x82 and frame[1] | frame[2] < 0x80):
                return self._dropped(frame, end)
            return self.general.event(frame)
        arm = self.tables.envelope.by_number.get(frame[0] >> 3)
        plan = None if arm is None else self.plans.get(arm.ref)
        if arm is None or plan is None:
            return self.general.event(frame)
        self._held.clear()
        self.budget.left = self.budget.limit
        out: dict[str, Any] = {"type": ABSENT}  # the base_event's to fill, first in order
        try:
            if frame[1] < 0x80:
                length, pos = frame[1], 2
            else:
                length, pos = varint(frame, 1, end)
            if pos + length != end:  # anything beside the one arm
                raise _HandOver
            self.object(plan, frame, pos, end, 1, out)
            if out["type"] is ABSENT:
                raise _HandOver  # no base_event
            check_envelope(arm, out)
        except (Malformed, _HandOver):
            return self.general.event(frame)  # which says what is wrong, if anything is
        for message in self._held:
            self.general.warn(message)
        return out


def _varint_tail(tail: bytes) -> int | None:
    """The bytes of a varint after its first two, as their part of its value; None unless
    they end it, in 8 bytes at most (56 bits: never negative)."""
    if not 0 < len(tail) <= 6 or tail[-1] >= 0x80 or min(tail[:-1], default=0x80) < 0x80:
        return None
    return sum((byte & 0x7F) << (14 + 7 * i) for i, byte in enumerate(tail))
