"""The protobuf wire schema, generated from the JSON Schema and a field-number freeze.

``python -m agui_msgspec._codegen.proto --schema schema/1.1/schema.json --out src/agui_msgspec`` writes
``v1_1.proto`` (the message definitions) and ``v1_1_wire.py`` (the tables the runtime
codec in ``agui_msgspec._wire.protobuf`` reads). Field numbers come from the freeze beside the
schema (``proto-freeze.txt``): a slot the schema has and the freeze lacks takes the next
free number of its message and is appended to the freeze; a frozen slot the schema no
longer has becomes a ``reserved`` number. Numbers are never chosen by hand.

The JSON Schema says what exists; the tables below say how a shape travels on a binary
wire (AG-UI basic/transports/http-protobuf): which union becomes a ``oneof``, which is
merged into one message, which dissolves into its parent, and the wire names that differ
from the schema's. They are the deployed wire's facts (the first-party ``@ag-ui/proto``
1.0.0 encoder), so the bytes match it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agui_msgspec._errors import CodegenError

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
# Append-only: `python -m agui_msgspec._codegen.proto` gives a new slot the next free number of its
# message and adds it here; a slot whose field left the schema stays, reserved.
# Facts only: names and numbers.
"""


class WireSchemaError(Exception):
    """The schema has a shape this generator has no wire decision for."""


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


# --------------------------------------------------------------------------- freeze


class Freeze:
    """Field numbers by slot key (``Message.field``, ``Message.oneof.arm``, ``Enum.VALUE``)."""

    def __init__(self, text: str) -> None:
        self.numbers: dict[str, int] = {}
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            match = re.fullmatch(r"([\w.]+)\s*=\s*(\d+)", line)
            if match is None:
                raise WireSchemaError(f"unreadable freeze line: {line!r}")
            self.numbers[match[1]] = int(match[2])
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
            return self.numbers[key]
        group = self.group(key)
        taken = [n for k, n in self.numbers.items() if self.group(k) == group]
        self.numbers[key] = max(taken, default=-1 if enum else 0) + 1
        self.added.append(key)
        return self.numbers[key]

    def reserved(self, group: str) -> list[int]:
        return sorted(
            n for k, n in self.numbers.items() if self.group(k) == group and k not in self.used
        )

    def render(self, version: str) -> str:
        lines = [f"{key} = {self.numbers[key]}" for key in sorted(self.numbers)]
        return FREEZE_HEADER.format(version=version) + "\n" + "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- model


@dataclass
class WireField:
    name: str  # the proto field name
    number: int
    kind: str  # string | int64 | bool | value | struct | message | enum | base
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


