"""From an AG-UI schema file to a description of the msgspec bindings.

datamodel-code-generator is the schema front end: it resolves ``$ref``, merges
``allOf`` mixins and reads constraints. Its msgspec output cannot decode the
``Event`` union (``BaseEvent`` keeps ``type`` as a field, so the variants stay
untagged), so this module reads its parsed models instead of its output and
makes the msgspec decisions itself:

- every ``oneOf`` of objects that share a required ``const`` property becomes a
  tagged union on that property, and the property becomes the Struct's tag;
- ``allOf`` mixins (``BaseEvent``, ``Attributable``, ``BaseMessage``) are
  flattened into the Structs that use them;
- objects without ``unevaluatedProperties: false`` are open: a union of them
  (the JSON Patch operations) is carried as dicts, so unknown members survive,
  and validated against the union's Structs by the runtime;
- ``{"not": {"type": "null"}}`` becomes ``NonNullValue``, a union of every JSON
  type but null, so msgspec itself rejects ``null`` there.

The schema may be anyone's: :mod:`.check` vets it first, every name written unquoted
passes :func:`~.check.check_name`, and every value is written as its ``repr``.
"""

from __future__ import annotations

import hashlib
import json
import keyword
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from datamodel_code_generator import Error as ParserError
from datamodel_code_generator.enums import DataModelType
from datamodel_code_generator.model import get_data_model_types
from datamodel_code_generator.model.base import DataModel
from datamodel_code_generator.parser.jsonschema import JsonSchemaParser
from datamodel_code_generator.types import DataType

from agui_msgspec._errors import CodegenError

from .check import (
    CLASS_BODY_NAMES,
    DEFS_PREFIX,
    MODULE_NAMES,
    NON_NULL,
    Kind,
    check_name,
    check_schema,
    kind_under,
    pointer_to,
)


@dataclass(frozen=True)
class FieldSpec:
    attr: str
    wire: str
    annotation: str
    required: bool
    default: str | None
    explicit_name: bool
    pointer: str  # the property in the schema
    doc: str = ""  # the property's description, written as the attribute's docstring


@dataclass
class StructSpec:
    name: str
    doc: str
    closed: bool
    fields: list[FieldSpec]
    tag_field: str | None = None
    tag: str | None = None
    tag_doc: str = ""

    @property
    def tag_attr(self) -> str | None:
        """The tag's attribute name (``type``, ``role``): a read-only class attribute."""
        return None if self.tag_field is None else snake_case(self.tag_field)


@dataclass(frozen=True)
class UnionSpec:
    name: str
    doc: str
    tag_field: str
    members: tuple[tuple[str, str], ...]  # (tag, struct name)


@dataclass(frozen=True)
class AliasSpec:
    name: str
    doc: str
    annotation: str


@dataclass(frozen=True)
class EnumSpec:
    name: str
    doc: str
    values: tuple[str, ...]


@dataclass
class Bindings:
    module_name: str
    protocol_version: str
    schema_id: str
    sha256: str
    enums: list[EnumSpec] = field(default_factory=list)
    aliases: list[AliasSpec] = field(default_factory=list)
    structs: list[StructSpec] = field(default_factory=list)
    unions: list[UnionSpec] = field(default_factory=list)
    late_aliases: list[AliasSpec] = field(default_factory=list)
    # (struct, attribute, open union): values carried as dicts, checked by the runtime
    open_union_fields: list[tuple[str, str, str]] = field(default_factory=list)


def snake_case(wire: str) -> str:
    attr = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", wire).lower()
    return attr + "_" if keyword.iskeyword(attr) else attr


def camel_wire_name(attr: str) -> str:
    """The name msgspec's ``rename="camel"`` gives ``attr``, asked of msgspec itself: its rule is
    its own (``cost_per1k_tokens`` becomes ``costPer1KTokens``, a capital after the digit)."""
    probe = msgspec.defstruct("Probe", [attr], rename="camel")
    return msgspec.structs.fields(probe)[0].encode_name


def short_doc(node: dict[str, Any]) -> str:
    """The description on one line; the template writes it as a docstring literal."""
    return " ".join(str(node.get("description", "")).split())


def version_from_id(schema_id: str) -> str | None:
    """The version an upstream ``$id`` names (``.../spec/1.1/schema.json`` → ``1.1``)."""
    match = re.fullmatch(r".*/spec/([0-9A-Za-z._-]+)/schema\.json", schema_id, re.DOTALL)
    return None if match is None else match.group(1)


