"""The project's schema files are transcriptions of the frozen upstream AG-UI schema.

Every structural keyword must match upstream exactly. Prose keywords (``description``,
``title``, ``examples``) are rewritten in the project's own words, so they must sit at
the same locations as upstream but never repeat the upstream text.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import TypeAlias

import pytest

Json: TypeAlias = dict[str, "Json"] | list["Json"] | str | int | float | bool | None
Schema = dict[str, Json]

VERSIONS = ("1.0", "1.1")
OURS_ROOT = Path(__file__).parents[2] / "schema"
UPSTREAM_ROOT = Path(__file__).resolve().parents[3] / "shared" / "agui" / "schema"

PROSE_KEYWORDS = ("description", "title", "examples")
# Keys of these maps are names (a property may be called "description"), values are schemas.
NAMED_SUBSCHEMAS = frozenset(
    {"$defs", "definitions", "properties", "patternProperties", "dependentSchemas"}
)
# Values of these keywords are instance data, not schemas, so prose rules do not apply inside.
DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples", "required", "dependentRequired"})


def load(path: Path) -> Schema:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(document, dict), path
    return document


def escape(token: str) -> str:
    """Escape one JSON Pointer reference token (RFC 6901)."""
    return token.replace("~", "~0").replace("/", "~1")


def subschemas(schema: Schema, pointer: str) -> Iterator[tuple[str, Schema]]:
    """Yield the pointer and value of each direct subschema of ``schema``."""
    for key, value in schema.items():
        if key in PROSE_KEYWORDS or key in DATA_KEYWORDS:
            continue
        here = f"{pointer}/{escape(key)}"
        if key in NAMED_SUBSCHEMAS and isinstance(value, dict):
            for name, sub in value.items():
                if isinstance(sub, dict):
                    yield f"{here}/{escape(name)}", sub
        elif isinstance(value, dict):
            yield here, value
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, dict):
                    yield f"{here}/{index}", item


def walk(schema: Schema, pointer: str = "") -> Iterator[tuple[str, Schema]]:
    """Yield every schema object in the document, the root included."""
    yield pointer, schema
    for sub_pointer, sub in subschemas(schema, pointer):
        yield from walk(sub, sub_pointer)


def prose(schema: Schema) -> dict[str, Json]:
    """Map the JSON Pointer of every prose keyword to its value."""
    return {
        f"{pointer}/{keyword}": node[keyword]
        for pointer, node in walk(schema)
        for keyword in PROSE_KEYWORDS
        if keyword in node
    }


def strip_prose(schema: Schema) -> Schema:
    stripped = copy.deepcopy(schema)
    # Collect first: deleting keys while the walk iterates them would break it.
    nodes = [node for _, node in walk(stripped)]
    for node in nodes:
        for keyword in PROSE_KEYWORDS:
            node.pop(keyword, None)
    return stripped


def name_orders(schema: Schema) -> dict[str, list[str]]:
    """Map each ``$defs``/``properties``-style map to its key order."""
    return {
        f"{pointer}/{escape(key)}": list(value)
        for pointer, node in walk(schema)
        for key, value in node.items()
        if key in NAMED_SUBSCHEMAS and isinstance(value, dict)
    }


def differences(ours: Json, upstream: Json, pointer: str = "") -> list[str]:
    """List the pointers at which two JSON values differ (object key order ignored)."""
    if isinstance(ours, dict) and isinstance(upstream, dict):
        if ours.keys() != upstream.keys():
            return [f"{pointer or '/'}: keys {sorted(ours)} != {sorted(upstream)}"]
        return [
            diff
            for key in ours
            for diff in differences(ours[key], upstream[key], f"{pointer}/{escape(key)}")
        ]
    if isinstance(ours, list) and isinstance(upstream, list) and len(ours) == len(upstream):
        return [
            diff
            for index, (mine, theirs) in enumerate(zip(ours, upstream, strict=True))
            for diff in differences(mine, theirs, f"{pointer}/{index}")
        ]
    # Compare types too: JSON distinguishes true from 1, Python equality does not.
    if type(ours) is not type(upstream) or ours != upstream:
        return [f"{pointer or '/'}: {ours!r} != {upstream!r}"]
    return []


def structural_differences(ours: Schema, upstream: Schema) -> list[str]:
    found = differences(strip_prose(ours), strip_prose(upstream))
    ours_orders, upstream_orders = name_orders(ours), name_orders(upstream)
    found += [
        f"{pointer}: order {order} != {upstream_orders.get(pointer)}"
        for pointer, order in ours_orders.items()
        if order != upstream_orders.get(pointer)
    ]
    return found


def resolve(document: Json, pointer: str) -> Json:
    for token in pointer.split("/")[1:]:
        assert isinstance(document, dict), pointer
        document = document[token.replace("~1", "/").replace("~0", "~")]
    return document


@pytest.fixture(params=VERSIONS)
def pair(request: pytest.FixtureRequest) -> tuple[Schema, Schema]:
    """Our transcription and the upstream file, for one protocol version."""
    version: str = request.param
    upstream = UPSTREAM_ROOT / version / "schema.json"
    if not upstream.is_file():
        pytest.skip(f"../shared/agui/schema is absent (no {upstream})")
    return load(OURS_ROOT / version / "schema.json"), load(upstream)


def test_structure_matches_upstream(pair: tuple[Schema, Schema]) -> None:
    ours, upstream = pair
    assert structural_differences(ours, upstream) == []


def test_prose_sits_where_upstream_has_it(pair: tuple[Schema, Schema]) -> None:
    ours, upstream = pair
    assert sorted(prose(ours)) == sorted(prose(upstream))
    blank = [
        pointer
        for pointer, text in prose(ours).items()
        if not (text.strip() if isinstance(text, str) else text)
    ]
    assert blank == []


def test_prose_is_rewritten(pair: tuple[Schema, Schema]) -> None:
    ours, upstream = pair
    ours_prose, upstream_prose = prose(ours), prose(upstream)
    copied = [
        pointer for pointer, text in upstream_prose.items() if ours_prose.get(pointer) == text
    ]
    assert copied == []


def test_property_named_like_a_prose_keyword_is_structure() -> None:
    ours = load(OURS_ROOT / "1.0" / "schema.json")
    properties = resolve(strip_prose(ours), "/$defs/Context/properties")
    assert isinstance(properties, dict)
    assert "description" in properties
    assert "/$defs/Context/properties/description" not in prose(ours)
    assert "/$defs/Context/properties/description/description" in prose(ours)


def test_structural_comparison_detects_changes() -> None:
    original = load(OURS_ROOT / "1.0" / "schema.json")

    reworded = copy.deepcopy(original)
    event = resolve(reworded, "/$defs/TextMessageStartEvent")
    assert isinstance(event, dict)
    event["description"] = "Reworded prose is not a structural change."
    assert structural_differences(reworded, original) == []

    loosened = copy.deepcopy(original)
    required = resolve(loosened, "/$defs/TextMessageStartEvent/required")
    assert isinstance(required, list)
    required.remove("messageId")
    assert structural_differences(loosened, original) == [
        "/$defs/TextMessageStartEvent/required: ['type'] != ['type', 'messageId']"
    ]

    reordered = copy.deepcopy(original)
    properties = resolve(reordered, "/$defs/TextMessageStartEvent/properties")
    assert isinstance(properties, dict)
    properties["type"] = properties.pop("type")
    assert structural_differences(reordered, original) == [
        "/$defs/TextMessageStartEvent/properties: order "
        "['messageId', 'role', 'name', 'type'] != ['type', 'messageId', 'role', 'name']"
    ]
