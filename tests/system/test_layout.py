"""The package's layout is its architecture: each folder imports only the layers below it
(docs/project/architecture.md), no module imports itself back through another, and no module
reaches into a private name of ``Consumer``."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "agui_msgspec"

# Lowest first: a module may import its own layer and the layers before it, never after.
LAYERS: list[set[str]] = [
    {"_errors", "_rules", "__about__"},
    {"_versions", "_json"},
    {"v1_0", "v1_1", "v1_0_wire", "v1_1_wire"},  # generated bindings: msgspec only
    {"_documents"},
    {"_wire"},
    {"_pipeline"},
    {"_official"},
    {"_http", "_serve"},
    {"_tools", "_codegen"},
    {"__init__", "__main__"},
]
LAYER_OF = {top: rank for rank, tops in enumerate(LAYERS) for top in tops}


def _modules() -> dict[str, Path]:
    """Every module of the package by dotted name below ``agui_msgspec``."""
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _type_checking_only(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and ast.unparse(node.test) in (
        "TYPE_CHECKING",
        "typing.TYPE_CHECKING",
    )


def _imports(name: str, path: Path) -> set[str]:
    """The package modules ``name`` imports at run time (deferred imports included; what
    only a type checker reads is left out), as dotted names below ``agui_msgspec``."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node):
            return
        if isinstance(node, ast.Import):
            found.update(
                alias.name.removeprefix("agui_msgspec.")
                for alias in node.names
                if alias.name.startswith("agui_msgspec.")
            )
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                target = ".".join([*base, *(node.module or "").split(".")]).strip(".")
            elif node.module == "agui_msgspec":
                target = ""
            elif (node.module or "").startswith("agui_msgspec."):
                target = (node.module or "").removeprefix("agui_msgspec.")
            else:
                return
            # `from agui_msgspec import v1_1` names a module; `from .x import y` may too
            for alias in node.names:
                joined = f"{target}.{alias.name}".strip(".")
                found.add(joined if joined in MODULES else target)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard("")
    found.discard(name)
    return {module for module in found if module in MODULES}


MODULES = _modules()
GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _layer(module: str) -> int:
    return LAYER_OF[module.split(".", maxsplit=1)[0]]


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in MODULES if m.split(".")[0] not in LAYER_OF)
    assert unplaced == [], "add each new module or folder to LAYERS and the architecture page"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_a_module_imports_only_its_own_layer_and_those_below(module: str) -> None:
    upward = sorted(m for m in GRAPH[module] if _layer(m) > _layer(module))
    assert upward == [], f"{module} imports a layer above its own"


def test_no_import_cycle() -> None:
    done: set[str] = set()
    path: list[str] = []

    def walk(module: str) -> None:
        if module in path:
            cycle = [*path[path.index(module) :], module]
            pytest.fail("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        path.append(module)
        for imported in sorted(GRAPH[module]):
            walk(imported)
        path.pop()
        done.add(module)

    for module in sorted(MODULES):
        walk(module)


def test_the_layer_check_sees_an_upward_import(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from typing import TYPE_CHECKING\n"
        "from agui_msgspec._errors import UsageError\n"
        "if TYPE_CHECKING:\n    from agui_msgspec._tools import cli\n"
        "def later():\n    from agui_msgspec._http.client import HttpAgent\n",
        encoding="utf-8",
    )
    imported = _imports("_pipeline.sample", sample)
    assert imported == {"_errors", "_http.client"}  # deferred counts, type-checking-only not
    assert [m for m in imported if _layer(m) > _layer("_pipeline.sample")] == ["_http.client"]


def _private_uses_of_a_consumer(path: Path) -> list[str]:
    uses = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        if node.attr.startswith("__"):
            continue
        owner = node.value
        spelled = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
        if "consumer" in spelled.lower():
            uses.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    return uses


def test_no_module_uses_a_private_name_of_consumer() -> None:
    consumer = PACKAGE / "_pipeline" / "consumer.py"
    uses = [
        use
        for path in MODULES.values()
        if path != consumer
        for use in _private_uses_of_a_consumer(path)
    ]
    assert uses == []


def test_the_private_use_check_sees_one(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def f(consumer):\n    return consumer._index\n", encoding="utf-8")
    assert _private_uses_of_a_consumer(sample) == ["sample.py:2: consumer._index"]


# The public names before the package moved into folders: every one still imports, from the top.
PUBLIC_BEFORE_THE_MOVE = [
    "ChunkViolation",
    "Consumer",
    "EventStream",
    "GuardReport",
    "HttpAgent",
    "HttpAgentError",
    "JSONLinesReader",
    "LATEST_VERSION",
    "LifecycleViolation",
    "MalformedEvent",
    "PROTOBUF_MEDIA_TYPE",
    "ProducerGuard",
    "ProtobufReader",
    "ProtocolViolation",
    "Result",
    "Run",
    "RunFailed",
    "RunResult",
    "RunStatus",
    "RunStream",
    "SSEReader",
    "SSE_MEDIA_TYPE",
    "SUPPORTED_VERSIONS",
    "StrictWriter",
    "TransportError",
    "UsageError",
    "consume",
    "consume_body",
    "encode",
    "encode_proto",
    "from_official",
    "generate",
    "negotiate_media_type",
    "prepare_input",
    "proto_frame",
    "read_input",
    "sse_frame",
    "to_official",
    "v1_0",
    "v1_1",
]


def test_every_public_name_of_before_the_move_still_imports() -> None:
    import agui_msgspec  # noqa: PLC0415
    from agui_msgspec import v1_1  # noqa: PLC0415

    expected = {*PUBLIC_BEFORE_THE_MOVE, *v1_1.__all__}
    with warnings.catch_warnings():  # the renamed and moved ones warn (test_public_surface)
        warnings.simplefilter("ignore", DeprecationWarning)
        assert [name for name in sorted(expected) if not hasattr(agui_msgspec, name)] == []
