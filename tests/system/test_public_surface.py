"""The public surface fits on a page (issue 22): ``__all__`` grouped by concern, the 1.1
bindings' Structs, unions and aliases re-exported, the generator's tables left on
``agui_msgspec.v1_1``; every public name documented; each renamed or moved name still works
for one release, with a ``DeprecationWarning``; ``v1_0`` loads only when asked for."""

from __future__ import annotations

import ast
import inspect
import itertools
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from docstrings import own_docstring

import agui_msgspec as agui
from agui_msgspec import v1_1

PACKAGE = Path(agui.__file__).parent
PUBLIC_NAMES = 154  # 64 of the runtime's own, 90 of the 1.1 bindings: change it on purpose
GENERATOR_NAMES = [
    "CLOSED_STRING_SETS",
    "EVENT_TYPES",
    "OPEN_UNION_FIELDS",
    "REQUIRED_FIELDS",
    "SCHEMA_ID",
    "UNIONS",
    "encoder",
    "event_decoder",
]
INPUT = {"threadId": "t", "runId": "r", "messages": [], "vendor": 1}


def test_the_number_of_public_names_is_what_was_set() -> None:
    assert len(agui.__all__) == PUBLIC_NAMES
    assert len(set(agui.__all__)) == PUBLIC_NAMES


def test_the_bindings_are_re_exported_and_the_generators_tables_are_not() -> None:
    bindings = [name for name in v1_1.__all__ if name not in GENERATOR_NAMES]
    assert set(bindings) <= set(agui.__all__)
    assert not set(GENERATOR_NAMES) & set(agui.__all__)
    for name in bindings:
        assert getattr(agui, name) == getattr(v1_1, name)


def _attribute_docstrings() -> set[str]:
    """Names assigned at a module's top level with a string right after (a value's docstring)."""
    documented: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for statement, after in itertools.pairwise(body):
            target = getattr(statement, "target", None)
            targets = getattr(statement, "targets", [target])
            documented_here = (
                isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant)
                and isinstance(after.value.value, str)
            )
            if documented_here:
                documented.update(t.id for t in targets if isinstance(t, ast.Name))
    return documented


def test_every_public_name_has_a_docstring() -> None:
    values = _attribute_docstrings()
    undocumented = []
    for name in agui.__all__:
        value = getattr(agui, name)
        if inspect.isclass(value) or inspect.isfunction(value) or inspect.ismodule(value):
            if not (own_docstring(value) or "").strip():
                undocumented.append(name)
        elif name not in values:  # a constant or a type alias: documented where it is assigned
            undocumented.append(name)
    assert undocumented == []


def test_a_struct_without_its_own_docstring_is_seen() -> None:
    """The check reads a class's own docstring, not msgspec.Struct's."""

    class Bare(msgspec.Struct):
        pass

    assert own_docstring(Bare) is None
    assert own_docstring(v1_1.RunStartedEvent)


# --- the renamed and moved names -----------------------------------------------------------------


@pytest.mark.parametrize("name", GENERATOR_NAMES)
def test_a_generator_table_on_the_top_level_warns_and_works(name: str) -> None:
    with pytest.warns(DeprecationWarning, match=f"agui_msgspec.v1_1.{name}"):
        value = getattr(agui, name)
    assert value is getattr(v1_1, name)


def test_latest_version_warns_and_is_protocol_version() -> None:
    with pytest.warns(DeprecationWarning, match="PROTOCOL_VERSION"):
        assert agui.LATEST_VERSION == agui.PROTOCOL_VERSION == "1.1"


def test_read_input_warns_and_returns_the_input_and_its_warnings() -> None:
    with pytest.warns(DeprecationWarning, match="parse_run_input"):
        read, warnings = agui.read_input(msgspec.json.encode(INPUT))
    assert read == v1_1.RunAgentInput(thread_id="t", run_id="r", messages=[])
    assert warnings == ["input /vendor: removed unrecognised property"]


def test_parse_run_input_returns_the_input_and_says_the_warnings() -> None:
    said: list[str] = []
    read = agui.parse_run_input(msgspec.json.encode(INPUT), on_warning=said.append)
    assert read == v1_1.RunAgentInput(thread_id="t", run_id="r", messages=[])
    assert said == ["input /vendor: removed unrecognised property"]


def test_parse_run_input_bounds_the_warnings_it_says() -> None:
    many = {**INPUT, **{f"vendor{i}": i for i in range(50)}}
    said: list[str] = []
    agui.parse_run_input(many, on_warning=said.append, max_warnings=5)
    assert len(said) == 6  # five, then the line counting the rest
    assert "more" in said[-1]


def test_parse_run_input_says_the_warnings_of_a_body_it_refuses() -> None:
    said: list[str] = []
    with pytest.raises(agui.MalformedInput):
        agui.parse_run_input({**INPUT, "threadId": 1}, on_warning=said.append)
    assert said == ["input /vendor: removed unrecognised property"]


def test_prepare_input_warns_and_is_build_run_input() -> None:
    said: list[str] = []
    with pytest.warns(DeprecationWarning, match="build_run_input"):
        old = agui.prepare_input(INPUT, "1.1", said.append)
    assert old == agui.build_run_input(INPUT, "1.1")
    assert said == ["input /vendor: removed unrecognised property"]


def test_strict_writer_check_warns_and_is_frame() -> None:
    event = {"type": "RUN_STARTED", "threadId": "t", "runId": "r"}
    with pytest.warns(DeprecationWarning, match="StrictWriter.frame"):
        old = agui.StrictWriter().check(event)
    assert old == agui.StrictWriter().frame(event)


def test_the_new_names_do_not_warn(recwarn: pytest.WarningsRecorder) -> None:
    agui.parse_run_input(INPUT)
    agui.build_run_input(INPUT)
    agui.StrictWriter().frame({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    assert agui.PROTOCOL_VERSION == "1.1"
    assert [w for w in recwarn if issubclass(w.category, DeprecationWarning)] == []


def test_an_unknown_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="RunStartedEvnt"):
        agui.RunStartedEvnt  # type: ignore[attr-defined]  # noqa: B018


# --- v1_0, loaded when asked for -----------------------------------------------------------------


def _run(script: str) -> str:
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", script],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_importing_the_package_does_not_import_the_1_0_bindings() -> None:
    assert _run("import sys, agui_msgspec; print('agui_msgspec.v1_0' in sys.modules)") == "False"


def test_the_1_0_bindings_load_when_asked_for() -> None:
    script = (
        "import sys, agui_msgspec as agui\n"
        "from agui_msgspec import v1_0\n"
        "print(agui.v1_0 is v1_0 is sys.modules['agui_msgspec.v1_0'], v1_0.PROTOCOL_VERSION)\n"
        "print(agui.consume([], version='1.0').outcome)\n"
    )
    assert _run(script).splitlines() == ["True 1.0", "failed"]


def test_a_star_import_gives_the_public_names_without_a_warning() -> None:
    script = (
        "from agui_msgspec import *\nprint(HttpAgent.__name__, PROTOCOL_VERSION, v1_0.__name__)"
    )
    assert _run(script) == "HttpAgent 1.1 agui_msgspec.v1_0"
