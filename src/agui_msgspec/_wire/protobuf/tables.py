"""The wire tables: one protocol version's generated wire schema (``agui_msgspec.vX_Y_wire``),
loaded once per version and indexed for the encoder and the decoders."""

from __future__ import annotations

import importlib
from types import ModuleType

from agui_msgspec._errors import UsageError
from agui_msgspec._versions import LATEST_VERSION, VersionLike, bindings_for

MAX_NESTING = 200
"""Nested messages and JSON values one frame may hold, counted from the envelope."""

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
# The wire type each field kind travels as.
_WIRE_TYPE = {
    "string": LEN,
    "int64": VARINT,
    "bool": VARINT,
    "enum": VARINT,
    "value": LEN,
    "struct": LEN,
    "message": LEN,
    "base": LEN,
}


class WireField:
    """One field of a message: a row of the generated ``MESSAGES`` table, and its tag."""

    __slots__ = ("json", "kind", "label", "name", "number", "ref", "required", "tag")

    def __init__(self, row: tuple[int, str, str, str, str, str, bool]) -> None:
        self.number, self.name, self.kind, self.label, self.json, self.ref, self.required = row
        self.tag = (self.number << 3) | _WIRE_TYPE[self.kind]


class WireMessage:
    """One message of the wire schema: its shape, its fields by number and by JSON name."""

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

    def __init__(self, name: str, shape: str, tag: str, fields: tuple[WireField, ...]) -> None:
        self.name, self.shape, self.tag, self.fields = name, shape, tag, fields
        self.by_number = {f.number: f for f in fields}
        self.by_json: dict[str, list[WireField]] = {}
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
            name: WireMessage(name, shape, tag, tuple(WireField(row) for row in rows))
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
