"""``agui-msgspec generate`` and ``agui_msgspec.generate``: bindings for any AG-UI schema file,
from the installed package (the ``codegen`` extra)."""

from __future__ import annotations

import importlib.util
import io
import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

import agui_msgspec
from agui_msgspec import UsageError
from agui_msgspec._codegen import CodegenError
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


def test_the_command_writes_the_binding_named_after_the_schema_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    freeze = tmp_path / "proto-freeze.txt"
    shutil.copy(ROOT / "schema" / "1.1" / "proto-freeze.txt", freeze)
    out = tmp_path / "out"
    assert main(["generate", str(SCHEMA_1_1), "--out", str(out), "--freeze", str(freeze)]) == 0
    written = [Path(line) for line in capsys.readouterr().out.splitlines()]
    assert written == [out / "v1_1.py", out / "v1_1.proto", out / "v1_1_wire.py"]
    assert sorted(p.name for p in out.iterdir()) == ["v1_1.proto", "v1_1.py", "v1_1_wire.py"]
    # the committed files are what the installed generator makes of the same schema
    for path in written:
        assert path.read_bytes() == (ROOT / "src" / "agui_msgspec" / path.name).read_bytes()
    assert freeze.read_bytes() == (ROOT / "schema" / "1.1" / "proto-freeze.txt").read_bytes()


