"""Differential test: the strict generated decoder against jsonschema on the upstream schema.

Documents are built by walking the upstream JSON Schema itself (``$ref``, ``allOf``,
``oneOf``, consts, enums, bounds, the JSON Pointer pattern, ``minItems``, open maps,
non-null any-values) with a seeded ``random.Random``, then mutated one change at a
time. For every document, ``strict_accepts`` must agree with
``Draft202012Validator(upstream).is_valid``; the only tolerated disagreements are the
ones listed in ``KNOWN_DISAGREEMENTS``, each explained by a predicate, and each of them
must actually occur so that the list cannot go stale.
"""

from __future__ import annotations

import importlib
import json
import random
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias

import msgspec
import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

Json: TypeAlias = dict[str, "Json"] | list["Json"] | str | int | float | bool | None
Schema: TypeAlias = dict[str, Any]
Loc: TypeAlias = tuple[str | int, ...]

VERSIONS = ("1.0", "1.1")
MODULES = {"1.0": "v1_0", "1.1": "v1_1"}
UPSTREAM_ROOT = Path(__file__).resolve().parents[3] / "shared" / "agui" / "schema"

SEED = 0xA6_01
VALID_PER_EVENT_TYPE = 70
MUTATIONS_PER_VALID = 4
MIN_DOCUMENTS = 10_000
CROSS_CHECK_EVERY = 40

DEFS = "#/$defs/"
POINTER_PATTERN = "^(/([^/~]|~[01])*)*$"
MAX_SAFE = 2**53 - 1
# Every keyword the sampler understands; anything else in the schema fails loudly, so a
# new constraint upstream cannot be silently left out of the generated documents.
UNDERSTOOD = frozenset(
    {
        "$schema", "$id", "$anchor", "$ref", "$defs", "title", "description", "default",
        "examples", "type", "properties", "required", "allOf", "oneOf", "const", "enum",
        "not", "items", "minItems", "minimum", "maximum", "pattern", "additionalProperties",
        "unevaluatedProperties", "contentEncoding",
    }
)  # fmt: skip
TEXTS = (
    "",
    "a",
    "msg-1",
    "héllo wörld",
    "中文テキスト",
    "emoji 😀🚀",
    'say "hi"',
    "back\\slash",
    "line\nbreak\ttab",
    "nul\x00ctl\x1f",
    "sep\u2028\u2029",
    "~/~0~1",
    "x" * 120,
)
POINTER_TOKENS = ("a", "0", "-", "", "~", "/", "~1", "ü", "key with space", "😀")
BAD_POINTERS = ("a", "a/b", "/~", "/~2", "/a~", "~1", " /a", "#/a")
STRAY_NAMES = ("futureField", "x-extension", "_private", "Type", "message_id", "")


def load_upstream(version: str) -> Schema:
    path = UPSTREAM_ROOT / version / "schema.json"
    if not path.is_file():
        pytest.skip(f"upstream AG-UI schema is absent: no {path} (needs ../shared/agui/schema)")
    schema: Schema = json.loads(path.read_text(encoding="utf-8"))
    return schema


def bindings_for(version: str) -> ModuleType:
    return importlib.import_module(f"agui_msgspec.{MODULES[version]}")


def strict_error(bindings: ModuleType, doc_bytes: bytes) -> str | None:
    """Why the strict decoder rejects ``doc_bytes``, or None when it accepts them."""
    try:
        event = bindings.event_decoder.decode(doc_bytes)
    except msgspec.DecodeError as error:  # ValidationError is a subclass
        return str(error)
    # Open-union fields are carried as dicts; each item must still be a known operation.
    for attr, union in bindings.OPEN_UNION_FIELDS.get(type(event), {}).items():
        for index, item in enumerate(getattr(event, attr)):
            try:
                msgspec.convert(item, union)
            except msgspec.ValidationError as error:
                return f"{attr}[{index}]: {error}"
    return None


