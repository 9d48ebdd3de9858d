"""The protobuf wire schema, generated from the JSON Schema and a field-number freeze.

``agui-msgspec generate`` calls :func:`write_wire` beside the bindings module: it writes
``v1_1.proto`` (the message definitions) and ``v1_1_wire.py`` (the tables the runtime
codec in ``agui_msgspec._wire.protobuf`` reads). Field numbers come from the freeze file
the user keeps (``--freeze``): a slot the schema has and the freeze lacks takes the next
free number of its message and is appended to the freeze; a frozen slot the schema no
longer has becomes a ``reserved`` number; a freeze that renumbers the wire already
generated is refused. Numbers are never chosen by hand. ``python -m
agui_msgspec._codegen.proto --schema S --out DIR`` writes the wire alone (the freeze
beside the schema by default).

The JSON Schema says what exists; the tables below say how a shape travels on a binary
wire (AG-UI basic/transports/http-protobuf): which union becomes a ``oneof``, which is
merged into one message, which dissolves into its parent, and the wire names that differ
from the schema's. They are the deployed wire's facts (the first-party ``@ag-ui/proto``
1.0.0 encoder), so the bytes match it.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from agui_msgspec._errors import CodegenError, UsageError
from agui_msgspec._versions import LATEST_VERSION

from .check import pointer_to
from .model import module_name_for
from .render import format_source

# Wire names that differ from the schema's definition names.
WIRE_NAME = {
    "TokenUsage": "Usage",
    "ContentPart": "InputContent",
    "TextPart": "TextInputPart",
    "ImagePart": "ImageInputPart",
    "AudioPart": "AudioInputPart",
    "VideoPart": "VideoInputPart",
    "DocumentPart": "DocumentInputPart",
    "PartSource": "InputContentSource",
    "DataSource": "InputContentDataSource",
    "UrlSource": "InputContentUrlSource",
    "FileSource": "InputContentFileSource",
}

# How each union travels. A union reached from an event without an entry here stops
# generation: a new union needs a transport decision, not a default.
#   envelope  the Event message: one oneof arm per event type
#   merge     one message holding every member's fields (content split by its JSON kind)
#   oneof     a message with one oneof arm per member, named by the member's tag
#   flatten   dissolves into its parent: the tag as a string field, the members' fields beside
#   tagged    one message, the tag an enum (JSON Patch operations)
UNION_STRATEGY = {
    "Event": "envelope",
    "Message": "merge",
    "ContentPart": "oneof",
    "PartSource": "oneof",
    "RunFinishedOutcome": "flatten",
    "SubagentFinishedOutcome": "flatten",
    "JsonPatchOperation": "tagged",
}
ONEOF_NAME = {"ContentPart": "part", "PartSource": "source"}

# Where the deployed wire carries an open object as google.protobuf.Value, not Struct.
VALUE_NOT_STRUCT = {("Interrupt", "metadata"), ("Interrupt", "responseSchema")}

# A field holding a FunctionCall is the message nested in ToolCall, as deployed.
NESTED = {"FunctionCall": ("ToolCall", "Function")}

BASE_EVENT = "BaseEvent"
FREEZE_HEADER = """\
# The protobuf field numbers of AG-UI {version}: every slot the binary wire has used.
# Append-only: `agui-msgspec generate --freeze` gives a new slot the next free number of its
# message and adds it here; a slot whose field left the schema stays, reserved.
# Facts only: names and numbers.
"""


class WireSchemaError(Exception):
    """The schema has a shape this generator has no wire decision for."""


# What the .proto and the freeze write unquoted: a protobuf identifier, nothing else.
PROTO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def proto_name(name: str, what: str, pointer: str | None) -> str:
    """``name``, which the .proto and the freeze write as it is: refused unless a protobuf
    identifier (a ``.`` would move a slot into another message, a newline add lines)."""
    if PROTO_NAME.fullmatch(name) is None:
        detail = f"{what} is not usable on the protobuf wire: {name!r} is no protobuf name"
        raise CodegenError(f"{detail} ([A-Za-z_][A-Za-z0-9_]*)", pointer)
    return name


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


# --------------------------------------------------------------------------- freeze

FIELD_NUMBERS = range(1, 2**29)  # protobuf's: 1 to 536,870,911 (an enum's values start at 0)
PROTOBUF_RESERVED = range(19_000, 20_000)  # field numbers protobuf keeps for itself


class Freeze:
    """Field numbers by slot key (``Message.field``, ``Message.oneof.arm``, ``Enum.VALUE``)."""

    def __init__(self, text: str, name: str = "proto-freeze.txt") -> None:
        self.name = name
        self.numbers: dict[str, int] = {}
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            match = re.fullmatch(r"([A-Za-z0-9_.]+)\s*=\s*([0-9]+)", line)
            if match is None:
                raise WireSchemaError(f"unreadable freeze line: {line!r}")
            key, digits = match[1], match[2].lstrip("0") or "0"
            if key in self.numbers:
                raise WireSchemaError(f"the freeze numbers {key} twice")
            if len(digits) > len(str(FIELD_NUMBERS.stop)) or int(digits) >= FIELD_NUMBERS.stop:
                shown = digits if len(digits) <= 20 else f"{digits[:20]}... ({len(digits)} digits)"
                raise WireSchemaError(
                    f"the freeze gives {key} the number {shown}: past protobuf's last,"
                    f" {FIELD_NUMBERS.stop - 1}"
                )
            self.numbers[key] = int(digits)
        holder: dict[tuple[str, int], str] = {}
        # each group's slots and highest number: numbering a slot costs the same however many
        self.slots: dict[str, list[str]] = {}
        self.highest: dict[str, int] = {}
        for key, number in sorted(self.numbers.items()):
            group = self.group(key)
            other = holder.setdefault((group, number), key)
            if other != key:  # one number, two slots: a renumbering the wire cannot survive
                raise WireSchemaError(
                    f"the freeze gives {other} and {key} the same number {number}"
                )
            self.slots.setdefault(group, []).append(key)
            self.highest[group] = max(number, self.highest.get(group, number))
        self.used: set[str] = set()
        self.added: list[str] = []

    @staticmethod
    def group(key: str) -> str:
        """The message (or enum) whose number space a slot takes: oneof arms share it."""
        parts = key.split(".")[:-1]
        while len(parts) > 1 and parts[-1][:1].islower():
            parts.pop()
        return ".".join(parts)

    def number(self, key: str, *, enum: bool = False) -> int:
        self.used.add(key)
        if key in self.numbers:
            return self.numbers[key] if enum else self.field_number(key, self.numbers[key])
        group = self.group(key)
        number = self.highest.get(group, -1 if enum else 0) + 1
        if not enum and number in PROTOBUF_RESERVED:
            number = PROTOBUF_RESERVED.stop
        self.numbers[key] = self.field_number(key, number) if not enum else number
        self.slots.setdefault(group, []).append(key)
        self.highest[group] = number
        self.added.append(key)
        return number

    def reserved(self, group: str) -> list[int]:
        return sorted(
            self.field_number(k, self.numbers[k])
            for k in self.slots.get(group, [])
            if k not in self.used
        )

    def field_number(self, key: str, number: int) -> int:
        """``number``, if protobuf takes it as the field number of the slot ``key``."""
        if number not in FIELD_NUMBERS or number in PROTOBUF_RESERVED:
            first, last = PROTOBUF_RESERVED.start, PROTOBUF_RESERVED.stop - 1
            raise WireSchemaError(
                f"{key} = {number} is no protobuf field number: they run from 1 to"
                f" {FIELD_NUMBERS.stop - 1}, and protobuf keeps {first} to {last} for itself"
            )
        return number

    def render(self, version: str) -> str:
        lines = [f"{key} = {self.numbers[key]}" for key in sorted(self.numbers)]
        return FREEZE_HEADER.format(version=version) + "\n" + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- model


@dataclass
class WireField:
    name: str  # the proto field name
    number: int
    kind: str  # string | int64 | double | bool | value | struct | message | enum | base
    label: str  # "" | "optional" | "repeated"
    json: str  # the JSON property it carries ("" for a oneof arm)
    ref: str = ""  # message or enum name, for kind message / enum
    required: bool = False  # the JSON property is required (an empty list still means [])


@dataclass
class WireMessage:
    name: str
    shape: str  # object | event | merge | oneof | tagged | envelope
    fields: list[WireField] = field(default_factory=list)
    oneof: str = ""  # the oneof's name, for shape oneof / envelope
    tag: str = ""  # the JSON tag property: type / role / op
    reserved: list[int] = field(default_factory=list)
    nested: list[WireMessage] = field(default_factory=list)
    # flatten: JSON property -> {member tag: (JSON names of its fields, required ones)}
    flatten: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = field(
        default_factory=dict
    )
    # merge: per role, the wire fields its ``content`` may take
    content_forms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # JSON property -> the schema's ``default``: what a Struct holding it encodes as
    defaults: dict[str, Any] = field(default_factory=dict)


def _defaults(props: dict[str, Any]) -> dict[str, Any]:
    return {json_name: prop["default"] for json_name, prop in props.items() if "default" in prop}


@dataclass
class WireEnum:
    name: str
    values: list[tuple[str, int]]


@dataclass
class WireModel:
    version: str
    schema_id: str
    schema_sha256: str
    enums: list[WireEnum] = field(default_factory=list)
    messages: list[WireMessage] = field(default_factory=list)
    freeze_name: str = "proto-freeze.txt"  # the freeze file's name, for the banner


class _Builder:
    def __init__(self, schema: dict[str, Any], freeze: Freeze) -> None:
        self.defs: dict[str, Any] = schema["$defs"]
        self.freeze = freeze
        self.emitted: set[str] = set()
        self.enums: list[WireEnum] = []
        self.messages: list[WireMessage] = []
        # what takes each name of the wire: a slot (Message.field, Enum.VALUE) or a name of the
        # package (a message, an enum, an enum value: proto scopes those beside each other)
        self.takers: dict[str, str] = {}

    # -- schema reading

    @staticmethod
    def ref_name(prop: dict[str, Any]) -> str | None:
        ref = prop.get("$ref")
        return ref.rsplit("/", 1)[-1] if isinstance(ref, str) else None

    def properties(self, name: str) -> tuple[dict[str, Any], set[str]]:
        """A definition's properties, mixins (``allOf``) first, and its required names."""
        definition = self.defs[name]
        props: dict[str, Any] = {}
        required: set[str] = set()
        for mixin in definition.get("allOf", []):
            mixin_props, mixin_required = self.properties(self.ref_name(mixin) or "")
            props.update(mixin_props)
            required |= mixin_required
        for key, prop in definition.get("properties", {}).items():
            props[key] = {**props.get(key, {}), **prop}
        required |= set(definition.get("required", []))
        return props, required

    def declared_at(self, name: str, json_name: str) -> str:
        """The pointer to the property ``json_name`` of ``name``, or of the mixin declaring it."""
        definition = self.defs[name]
        if json_name in definition.get("properties", {}):
            return pointer_to("$defs", name, "properties", json_name)
        for mixin in reversed(definition.get("allOf", [])):  # the last mixin's property wins
            mixin_name = self.ref_name(mixin) or ""
            if json_name in self.properties(mixin_name)[0]:
                return self.declared_at(mixin_name, json_name)
        return pointer_to("$defs", name)

    def members(self, union: str) -> list[str]:
        return [self.ref_name(m) or "" for m in self.defs[union]["oneOf"]]

    def tag_of(self, union: str) -> str:
        """The property every member pins to a constant: the union's tag."""
        candidates = None
        for member in self.members(union):
            props, _ = self.properties(member)
            consts = {k for k, p in props.items() if "const" in p}
            candidates = consts if candidates is None else candidates & consts
        if not candidates or len(candidates) != 1:
            raise WireSchemaError(f"union {union} has no single tag property")
        return candidates.pop()

    def tag_value(self, member: str, tag: str) -> str:
        value = self.properties(member)[0].get(tag, {}).get("const")
        if not isinstance(value, str):
            detail = f"{member} pins no string {tag}: a union's member on the protobuf wire does"
            raise CodegenError(detail, self.declared_at(member, tag))
        return value

    def is_union(self, name: str) -> bool:
        return "oneOf" in self.defs[name] and all("$ref" in m for m in self.defs[name]["oneOf"])

    def classify(self, prop: dict[str, Any], at: str) -> tuple[str, str, bool]:
        """(kind, ref, repeated) of one JSON property (``at`` in the schema); kind ``union`` for
        a union reference, ``split`` for an inline string-or-parts union."""
        name = self.ref_name(prop)
        if name is not None:
            target = self.defs[name]
            if self.is_union(name):
                return "union", name, False
            if "enum" in target or target.get("type") == "string":
                return "string", "", False
            if target.get("type") == "array":
                kind, ref, _ = self.classify(*self.items(target, pointer_to("$defs", name)))
                return kind, ref, True
            if target.get("type") == "object" and not target.get("properties"):
                return "struct", "", False
            if "type" not in target and "oneOf" not in target:
                return "value", "", False
            return "message", name, False
        if "oneOf" in prop:
            return "split", "", False
        if "const" in prop or prop.get("type") == "string":
            return "string", "", False
        if prop.get("type") == "integer":
            return "int64", "", False
        if prop.get("type") == "number":
            return "double", "", False
        if prop.get("type") == "boolean":
            return "bool", "", False
        if prop.get("type") == "array":
            kind, ref, _ = self.classify(*self.items(prop, at))
            return kind, ref, True
        if prop.get("type") == "object" and not prop.get("properties"):
            return "struct", "", False
        if "type" not in prop:
            return "value", "", False
        raise WireSchemaError(f"no wire type for {prop}")

    @staticmethod
    def items(array: dict[str, Any], at: str) -> tuple[dict[str, Any], str]:
        """The items of an array schema at ``at``, and where they are."""
        if "items" not in array:
            raise CodegenError("an array without items has no protobuf type: give its items", at)
        return array["items"], at + "/items"

    def content_parts(self, prop: dict[str, Any], at: str) -> str:
        """The union of the parts in a string-or-parts ``oneOf`` (a message's ``content``)."""
        arms = prop["oneOf"]
        arrays = [arm for arm in arms if arm.get("type") == "array"]
        union = self.ref_name(arrays[0].get("items", {})) if len(arrays) == 1 else None
        if union is None or any(arm.get("type") not in ("string", "array") for arm in arms):
            detail = "an inline oneOf travels on the protobuf wire only as a string or an array"
            raise CodegenError(f"{detail} of a union's members (content parts)", at + "/oneOf")
        return union

    # -- names and numbers

    def claim(self, name: str, what: str, pointer: str | None) -> str:
        """``name`` on the wire, taken by ``what``: refused if something else takes it already, as
        two JSON properties on one field (or two messages of one name) would mix on the wire."""
        holder = self.takers.setdefault(name, what)
        if holder != what:
            raise CodegenError(
                f"{holder} and {what} would both be {name} on the protobuf wire", pointer
            )
        return name

    def slot(
        self, scope: str, name: str, what: str, pointer: str | None, *, enum: bool = False
    ) -> int:
        """The number of the slot ``name`` of the message or enum ``scope``, taken by ``what``."""
        key = f"{scope}.{proto_name(name, what, pointer)}"
        return self.freeze.number(self.claim(key, what, pointer), enum=enum)

    def enum_value(self, enum: str, value: str, what: str, pointer: str) -> tuple[str, int]:
        """The value ``value`` of ``enum`` and its number; proto scopes it beside the messages."""
        number = self.slot(enum, value, what, pointer, enum=True)
        return self.claim(value, what, pointer), number

    def message_scope(self, name: str) -> str:
        """The wire name of the message made of the definition ``name``."""
        what, at = f"definition {name}", pointer_to("$defs", name)
        return self.claim(proto_name(WIRE_NAME.get(name, name), what, at), what, at)

    def property_taker(self, owner: str, json_name: str) -> tuple[str, str]:
        """What a field made of the property ``json_name`` of ``owner`` names, and where it is."""
        return f"property {json_name!r} of {owner}", self.declared_at(owner, json_name)

    # -- emission

    def wire_ref(self, kind: str, ref: str) -> str:
        if kind == "union":
            if UNION_STRATEGY.get(ref) not in ("merge", "oneof", "tagged"):
                raise WireSchemaError(f"union {ref} has no wire strategy for a field")
            self.visit(ref)
            return WIRE_NAME.get(ref, ref)
        if kind == "message":
            if ref in NESTED:
                parent, nested = NESTED[ref]
                return f"{WIRE_NAME.get(parent, parent)}.{nested}"
            self.visit(ref)
            return WIRE_NAME.get(ref, ref)
        return ""

    def make(
        self,
        owner: str,
        scope: str,
        proto_name: str,
        kind: str,
        label: str,
        json_name: str,
        ref: str = "",
    ) -> WireField:
        """The field ``proto_name`` of ``scope``, carrying the property ``json_name`` of ``owner``."""
        number = self.slot(scope, proto_name, *self.property_taker(owner, json_name))
        return WireField(proto_name, number, kind, label, json_name, ref)

    def object_fields(
        self, owner: str, scope: str, props: dict[str, Any], required: set[str]
    ) -> tuple[list[WireField], dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]]]:
        fields: list[WireField] = []
        flatten: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {}
        for json_name, prop in props.items():
            at = self.declared_at(owner, json_name)
            kind, ref, repeated = self.classify(prop, at)
            if kind == "struct" and (owner, json_name) in VALUE_NOT_STRUCT:
                kind = "value"
            if kind == "split":  # string or content parts: two wire fields
                part_union = self.content_parts(prop, at)
                fields.append(
                    self.make(owner, scope, snake(json_name), "string", "optional", json_name)
                )
                parts_field = self.make(
                    owner,
                    scope,
                    f"{snake(json_name)}_parts",
                    "message",
                    "repeated",
                    json_name,
                    self.wire_ref("union", part_union),
                )
                parts_field.required = json_name in required
                fields.append(parts_field)
                continue
            if kind == "union" and UNION_STRATEGY.get(ref) == "flatten":
                fields.extend(self.flatten_fields(owner, scope, json_name, ref, flatten))
                continue
            wire_ref = self.wire_ref(kind, ref)
            if kind == "union":
                kind = "message"
            label = "repeated" if repeated else ("" if json_name in required else "optional")
            wire_field = self.make(owner, scope, snake(json_name), kind, label, json_name, wire_ref)
            wire_field.required = json_name in required
            fields.append(wire_field)
        return fields, flatten

    def flatten_fields(
        self,
        owner: str,
        scope: str,
        json_name: str,
        union: str,
        flatten: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]],
    ) -> list[WireField]:
        tag = self.tag_of(union)
        fields = [self.make(owner, scope, snake(json_name), "string", "", json_name)]
        seen: set[str] = set()
        members: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        for member in self.members(union):
            props, required = self.properties(member)
            own = tuple(k for k in props if k != tag)
            members[self.tag_value(member, tag)] = (own, tuple(k for k in own if k in required))
            for key in own:
                if key in seen:
                    continue
                seen.add(key)
                kind, ref, repeated = self.classify(props[key], self.declared_at(member, key))
                wire_ref = self.wire_ref(kind, ref)
                fields.append(
                    self.make(
                        member,
                        scope,
                        snake(key),
                        "message" if kind == "union" else kind,
                        "repeated" if repeated else "optional",
                        key,
                        wire_ref,
                    )
                )
        flatten[json_name] = members
        return fields

    def visit(self, name: str) -> None:
        if name in self.emitted:
            return
        self.emitted.add(name)
        strategy = UNION_STRATEGY.get(name)
        if self.is_union(name) and strategy is None:
            raise WireSchemaError(f"union {name} has no wire strategy: decide one first")
        if strategy == "merge":
            self.messages.append(self.merge(name))
        elif strategy == "oneof":
            self.messages.append(self.oneof(name))
        elif strategy == "tagged":
            self.messages.append(self.tagged(name))
        else:
            self.messages.append(self.plain(name))

    def plain(self, name: str, *, drop: str = "") -> WireMessage:
        scope = self.message_scope(name)
        props, required = self.properties(name)
        props = {k: v for k, v in props.items() if k != drop}
        message = WireMessage(scope, "object")
        for nested_def, (parent, nested_name) in NESTED.items():
            if parent == name:
                nested_props, nested_required = self.properties(nested_def)
                inner, _ = self.object_fields(
                    nested_def, f"{scope}.{nested_name}", nested_props, nested_required
                )
                message.nested.append(
                    WireMessage(
                        nested_name,
                        "object",
                        sorted(inner, key=lambda f: f.number),
                        reserved=self.freeze.reserved(f"{scope}.{nested_name}"),
                    )
                )
        message.fields, message.flatten = self.object_fields(name, scope, props, required)
        for wire_field in message.fields:
            if wire_field.kind == "message" and wire_field.ref == "":
                raise WireSchemaError(f"{name}.{wire_field.json}: no wire message")
        message.fields.sort(key=lambda f: f.number)
        message.reserved = self.freeze.reserved(scope)
        message.defaults = _defaults(props)
        return message

    def event(self, name: str, base_fields: set[str]) -> WireMessage:
        scope = self.message_scope(name)
        props, required = self.properties(name)
        props = {k: v for k, v in props.items() if k not in base_fields}
        message = WireMessage(scope, "event")
        number = self.slot(scope, "base_event", f"the {BASE_EVENT} field every event has", None)
        if number != 1:  # the runtime writes an event's BaseEvent as its field 1
            detail = (
                f"the freeze gives {scope}.base_event the number {number}: the wire has it at 1"
            )
            raise CodegenError(detail, None)
        base = WireField("base_event", number, "base", "", "", BASE_EVENT)
        fields, message.flatten = self.object_fields(name, scope, props, required)
        message.fields = sorted([base, *fields], key=lambda f: f.number)
        message.reserved = self.freeze.reserved(scope)
        message.defaults = _defaults(props)
        return message

    def merge(self, name: str) -> WireMessage:
        scope = self.message_scope(name)
        tag = self.tag_of(name)
        merged: dict[str, WireField] = {}
        required_in: dict[str, int] = {}
        content_forms: dict[str, tuple[str, ...]] = {}
        members = self.members(name)
        for member in members:
            props, required = self.properties(member)
            forms: list[str] = []
            for json_name, prop in props.items():
                at = self.declared_at(member, json_name)
                kind, ref, repeated = self.classify(prop, at)
                if kind == "split":
                    parts = self.wire_ref("union", self.content_parts(prop, at))
                    variants = [
                        (snake(json_name), "string", "", False),
                        (f"{snake(json_name)}_parts", "message", parts, True),
                    ]
                elif kind == "struct" and "$ref" not in prop:  # an inline open object
                    variants = [(f"activity_{snake(json_name)}", "struct", "", False)]
                else:
                    wire_ref = self.wire_ref(kind, ref)
                    kind = "message" if kind == "union" else kind
                    variants = [(snake(json_name), kind, wire_ref, repeated)]
                for proto_name, var_kind, var_ref, var_repeated in variants:
                    if json_name == "content":
                        forms.append(proto_name)
                    # one field per property of the members: a name they share is one field
                    what = f"property {json_name!r} of {name}"
                    number = self.slot(scope, proto_name, what, self.declared_at(member, json_name))
                    label = "repeated" if var_repeated else "optional"
                    merged.setdefault(
                        proto_name,
                        WireField(proto_name, number, var_kind, label, json_name, var_ref),
                    )
                    if json_name in required and len(variants) == 1:
                        required_in[proto_name] = required_in.get(proto_name, 0) + 1
            content_forms[self.tag_value(member, tag)] = tuple(forms)
        for proto_name, wire_field in merged.items():
            if wire_field.label != "repeated" and required_in.get(proto_name) == len(members):
                wire_field.label = ""
        return WireMessage(
            scope,
            "merge",
            sorted(merged.values(), key=lambda f: f.number),
            tag=tag,
            reserved=self.freeze.reserved(scope),
            content_forms=content_forms,
        )

    def oneof(self, name: str) -> WireMessage:
        scope = self.message_scope(name)
        tag = self.tag_of(name)
        oneof = ONEOF_NAME[name]
        arms: list[WireField] = []
        for member in self.members(name):
            value = self.tag_value(member, tag)
            if member not in self.emitted:
                self.emitted.add(member)
                self.messages.append(self.plain(member, drop=tag))
            at = self.declared_at(member, tag)
            number = self.slot(f"{scope}.{oneof}", value, f"member {member} of {name}", at)
            arms.append(
                WireField(value, number, "message", "", value, WIRE_NAME.get(member, member))
            )
        return WireMessage(
            scope,
            "oneof",
            sorted(arms, key=lambda f: f.number),
            oneof=oneof,
            tag=tag,
            reserved=self.freeze.reserved(scope),
        )

    def tagged(self, name: str) -> WireMessage:
        scope = self.message_scope(name)
        tag = self.tag_of(name)
        enum_name = self.claim(
            f"{scope}Type", f"the enum of {name}'s {tag}", pointer_to("$defs", name)
        )
        members = self.members(name)
        values = []
        merged: dict[str, WireField] = {}
        required_in: dict[str, int] = {}
        tag_field = self.make(members[0], scope, snake(tag), "enum", "", tag, enum_name)
        for member in members:
            json_value = self.tag_value(member, tag)
            what, at = f"member {member} of {name}", self.declared_at(member, tag)
            value = proto_name(json_value, what, at).upper()
            if value.lower() != json_value:  # the reader takes the enum value's lower case
                detail = f"{what}: its {tag} {json_value!r} would read back as {value.lower()!r}"
                raise CodegenError(f"{detail} from the protobuf enum value {value!r}", at)
            values.append(self.enum_value(enum_name, value, what, at))
            props, required = self.properties(member)
            for json_name, prop in props.items():
                if json_name == tag:
                    continue
                kind, ref, repeated = self.classify(prop, self.declared_at(member, json_name))
                if json_name not in merged:
                    wire_ref = self.wire_ref(kind, ref)
                    merged[json_name] = self.make(
                        member,
                        scope,
                        snake(json_name),
                        kind,
                        "repeated" if repeated else "optional",
                        json_name,
                        wire_ref,
                    )
                if json_name in required:
                    required_in[json_name] = required_in.get(json_name, 0) + 1
        for json_name, wire_field in merged.items():
            if wire_field.label != "repeated" and required_in.get(json_name) == len(members):
                wire_field.label = ""
        self.enums.append(WireEnum(enum_name, sorted(values, key=lambda v: v[1])))
        return WireMessage(
            scope,
            "tagged",
            sorted([tag_field, *merged.values()], key=lambda f: f.number),
            tag=tag,
            reserved=self.freeze.reserved(scope),
        )

    def build(self) -> tuple[list[WireEnum], list[WireMessage]]:
        if "enum" not in self.defs.get("EventType", {}):
            at = pointer_to("$defs", "EventType") if "EventType" in self.defs else "/$defs"
            raise CodegenError("no EventType enum: the protobuf wire numbers event types by it", at)
        if BASE_EVENT not in self.defs:
            detail = f"no {BASE_EVENT}: the protobuf wire carries the fields every event has in it"
            raise CodegenError(detail, "/$defs")
        event_types = self.defs["EventType"]["enum"]
        self.claim("EventType", "definition EventType", pointer_to("$defs", "EventType"))
        numbered = []
        for index, value in enumerate(event_types):
            what, at = f"EventType value {index}", pointer_to("$defs", "EventType", "enum", index)
            numbered.append(self.enum_value("EventType", value, what, at))
        self.enums.append(WireEnum("EventType", sorted(numbered, key=lambda v: v[1])))
        base_props, base_required = self.properties(BASE_EVENT)
        base = WireMessage(self.message_scope(BASE_EVENT), "object")
        for json_name, prop in base_props.items():
            if json_name == "type":
                base.fields.append(
                    self.make(BASE_EVENT, BASE_EVENT, "type", "enum", "", "type", "EventType")
                )
                continue
            kind, _, _ = self.classify(prop, self.declared_at(BASE_EVENT, json_name))
            label = "" if json_name in base_required else "optional"
            base.fields.append(
                self.make(BASE_EVENT, BASE_EVENT, snake(json_name), kind, label, json_name)
            )
        base.fields.sort(key=lambda f: f.number)
        base.reserved = self.freeze.reserved(BASE_EVENT)
        self.messages.append(base)
        self.emitted.add(BASE_EVENT)

        events = self.members("Event")
        tag = self.tag_of("Event")
        if tag != "type":
            detail = f"the Event union is tagged by {tag!r}: the protobuf envelope reads type"
            raise CodegenError(detail, pointer_to("$defs", "Event"))
        self.emitted.update(events)  # an event is its own message, even where a field names it
        for event_name in events:
            self.messages.append(self.event(event_name, set(base_props)))
        self.claim("Event", "definition Event", pointer_to("$defs", "Event"))
        arms = []
        for event_name in events:
            event_type = self.tag_value(event_name, "type")
            if event_type not in event_types:  # the envelope numbers an event by its EventType
                detail = f"{event_name}'s type {event_type!r} is not one of EventType's values"
                raise CodegenError(detail, self.declared_at(event_name, "type"))
            arm = snake(re.sub(r"Event$", "", event_name))
            what = f"event {event_name}"
            number = self.slot("Event.event", arm, what, pointer_to("$defs", event_name))
            arms.append(WireField(arm, number, "message", "", event_type, event_name))
        self.messages.append(
            WireMessage(
                "Event",
                "envelope",
                sorted(arms, key=lambda f: f.number),
                oneof="event",
                tag="type",
                reserved=self.freeze.reserved("Event"),
            )
        )
        return self.enums, self.messages


