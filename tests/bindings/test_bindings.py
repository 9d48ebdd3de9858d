"""Structure of the generated bindings: event coverage, version differences, the pre-1.0
draft, that the committed modules are exactly what the codegen makes of the schemas, and
the JSON Pointer check codegen writes in place of the schema's pattern."""

from __future__ import annotations

import ast
import gc
import importlib
import importlib.util
import itertools
import json
import re
import sys
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, TypeAlias

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from measure import MiB, peak_bytes
from payloads import in_run, wire_event

import agui_msgspec
from agui_msgspec import consume

Schema: TypeAlias = dict[str, Any]

VERSIONS = ("1.0", "1.1")
MODULES = {"1.0": "v1_0", "1.1": "v1_1"}
ROOT = Path(__file__).resolve().parents[2]
UPSTREAM_ROOT = Path(__file__).resolve().parents[3] / "shared" / "agui" / "schema"
DEFS = "#/$defs/"
# Every definition of 1.1 that declares encryptedValueType, directly or through BaseMessage.
ENCRYPTED_VALUE_TYPE_1_1 = frozenset(
    {
        "ReasoningEncryptedValueEvent",
        "DeveloperMessage",
        "SystemMessage",
        "AssistantMessage",
        "UserMessage",
        "ToolMessage",
        "ReasoningMessage",
        "ToolCall",
    }
)
_unique = itertools.count()


def upstream_path(version: str) -> Path:
    path = UPSTREAM_ROOT / version / "schema.json"
    if not path.is_file():
        pytest.skip(f"upstream AG-UI schema is absent: no {path} (needs ../shared/agui/schema)")
    return path


def load(path: Path) -> Schema:
    schema: Schema = json.loads(path.read_text(encoding="utf-8"))
    return schema


def bindings_for(version: str) -> ModuleType:
    return importlib.import_module(f"agui_msgspec.{MODULES[version]}")


def generate(schema: Path, out: Path) -> Path:
    written = agui_msgspec.generate(schema, out)
    assert written.parent == out
    assert written.is_file()
    return written


@pytest.fixture
def load_generated() -> Iterator[Callable[[Path], ModuleType]]:
    """Import generated files under unique names, dropping them from sys.modules after."""
    names: list[str] = []

    def load_file(path: Path) -> ModuleType:
        name = f"_agui_generated_{path.stem}_{next(_unique)}"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        # msgspec resolves the postponed annotations through sys.modules[__module__].
        sys.modules[name] = module
        names.append(name)
        spec.loader.exec_module(module)
        return module

    yield load_file
    for name in names:
        sys.modules.pop(name, None)


def structs(module: ModuleType) -> dict[str, type[msgspec.Struct]]:
    return {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, msgspec.Struct)
        and value.__module__ == module.__name__
    }


def flattened(schema: Schema, name: str) -> tuple[set[str], set[str]]:
    """Property names and required names of a definition, ``allOf`` mixins included."""
    node = schema["$defs"][name]
    properties, required = set(node.get("properties", {})), set(node.get("required", []))
    for ref in node.get("allOf", []):
        more, needed = flattened(schema, ref["$ref"].removeprefix(DEFS))
        properties |= more
        required |= needed
    return properties, required


# --- (b) every event type ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_every_event_type_is_exposed(version: str) -> None:
    schema = load(upstream_path(version))
    bindings = bindings_for(version)
    wire_types: list[str] = schema["$defs"]["EventType"]["enum"]
    assert len(wire_types) == 31
    assert list(bindings.EVENT_TYPES) == wire_types
    assert bindings.CLOSED_STRING_SETS["EventType"] == frozenset(wire_types)
    assert bindings.UNIONS["Event"] == ("type", bindings.EVENT_TYPES)
    assert set(typing.get_args(bindings.Event)) == set(bindings.EVENT_TYPES.values())
    for wire, struct in bindings.EVENT_TYPES.items():
        config = struct.__struct_config__
        assert (config.tag_field, config.tag, config.forbid_unknown_fields) == ("type", wire, True)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_decoded_event_is_not_tracked_by_the_garbage_collector(version: str) -> None:
    # gc=False on every Struct: a decoded value holds no cycle; untracked, a decode costs less
    bindings = bindings_for(version)
    operation = {"op": "add", "path": "/a", "value": [1]}
    event = bindings.event_decoder.decode(
        msgspec.json.encode({"type": "STATE_DELTA", "delta": [operation]})
    )
    assert not gc.is_tracked(event)
    assert gc.is_tracked(event.delta)  # what it holds is tracked as any list is
    module = importlib.import_module(f"agui_msgspec.v{version.replace('.', '_')}")
    assert [name for name, struct in structs(module).items() if struct.__struct_config__.gc] == []


