"""What stands between a schema nobody vetted and the module's code.

The generator writes a schema's names as Python names and everything else as literals, so
the only schema text that reaches the module unquoted is a name that passed
:func:`check_name`. :func:`check_schema` runs before anything reads the schema: it checks
the shape of every part the generator reads, and keeps references inside the file.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from collections.abc import Collection, Iterator
from typing import Any, Literal

from agui_msgspec._errors import CodegenError
from agui_msgspec._json import pointer_token

DEFS_PREFIX = "#/$defs/"
NON_NULL = "NonNullValue"
MAX_DEPTH = 64
"""JSON nesting the generator reads (the AG-UI schemas nest 8 deep); deeper overflows the parser."""

TABLE_NAMES = (
    "PROTOCOL_VERSION",
    "SCHEMA_ID",
    "EVENT_TYPES",
    "UNIONS",
    "CLOSED_STRING_SETS",
    "REQUIRED_FIELDS",
    "OPEN_UNION_FIELDS",
    "event_decoder",
    "encoder",
)
# The names a Struct's body reads (its annotations and defaults): no field may shadow them.
CLASS_BODY_NAMES = frozenset(
    {"Annotated", "Any", "ClassVar", "Literal", "Meta", "UNSET", "UnsetType", "field"}
    | {"bool", "dict", "float", "int", "list", "str"}
)
# Every name the module binds or reads at its top level: no definition may take them.
MODULE_NAMES = CLASS_BODY_NAMES | {
    "annotations",
    "TypeAlias",
    "TYPE_CHECKING",
    "globals",  # the lazy event_decoder's
    "AttributeError",
    "msgspec",
    "Struct",
    "frozenset",
    "tuple",  # UNIONS' annotation
    "type",
    NON_NULL,
    *TABLE_NAMES,
}

# Keywords whose value is data, not a schema: a "$ref" in there is just a string.
DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})
# Keywords whose value maps names to schemas: a name there is not a keyword.
SCHEMA_MAPS = frozenset(
    {"$defs", "definitions", "dependentSchemas", "patternProperties", "properties"}
)
Kind = Literal["schema", "map", "data"]
# Half of a UTF-16 pair, alone: JSON can escape one ("\ud800"), but it is no Unicode text
# and msgspec cannot encode it.
LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def pointer_to(*keys: str | int) -> str:
    """The JSON Pointer to ``keys``."""
    return "".join("/" + pointer_token(str(key)) for key in keys)


def check_name(name: str, pointer: str, taken: Collection[str]) -> str:
    """``name``, which the module writes unquoted: refused unless it is a plain Python name
    that Python reads as written and that no other name of the module (``taken``) holds."""
    if not name.isidentifier() or unicodedata.normalize("NFKC", name) != name:
        why = "not a Python identifier, as Python reads it"
    elif keyword.iskeyword(name):
        why = "a Python keyword"
    elif name.startswith("__"):
        why = "Python's own (two leading underscores)"
    elif name in taken:
        why = "the module already uses it"
    else:  # soft keywords (match, case, type, _) stay usable as names
        return name
    raise CodegenError(f"{name!r} is not usable as a Python name: {why}", pointer)


def check_schema(raw: Any) -> None:
    """Refuse a schema whose parts the generator reads have another shape than it reads, or
    that points outside its own ``$defs``: the generator reads one file, never another file
    or a URL."""
    if not isinstance(raw, dict) or not isinstance(raw.get("$defs"), dict):
        raise CodegenError("not an AG-UI schema: no $defs object", "")
    if not isinstance(raw.get("$id", ""), str):
        raise CodegenError("$id is not a string", "/$id")
    defs: dict[str, Any] = raw["$defs"]
    for pointer, node in _subschemas(raw):
        _check_node(pointer, node, defs)
    for name, node in defs.items():
        if not isinstance(node, dict):
            raise CodegenError("a definition must be an object", pointer_to("$defs", name))
        for index, mixin in enumerate(node.get("allOf", [])):
            if "$ref" not in mixin:
                at = pointer_to("$defs", name, "allOf", index)
                raise CodegenError("an allOf item must be a $ref to the definition it mixes in", at)
    _check_mixins_acyclic(defs)


def _check_node(pointer: str, node: dict[str, Any], defs: dict[str, Any]) -> None:
    ref = node.get("$ref")
    if "$ref" in node and not (
        isinstance(ref, str) and ref.startswith(DEFS_PREFIX) and ref[len(DEFS_PREFIX) :] in defs
    ):
        raise CodegenError(
            f"$ref {ref!r} is refused: a reference must name one of this file's definitions"
            " (#/$defs/Name); other files and URLs are never read",
            pointer + "/$ref",
        )
    if "$id" in node and pointer:
        raise CodegenError("a nested $id is refused: it moves references off this file", pointer)
    enum = node.get("enum")
    if "enum" in node and not (
        isinstance(enum, list) and enum and all(isinstance(v, str) for v in enum)
    ):
        raise CodegenError("enum must be a non-empty list of strings", pointer + "/enum")
    for key in ("properties", "items"):
        if key in node and not isinstance(node[key], dict):
            raise CodegenError(f"{key} must be an object", f"{pointer}/{key}")
    for name, prop in node.get("properties", {}).items():
        if not isinstance(prop, dict):
            at = f"{pointer}/properties{pointer_to(name)}"
            raise CodegenError("a property's schema must be an object", at)
    required = node.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise CodegenError("required must be a list of strings", pointer + "/required")
    for key in ("allOf", "anyOf", "oneOf"):
        items = node.get(key, [])
        if not isinstance(items, list) or not all(isinstance(item, dict) for item in items):
            raise CodegenError(f"{key} must be a list of objects", f"{pointer}/{key}")


def kind_under(key: str, holder: Kind) -> Kind:
    """What the value at ``key`` of an object of kind ``holder`` is."""
    if holder == "schema":
        return "data" if key in DATA_KEYWORDS else "map" if key in SCHEMA_MAPS else "schema"
    return "schema" if holder == "map" else "data"


def _subschemas(root: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object in a schema position, with its pointer; without recursion, so no nesting
    overflows the stack, and refusing nesting deeper than :data:`MAX_DEPTH` and strings that
    are no Unicode text (a name among them too)."""
    stack: list[tuple[str, Any, int, Kind]] = [("", root, 0, "schema")]
    while stack:
        pointer, node, depth, kind = stack.pop()
        if depth > MAX_DEPTH:
            raise CodegenError(f"nested deeper than {MAX_DEPTH} levels", pointer)
        if isinstance(node, str) and LONE_SURROGATE.search(node):
            raise CodegenError("a lone UTF-16 surrogate is no Unicode text", pointer)
        if isinstance(node, list):
            stack.extend((f"{pointer}/{i}", item, depth + 1, kind) for i, item in enumerate(node))
        elif isinstance(node, dict):
            if kind == "schema":
                yield pointer, node
            for key, value in node.items():
                at = pointer + pointer_to(key)
                if LONE_SURROGATE.search(key):
                    raise CodegenError("a lone UTF-16 surrogate is no Unicode text", at)
                stack.append((at, value, depth + 1, kind_under(key, kind)))


def _check_mixins_acyclic(defs: dict[str, Any]) -> None:
    """The generator flattens ``allOf`` mixins into the Structs that use them: a cycle has no end."""

    def mixins_of(name: str) -> Iterator[str]:
        return iter([mixin["$ref"][len(DEFS_PREFIX) :] for mixin in defs[name].get("allOf", [])])

    finished: set[str] = set()
    for start in defs:
        if start in finished:
            continue
        path = [start]  # depth first, without recursion: each step's mixins still to go in todo
        todo = [mixins_of(start)]
        while todo:
            mixin = next(todo[-1], None)
            if mixin is None:
                finished.add(path.pop())
                todo.pop()
            elif mixin in path:
                cycle = " → ".join([*path[path.index(mixin) :], mixin])
                at = pointer_to("$defs", path[-1], "allOf")
                raise CodegenError(f"the allOf mixins form a cycle: {cycle}", at)
            elif mixin not in finished:
                path.append(mixin)
                todo.append(mixins_of(mixin))