def build_model(schema_path: Path, freeze: Freeze, version: str | None = None) -> WireModel:
    """The wire model of the schema at ``schema_path``, numbered by ``freeze``; ``version``
    defaults to what the schema's ``$id`` names (``draft`` when it names none)."""
    raw = schema_path.read_bytes()
    schema = json.loads(raw)
    schema_id = schema.get("$id", "") if isinstance(schema, dict) else None
    if not isinstance(schema_id, str):
        raise CodegenError("$id is not a string", "/$id")
    if version is None:
        version_match = re.search(r"/spec/([0-9A-Za-z._-]+)/schema\.json$", schema_id)
        version = version_match[1] if version_match else "draft"
    enums, messages = _Builder(schema, freeze).build()
    model = WireModel(version, schema_id, hashlib.sha256(raw).hexdigest(), enums, messages)
    model.freeze_name = freeze.name
    return model


# --------------------------------------------------------------------------- rendering

_SCALAR = {"string": "string", "int64": "int64", "double": "double", "bool": "bool"}
_WELL_KNOWN = {"value": "google.protobuf.Value", "struct": "google.protobuf.Struct"}


def _proto_type(wire_field: WireField) -> str:
    if wire_field.kind in _SCALAR:
        return _SCALAR[wire_field.kind]
    if wire_field.kind in _WELL_KNOWN:
        return _WELL_KNOWN[wire_field.kind]
    return wire_field.ref