class _Builder:
    def __init__(self, schema: dict[str, Any], freeze: Freeze) -> None:
        self.defs: dict[str, Any] = schema["$defs"]
        self.freeze = freeze
        self.emitted: set[str] = set()
        self.enums: list[WireEnum] = []
        self.messages: list[WireMessage] = []

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
        value = self.properties(member)[0][tag]["const"]
        assert isinstance(value, str)
        return value

    def is_union(self, name: str) -> bool:
        return "oneOf" in self.defs[name] and all("$ref" in m for m in self.defs[name]["oneOf"])

    def classify(self, prop: dict[str, Any]) -> tuple[str, str, bool]:
        """(kind, ref, repeated) of one JSON property; kind ``union`` for a union reference,
        ``split`` for an inline string-or-parts union."""
        name = self.ref_name(prop)
        if name is not None:
            target = self.defs[name]
            if self.is_union(name):
                return "union", name, False
            if "enum" in target or target.get("type") == "string":
                return "string", "", False
            if target.get("type") == "array":
                kind, ref, _ = self.classify(target["items"])
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
        if prop.get("type") == "boolean":
            return "bool", "", False
        if prop.get("type") == "array":
            kind, ref, _ = self.classify(prop["items"])
            return kind, ref, True
        if prop.get("type") == "object" and not prop.get("properties"):
            return "struct", "", False
        if "type" not in prop:
            return "value", "", False
        raise WireSchemaError(f"no wire type for {prop}")

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
        self, scope: str, proto_name: str, kind: str, label: str, json_name: str, ref: str = ""
    ) -> WireField:
        number = self.freeze.number(f"{scope}.{proto_name}")
        return WireField(proto_name, number, kind, label, json_name, ref)

    def object_fields(
        self, owner: str, scope: str, props: dict[str, Any], required: set[str]
    ) -> tuple[list[WireField], dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]]]:
        fields: list[WireField] = []
        flatten: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {}
        for json_name, prop in props.items():
            kind, ref, repeated = self.classify(prop)
            if kind == "struct" and (owner, json_name) in VALUE_NOT_STRUCT:
                kind = "value"
            if kind == "split":  # string or content parts: two wire fields
                parts = next(p for p in prop["oneOf"] if p.get("type") == "array")
                part_union = self.ref_name(parts["items"]) or ""
                fields.append(self.make(scope, snake(json_name), "string", "optional", json_name))
                parts_field = self.make(
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
                fields.extend(self.flatten_fields(scope, json_name, ref, flatten))
                continue
            wire_ref = self.wire_ref(kind, ref)
            if kind == "union":
                kind = "message"
            label = "repeated" if repeated else ("" if json_name in required else "optional")
            wire_field = self.make(scope, snake(json_name), kind, label, json_name, wire_ref)
            wire_field.required = json_name in required
            fields.append(wire_field)
        return fields, flatten

    def flatten_fields(
        self,
        scope: str,
        json_name: str,
        union: str,
        flatten: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]],
    ) -> list[WireField]:
        tag = self.tag_of(union)
        fields = [self.make(scope, snake(json_name), "string", "", json_name)]
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
                kind, ref, repeated = self.classify(props[key])
                wire_ref = self.wire_ref(kind, ref)
                fields.append(
                    self.make(
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
        scope = WIRE_NAME.get(name, name)
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
        return message

    def event(self, name: str, base_fields: set[str]) -> WireMessage:
        scope = WIRE_NAME.get(name, name)
        props, required = self.properties(name)
        props = {k: v for k, v in props.items() if k not in base_fields}
        message = WireMessage(scope, "event")
        base = self.make(scope, "base_event", "base", "", "", BASE_EVENT)
        fields, message.flatten = self.object_fields(name, scope, props, required)
        message.fields = sorted([base, *fields], key=lambda f: f.number)
        message.reserved = self.freeze.reserved(scope)
        return message

    def merge(self, name: str) -> WireMessage:
        scope = WIRE_NAME.get(name, name)
        tag = self.tag_of(name)
        merged: dict[str, WireField] = {}
        required_in: dict[str, int] = {}
        content_forms: dict[str, tuple[str, ...]] = {}
        members = self.members(name)
        for member in members:
            props, required = self.properties(member)
            forms: list[str] = []
            for json_name, prop in props.items():
                kind, ref, repeated = self.classify(prop)
                if kind == "split":
                    parts = next(p for p in prop["oneOf"] if p.get("type") == "array")
                    variants = [
                        (snake(json_name), "string", "", False),
                        (
                            f"{snake(json_name)}_parts",
                            "message",
                            self.wire_ref("union", self.ref_name(parts["items"]) or ""),
                            True,
                        ),
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
                    if proto_name not in merged:
                        label = "repeated" if var_repeated else "optional"
                        merged[proto_name] = self.make(
                            scope, proto_name, var_kind, label, json_name, var_ref
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
        scope = WIRE_NAME.get(name, name)
        tag = self.tag_of(name)
        oneof = ONEOF_NAME[name]
        arms: list[WireField] = []
        for member in self.members(name):
            value = self.tag_value(member, tag)
            if member not in self.emitted:
                self.emitted.add(member)
                self.messages.append(self.plain(member, drop=tag))
            number = self.freeze.number(f"{scope}.{oneof}.{value}")
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
        scope = WIRE_NAME.get(name, name)
        tag = self.tag_of(name)
        enum_name = f"{scope}Type"
        members = self.members(name)
        values = []
        merged: dict[str, WireField] = {}
        required_in: dict[str, int] = {}
        tag_field = self.make(scope, snake(tag), "enum", "", tag, enum_name)
        for member in members:
            value = self.tag_value(member, tag).upper()
            values.append((value, self.freeze.number(f"{enum_name}.{value}", enum=True)))
            props, required = self.properties(member)
            for json_name, prop in props.items():
                if json_name == tag:
                    continue
                kind, ref, repeated = self.classify(prop)
                if json_name not in merged:
                    wire_ref = self.wire_ref(kind, ref)
                    merged[json_name] = self.make(
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
        event_types = self.defs["EventType"]["enum"]
        self.enums.append(
            WireEnum(
                "EventType",
                sorted(
                    ((v, self.freeze.number(f"EventType.{v}", enum=True)) for v in event_types),
                    key=lambda v: v[1],
                ),
            )
        )
        base_props, base_required = self.properties(BASE_EVENT)
        base = WireMessage(BASE_EVENT, "object")
        for json_name, prop in base_props.items():
            if json_name == "type":
                base.fields.append(self.make(BASE_EVENT, "type", "enum", "", "type", "EventType"))
                continue
            kind, _, _ = self.classify(prop)
            label = "" if json_name in base_required else "optional"
            base.fields.append(self.make(BASE_EVENT, snake(json_name), kind, label, json_name))
        base.fields.sort(key=lambda f: f.number)
        base.reserved = self.freeze.reserved(BASE_EVENT)
        self.messages.append(base)
        self.emitted.add(BASE_EVENT)

        events = self.members("Event")
        for event_name in events:
            self.emitted.add(event_name)
            self.messages.append(self.event(event_name, set(base_props)))
        arms = []
        for event_name in events:
            event_type = self.tag_value(event_name, "type")
            arm = snake(re.sub(r"Event$", "", event_name))
            number = self.freeze.number(f"Event.event.{arm}")
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


def build_model(schema_path: Path, freeze: Freeze) -> WireModel:
    raw = schema_path.read_bytes()
    schema = json.loads(raw)
    schema_id = schema.get("$id") if isinstance(schema, dict) else None
    # Both are written into comments, a docstring and a package name: one plain line only.
    if not isinstance(schema_id, str) or not schema_id.isprintable():
        raise CodegenError("$id is not a one-line printable string", "/$id")
    version_match = re.search(r"/spec/([0-9A-Za-z._-]+)/schema\.json$", schema_id)
    version = version_match[1] if version_match else "draft"
    enums, messages = _Builder(schema, freeze).build()
    return WireModel(version, schema_id, hashlib.sha256(raw).hexdigest(), enums, messages)


# --------------------------------------------------------------------------- rendering

_SCALAR = {"string": "string", "int64": "int64", "bool": "bool"}
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
        f"{comment} DO NOT EDIT: generated by `python -m agui_msgspec._codegen.proto` from the AG-UI schema",
        f"{comment}   $id:    {model.schema_id}",
        f"{comment}   sha256: {model.schema_sha256}",
        f"{comment} Field numbers: schema/{model.version}/proto-freeze.txt (append-only).",
        f"{comment} Regenerate with `nox -s generate`; `nox -s drift` fails on any hand edit.",
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
    out += ["}", ""]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m agui_msgspec._codegen.proto", description=__doc__
    )
    parser.add_argument("--schema", type=Path, required=True, help="AG-UI schema.json to read")
    parser.add_argument(
        "--freeze", type=Path, help="field-number freeze (default: proto-freeze.txt beside schema)"
    )
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    parser.add_argument(
        "--frozen",
        action="store_true",
        help="fail instead of appending a new slot to the freeze (for the drift check)",
    )
    args = parser.parse_args(argv)
    freeze_path: Path = args.freeze or args.schema.with_name("proto-freeze.txt")
    freeze = Freeze(freeze_path.read_text(encoding="utf-8") if freeze_path.exists() else "")
    model = build_model(args.schema, freeze)
    if freeze.added:
        if args.frozen:
            sys.exit(f"{freeze_path} lacks {', '.join(freeze.added)}: run `nox -s generate`")
        freeze_path.write_text(freeze.render(model.version), encoding="utf-8")
        print(f"{freeze_path}: appended {', '.join(freeze.added)}")
    args.out.mkdir(parents=True, exist_ok=True)
    stem = module_name_for(model.version)
    (args.out / f"{stem}.proto").write_text(render_proto(model), encoding="utf-8")
    (args.out / f"{stem}_wire.py").write_text(format_source(render_tables(model)), encoding="utf-8")
    print(args.out / f"{stem}.proto")


if __name__ == "__main__":
    main()