def strict_accepts(bindings: ModuleType, doc_bytes: bytes) -> bool:
    """The strict decoder plus the per-item check of open-union fields."""
    return strict_error(bindings, doc_bytes) is None


# --- the schema-driven sampler -----------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """An object schema with its ``allOf`` mixins merged."""

    properties: dict[str, Schema]
    required: frozenset[str]
    closed: bool


@dataclass(frozen=True)
class ObjectSite:
    loc: Loc
    shape: Shape
    tag: str | None  # the property that selected this object out of a ``oneOf``
    tag_values: frozenset[str]


@dataclass(frozen=True)
class ArraySite:
    loc: Loc
    items: Schema
    min_items: int


@dataclass
class Sites:
    objects: list[ObjectSite] = field(default_factory=list)
    arrays: list[ArraySite] = field(default_factory=list)


def _subschemas(node: Any) -> Iterator[Schema]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _subschemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _subschemas(value)


class Sampler:
    """Builds documents valid against a JSON Schema by walking the schema itself."""

    def __init__(self, schema: Schema, rng: random.Random) -> None:
        self.schema = schema
        self.rng = rng
        self.sites = Sites()
        self.events = self._event_defs()
        names: set[str] = set()
        consts: set[str] = set()
        for node in _subschemas(schema):
            names.update(node.get("properties", {}))
            if isinstance(node.get("const"), str):
                consts.add(node["const"])
        self.property_names = sorted(names)
        self.string_consts = sorted(consts)

    def resolve(self, node: Schema) -> Schema:
        while "$ref" in node:
            ref: str = node["$ref"]
            assert ref.startswith(DEFS), f"unsupported $ref {ref}"
            target: Schema = self.schema["$defs"][ref.removeprefix(DEFS)]
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            # A $ref with siblings is a conjunction; merging is exact only without overlap.
            overlap = set(siblings) & set(target) - {"description", "$anchor", "default"}
            assert not overlap, f"$ref {ref} and its siblings both set {overlap}"
            node = {**target, **siblings}
        unknown = set(node) - UNDERSTOOD
        assert not unknown, f"sampler does not understand {sorted(unknown)} in {node}"
        return node

    def shape(self, node: Schema) -> Shape:
        properties: dict[str, Schema] = {}
        required: set[str] = set()
        for part in node.get("allOf", []):
            mixin = self.shape(self.resolve(part))
            properties.update(mixin.properties)
            required |= mixin.required
        # The definition's own entry (a const tag) narrows the mixin's (the EventType enum).
        properties.update(node.get("properties", {}))
        required |= set(node.get("required", []))
        for name in required - set(properties):
            properties[name] = {}
        closed = (
            node.get("unevaluatedProperties") is False or node.get("additionalProperties") is False
        )
        return Shape(properties, frozenset(required), closed)

    def tag_of(self, branches: list[Schema]) -> tuple[str | None, frozenset[str]]:
        """The const property that tells the branches of a ``oneOf`` apart, if any."""
        nodes = [self.resolve(branch) for branch in branches]
        if not all(node.get("type") == "object" for node in nodes):
            return None, frozenset()
        shapes = [self.shape(node) for node in nodes]
        for name in sorted(shapes[0].required):
            consts = [s.properties.get(name, {}).get("const") for s in shapes]
            if all(isinstance(c, str) for c in consts) and len(set(consts)) == len(consts):
                return name, frozenset(str(c) for c in consts)
        return None, frozenset()

    def _event_defs(self) -> dict[str, str]:
        """Wire ``type`` → definition name, for every branch of the root union."""
        root = self.resolve(self.schema)
        found = {}
        for branch in root["oneOf"]:
            name = branch["$ref"].removeprefix(DEFS)
            found[self.shape(self.resolve(branch)).properties["type"]["const"]] = name
        return found

    def event(self, definition: str) -> tuple[Json, Sites]:
        self.sites = Sites()
        tags = frozenset(self.events)
        doc = self.value({"$ref": DEFS + definition}, (), 0, ("type", tags))
        return doc, self.sites

    def value(
        self, node: Schema, loc: Loc, depth: int, tag: tuple[str | None, frozenset[str]]
    ) -> Json:
        node = self.resolve(node)
        if "const" in node:
            const: Json = node["const"]
            return const
        if "enum" in node:
            choice: Json = self.rng.choice(node["enum"])
            return choice
        if "oneOf" in node:
            branches: list[Schema] = node["oneOf"]
            return self.value(self.rng.choice(branches), loc, depth, self.tag_of(branches))
        if "not" in node:
            assert node["not"] == {"type": "null"}, node
            assert "type" not in node, node
            return self.any_value(depth, nullable=False)
        kind = node.get("type")
        if kind == "object":
            return self.object(node, loc, depth, tag)
        if kind == "array":
            min_items = int(node.get("minItems", 0))
            self.sites.arrays.append(ArraySite(loc, node["items"], min_items))
            count = min_items + self.rng.choice((0, 0, 1, 1, 2, 3) if depth < 4 else (0,))
            return [
                self.value(node["items"], (*loc, index), depth + 1, (None, frozenset()))
                for index in range(count)
            ]
        if kind == "string":
            if "pattern" in node:
                assert node["pattern"] == POINTER_PATTERN, f"no generator for {node['pattern']}"
                return self.pointer()
            return self.text()
        if kind == "integer":
            return self.integer(int(node.get("minimum", -MAX_SAFE)), int(node["maximum"]))
        if kind == "boolean":
            return self.rng.random() < 0.5
        assert kind is None, f"sampler has no generator for {node}"
        return self.any_value(depth, nullable=True)

    def object(
        self, node: Schema, loc: Loc, depth: int, tag: tuple[str | None, frozenset[str]]
    ) -> Json:
        shape = self.shape(node)
        self.sites.objects.append(ObjectSite(loc, shape, tag[0], tag[1]))
        out: dict[str, Json] = {}
        if not shape.properties and not shape.closed:  # open by key: metadata, content
            for _ in range(self.rng.choice((0, 1, 2, 3) if depth < 4 else (0,))):
                out[self.text()[:12]] = self.any_value(depth + 1, nullable=True)
            return out
        keep_optional = 0.6 if depth < 3 else 0.2
        for name, sub in shape.properties.items():
            if name in shape.required or self.rng.random() < keep_optional:
                out[name] = self.value(sub, (*loc, name), depth + 1, (None, frozenset()))
        if not shape.closed and self.rng.random() < 0.3:
            # RFC 6902: members an operation does not define are ignored, hence valid.
            out["x-vendor-note"] = self.any_value(depth + 1, nullable=True)
        keys = list(out)
        self.rng.shuffle(keys)  # the tag need not come first
        return {key: out[key] for key in keys}

    def text(self) -> str:
        return self.rng.choice(TEXTS) + self.rng.choice(("", str(self.rng.randrange(10**6))))

    def pointer(self) -> str:
        tokens = self.rng.choices(POINTER_TOKENS, k=self.rng.choice((0, 1, 1, 2, 3)))
        pointer = "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)
        assert re.search(POINTER_PATTERN, pointer), pointer
        return pointer

    def integer(self, low: int, high: int) -> int:
        picks = (low, high, max(low, min(high, 0)), 1_700_000_000_000, self.rng.randint(low, high))
        return max(low, min(high, self.rng.choice(picks)))

    def any_value(self, depth: int, *, nullable: bool) -> Json:
        kinds = ["bool", "int", "float", "str"] + (["list", "dict"] if depth < 4 else [])
        kind = self.rng.choice([*kinds, "null"] if nullable else kinds)
        if kind == "bool":
            return self.rng.random() < 0.5
        if kind == "int":
            return self.rng.choice((0, -7, 42, 2**53, 2**63, -(2**63) - 1, 2**70))
        if kind == "float":
            return self.rng.choice((0.5, -2.25, 1e300, 1.5e-7, -0.0, 3.0, self.rng.random()))
        if kind == "str":
            return self.text()
        if kind == "list":
            size = self.rng.randrange(3)
            return [self.any_value(depth + 1, nullable=True) for _ in range(size)]
        if kind == "dict":
            size = self.rng.randrange(3)
            return {self.text()[:8]: self.any_value(depth + 1, nullable=True) for _ in range(size)}
        return None