def _render_message(message: WireMessage, indent: str = "") -> list[str]:
    lines = [f"{indent}message {message.name} {{"]
    if message.reserved:
        lines.append(f"{indent}  reserved {', '.join(map(str, message.reserved))};")
    for nested in message.nested:
        lines.extend(_render_message(nested, indent + "  "))
    if message.oneof:
        lines.append(f"{indent}  oneof {message.oneof} {{")
        for arm in message.fields:
            lines.append(f"{indent}    {arm.ref} {arm.name} = {arm.number};")
        lines.append(f"{indent}  }}")
    else:
        for wire_field in message.fields:
            label = f"{wire_field.label} " if wire_field.label else ""
            lines.append(
                f"{indent}  {label}{_proto_type(wire_field)} {wire_field.name} = {wire_field.number};"
            )
    lines.append(f"{indent}}}")
    return lines


def _banner(model: WireModel, comment: str) -> list[str]:
    return [
        f"{comment} DO NOT EDIT: generated by `agui-msgspec generate` from the AG-UI schema",
        f"{comment}   $id:    {json.dumps(model.schema_id)}",  # one line, nothing ends the comment
        f"{comment}   sha256: {model.schema_sha256}",
        f"{comment} Field numbers: the freeze file {model.freeze_name} (append-only).",
    ]


