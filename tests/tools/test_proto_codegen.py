"""The protobuf wire schema generator: numbers come from the freeze, new slots are appended,
removed ones stay reserved."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
UPSTREAM_FREEZE = ROOT.parent / "shared" / "agui" / "proto" / "1.1" / "proto-freeze.txt"


def _numbers(text: str) -> dict[str, int]:
    return {m[1]: int(m[2]) for m in re.finditer(r"^([\w.]+) = (\d+)$", text, re.M)}


def _run(tmp_path: Path, schema: dict, *extra: str) -> subprocess.CompletedProcess[str]:
    """``python -m agui_msgspec._codegen.proto`` on ``schema`` with a copy of the 1.1 freeze (kept between
    runs in ``tmp_path``), as ``nox -s generate`` runs it."""
    version_dir = tmp_path / "1.1"
    version_dir.mkdir(exist_ok=True)
    (version_dir / "schema.json").write_text(json.dumps(schema))
    freeze = version_dir / "proto-freeze.txt"
    if not freeze.exists():
        shutil.copy(ROOT / "schema" / "1.1" / "proto-freeze.txt", freeze)
    command = [
        sys.executable,
        "-m",
        "agui_msgspec._codegen.proto",
        "--schema",
        str(version_dir / "schema.json"),
    ]
    command += ["--out", str(tmp_path / "out"), *extra]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)


def _generate(tmp_path: Path, schema: dict, *extra: str) -> tuple[str, str]:
    done = _run(tmp_path, schema, *extra)
    assert done.returncode == 0, done.stderr
    freeze = (tmp_path / "1.1" / "proto-freeze.txt").read_text()
    return (tmp_path / "out" / "v1_1.proto").read_text(), freeze


def _schema() -> dict:
    return json.loads((ROOT / "schema" / "1.1" / "schema.json").read_text())


def test_project_freeze_keeps_every_upstream_number() -> None:
    if not UPSTREAM_FREEZE.exists():
        pytest.skip(f"no upstream freeze at {UPSTREAM_FREEZE}")
    ours = _numbers((ROOT / "schema" / "1.1" / "proto-freeze.txt").read_text())
    assert _numbers(UPSTREAM_FREEZE.read_text()) == ours


def test_committed_proto_uses_the_frozen_numbers() -> None:
    text = (ROOT / "src" / "agui_msgspec" / "v1_1.proto").read_text()
    assert re.search(r"message RunFinishedEvent \{[^}]*string outcome = 5;", text)
    assert "    TextMessageStartEvent text_message_start = 1;" in text
    assert "    ReasoningEncryptedValueEvent reasoning_encrypted_value = 31;" in text
    # 1.0 has no encryptedValueType: its wire stops where @ag-ui/proto 1.0.0's does
    v1_0 = (ROOT / "src" / "agui_msgspec" / "v1_0.proto").read_text()
    assert "encrypted_value_type" not in v1_0
    assert "encrypted_value_type = 14;" in text


def test_new_field_takes_the_next_free_number_and_is_appended(tmp_path: Path) -> None:
    schema = _schema()
    schema["$defs"]["TextMessageEndEvent"]["properties"]["reason"] = {"type": "string"}
    text, freeze = _generate(tmp_path, schema)
    assert "optional string reason = 4;" in text  # message_id 2, subagent_run_id 3 are taken
    assert _numbers(freeze)["TextMessageEndEvent.reason"] == 4
    # and a second run keeps it
    text_again, freeze_again = _generate(tmp_path, schema)
    assert freeze_again == freeze
    assert text_again == text


def test_removed_field_keeps_its_number_reserved(tmp_path: Path) -> None:
    schema = _schema()
    del schema["$defs"]["TextMessageStartEvent"]["properties"]["name"]
    text, freeze = _generate(tmp_path, schema)
    block = re.search(r"message TextMessageStartEvent \{[^}]*\}", text)
    assert block is not None
    assert "reserved 4;" in block[0]
    assert " name = " not in block[0]
    assert _numbers(freeze)["TextMessageStartEvent.name"] == 4  # the freeze never forgets


def test_union_without_a_wire_strategy_stops_generation(tmp_path: Path) -> None:
    schema = _schema()
    defs = schema["$defs"]
    defs["Extra"] = {"oneOf": [{"$ref": "#/$defs/TextPart"}, {"$ref": "#/$defs/ImagePart"}]}
    defs["TextMessageEndEvent"]["properties"]["extra"] = {"$ref": "#/$defs/Extra"}
    done = _run(tmp_path, schema)
    assert done.returncode != 0
    assert "no protobuf wire for it: union Extra has no wire strategy" in done.stderr


def test_an_id_that_would_write_code_into_the_wire_module_stays_a_comment(
    tmp_path: Path,
) -> None:
    schema = _schema()
    schema["$id"] = 'https://x/spec/1.1/schema.json\nimport os; os.system("echo INJECTED")\n#'
    done = _run(tmp_path, schema)
    assert done.returncode == 0, done.stderr
    (tables,) = (tmp_path / "out").glob("*_wire.py")
    for path in (tables, tables.with_name(tables.name.replace("_wire.py", ".proto"))):
        text = path.read_text()
        assert not any(line.startswith("import os") for line in text.splitlines())
    ran = subprocess.run([sys.executable, str(tables)], capture_output=True, text=True, check=False)
    assert ran.returncode == 0
    assert "INJECTED" not in ran.stdout


def test_numbering_a_slot_costs_the_same_however_many_came_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each new slot scanned every slot's group: 8,000 properties on one event took 22 s
    from agui_msgspec._codegen.proto import Freeze  # noqa: PLC0415

    grouped: list[str] = []
    group = Freeze.group

    def counted(key: str) -> str:
        grouped.append(key)
        return group(key)

    monkeypatch.setattr(Freeze, "group", staticmethod(counted))
    freeze = Freeze("RunStartedEvent.old = 1")
    numbers = [freeze.number(f"RunStartedEvent.p{i}") for i in range(2_000)]
    assert numbers == list(range(2, 2_002))
    assert freeze.reserved("RunStartedEvent") == [1]
    assert len(grouped) <= 2 * 2_001  # once per slot, not once per slot before it