# --- mutations ------------------------------------------------------------------------------


def locate(doc: Any, loc: Loc) -> Any:
    for step in loc:
        doc = doc[step]
    return doc


def json_types(sampler: Sampler, node: Schema) -> frozenset[str] | None:
    """The JSON types a property schema admits, or None when it admits (nearly) anything."""
    node = sampler.resolve(node)
    if "const" in node:
        return frozenset({"string"}) if isinstance(node["const"], str) else None
    if "enum" in node:
        return frozenset({"string"})
    if "oneOf" in node:
        found: set[str] = set()
        for branch in node["oneOf"]:
            types = json_types(sampler, branch)
            if types is None:
                return None
            found |= types
        return frozenset(found)
    kind = node.get("type")
    return frozenset({kind}) if isinstance(kind, str) else None


WRONG_VALUES: dict[str, Json] = {
    "string": "not-the-right-type",
    "integer": 12,
    "number": 0.25,  # a non-integral number, so it is wrong for "integer" too
    "boolean": True,
    "array": ["x"],
    "object": {"k": "v"},
}


Mutator: TypeAlias = Callable[[Json, Sites, Sampler, random.Random], Json | None]


def _copy(doc: Json) -> Json:
    copied: Json = json.loads(json.dumps(doc))
    return copied