def render_proto(model: WireModel) -> str:
    package = "agui.v" + model.version.replace(".", "_").replace("-", "_")
    lines = [
        *_banner(model, "//"),
        "",
        'syntax = "proto3";',
        "",
        f"package {package};",
        "",
        'import "google/protobuf/struct.proto";',
    ]
    for enum in model.enums:
        lines += ["", f"enum {enum.name} {{"]
        lines += [f"  {name} = {number};" for name, number in enum.values]
        lines.append("}")
    for message in model.messages:
        lines.append("")
        lines.extend(_render_message(message))
    return "\n".join(lines) + "\n"


def _field_tuple(wire_field: WireField) -> str:
    return (
        f"({wire_field.number}, {wire_field.name!r}, {wire_field.kind!r}, "
        f"{wire_field.label!r}, {wire_field.json!r}, {wire_field.ref!r}, {wire_field.required!r})"
    )


def render_tables(model: WireModel) -> str:
    """The codec's tables as a Python module: plain literals, no imports beyond typing."""
    messages: list[WireMessage] = []
    for message in model.messages:
        messages.append(message)
        for nested in message.nested:
            messages.append(
                WireMessage(
                    f"{message.name}.{nested.name}", nested.shape, nested.fields, nested.oneof
                )
            )
    out = [
        *_banner(model, "#"),
        '"""The protobuf wire tables of AG-UI '
        + model.version
        + ', read by ``agui_msgspec._wire.protobuf``."""',
        "",
        "from __future__ import annotations",
        "",
        "from typing import Any",
        "",
        f"PROTOCOL_VERSION = {model.version!r}",
        "",
        "# enum name -> {number: value name}",
        "ENUMS: dict[str, dict[int, str]] = {",
    ]
    for enum in model.enums:
        values = ", ".join(f"{number}: {name!r}" for name, number in enum.values)
        out.append(f"    {enum.name!r}: {{{values}}},")
    out += [
        "}",
        "",
        "# message name -> (shape, JSON tag property, fields); a field is",
        "# (number, proto name, kind, label, JSON name, referenced message or enum, JSON-required).",
        "MESSAGES: dict[str, tuple[str, str, tuple[tuple[int, str, str, str, str, str, bool], ...]]] = {",
    ]
    for message in messages:
        out.append(f"    {message.name!r}: (")
        out.append(f"        {message.shape!r},")
        out.append(f"        {message.tag!r},")
        out.append("        (")
        out += [f"            {_field_tuple(f)}," for f in message.fields]
        out.append("        ),")
        out.append("    ),")
    out += [
        "}",
        "",
        "# (message, JSON property) -> {member tag: (its JSON fields, the required ones)}",
        "FLATTEN: dict[tuple[str, str], dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {",
    ]
    for message in messages:
        for json_name, members in message.flatten.items():
            out.append(f"    ({message.name!r}, {json_name!r}): {members!r},")
    out += [
        "}",
        "",
        "# merged message -> {tag value: the wire fields its ``content`` may take}",
        "CONTENT_FORMS: dict[str, dict[str, tuple[str, ...]]] = {",
    ]
    for message in messages:
        if message.content_forms:
            out.append(f"    {message.name!r}: {message.content_forms!r},")
    out += [
        "}",
        "",
        "# message name -> {JSON property: the schema's default}: written for a Struct that holds",
        "# it, as the same event's JSON (and @ag-ui/proto given that JSON) writes it",
        "DEFAULTS: dict[str, dict[str, Any]] = {",
    ]
    for message in messages:
        if message.defaults:
            out.append(f"    {message.name!r}: {message.defaults!r},")
    out += ["}", ""]
    return "\n".join(out)