# --- (c) encryptedValueType ---------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS)
def test_encrypted_value_type_follows_the_schema(version: str) -> None:
    schema = load(upstream_path(version))
    bindings = bindings_for(version)
    declared = {
        name for name in structs(bindings) if "encryptedValueType" in flattened(schema, name)[0]
    }
    exposed = {
        name
        for name, struct in structs(bindings).items()
        for info in msgspec.structs.fields(struct)
        if info.encode_name == "encryptedValueType" and info.name == "encrypted_value_type"
    }
    assert exposed == declared
    assert exposed == (ENCRYPTED_VALUE_TYPE_1_1 if version == "1.1" else set())


def test_encrypted_value_type_is_new_in_1_1() -> None:
    event = {
        "type": "REASONING_ENCRYPTED_VALUE",
        "subtype": "message",
        "entityId": "m1",
        "encryptedValue": "opaque",
        "encryptedValueType": "anthropic/thinking",
    }
    raw = msgspec.json.encode(event)
    decoded = bindings_for("1.1").event_decoder.decode(raw)
    assert decoded.encrypted_value_type == "anthropic/thinking"
    with pytest.raises(msgspec.ValidationError, match="encryptedValueType"):
        bindings_for("1.0").event_decoder.decode(raw)


@pytest.mark.parametrize("version", VERSIONS)
def test_struct_fields_mirror_schema_properties(version: str) -> None:
    schema = load(upstream_path(version))
    bindings = bindings_for(version)
    found = structs(bindings)
    assert found, "no Structs in the bindings"
    for name, struct in found.items():
        properties, required = flattened(schema, name)
        tag = struct.__struct_config__.tag_field
        fields = msgspec.structs.fields(struct)
        assert {f.encode_name for f in fields} == properties - {tag}, name
        assert {f.encode_name for f in fields if f.required} == required - {tag}, name
        assert bindings.REQUIRED_FIELDS[struct] == frozenset(required - {tag}), name
        # Closed definitions reject unknown members; the JSON Patch operations stay open.
        closed = schema["$defs"][name].get("unevaluatedProperties") is False
        assert struct.__struct_config__.forbid_unknown_fields == closed, name


# --- (d) the pre-1.0 draft ----------------------------------------------------------------------


def test_pre_1_0_draft_has_no_cancelled_outcome_and_no_file_source(
    tmp_path: Path, load_generated: Callable[[Path], ModuleType]
) -> None:
    draft_schema = upstream_path("pre-1.0-draft")
    path = generate(draft_schema, tmp_path)
    assert path.name == "vdraft.py"
    draft = load_generated(path)
    assert load(draft_schema)["$id"] == draft.SCHEMA_ID
    assert set(draft.UNIONS["RunFinishedOutcome"][1]) == {"success", "interrupt"}
    assert set(draft.UNIONS["PartSource"][1]) == {"data", "url"}
    assert not hasattr(draft, "FileSource")
    assert not hasattr(draft, "RunFinishedCancelledOutcome")

    cancelled: dict[str, Any] = {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r",
        "outcome": {"type": "cancelled"},
    }
    file_part: dict[str, Any] = {
        "type": "MESSAGES_SNAPSHOT",
        "messages": [
            {
                "id": "u1",
                "role": "user",
                "content": [{"type": "image", "source": {"type": "file", "value": "file-1"}}],
            }
        ],
    }
    for event in (cancelled, file_part):
        raw = msgspec.json.encode(event)
        with pytest.raises(msgspec.ValidationError):
            draft.event_decoder.decode(raw)
        bindings_for("1.0").event_decoder.decode(raw)  # both arrived with 1.0


# --- (e) drift and upstream structure -------------------------------------------------------------


def test_every_project_schema_has_a_committed_module() -> None:
    schemas = sorted(p.parent.name for p in (ROOT / "schema").glob("*/schema.json"))
    modules = sorted(
        p.stem
        for p in (ROOT / "src" / "agui_msgspec").glob("v*.py")
        if not p.stem.endswith("_wire")
    )
    assert schemas == sorted(MODULES)
    assert modules == sorted(MODULES.values())


