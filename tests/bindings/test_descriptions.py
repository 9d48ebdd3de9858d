"""The schema's descriptions reach the generated Structs: the Struct's as its docstring, each
property's as the docstring under its attribute (what IDE hovers and API docs show)."""

from __future__ import annotations

import ast
import inspect
import json
from pathlib import Path

import msgspec
import pytest

import agui_msgspec
from agui_msgspec import v1_0, v1_1

ROOT = Path(__file__).resolve().parents[2]
MODULES = {"1.0": v1_0, "1.1": v1_1}


def attribute_docs(source: str) -> dict[tuple[str, str], str]:
    """(class, attribute) → the string literal right under the attribute's annotation."""
    docs = {}
    for node in ast.parse(source).body:
        if not isinstance(node, ast.ClassDef):
            continue
        for statement, after in zip(node.body, node.body[1:], strict=False):
            if (
                isinstance(statement, ast.AnnAssign)
                and isinstance(statement.target, ast.Name)
                and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            ):
                docs[node.name, statement.target.id] = after.value.value
    return docs


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_run_finished_outcome_says_absent_means_success() -> None:
    schema = json.loads((ROOT / "schema" / "1.1" / "schema.json").read_text(encoding="utf-8"))
    described = schema["$defs"]["RunFinishedEvent"]["properties"]["outcome"]["description"]
    docs = attribute_docs(inspect.getsource(v1_1))
    assert one_line(docs["RunFinishedEvent", "outcome"]) == one_line(described)
    assert "means success" in docs["RunFinishedEvent", "outcome"]


@pytest.mark.parametrize("version", sorted(MODULES))
def test_every_described_property_of_a_struct_has_its_docstring(version: str) -> None:
    schema = json.loads((ROOT / "schema" / version / "schema.json").read_text(encoding="utf-8"))
    module = MODULES[version]
    docs = attribute_docs(inspect.getsource(module))
    checked = 0
    for name, node in schema["$defs"].items():
        struct = getattr(module, name, None)
        if not isinstance(struct, type) or "properties" not in node:
            continue  # a mixin (flattened into the Structs), a union or an alias
        for wire, prop in node["properties"].items():
            attr = next(
                (f.name for f in msgspec.structs.fields(struct) if f.encode_name == wire),
                None,
            )
            if attr is None or "description" not in prop:
                continue  # the tag (a class attribute), or nothing to say
            assert one_line(docs[name, attr]) == one_line(prop["description"]), (name, attr)
            checked += 1
        if node.get("description"):
            assert one_line(struct.__doc__ or "") == one_line(node["description"])
    assert checked > 100


def test_a_mixins_description_reaches_each_struct_that_flattens_it() -> None:
    docs = attribute_docs(inspect.getsource(v1_1))
    assert "Event tag" in docs["RunFinishedEvent", "type"]  # BaseEvent's, under the tag
    assert "safe-integer" in docs["RunFinishedEvent", "timestamp"]


def test_a_hostile_property_description_reads_back_exactly(tmp_path: Path) -> None:
    schema = json.loads((ROOT / "schema" / "1.1" / "schema.json").read_text(encoding="utf-8"))
    text = 'three quotes """ a backslash \\ and a last quote "'
    schema["$defs"]["RunFinishedEvent"]["properties"]["outcome"]["description"] = text
    edited = tmp_path / "schema.json"
    edited.write_text(json.dumps(schema), encoding="utf-8")
    written = agui_msgspec.generate(edited, tmp_path / "out", module="described")
    docs = attribute_docs(written.read_text(encoding="utf-8"))
    assert docs["RunFinishedEvent", "outcome"] == text