def test_the_paths_written_are_shown_inert(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "\x1b]0;owned\x07\nACCEPTED\u202e"
    assert main(["generate", str(SCHEMA_1_1), "--out", str(out)]) == 0
    shown = capsys.readouterr().out
    assert not any(ch in shown for ch in "\x1b\x07\u202e")
    assert [line.rpartition("/")[2] for line in shown.splitlines()] == [
        "v1_1.py",
        "v1_1.proto",
        "v1_1_wire.py",
        "v1_1.proto-freeze.txt",
    ]
    assert "\\x1b]0;owned\\x07\\x0aACCEPTED\\u202e/v1_1.py" in shown


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
        (["--module", "\ufb01eld"], "not a Python identifier"),  # Python imports "field"
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


def edited_schema(tmp_path: Path, edit: Callable[[dict[str, Any]], object]) -> Path:
    """The 1.1 schema, changed by ``edit``, in a folder of its own."""
    schema = json.loads(SCHEMA_1_1.read_text(encoding="utf-8"))
    edit(schema)
    path = tmp_path / "in" / "schema.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(schema), encoding="utf-8")
    return path


CODE_AS_A_NAME = 'X=__import__("pathlib").Path("INJECTED").write_text("x");Y'


@pytest.mark.parametrize(
    ("holder", "definition"),
    [
        ("AnEnum", {"type": "string", "enum": ["a"]}),
        ("Event", None),  # the Event union itself, a oneOf
    ],
    ids=["enum-definition", "union-definition"],
)
def test_a_property_name_never_becomes_code(
    holder: str,
    definition: dict[str, Any] | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a property of a definition that is no Struct still names an enum alias in the module
    def edit(schema: dict[str, Any]) -> None:
        if definition is not None:
            schema["$defs"][holder] = definition
        schema["$defs"][holder]["properties"] = {CODE_AS_A_NAME: {"enum": ["b"]}}

    monkeypatch.chdir(tmp_path)
    with pytest.raises(CodegenError, match="not usable as a Python name") as caught:
        agui_msgspec.generate(edited_schema(tmp_path, edit), tmp_path / "out")
    assert caught.value.pointer == f"/$defs/{holder}/properties/{CODE_AS_A_NAME}"
    assert f"at #/$defs/{holder}/properties/X=" in str(caught.value)
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "INJECTED").exists()


@pytest.mark.parametrize(
    ("edit", "pointer"),
    [
        (lambda s: s["$defs"].update(msgspec={"type": "string"}), "/$defs/msgspec"),
        (lambda s: s["$defs"].update(Struct={"type": "string"}), "/$defs/Struct"),
        (lambda s: s["$defs"].update(UNSET={"type": "string"}), "/$defs/UNSET"),
        (lambda s: s["$defs"].update(str={"type": "integer"}), "/$defs/str"),
        (lambda s: s["$defs"].update(tuple={"type": "integer"}), "/$defs/tuple"),
        (lambda s: s["$defs"].update(NonNullValue={"type": "string"}), "/$defs/NonNullValue"),
        (lambda s: s["$defs"].update(EVENT_TYPES={"type": "string"}), "/$defs/EVENT_TYPES"),
        (lambda s: s["$defs"].update(__name__={"type": "string"}), "/$defs/__name__"),
        # Python reads the ligature "\ufb01" as "fi": this would be msgspec's `field`
        (lambda s: s["$defs"].update({"\ufb01eld": {"type": "string"}}), "/$defs/\ufb01eld"),
        # the inline enum of ResumeEntry.status is ResumeEntryStatus already
        (
            lambda s: s["$defs"].update(ResumeEntryStatus={"type": "string"}),
            "/$defs/ResumeEntry/properties/status",
        ),
        (
            lambda s: s["$defs"]["RunStartedEvent"]["properties"].update(str={"type": "string"}),
            "/$defs/RunStartedEvent/properties/str",
        ),
        (
            lambda s: s["$defs"]["RunStartedEvent"]["properties"].update(run_id={"type": "string"}),
            "/$defs/RunStartedEvent/properties/run_id",
        ),
    ],
    ids=[
        "msgspec",
        "Struct",
        "UNSET",
        "builtin-str",
        "builtin-tuple",
        "NonNullValue",
        "table",
        "dunder",
        "nfkc",
        "inline-enum-twice",
        "attribute-shadows-str",
        "two-wires-one-attribute",
    ],
)
def test_names_the_module_itself_needs_are_refused(
    edit: Callable[[dict[str, Any]], object], pointer: str, tmp_path: Path
) -> None:
    with pytest.raises(CodegenError, match="not usable") as caught:
        agui_msgspec.generate(edited_schema(tmp_path, edit), tmp_path / "out")
    assert caught.value.pointer == pointer
    assert not (tmp_path / "out").exists()


def test_descriptions_and_values_read_back_exactly(tmp_path: Path) -> None:
    descriptions = {  # a docstring each
        "RunStartedEvent": 'ends on a quote "',
        "RunFinishedEvent": 'three quotes """ and a backslash \\ mid-text',
        "RunErrorEvent": "unprintable \x00 and \x7f stay in",
        "StepStartedEvent": '""',
        "StepFinishedEvent": "a long one, wrapped: " + "word " * 40 + '\\"""',
    }

    def edit(schema: dict[str, Any]) -> None:
        for name, text in descriptions.items():
            schema["$defs"][name]["description"] = text
        schema["$defs"]["TextMessageRole"]["enum"].append("\U0001f600")
        schema["$defs"]["RunStartedEvent"]["properties"]["flag"] = {"const": True}

    schema = edited_schema(tmp_path, edit)
    bindings = load_bindings(agui_msgspec.generate(schema, tmp_path, module="literals"))
    try:
        for name, text in descriptions.items():
            doc = getattr(bindings, name).__doc__
            assert " ".join(doc.split()) == " ".join(text.split())  # wrapped, else as written
        assert "\U0001f600" in bindings.CLOSED_STRING_SETS["TextMessageRole"]
        event = b'{"type": "RUN_STARTED", "threadId": "t", "runId": "r", "flag": true}'
        assert bindings.event_decoder.decode(event).flag is True
    finally:
        sys.modules.pop("literals", None)


def test_a_property_name_msgspec_would_rename_otherwise_keeps_its_wire_name(
    tmp_path: Path,
) -> None:
    # msgspec's camel renaming capitalises after a digit: cost_per1k_tokens is costPer1KTokens
    schema = hostile_schema(tmp_path, {"property": "costPer1kTokens"})
    bindings = load_bindings(agui_msgspec.generate(schema, tmp_path, module="digits"))
    try:
        event = b'{"type":"RUN_STARTED","threadId":"t","runId":"r","costPer1kTokens":"x"}'
        decoded = bindings.event_decoder.decode(event)
        assert decoded.cost_per1k_tokens == "x"
        assert bindings.encoder.encode(decoded) == event
    finally:
        sys.modules.pop("digits", None)


def test_a_dollar_anchors_at_the_very_end_wherever_it_stands(tmp_path: Path) -> None:
    # ECMA-262's $ never matches before a final newline; Python's does
    schema = json.loads(SCHEMA_1_1.read_text(encoding="utf-8"))
    schema["$defs"]["RunStartedEvent"]["properties"].update(
        either={"type": "string", "pattern": "^a$|^b$"},
        priced={"type": "string", "pattern": "^[$]\\d+\\$$"},
    )
    path = tmp_path / "anchored.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    bindings = load_bindings(agui_msgspec.generate(path, tmp_path, module="anchored"))
    start = b'{"type":"RUN_STARTED","threadId":"t","runId":"r",'
    try:
        for taken in [b'"either":"a"', b'"either":"b"', b'"priced":"$5$"']:
            bindings.event_decoder.decode(start + taken + b"}")
        for refused in [b'"either":"a\\n"', b'"either":"b\\n"', b'"priced":"$5$\\n"']:
            with pytest.raises(msgspec.ValidationError):
                bindings.event_decoder.decode(start + refused + b"}")
    finally:
        sys.modules.pop("anchored", None)


def test_every_numeric_bound_of_the_schema_is_enforced(tmp_path: Path) -> None:
    schema = json.loads(SCHEMA_1_1.read_text(encoding="utf-8"))
    schema["$defs"]["RunStartedEvent"]["properties"].update(
        share={"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 9},
        retries={"type": "integer", "minimum": 0, "maximum": 3, "multipleOf": 2},
    )
    path = tmp_path / "bounded.json"
    path.write_text(json.dumps(schema), encoding="utf-8")
    bindings = load_bindings(agui_msgspec.generate(path, tmp_path, module="bounded"))
    start = b'{"type":"RUN_STARTED","threadId":"t","runId":"r",'
    try:
        assert bindings.event_decoder.decode(start + b'"share":1,"retries":2}').retries == 2
        for outside in [b'"share":0', b'"share":9', b'"retries":1', b'"retries":4']:
            with pytest.raises(msgspec.ValidationError):
                bindings.event_decoder.decode(start + outside + b"}")
    finally:
        sys.modules.pop("bounded", None)


@pytest.mark.parametrize(
    ("edit", "pointer"),
    [
        (
            lambda s: s["$defs"]["RunStartedEvent"].update(description="half a pair \ud800"),
            "/$defs/RunStartedEvent/description",
        ),
        (
            lambda s: s["$defs"]["TextMessageRole"]["enum"].append("\udfff"),
            "/$defs/TextMessageRole/enum/4",
        ),
    ],
    ids=["description", "enum-value"],
)
def test_a_lone_surrogate_is_refused_where_it_is(
    edit: Callable[[dict[str, Any]], object], pointer: str, tmp_path: Path
) -> None:
    # JSON can escape half a UTF-16 pair, but it is no text: msgspec cannot encode it
    with pytest.raises(CodegenError, match="lone UTF-16 surrogate") as caught:
        agui_msgspec.generate(edited_schema(tmp_path, edit), tmp_path / "out")
    assert caught.value.pointer == pointer


@pytest.mark.parametrize(
    "ref",
    [
        "../outside.json",  # beside the schema's folder: read through the $id, from the web
        "{outside}",
        "file://{outside}",
        "https://example.test/schema.json",
        "sibling.json#/$defs/Role",  # inside the folder, but still another file
        "#/$defs/NoSuchDefinition",
    ],
    ids=["relative-outside", "absolute", "file-url", "url", "sibling-file", "no-such-def"],
)
def test_refs_outside_the_schemas_own_defs_are_refused_unread(
    ref: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"type": "string"}', encoding="utf-8")
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "sibling.json").write_text('{"$defs": {"Role": {}}}', encoding="utf-8")
    ref = ref.format(outside=outside)
    schema = edited_schema(
        tmp_path, lambda s: s["$defs"]["RunStartedEvent"]["properties"].update(x={"$ref": ref})
    )
    opened: list[str] = []
    looked_up: list[str] = []
    real_open = io.open

    def recording_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def no_network(host: Any, *args: Any, **kwargs: Any) -> Any:
        looked_up.append(str(host))
        raise OSError("no network in this test")

    monkeypatch.setattr(io, "open", recording_open)
    monkeypatch.setattr(socket, "getaddrinfo", no_network)
    with pytest.raises(CodegenError, match=r"\$ref .* is refused") as caught:
        agui_msgspec.generate(schema, tmp_path / "out")
    assert caught.value.pointer == "/$defs/RunStartedEvent/properties/x/$ref"
    assert not [path for path in opened if path.endswith(("outside.json", "sibling.json"))]
    assert not looked_up


def test_what_the_parser_refuses_is_a_codegen_error(tmp_path: Path) -> None:
    # datamodel-code-generator's own error, not the generator's: a "type" that is no type
    schema = edited_schema(
        tmp_path, lambda s: s["$defs"]["RunStartedEvent"]["properties"].update(x={"type": 5})
    )
    with pytest.raises(CodegenError, match="datamodel-code-generator cannot read it"):
        agui_msgspec.generate(schema, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_schema_without_an_event_union_is_refused(tmp_path: Path) -> None:
    def edit(schema: dict[str, Any]) -> None:
        del schema["$ref"]
        schema["$defs"]["Event"] = {"type": "string"}

    with pytest.raises(CodegenError, match="no Event union") as caught:
        agui_msgspec.generate(edited_schema(tmp_path, edit), tmp_path / "out")
    assert caught.value.pointer == "/$defs/Event"


def test_an_array_of_itself_is_refused(tmp_path: Path) -> None:
    # the parser gives it no item type: an IndexError escaped
    def edit(schema: dict[str, Any]) -> None:
        schema["$defs"]["A"] = {"type": "array", "items": {"$ref": "#/$defs/A"}}

    with pytest.raises(CodegenError, match="an array whose items are the array itself") as caught:
        agui_msgspec.generate(edited_schema(tmp_path, edit), tmp_path / "out")
    assert caught.value.pointer == "/$defs/A"


def test_a_failure_inside_the_parser_is_a_codegen_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fails(self: object) -> None:
        raise KeyError("its own bug")

    parser = "datamodel_code_generator.parser.jsonschema.JsonSchemaParser.parse_raw"
    monkeypatch.setattr(parser, fails)
    with pytest.raises(CodegenError, match="datamodel-code-generator failed on it: KeyError"):
        agui_msgspec.generate(SCHEMA_1_1, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def nested(depth: int) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        node = {"type": "array", "items": node}
    return node


@pytest.mark.parametrize(
    ("edit", "complaint", "pointer"),
    [
        (
            lambda s: s["$defs"]["BaseEvent"].update(allOf=[{"$ref": "#/$defs/RunStartedEvent"}]),
            "the allOf mixins form a cycle: BaseEvent → RunStartedEvent → BaseEvent",
            "/$defs/RunStartedEvent/allOf",
        ),
        (
            lambda s: s["$defs"].update(Deep=nested(300)),
            "nested deeper than 64 levels",
            "/$defs/Deep" + "/items" * 63,
        ),
        (
            lambda s: s["$defs"].update(Deep="DEEPER"),  # written below: too deep for json.dumps
            "nested deeper than Python's JSON reader goes",
            None,
        ),
    ],
    ids=["allOf-cycle", "deep", "deeper-than-json"],
)
def test_schemas_that_would_overflow_the_stack_are_refused(
    edit: Callable[[dict[str, Any]], object], complaint: str, pointer: str | None, tmp_path: Path
) -> None:
    schema = edited_schema(tmp_path, edit)
    text = schema.read_text(encoding="utf-8")
    # deeper than every supported Python's JSON reader goes (3.13's takes 3,000 levels)
    schema.write_text(text.replace('"DEEPER"', "[" * 100_000 + "]" * 100_000), encoding="utf-8")
    with pytest.raises(CodegenError, match=complaint) as caught:
        agui_msgspec.generate(schema, tmp_path / "out")
    assert caught.value.pointer == pointer


@pytest.mark.parametrize(
    ("edit", "complaint"),
    [
        (
            lambda s: s["$defs"]["RunStartedEvent"]["properties"]["runId"].update(minLength=-1),
            "ValueError: `min_length` must be >= 0",
        ),
        (
            lambda s: s["$defs"]["RunStartedEvent"]["properties"]["runId"].update(pattern="("),
            "missing ), unterminated subpattern",
        ),
        (  # aliases come before the Structs in the module
            lambda s: s["$defs"].update(Alias={"$ref": "#/$defs/RunStartedEvent"}),
            "NameError: name 'RunStartedEvent' is not defined",
        ),
        (
            lambda s: s["$defs"]["RunStartedEvent"]["properties"].update(
                x={"type": "array", "default": [1]}
            ),
            "TypeError: Using a non-empty mutable collection ([1]) as a default value is unsafe",
        ),
    ],
    ids=["negative-length", "bad-pattern", "alias-of-a-later-struct", "mutable-default"],
)
def test_a_module_that_would_not_import_is_not_written(
    edit: Callable[[dict[str, Any]], object], complaint: str, tmp_path: Path
) -> None:
    with pytest.raises(CodegenError, match="the generated module does not import") as caught:
        agui_msgspec.generate(edited_schema(tmp_path, edit), tmp_path / "out")
    assert complaint in str(caught.value)
    assert not (tmp_path / "out").exists()


def test_enum_values_cost_linear_time(tmp_path: Path) -> None:
    # the parser named a member per value at a cost growing with the values before it:
    # 200,000 values took 541 s; it now takes seconds (this test takes 20,000)
    values = [f"value-{i}" for i in range(20_000)]
    schema = edited_schema(tmp_path, lambda s: s["$defs"]["TextMessageRole"].update(enum=values))
    bindings = load_bindings(agui_msgspec.generate(schema, tmp_path, module="many_values"))
    try:
        assert bindings.CLOSED_STRING_SETS["TextMessageRole"] == frozenset(values)
    finally:
        sys.modules.pop("many_values", None)