@pytest.mark.parametrize("version", VERSIONS)
def test_committed_module_is_what_codegen_makes(version: str, tmp_path: Path) -> None:
    fresh = generate(ROOT / "schema" / version / "schema.json", tmp_path)
    committed = ROOT / "src" / "agui_msgspec" / f"{MODULES[version]}.py"
    assert fresh.name == committed.name
    assert fresh.read_bytes() == committed.read_bytes(), (
        f"{committed} was edited by hand or is stale; regenerate with `nox -s generate`"
    )


def skeleton(source: str) -> str:
    """The module's AST without docstrings: the code a schema's prose cannot change."""
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef):
            body = [
                statement
                for statement in node.body
                if not (
                    isinstance(statement, ast.Expr)
                    and isinstance(statement.value, ast.Constant)
                    and isinstance(statement.value.value, str)
                )
            ]
            node.body = body or [ast.Pass()]
    return ast.dump(tree)


def field_layout(module: ModuleType) -> dict[str, list[tuple[str, str, bool, Any]]]:
    return {
        name: [
            (info.name, info.encode_name, info.required, info.default)
            for info in msgspec.structs.fields(struct)
        ]
        for name, struct in structs(module).items()
    }


@pytest.mark.parametrize("version", VERSIONS)
def test_upstream_schema_generates_the_same_structure(
    version: str, tmp_path: Path, load_generated: Callable[[Path], ModuleType]
) -> None:
    fresh_path = generate(upstream_path(version), tmp_path)
    committed_path = ROOT / "src" / "agui_msgspec" / f"{MODULES[version]}.py"
    fresh_source = fresh_path.read_text(encoding="utf-8")
    committed_source = committed_path.read_text(encoding="utf-8")
    # Descriptions differ between the files, so the texts must too; the code must not.
    assert fresh_source != committed_source
    assert skeleton(fresh_source) == skeleton(committed_source)

    fresh = load_generated(fresh_path)
    committed = load_generated(committed_path)
    assert list(fresh.EVENT_TYPES) == list(committed.EVENT_TYPES)
    assert field_layout(fresh) == field_layout(committed)


# --- the JSON Pointer check: the schema's pattern, in linear time and constant memory ------------

SCHEMA_POINTER = json.loads((ROOT / "schema" / "1.1" / "schema.json").read_text())


def _schema_pointer_pattern() -> str:
    def find(node: Any) -> str | None:
        if isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                return str(node["pattern"])
            return next(filter(None, map(find, node.values())), None)
        if isinstance(node, list):
            return next(filter(None, map(find, node)), None)
        return None

    pattern = find(SCHEMA_POINTER)
    assert pattern is not None
    return pattern


# ECMA-262 reading of the schema's pattern: "$" only at the very end.
SCHEMA_PATTERN = re.compile(_schema_pointer_pattern().removesuffix("$") + r"\Z")


def pointer_accepted(pointer: str) -> bool:
    delta = [{"op": "add", "path": pointer, "value": 1}]
    result = consume(in_run(wire_event(type="STATE_DELTA", delta=delta)))
    if result.violation is None:
        return True
    assert result.violation.rule == "malformed-event", result.violation
    return False


def test_the_pointer_check_accepts_what_the_schema_pattern_accepts_exhaustively() -> None:
    alphabet = "/~01a\n"
    for length in range(6):
        for letters in itertools.product(alphabet, repeat=length):
            pointer = "".join(letters)
            expected = SCHEMA_PATTERN.match(pointer) is not None
            assert pointer_accepted(pointer) is expected, repr(pointer)


@given(st.text(alphabet=st.sampled_from("/~01a\n\u00e9\ud7ff"), max_size=24))
@settings(max_examples=300, deadline=None)
def test_the_pointer_check_agrees_with_the_schema_pattern(pointer: str) -> None:
    assert pointer_accepted(pointer) is (SCHEMA_PATTERN.match(pointer) is not None)


@pytest.mark.parametrize(
    "pointer",
    [
        "/" + "a" * (4 * MiB),  # accepted
        "/a" * (2 * MiB),  # accepted
        "/" + "~0" * (2 * MiB) + "~",  # a near miss at the very end
        "/" + "a" * (4 * MiB) + "~2",
    ],
    ids=["long-token", "many-tokens", "near-miss-tildes", "near-miss-end"],
)
def test_a_long_pointer_is_checked_in_bounded_memory(pointer: str) -> None:
    body = in_run(
        wire_event(type="STATE_DELTA", delta=[{"op": "add", "path": pointer, "value": 1}])
    )
    _, peak = peak_bytes(lambda: consume(body, keep_events=False))
    # The body itself is 4 MB; the schema's pattern in re took ~180 bytes per character.
    assert peak < 3 * len(pointer) + 4 * MiB
