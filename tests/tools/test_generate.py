"""``agui-msgspec generate`` and ``agui_msgspec.generate``: bindings for any AG-UI schema file,
from the installed package (the ``codegen`` extra)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import agui_msgspec
from agui_msgspec import UsageError
from agui_msgspec._tools.cli import main
from agui_msgspec._versions import load_bindings

ROOT = Path(__file__).resolve().parents[2]
SCHEMA_1_1 = ROOT / "schema" / "1.1" / "schema.json"
DRAFT = ROOT.parent / "shared" / "agui" / "schema" / "pre-1.0-draft" / "schema.json"


@pytest.fixture
def draft_copy(tmp_path: Path) -> Path:
    """The pre-1.0 draft as a schema file outside the repository."""
    if not DRAFT.is_file():
        pytest.skip(f"the pre-1.0 draft schema is absent ({DRAFT})")
    copy = tmp_path / "elsewhere" / "schema.json"
    copy.parent.mkdir()
    shutil.copy(DRAFT, copy)
    return copy


def test_the_command_writes_one_module_named_after_the_schema_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["generate", str(SCHEMA_1_1), "--out", str(tmp_path / "out")]) == 0
    written = Path(capsys.readouterr().out.strip())
    assert written == tmp_path / "out" / "v1_1.py"
    assert [p.name for p in written.parent.iterdir()] == ["v1_1.py"]
    # the committed module is what the installed generator makes of the same schema
    assert written.read_bytes() == (ROOT / "src" / "agui_msgspec" / "v1_1.py").read_bytes()


def test_a_draft_gets_the_name_and_version_given(tmp_path: Path, draft_copy: Path) -> None:
    first = agui_msgspec.generate(draft_copy, tmp_path, module="draft_a", protocol_version="1.2")
    second = agui_msgspec.generate(draft_copy, tmp_path, module="draft_b", protocol_version="1.3")
    default = agui_msgspec.generate(draft_copy, tmp_path)
    assert (first.name, second.name, default.name) == ("draft_a.py", "draft_b.py", "vdraft.py")
    sys.path.insert(0, str(tmp_path))
    try:
        a, b = (importlib.import_module(name) for name in ("draft_a", "draft_b"))
        assert (a.PROTOCOL_VERSION, b.PROTOCOL_VERSION) == ("1.2", "1.3")
        assert a.RunStartedEvent is not b.RunStartedEvent  # two drafts, apart
        assert a.__doc__ == "msgspec bindings for AG-UI 1.2, generated from its JSON Schema."
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("draft_a", "draft_b"):
            sys.modules.pop(name, None)
    assert 'PROTOCOL_VERSION = "draft"' in default.read_text(encoding="utf-8")


def test_the_module_is_ruff_clean_and_mypy_strict_clean(tmp_path: Path, draft_copy: Path) -> None:
    written = agui_msgspec.generate(draft_copy, tmp_path, module="draft_checked")
    config = str(ROOT / "pyproject.toml")
    for command in (["check"], ["format", "--check"]):
        ruff = [sys.executable, "-m", "ruff", *command, "--config", config, str(written)]
        done = subprocess.run(ruff, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stdout + done.stderr
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed here (`nox -s typecheck` checks a generated draft)")
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(written)]
    done = subprocess.run(mypy, capture_output=True, text=True, check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize(
    ("options", "complaint"),
    [
        (["--module", "1st"], "not a Python identifier"),
        (["--module", "class"], "not usable"),
        (["--protocol-version", "draft"], "not MAJOR.MINOR"),
        (["--protocol-version", "\u00b2.1"], "not MAJOR.MINOR"),
        (["--protocol-version", "1.1.0"], "not MAJOR.MINOR"),
    ],
)
def test_bad_names_are_usage_errors(
    options: list[str], complaint: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["generate", str(SCHEMA_1_1), "--out", str(tmp_path), *options]) == 2
    assert complaint in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_unreadable_schemas_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    no_id = tmp_path / "no-id.json"
    no_id.write_text(SCHEMA_1_1.read_text(encoding="utf-8").replace('"$id"', '"$comment"'))
    not_json = tmp_path / "not.json"
    not_json.write_text("{")
    not_schema = tmp_path / "list.json"
    not_schema.write_text("[]")
    cases = {
        tmp_path / "missing.json": "No such file",
        not_json: "not a readable JSON Schema",
        not_schema: "no $defs",
        no_id: "cannot read a protocol version from $id",
    }
    for schema, complaint in cases.items():
        assert main(["generate", str(schema), "--out", str(tmp_path / "out")]) == 2
        err = capsys.readouterr().err
        assert complaint in err, err
        assert "Traceback" not in err
    # the version given instead of the $id's is enough
    written = agui_msgspec.generate(no_id, tmp_path / "out", protocol_version="1.1")
    assert written.name == "v1_1.py"


def test_without_the_codegen_extra_the_command_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec

    def without_ruff(name: str, package: str | None = None) -> object:
        return None if name == "ruff" else real(name, package)

    monkeypatch.setattr(importlib.util, "find_spec", without_ruff)
    assert main(["generate", str(SCHEMA_1_1), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "needs ruff" in err
    assert "pip install 'agui-msgspec[codegen]'" in err
    with pytest.raises(UsageError, match=r"agui-msgspec\[codegen\]"):
        agui_msgspec.generate(SCHEMA_1_1, tmp_path)


INJECTED = '"]\nraise SystemExit("injected")\n#'


def hostile_schema(tmp_path: Path, change: dict[str, object]) -> Path:
    schema = json.loads(SCHEMA_1_1.read_text(encoding="utf-8"))
    if "$id" in change:
        schema["$id"] = change["$id"]
    if "enum" in change:
        schema["$defs"]["TextMessageRole"]["enum"].append(change["enum"])
    if "def" in change:
        schema["$defs"][change["def"]] = {"type": "object", "properties": {}}
    if "property" in change:
        schema["$defs"]["RunStartedEvent"]["properties"][change["property"]] = {"type": "string"}
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


def test_schema_strings_are_written_as_literals_never_as_code(tmp_path: Path) -> None:
    hostile_id = f"https://example.test/{INJECTED}/spec/1.1/schema.json"
    schema = hostile_schema(tmp_path, {"$id": hostile_id, "enum": INJECTED})
    bindings = load_bindings(agui_msgspec.generate(schema, tmp_path, module="hostile"))
    try:
        assert hostile_id == bindings.SCHEMA_ID
        assert INJECTED in bindings.CLOSED_STRING_SETS["TextMessageRole"]
        assert bindings.PROTOCOL_VERSION == "1.1"
    finally:
        sys.modules.pop("hostile", None)


@pytest.mark.parametrize(
    "change",
    [
        {"def": "Bad-Name"},
        {"def": "class"},
        {"property": "x-y"},
        {"$id": f"/spec/{INJECTED}/schema.json"},
    ],
    ids=["def-name", "keyword", "property", "version-in-id"],
)
def test_schema_names_that_are_not_python_names_are_refused(
    change: dict[str, object], tmp_path: Path
) -> None:
    schema = hostile_schema(tmp_path, change)
    with pytest.raises(
        UsageError, match=r"not usable as a Python name|cannot read a protocol version"
    ):
        agui_msgspec.generate(schema, tmp_path / "out")
    assert not (tmp_path / "out").exists()