def module_name_for(protocol_version: str) -> str:
    return "v" + re.sub(r"[^0-9a-zA-Z]+", "_", protocol_version)


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text} is out of range")
    return number


def _not_json(name: str) -> float:
    raise ValueError(f"{name} is not JSON")


def parse_json(text: str) -> Any:
    """The schema's JSON: no NaN or Infinity (not JSON, and their ``repr`` is no literal)."""
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_not_json)
    except RecursionError:
        raise CodegenError("nested deeper than Python's JSON reader goes", None) from None
    except ValueError as exc:
        raise CodegenError(f"not a readable JSON Schema: {exc}", None) from None


def for_parser(node: Any, kind: Kind = "schema") -> Any:
    """The schema as datamodel-code-generator is given it: each enum cut to its first value.
    The generator reads enum values from the schema itself, and the parser names a member
    per value at a cost that grows with the values before it (200,000 values: 541 s)."""
    if isinstance(node, list):
        return [for_parser(item, kind) for item in node]
    if not isinstance(node, dict) or kind == "data":
        return node
    return {
        key: value[:1]
        if kind == "schema" and key == "enum"
        else for_parser(value, kind_under(key, kind))
        for key, value in node.items()
    }


class _Reader:
    def __init__(
        self, text: str, folder: Path, module_name: str | None, protocol_version: str | None
    ) -> None:
        self.raw: dict[str, Any] = parse_json(text)
        check_schema(self.raw)
        self.defs: dict[str, Any] = self.raw["$defs"]
        schema_id: str = self.raw.get("$id", "")
        version = protocol_version or version_from_id(schema_id)
        if version is None:
            raise CodegenError(
                f"cannot read a protocol version from $id {schema_id!r}: give one", "/$id"
            )
        self.bindings = Bindings(
            module_name=module_name or module_name_for(version),
            protocol_version=version,
            schema_id=schema_id,
            sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        )
        types = get_data_model_types(DataModelType.MsgspecStruct)
        try:
            parser = JsonSchemaParser(
                json.dumps(for_parser(self.raw)),
                data_model_type=types.data_model,
                data_model_root_type=types.root_model,
                data_model_field_type=types.field_model,
                data_type_manager_type=types.data_type_manager,
                dump_resolve_reference_action=types.dump_resolve_reference_action,
                field_constraints=True,
                base_path=folder,  # nothing outside the schema's folder, nothing remote
                allow_remote_refs=False,
            )
            parser.parse_raw()
        except ParserError as exc:
            raise CodegenError(f"datamodel-code-generator cannot read it: {exc}", None) from None
        except RecursionError:
            raise  # generate() names it: nested too deeply
        except Exception as exc:  # a failure of its own on a schema nobody vetted: still ours
            detail = f"datamodel-code-generator failed on it: {type(exc).__name__}: {exc}"
            raise CodegenError(detail, None) from None
        self.models: dict[str, DataModel] = {m.reference.path: m for m in parser.results}
        self.names: dict[str, str] = {}  # every name the module defines → where in the schema
        self.tags: dict[str, tuple[str, str]] = {}

    # --- classification, from the raw schema -------------------------------------------

    def _is_closed(self, name: str) -> bool:
        return self.defs[name].get("unevaluatedProperties") is False

    def _is_mixin(self, name: str) -> bool:
        return any(
            {"$ref": DEFS_PREFIX + name} in node.get("allOf", []) for node in self.defs.values()
        )

    def _is_open_map(self, name: str) -> bool:
        node = self.defs[name]
        return node.get("type") == "object" and "properties" not in node

    def _union_members(self, name: str) -> list[str] | None:
        refs = self.defs[name].get("oneOf", [])
        members = [ref.get("$ref", "").removeprefix(DEFS_PREFIX) for ref in refs]
        if refs and all(m in self.defs and self.defs[m].get("type") == "object" for m in members):
            return members
        return None

    def _find_tags(self) -> dict[str, tuple[str, str]]:
        """Struct name → (tag field, tag) for every member of a discriminated ``oneOf``."""
        tags: dict[str, tuple[str, str]] = {}
        for name in self.defs:
            members = self._union_members(name)
            if members is None:
                continue
            first = self.defs[members[0]]
            for prop in first.get("required", []):
                consts = [
                    self.defs[m].get("properties", {}).get(prop, {}).get("const") for m in members
                ]
                required = all(prop in self.defs[m].get("required", []) for m in members)
                if (
                    required
                    and all(isinstance(c, str) for c in consts)
                    and len(set(consts)) == len(consts)
                ):
                    tags.update({m: (prop, str(c)) for m, c in zip(members, consts, strict=False)})
                    break
            else:
                at = pointer_to("$defs", name, "oneOf")
                raise CodegenError(f"oneOf {name} has no discriminating const property", at)
        return tags

    def _raw_property(self, name: str, wire: str) -> dict[str, Any]:
        node: dict[str, Any] = self.defs[name]
        if wire in node.get("properties", {}):
            prop: dict[str, Any] = node["properties"][wire]
            return prop
        for ref in node.get("allOf", []):
            found = self._raw_property(ref["$ref"].removeprefix(DEFS_PREFIX), wire)
            if found:
                return found
        return {}

    # --- type expressions, from datamodel-code-generator's data types ---------------------

    def annotation(self, data_type: DataType, at: str, constraints: Any = None) -> str:
        """The type expression for ``data_type``, read from the schema at ``at``."""
        if data_type.literals:
            return "Literal[" + ", ".join(_literal(v) for v in data_type.literals) + "]"
        if data_type.reference is not None:
            return self._reference(data_type.reference.path, at)
        if data_type.is_dict:
            return "dict[str, Any]"
        if data_type.is_list:
            if not data_type.data_types:  # the parser gives an array of itself no item type
                raise CodegenError("an array whose items are the array itself has no type", at)
            items = self.annotation(data_type.data_types[0], at)
            return self._with_meta(f"list[{items}]", constraints)
        if len(data_type.data_types) == 1:
            return self.annotation(data_type.data_types[0], at, constraints)
        if data_type.data_types:
            return " | ".join(self.annotation(member, at) for member in data_type.data_types)
        scalar = {"str": "str", "int": "int", "float": "float", "bool": "bool"}.get(
            str(data_type.type), "Any"
        )
        return self._with_meta(scalar, constraints)

    def _reference(self, path: str, at: str) -> str:
        name = path.removeprefix(DEFS_PREFIX)
        if name not in self.defs:  # a type the parser made of a nested schema
            raise CodegenError(f"unsupported reference {path}", at)
        members = self._union_members(name)
        if members is not None and not all(self._is_closed(m) for m in members):
            return "dict[str, Any]"  # open union: carried as a dict, validated by the runtime
        return name

    @staticmethod
    def _with_meta(annotation: str, constraints: Any) -> str:
        if constraints is None:
            return annotation
        bounds = {
            "gt": _integral(constraints.gt),
            "ge": _integral(constraints.ge),
            "lt": _integral(constraints.lt),
            "le": _integral(constraints.le),
            "multiple_of": _integral(constraints.multiple_of),
            "min_length": constraints.min_items
            if annotation.startswith("list")
            else constraints.min_length,
            "max_length": constraints.max_items
            if annotation.startswith("list")
            else constraints.max_length,
            "pattern": _ecma_pattern(constraints.pattern),
        }
        args = [f"{key}={_literal(value)}" for key, value in bounds.items() if value is not None]
        return f"Annotated[{annotation}, Meta({', '.join(args)})]" if args else annotation

    # --- the parts of the module -----------------------------------------------------------

    def read(self) -> Bindings:
        out = self.bindings
        self._declare_names()
        self.tags = self._find_tags()
        out.aliases.append(
            AliasSpec(
                NON_NULL,
                "Any JSON value except null: absent means absent.",
                "str | int | float | bool | list[Any] | dict[str, Any]",
            )
        )
        for name, node in self.defs.items():
            doc = short_doc(node)
            at = pointer_to("$defs", name)
            model = self.models.get(DEFS_PREFIX + name)
            if "enum" in node:
                out.enums.append(EnumSpec(name, doc, tuple(node["enum"])))
            elif self._union_members(name) is not None:
                self._add_union(name, doc)
            elif self._is_open_map(name):
                out.aliases.append(AliasSpec(name, doc, "dict[str, Any]"))
            elif node.get("type") == "object":
                if not self._is_mixin(name):
                    out.structs.append(self._struct(name, doc))
            elif model is not None and model.fields:
                target = out.late_aliases if node.get("type") == "array" else out.aliases
                root = model.fields[0]
                annotation = self.annotation(root.data_type, at, root.constraints)
                target.append(AliasSpec(name, doc, annotation))
            else:
                raise CodegenError(f"unsupported definition {name}", at)
        self._collect_inline_enums()
        if not any(union.name == "Event" for union in out.unions):
            raise CodegenError(
                "no Event union: an AG-UI schema defines Event as a oneOf of the event objects,"
                " tagged by a const property",
                pointer_to("$defs", "Event") if "Event" in self.defs else "/$defs",
            )
        return out

    def _declare_names(self) -> None:
        """Check every name the module defines, before any is used: the definitions', and the
        enums of properties, whichever definition holds them."""
        for name in self.defs:
            self._declare(name, pointer_to("$defs", name))
        for name, node in self.defs.items():
            for wire, prop in node.get("properties", {}).items():
                if "enum" in prop:
                    at = pointer_to("$defs", name, "properties", wire)
                    self._declare(_inline_enum_name(name, wire), at)

    def _declare(self, name: str, pointer: str) -> None:
        check_name(name, pointer, MODULE_NAMES)
        if name in self.names:
            taken = f"#{self.names[name]} already takes it"
            raise CodegenError(f"{name!r} is not usable as a Python name: {taken}", pointer)
        self.names[name] = pointer

    def _add_union(self, name: str, doc: str) -> None:
        members = self._union_members(name) or []
        tag_field = self.tags[members[0]][0]
        pairs = tuple((self.tags[m][1], m) for m in members)
        self.bindings.unions.append(UnionSpec(name, doc, tag_field, pairs))

    def _struct(self, name: str, doc: str) -> StructSpec:
        tag_field, tag = self.tags.get(name, (None, None))
        by_wire: dict[str, FieldSpec] = {}
        for owner in [*self._mixins(name), name]:
            for spec in self._fields(owner, self._model(owner)):
                by_wire[spec.wire] = spec
        by_wire.pop(tag_field or "", None)
        fields = sorted(by_wire.values(), key=lambda spec: not spec.required)
        attrs: dict[str, str] = {}  # attribute → the wire name it stands for
        if tag_field is not None:
            at = pointer_to("$defs", name, "properties", tag_field)
            attrs[self._check_attr(snake_case(tag_field), at)] = tag_field
        for spec in fields:
            if spec.attr in attrs:
                taken = f"{attrs[spec.attr]!r} already becomes the attribute"
                detail = f"{spec.attr!r} is not usable as a Python name: {taken}"
                raise CodegenError(detail, spec.pointer)
            attrs[spec.attr] = spec.wire
        for spec in fields:
            union = self._open_union_of(name, spec.wire)
            if union:
                self.bindings.open_union_fields.append((name, spec.attr, union))
        tag_doc = self._description(name, tag_field) if tag_field else ""
        return StructSpec(name, doc, self._is_closed(name), fields, tag_field, tag, tag_doc)

    def _description(self, name: str, wire: str) -> str:
        """A property's description, from the definition or else the mixin that describes it
        (an event's ``type`` pins a const; ``BaseEvent`` says what it is)."""
        for owner in [name, *reversed(self._mixins(name))]:
            doc = short_doc(self.defs[owner].get("properties", {}).get(wire, {}))
            if doc:
                return doc
        return ""

    def _open_union_of(self, name: str, wire: str) -> str | None:
        """The open union a field carries as dicts, directly or as list items."""
        prop = self._raw_property(name, wire)
        ref: str = prop.get("$ref", "").removeprefix(DEFS_PREFIX)
        if ref in self.defs and self.defs[ref].get("type") == "array":
            prop = self.defs[ref]
        if prop.get("type") == "array":
            ref = prop.get("items", {}).get("$ref", "").removeprefix(DEFS_PREFIX)
        members = self._union_members(ref) if ref in self.defs else None
        if members is None or all(self._is_closed(m) for m in members):
            return None
        return ref

    def _model(self, name: str) -> DataModel:
        model = self.models.get(DEFS_PREFIX + name)
        if model is None:
            raise CodegenError(
                "datamodel-code-generator made no model of it", pointer_to("$defs", name)
            )
        return model

    def _check_attr(self, attr: str, pointer: str) -> str:
        """A Struct's attribute: its body reads the module's names, so it may shadow none."""
        check_name(attr, pointer, CLASS_BODY_NAMES)
        if attr in self.names:
            shadows = f"it would shadow #{self.names[attr]} in its Struct"
            raise CodegenError(f"{attr!r} is not usable as a Python name: {shadows}", pointer)
        return attr

    def _mixins(self, name: str) -> list[str]:
        found: list[str] = []
        for ref in self.defs[name].get("allOf", []):
            base = ref["$ref"].removeprefix(DEFS_PREFIX)
            found += [*self._mixins(base), base]
        return found

    def _fields(self, owner: str, model: DataModel) -> list[FieldSpec]:
        specs = []
        for f in model.fields:
            wire = f.original_name or f.name or ""
            raw = self._raw_property(owner, wire)
            at = pointer_to("$defs", owner, "properties", wire)
            extras = f.extras or {}
            if raw.get("not") == {"type": "null"}:
                annotation = NON_NULL
            elif "const" in extras:
                annotation = f"Literal[{_literal(extras['const'])}]"
            elif "enum" in raw:
                annotation = _inline_enum_name(owner, wire)
            else:
                annotation = self.annotation(f.data_type, at, f.constraints)
            attr = self._check_attr(snake_case(wire), at)
            default = None if f.default is None or f.required else _literal(f.default)
            explicit = camel_wire_name(attr) != wire
            specs.append(
                FieldSpec(
                    attr, wire, annotation, bool(f.required), default, explicit, at, short_doc(raw)
                )
            )
        return specs

    def _collect_inline_enums(self) -> None:
        for name, node in self.defs.items():
            for wire, prop in node.get("properties", {}).items():
                if "enum" in prop:
                    values = tuple(prop["enum"])
                    self.bindings.enums.append(
                        EnumSpec(_inline_enum_name(name, wire), short_doc(prop), values)
                    )