def _slots(
    messages: dict[str, Any], enums: dict[str, dict[int, str]]
) -> dict[tuple[str, str], int]:
    """Every numbered slot of a wire: (message or enum, field or value name) -> its number."""
    slots = {(name, row[1]): row[0] for name, (_, _, rows) in messages.items() for row in rows}
    slots.update(
        ((name, value), number)
        for name, values in enums.items()
        for number, value in values.items()
    )
    return slots


def _model_slots(model: WireModel) -> dict[tuple[str, str], int]:
    messages: dict[str, Any] = {}
    for message in model.messages:
        rows = [(f.number, f.name) for f in message.fields]
        messages[message.name] = ("", "", rows)
        for nested in message.nested:
            messages[f"{message.name}.{nested.name}"] = (
                "",
                "",
                [(f.number, f.name) for f in nested.fields],
            )
    enums = {e.name: {number: name for name, number in e.values} for e in model.enums}
    return _slots(messages, enums)


# The two tables of a wire tables module that hold its numbers, as render_tables writes them.
_PREVIOUS_TABLES = {
    "MESSAGES": dict[str, tuple[str, str, tuple[tuple[int, str, str, str, str, str, bool], ...]]],
    "ENUMS": dict[str, dict[int, str]],
}


def _previous_slots(path: Path) -> dict[tuple[str, str], int]:
    """The slots of the wire tables module at ``path`` (one generated before), read as data.
    Anything else there is refused, not overwritten: it may be someone's file."""
    tables: dict[str, Any] = {"MESSAGES": {}, "ENUMS": {}}
    try:
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if (
                isinstance(node, ast.AnnAssign)
                and isinstance(node.target, ast.Name)
                and node.target.id in tables
                and node.value is not None
            ):
                table = ast.literal_eval(node.value)
                tables[node.target.id] = msgspec.convert(table, _PREVIOUS_TABLES[node.target.id])
    # not UTF-8, not Python, not literals, not the tables' shape (each a ValueError but the first)
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as exc:
        raise UsageError(
            f"{path} is in the way: it is not wire tables `agui-msgspec generate` wrote"
            f" ({type(exc).__name__}: {exc}); move it away to generate there"
        ) from None
    return _slots(tables["MESSAGES"], tables["ENUMS"])


