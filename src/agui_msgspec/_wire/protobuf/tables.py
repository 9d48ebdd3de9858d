"""The wire tables: one bindings module's generated wire schema (``agui_msgspec.v1_1_wire``,
or the ``<module>_wire.py`` generated beside a module), loaded once per bindings module and
indexed for the encoder and the decoders."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from agui_msgspec._errors import UsageError
from agui_msgspec._versions import LATEST_VERSION, Bindings, VersionLike, bindings_for

MAX_NESTING = 200
"""Nested messages and JSON values one frame may hold, counted from the envelope."""

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
# The wire type each field kind travels as.
_WIRE_TYPE = {
    "string": LEN,
    "int64": VARINT,
    "double": FIXED64,
    "bool": VARINT,
    "enum": VARINT,
    "value": LEN,
    "struct": LEN,
    "message": LEN,
    "base": LEN,
}


class WireField:
    """One field of a message: a row of the generated ``MESSAGES`` table, and its tag."""

    __slots__ = (
        "json",
        "kind",
        "label",
        "name",
        "number",
        "packed",
        "ref",
        "required",
        "tag",
        "wire_type",
    )

    def __init__(self, row: tuple[int, str, str, str, str, str, bool]) -> None:
        self.number, self.name, self.kind, self.label, self.json, self.ref, self.required = row
        # one value's wire type; a packed field's items may also come one a field, as this
        self.wire_type = _WIRE_TYPE[self.kind]
        # proto3 writes every repeated numeric scalar packed: one length-delimited run of values
        self.packed = self.label == "repeated" and self.wire_type in (VARINT, FIXED64)
        self.tag = (self.number << 3) | (LEN if self.packed else self.wire_type)


class WireMessage:
    """One message of the wire schema: its shape, its fields by number and by JSON name."""

    __slots__ = (
        "by_json",
        "by_number",
        "content_forms",
        "defaults",
        "fields",
        "flatten",
        "name",
        "shape",
        "tag",
    )

    def __init__(self, name: str, shape: str, tag: str, fields: tuple[WireField, ...]) -> None:
        self.name: str = name
        self.shape: str = shape
        self.tag: str = tag
        self.fields: tuple[WireField, ...] = fields
        self.by_number: dict[int, WireField] = {f.number: f for f in fields}
        self.by_json: dict[str, list[WireField]] = {}
        for wire_field in fields:
            self.by_json.setdefault(wire_field.json, []).append(wire_field)
        self.flatten: dict[str, dict[str, tuple[tuple[str, ...], tuple[str, ...]]]] = {}
        self.content_forms: dict[str, tuple[str, ...]] = {}
        self.defaults: dict[str, Any] = {}
        """JSON property -> the schema's default, which a Struct holding it encodes."""


class WireTables:
    """One protocol version's wire schema, ready for the codec."""

    def __init__(self, module: ModuleType) -> None:
        self.version: str = module.PROTOCOL_VERSION
        self.enums: dict[str, dict[int, str]] = module.ENUMS
        self.enum_numbers: dict[str, dict[str, int]] = {
            name: {value: number for number, value in values.items()}
            for name, values in module.ENUMS.items()
        }
        self.messages: dict[str, WireMessage] = {
            name: WireMessage(name, shape, tag, tuple(WireField(row) for row in rows))
            for name, (shape, tag, rows) in module.MESSAGES.items()
        }
        for (name, json_name), members in module.FLATTEN.items():
            self.messages[name].flatten[json_name] = members
        for name, forms in module.CONTENT_FORMS.items():
            self.messages[name].content_forms = forms
        # tables generated before defaults were recorded have none to write
        for name, defaults in getattr(module, "DEFAULTS", {}).items():
            self.messages[name].defaults = defaults
        self.envelope: WireMessage = self.messages["Event"]
        self.arm_by_type: dict[str, WireField] = {arm.json: arm for arm in self.envelope.fields}
        self.base_event: WireMessage = self.messages["BaseEvent"]
        # what every event object carries beside its own message's fields
        self.base_names: frozenset[str] = frozenset(f.json for f in self.base_event.fields)


_TABLES: dict[Bindings, WireTables] = {}


def wire_tables(version: VersionLike | WireTables = LATEST_VERSION) -> WireTables:
    """The wire tables of a protocol version (a version string or a bindings module).

    A bindings module's tables are the module ``agui-msgspec generate`` wrote beside it,
    ``<module>_wire``: the package's own for ``agui_msgspec.v1_1``, the generated
    ``v1_2_wire.py`` next to a generated ``v1_2.py``. Never another version's: bindings
    without tables of their own, or with tables of another protocol version, raise
    ``UsageError``.
    """
    if isinstance(version, WireTables):
        return version
    bindings = bindings_for(version)
    tables = _TABLES.get(bindings)
    if tables is None:
        module = _wire_module(bindings)
        if getattr(module, "PROTOCOL_VERSION", None) != bindings.PROTOCOL_VERSION:
            raise UsageError(
                f"the wire tables {module.__name__!r} are not protocol "
                f"{bindings.PROTOCOL_VERSION}'s: regenerate with `agui-msgspec generate`"
            )
        tables = _TABLES[bindings] = WireTables(module)
    return tables


def _wire_module(bindings: Bindings) -> ModuleType:
    """``<bindings>_wire``: imported as the bindings' sibling in their package, or, for a
    top-level module (one ``load_bindings`` or a ``sys.path`` entry loaded), from the file
    beside the bindings' own, whatever else ``sys.path`` holds."""
    bindings_name: str = getattr(bindings, "__name__", "")  # bindings are a module
    name = f"{bindings_name}_wire"
    missing = UsageError(
        f"no protobuf wire tables for {bindings_name!r} (protocol "
        f"{bindings.PROTOCOL_VERSION}): `agui-msgspec generate` writes {name}.py beside it"
    )
    origin = getattr(bindings, "__file__", None)
    if "." in bindings_name or origin is None:
        try:
            return importlib.import_module(name)
        except ImportError:
            raise missing from None
    path = Path(origin).with_name(f"{name}.py")
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__file__", None) == str(path):
        return loaded
    if not path.is_file():
        raise missing
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has a spec
        raise missing
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # a broken or hand-edited file: the bindings have no wire
        raise UsageError(f"cannot load {str(path)!r}: {type(exc).__name__}: {exc}") from None
    return module