def _inline_enum_name(owner: str, wire: str) -> str:
    return owner + wire[:1].upper() + wire[1:]


# Schema patterns whose direct transcription backtracks in Python's ``re`` with a stack
# frame per character (a 9 MB JSON Pointer took 1.7 GB), each with an equivalent that scans
# in linear time and constant memory: ``tests/test_hardening.py`` checks that both
# accept the same strings.
LINEAR_EQUIVALENTS = {
    # RFC 6901: empty, or "/" first and every "~" followed by "0" or "1". The lookahead's
    # ".*" repeats one character, which sre runs without a stack.
    "^(/([^/~]|~[01])*)*$": "(?s)\\A(?:/(?!.*~(?:[^01]|\\Z)).*)?\\Z",
}


def _integral(bound: Any) -> Any:
    """A numeric bound, an ``int`` where integral: the parser reads some as floats
    (``multipleOf``, ``exclusiveMinimum``), and msgspec bounds an integer by an ``int``."""
    number = bound.value if hasattr(bound, "value") else bound  # the parser wraps some
    return int(number) if isinstance(number, float) and number.is_integer() else number


def _ecma_pattern(pattern: str | None) -> str | None:
    """JSON Schema patterns are ECMA-262: ``$`` must not match before a trailing newline, as
    Python's does, so each one that is an anchor (not escaped, not in a class) becomes ``\\Z``."""
    if pattern in LINEAR_EQUIVALENTS:
        return LINEAR_EQUIVALENTS[pattern]
    if pattern is None or "$" not in pattern:
        return pattern
    written: list[str] = []
    in_class = False
    position = 0
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":  # an escape and what it escapes, as they are
            written.append(pattern[position : position + 2])
            position += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "$":
            char = "\\Z"
        written.append(char)
        position += 1
    return "".join(written)


def _literal(value: Any) -> str:
    """A value from the schema as Python source: its ``repr``, a literal for every JSON value
    (numbers are finite: :func:`parse_json` refuses the rest)."""
    if hasattr(value, "value"):  # datamodel-code-generator wraps numeric bounds
        value = value.value
    return repr(value)


def read_schema(
    path: Path, *, module_name: str | None = None, protocol_version: str | None = None
) -> Bindings:
    """The bindings for the schema at ``path``; ``module_name`` and ``protocol_version``
    default to what its ``$id`` names (``.../spec/1.1/schema.json``: ``v1_1``, ``1.1``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CodegenError(f"not a readable JSON Schema: not UTF-8 ({exc.reason})", None) from None
    return _Reader(text, path.parent, module_name, protocol_version).read()