def refuse_renumbering(previous: dict[tuple[str, str], int], model: WireModel) -> None:
    """A slot the wire had keeps its number, and a number keeps its slot: peers built on the
    earlier wire read every frame of the new one (new slots they skip, as proto3 does)."""
    current = _model_slots(model)
    changed = [
        f"{owner}.{name} was {number}, now {current[owner, name]}"
        for (owner, name), number in sorted(previous.items())
        if current.get((owner, name), number) != number
    ]
    holders = {(owner, number): name for (owner, name), number in previous.items()}
    changed += [
        f"{owner} number {number} was {holders[owner, number]}, now {name}"
        for (owner, name), number in sorted(current.items())
        if holders.get((owner, number), name) != name
    ]
    if changed:
        raise CodegenError(
            "the freeze renumbers the wire generated before: " + "; ".join(changed), None
        )


def shipped_freeze() -> Freeze:
    """The numbers of the newest wire this package ships (the one ``@ag-ui/proto`` speaks),
    read back from its tables: where a freeze nobody gave starts, so that a schema extending
    it keeps every deployed number and new slots follow them."""
    tables = importlib.import_module(f"agui_msgspec.{module_name_for(LATEST_VERSION)}_wire")
    oneof_names = {WIRE_NAME.get(union, union): name for union, name in ONEOF_NAME.items()}
    oneof_names["Event"] = "event"
    lines = []
    for message, (shape, _, rows) in tables.MESSAGES.items():
        scope = f"{message}.{oneof_names[message]}" if shape in ("oneof", "envelope") else message
        lines += [f"{scope}.{row[1]} = {row[0]}" for row in rows]
    for enum, values in tables.ENUMS.items():
        lines += [f"{enum}.{value} = {number}" for number, value in values.items()]
    return Freeze("\n".join(lines))