def _slots(sites: Sites) -> Iterator[tuple[ObjectSite, str, Schema]]:
    """Every declared property of every generated object, present or not, except tags."""
    for site in sites.objects:
        for name, sub in site.shape.properties.items():
            if name != site.tag:
                yield site, name, sub


def _set(doc: Json, site: ObjectSite, name: str, value: Json) -> Json:
    out = _copy(doc)
    locate(out, site.loc)[name] = value
    return out


def remove_field(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    present = [(s, k) for s in sites.objects for k in locate(doc, s.loc)]
    # Dropping a tag is covered, but rarely: otherwise it would crowd out the rest.
    required = [(s, k) for s, k in present if k in s.shape.required and k != s.tag]
    tags = [(s, k) for s, k in present if k == s.tag]
    roll = rng.random()
    pool = tags if roll < 0.1 else required if roll < 0.75 and required else present
    if not pool:
        return None
    site, name = rng.choice(pool)
    out = _copy(doc)
    del locate(out, site.loc)[name]
    return out


def wrong_type(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    if rng.random() < 0.02:
        return rng.choice(([], "event", 3, True))  # the root itself is not an object
    targets: list[tuple[Loc, frozenset[str]]] = []
    for site, name, sub in _slots(sites):
        types = json_types(sampler, sub)
        if types is not None and name in locate(doc, site.loc):
            targets.append(((*site.loc, name), types))
    for array in sites.arrays:
        types = json_types(sampler, array.items)
        if types is not None:
            size = len(locate(doc, array.loc))
            targets += [((*array.loc, index), types) for index in range(size)]
    if not targets:
        return None
    loc, types = rng.choice(targets)
    value = rng.choice([v for t, v in WRONG_VALUES.items() if t not in types])
    out = _copy(doc)
    locate(out, loc[:-1])[loc[-1]] = value
    return out


def unknown_property(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    site = rng.choice(sites.objects)
    taken = set(locate(doc, site.loc)) | set(site.shape.properties)
    # Names declared elsewhere in the schema are the likeliest real-world mistakes.
    names = [n for n in (*sampler.property_names, *STRAY_NAMES) if n not in taken]
    return _set(doc, site, rng.choice(names), sampler.any_value(2, nullable=False))


def unknown_tag(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    tagged = [s for s in sites.objects if s.tag is not None]
    if not tagged:
        return None
    site = rng.choice(tagged)
    assert site.tag is not None
    current = str(locate(doc, site.loc)[site.tag])
    # Consts valid elsewhere ("cancelled", "file", ...) are the likeliest confusions.
    candidates = [current.lower(), current.upper(), current + "_V2", "", "unknown"]
    candidates += sampler.string_consts
    return _set(
        doc, site, site.tag, rng.choice([c for c in candidates if c not in site.tag_values])
    )


def null_on_optional(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    slots = [(s, n) for s, n, _ in _slots(sites) if n not in s.shape.required]
    if not slots:
        return None
    site, name = rng.choice(slots)
    return _set(doc, site, name, None)


def null_on_required(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    slots = [(s, n) for s, n, _ in _slots(sites) if n in s.shape.required]
    if not slots:
        return None
    site, name = rng.choice(slots)
    return _set(doc, site, name, None)


def _integer_slots(sites: Sites, sampler: Sampler) -> list[tuple[ObjectSite, str, Schema]]:
    return [
        (site, name, node)
        for site, name, sub in _slots(sites)
        if (node := sampler.resolve(sub)).get("type") == "integer"
    ]


def out_of_range_integer(
    doc: Json, sites: Sites, sampler: Sampler, rng: random.Random
) -> Json | None:
    slots = _integer_slots(sites, sampler)
    if not slots:
        return None
    site, name, node = rng.choice(slots)
    low, high = int(node.get("minimum", -MAX_SAFE)), int(node["maximum"])
    value = rng.choice((high + 1, low - 1, high + 2**20, 2**64, -(2**63) - 1, 10**30))
    return _set(doc, site, name, value)


def integral_float(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    slots = _integer_slots(sites, sampler)
    if not slots:
        return None
    site, name, node = rng.choice(slots)
    low, high = int(node.get("minimum", -MAX_SAFE)), int(node["maximum"])
    value = float(rng.choice((low, high, 0, max(low, 1_700_000_000_000))))
    return _set(doc, site, name, value)


def out_of_enum(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    slots = []
    for site, name, sub in _slots(sites):
        node = sampler.resolve(sub)
        allowed = node.get("enum", [node["const"]] if "const" in node else None)
        if allowed is not None:
            slots.append((site, name, allowed))
    if not slots:
        return None
    site, name, allowed = rng.choice(slots)
    sample = str(rng.choice(allowed))
    candidates = [sample.upper(), sample.title(), sample + " ", "robot", ""]
    return _set(doc, site, name, rng.choice([c for c in candidates if c not in allowed]))


def pattern_mismatch(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    slots = [(site, name) for site, name, sub in _slots(sites) if "pattern" in sampler.resolve(sub)]
    if not slots:
        return None
    site, name = rng.choice(slots)
    return _set(doc, site, name, rng.choice(BAD_POINTERS))


def below_min_items(doc: Json, sites: Sites, sampler: Sampler, rng: random.Random) -> Json | None:
    arrays = [a for a in sites.arrays if a.min_items > 0]
    if not arrays:
        return None
    array = rng.choice(arrays)
    out = _copy(doc)
    del locate(out, array.loc)[array.min_items - 1 :]
    return out


MUTATORS: dict[str, Mutator] = {
    "remove-field": remove_field,
    "wrong-type": wrong_type,
    "unknown-property": unknown_property,
    "unknown-tag": unknown_tag,
    "null-on-optional": null_on_optional,
    "null-on-required": null_on_required,
    "out-of-range-integer": out_of_range_integer,
    "integral-float-for-integer": integral_float,
    "out-of-enum": out_of_enum,
    "pattern-mismatch": pattern_mismatch,
    "below-min-items": below_min_items,
}


# --- known disagreements ------------------------------------------------------------------


def _integral_floats_as_ints(doc: Json) -> Json:
    if isinstance(doc, dict):
        return {k: _integral_floats_as_ints(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_integral_floats_as_ints(v) for v in doc]
    if isinstance(doc, float) and doc.is_integer():
        return int(doc)
    return doc


@dataclass(frozen=True)
class KnownDisagreement:
    name: str
    reason: str
    schema_accepts: bool  # which side accepts the document
    explains: Callable[[ModuleType, Json, str | None], bool]


KNOWN_DISAGREEMENTS = (
    KnownDisagreement(
        name="integer written with a zero fraction (e.g. 5.0)",
        reason=(
            "JSON Schema 2020-12 (Validation §6.1.1) defines `integer` as any number with a zero "
            "fractional part, so jsonschema accepts 5.0 for `timestamp` or a token count; msgspec "
            "types by the JSON token and rejects a float token for an `int` field in strict mode. "
            "It cannot be shared: msgspec accepts 5.0 only with strict=False, which also coerces "
            'strings such as "5" and would break agreement everywhere else.'
        ),
        schema_accepts=True,
        explains=lambda bindings, doc, error: (
            error is not None
            and "Expected `int`, got `float`" in error
            and strict_accepts(bindings, json.dumps(_integral_floats_as_ints(doc)).encode())
        ),
    ),
)


# --- the corpus -------------------------------------------------------------------------------


class Oracle:
    """jsonschema's verdict on the upstream file, with the root ``oneOf`` dispatched by tag.

    The root is ``{"$ref": "#/$defs/Event"}`` and Event is a ``oneOf`` whose branches are
    objects that require ``type`` with pairwise distinct consts. A branch whose const
    differs from the document's ``type`` therefore fails, so "exactly one branch is valid"
    equals "the branch named by ``type`` is valid". Checked here from the schema, and
    cross-checked against the full root validation on a sample, because validating every
    document against all 31 branches costs about ten times as much.
    """

    def __init__(self, schema: Schema) -> None:
        Draft202012Validator.check_schema(schema)
        self.full = Draft202012Validator(schema)
        assert set(schema) <= {"$schema", "$id", "title", "description", "$ref", "$defs"}
        assert schema["$ref"] == DEFS + "Event"
        event = schema["$defs"]["Event"]
        assert set(event) <= {"$anchor", "description", "oneOf"}
        self.branches: dict[str, Any] = {}
        for ref in event["oneOf"]:
            node = schema["$defs"][ref["$ref"].removeprefix(DEFS)]
            const = node["properties"]["type"]["const"]
            assert node["type"] == "object", ref
            assert "type" in node["required"], ref
            assert isinstance(const, str), ref
            assert const not in self.branches, ref
            self.branches[const] = self.full.evolve(schema=ref)

    def is_valid(self, doc: Json) -> bool:
        if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
            return False
        branch = self.branches.get(str(doc["type"]))
        return branch is not None and bool(branch.is_valid(doc))

    def full_is_valid(self, doc: Json) -> bool:
        return bool(self.full.is_valid(doc))


@dataclass(frozen=True)
class Case:
    kind: str  # "valid" or the mutation kind
    doc: Json
    raw: bytes
    schema_ok: bool
    strict_error: str | None


@dataclass
class Corpus:
    version: str
    schema: Schema
    oracle: Oracle
    bindings: ModuleType
    event_types: tuple[str, ...]
    cases: list[Case]

    def of_kind(self, valid: bool) -> list[Case]:
        return [c for c in self.cases if (c.kind == "valid") == valid]


@cache
def corpus(version: str) -> Corpus:
    schema = load_upstream(version)
    oracle = Oracle(schema)
    bindings = bindings_for(version)
    rng = random.Random(f"{SEED}-{version}")
    sampler = Sampler(schema, rng)

    cases: list[Case] = []

    def judge(kind: str, doc: Json) -> None:
        raw = json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode()
        schema_ok = oracle.is_valid(json.loads(raw))
        cases.append(Case(kind, doc, raw, schema_ok, strict_error(bindings, raw)))

    used: Counter[str] = Counter()
    for _ in range(VALID_PER_EVENT_TYPE):
        for definition in sampler.events.values():
            doc, sites = sampler.event(definition)
            judge("valid", doc)
            for _ in range(MUTATIONS_PER_VALID):
                # Least-used kind first, so the rarely applicable ones (JSON Pointer
                # paths, minItems) are exercised whenever a document offers them.
                for kind in sorted(MUTATORS, key=lambda k: (used[k], rng.random())):
                    mutated = MUTATORS[kind](doc, sites, sampler, rng)
                    if mutated is not None:
                        used[kind] += 1
                        judge(kind, mutated)
                        break
    return Corpus(version, schema, oracle, bindings, tuple(sampler.events), cases)


@pytest.fixture(params=VERSIONS)
def version_corpus(request: pytest.FixtureRequest) -> Corpus:
    return corpus(request.param)


def describe(corpus: Corpus, case: Case) -> str:
    doc = json.loads(case.raw)
    routed = None if _unrouted(doc, corpus) else corpus.oracle.branches[doc["type"]]
    validator = routed or corpus.oracle.full
    errors = [
        f"/{'/'.join(map(str, e.absolute_path))}: {e.message[:160]}"
        for e in validator.iter_errors(doc)
    ][:3]
    return (
        f"[{case.kind}] jsonschema {'accepts' if case.schema_ok else 'rejects'} {errors}; "
        f"strict decoder {'accepts' if case.strict_error is None else 'rejects: ' + case.strict_error}"
        f"\n  {case.raw.decode()}"
    )


def _unrouted(doc: Json, corpus: Corpus) -> bool:
    if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
        return True
    return doc["type"] not in corpus.oracle.branches


# --- the tests ----------------------------------------------------------------------------------


def test_corpus_is_large_and_covers_every_event_and_mutation(version_corpus: Corpus) -> None:
    cases = version_corpus.cases
    valid, mutated = version_corpus.of_kind(True), version_corpus.of_kind(False)
    assert len(cases) >= MIN_DOCUMENTS
    assert len(valid) == VALID_PER_EVENT_TYPE * 31
    event_enum = set(version_corpus.schema["$defs"]["EventType"]["enum"])
    assert set(version_corpus.event_types) == event_enum
    assert {c.doc["type"] for c in valid if isinstance(c.doc, dict)} == event_enum
    by_kind = Counter(c.kind for c in mutated)
    assert set(by_kind) == set(MUTATORS), by_kind
    rejected = Counter(c.kind for c in mutated if not c.schema_ok)
    # Every kind of mutation except the integral float must produce invalid documents.
    assert set(rejected) == set(MUTATORS) - {"integral-float-for-integer"}, rejected
    assert sum(rejected.values()) > len(mutated) // 2


def test_tag_dispatch_equals_full_root_validation(version_corpus: Corpus) -> None:
    # Every document the dispatch cannot route, plus a deterministic sample of the rest.
    unrouted = [
        c for c in version_corpus.cases if not c.schema_ok and _unrouted(c.doc, version_corpus)
    ]
    sample = unrouted[:: max(1, len(unrouted) // 40)] + version_corpus.cases[::CROSS_CHECK_EVERY]
    assert len(unrouted) > 0
    wrong = [
        describe(version_corpus, c)
        for c in sample
        if version_corpus.oracle.full_is_valid(json.loads(c.raw)) != c.schema_ok
    ]
    assert wrong == [], "\n".join(wrong[:5])


def test_generated_valid_documents_are_valid(version_corpus: Corpus) -> None:
    # A sampler bug would otherwise show up as a confusing disagreement.
    invalid = [describe(version_corpus, c) for c in version_corpus.of_kind(True) if not c.schema_ok]
    assert invalid == [], "\n".join(invalid[:5])


def test_strict_decoder_agrees_with_jsonschema(version_corpus: Corpus) -> None:
    unexplained: list[str] = []
    observed: Counter[str] = Counter()
    for case in version_corpus.cases:
        strict_ok = case.strict_error is None
        if strict_ok == case.schema_ok:
            continue
        known = next(
            (
                k
                for k in KNOWN_DISAGREEMENTS
                if k.schema_accepts == case.schema_ok
                and k.explains(version_corpus.bindings, case.doc, case.strict_error)
            ),
            None,
        )
        if known is None:
            unexplained.append(describe(version_corpus, case))
        else:
            observed[known.name] += 1
    assert unexplained == [], f"{len(unexplained)} unexplained disagreements:\n" + "\n".join(
        unexplained[:20]
    )
    # Each listed disagreement must really occur, or the list is stale.
    assert set(observed) == {k.name for k in KNOWN_DISAGREEMENTS}, observed


def test_known_disagreement_is_only_the_float_token() -> None:
    bindings = bindings_for("1.1")
    schema = load_upstream("1.1")
    validator = Draft202012Validator(schema)
    as_float = {"type": "RUN_STARTED", "threadId": "t", "runId": "r", "timestamp": 5.0}
    as_int = {**as_float, "timestamp": 5}
    assert validator.is_valid(as_float)
    assert not strict_accepts(bindings, json.dumps(as_float).encode())
    assert strict_accepts(bindings, json.dumps(as_int).encode())
    # A real fraction is rejected by both, so the disagreement is exactly the zero fraction.
    fraction = {**as_float, "timestamp": 5.5}
    assert not validator.is_valid(fraction)
    assert not strict_accepts(bindings, json.dumps(fraction).encode())


def _absent_or_null_leaks(value: Any, given: Json, emitted: Json, where: str) -> list[str]:
    """Places where the encoding invents a key or a null the input did not have."""
    if isinstance(value, msgspec.Struct):
        assert isinstance(given, dict), where
        assert isinstance(emitted, dict), where
        problems = [f"{where}/{key}: not in the input" for key in emitted if key not in given]
        for info in msgspec.structs.fields(value):
            key, here = info.encode_name, f"{where}/{info.encode_name}"
            if key in emitted and key in given:
                problems += _absent_or_null_leaks(
                    getattr(value, info.name), given[key], emitted[key], here
                )
            elif key in given and given[key] != info.default:
                problems.append(f"{here}: dropped although it differs from the default")
        return problems
    if isinstance(value, dict):
        assert isinstance(given, dict), where
        assert isinstance(emitted, dict), where
        if given.keys() != emitted.keys():
            return [f"{where}: keys {sorted(given)} became {sorted(emitted)}"]
        return [
            p
            for k in value
            for p in _absent_or_null_leaks(value[k], given[k], emitted[k], f"{where}/{k}")
        ]
    if isinstance(value, list):
        assert isinstance(given, list), where
        assert isinstance(emitted, list), where
        if len(given) != len(emitted):
            return [f"{where}: length {len(given)} became {len(emitted)}"]
        return [
            p
            for i, v in enumerate(value)
            for p in _absent_or_null_leaks(v, given[i], emitted[i], f"{where}/{i}")
        ]
    if emitted is None and given is not None:
        return [f"{where}: null where the input had {given!r}"]
    if type(emitted) is not type(given) or emitted != given:
        return [f"{where}: {given!r} became {emitted!r}"]
    return []


def test_encode_then_decode_is_identity(version_corpus: Corpus) -> None:
    bindings = version_corpus.bindings
    failures: list[str] = []
    for case in version_corpus.of_kind(True):
        decoded = bindings.event_decoder.decode(case.raw)
        encoded = bindings.encoder.encode(decoded)
        if bindings.event_decoder.decode(encoded) != decoded:
            failures.append(f"not an identity: {case.raw.decode()} -> {encoded.decode()}")
        leaks = _absent_or_null_leaks(decoded, json.loads(case.raw), json.loads(encoded), "")
        if leaks:
            failures.append(f"{leaks} in {case.raw.decode()} -> {encoded.decode()}")
        # What the bindings write must itself be a valid event for the upstream schema.
        if not version_corpus.oracle.is_valid(json.loads(encoded)):
            failures.append(f"encoding is not schema-valid: {encoded.decode()}")
    assert failures == [], "\n".join(failures[:10])