def render_wire(
    schema: Path,
    out: Path,
    *,
    freeze_path: Path,
    module: str | None = None,
    protocol_version: str | None = None,
) -> dict[Path, str]:
    """The wire of ``schema`` as files to write into ``out``: ``{module}.proto``,
    ``{module}_wire.py`` (the tables the runtime reads) and, when it gained slots or did not
    exist, the freeze at ``freeze_path`` (started from :func:`shipped_freeze` then). ``module`` and
    ``protocol_version`` default to what the schema's ``$id`` names.

    Refused with ``CodegenError``: a freeze giving two slots one number, a schema shape the
    wire has no decision for, and a renumbering of the wire tables already in ``out``.
    """
    try:
        if freeze_path.exists():
            try:
                text = freeze_path.read_text(encoding="utf-8")
            except UnicodeDecodeError as exc:
                raise UsageError(f"the freeze {freeze_path} is not UTF-8 ({exc.reason})") from None
            freeze = Freeze(text, freeze_path.name)
        else:
            freeze = shipped_freeze()
            freeze.name = freeze_path.name
        model = build_model(schema, freeze, protocol_version)
    except WireSchemaError as problem:
        raise CodegenError(f"no protobuf wire for it: {problem}", None) from None
    module = module or module_name_for(model.version)
    tables_path = out / f"{module}_wire.py"
    if tables_path.exists():
        refuse_renumbering(_previous_slots(tables_path), model)
    files = {
        out / f"{module}.proto": render_proto(model),
        tables_path: format_source(render_tables(model)),
    }
    if freeze.added or not freeze_path.exists():
        files[freeze_path] = freeze.render(model.version)
    return files


def write_files(files: dict[Path, str]) -> None:
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m agui_msgspec._codegen.proto", description=__doc__
    )
    parser.add_argument("--schema", type=Path, required=True, help="AG-UI schema.json to read")
    parser.add_argument(
        "--freeze", type=Path, help="field-number freeze (default: proto-freeze.txt beside schema)"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    args = parser.parse_args(argv)
    freeze_path: Path = args.freeze or args.schema.with_name("proto-freeze.txt")
    try:
        files = render_wire(args.schema, args.out, freeze_path=freeze_path)
    except CodegenError as problem:
        sys.exit(str(problem))
    write_files(files)
    print(*files, sep="\n")


if __name__ == "__main__":
    main()
