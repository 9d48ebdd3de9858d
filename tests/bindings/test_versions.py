"""Protocol versions: which bindings a consumer uses, and bindings generated from another schema.

The pre-1.0 draft has no ``cancelled`` outcome: the seed's own example of a terminal
state added later. A consumer on draft bindings must read it as an unrecognised
union member — stripped with a warning, so the run is a success — not as malformed.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

import agui_msgspec
from agui_msgspec import UsageError, consume

ROOT = Path(__file__).resolve().parents[2]
DRAFT = ROOT.parent / "shared" / "agui" / "schema" / "pre-1.0-draft" / "schema.json"


@pytest.fixture(scope="module")
def draft_bindings(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    if not DRAFT.exists():
        pytest.skip(f"the pre-1.0 draft schema is absent ({DRAFT})")
    out = tmp_path_factory.mktemp("draft")
    agui_msgspec.generate(DRAFT, out)
    spec = importlib.util.spec_from_file_location("agui_draft_bindings", out / "vdraft.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # msgspec resolves the Structs' annotations through it
    spec.loader.exec_module(module)
    return module


def stream(outcome: dict[str, Any]) -> list[bytes]:
    return [
        msgspec.json.encode(event)
        for event in (
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r", "outcome": outcome},
        )
    ]


def test_draft_bindings_strip_the_later_cancelled_outcome(draft_bindings: ModuleType) -> None:
    result = consume(stream({"type": "cancelled"}), version=draft_bindings)
    assert result.outcome == "completed"
    assert [run.status for run in result.runs] == ["completed"]
    assert any("/outcome" in warning and "cancelled" in warning for warning in result.warnings)
    assert result.events[-1].outcome is msgspec.UNSET  # type: ignore[attr-defined]


def test_current_bindings_read_cancelled_as_cancelled() -> None:
    result = consume(stream({"type": "cancelled"}), version="1.1")
    assert result.outcome == "completed"
    assert [run.status for run in result.runs] == ["cancelled"]
    assert result.warnings == []


def test_draft_bindings_still_reject_a_malformed_outcome(draft_bindings: ModuleType) -> None:
    result = consume(stream({"kind": "cancelled"}), version=draft_bindings)
    assert result.outcome == "failed"
    assert result.violation is not None
    assert (result.violation.rule, result.violation.index) == ("malformed-event", 1)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_each_version_uses_its_own_bindings(version: str) -> None:
    consumer = agui_msgspec.Consumer(version=version)
    assert version == consumer.bindings.PROTOCOL_VERSION


def test_an_unknown_version_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match=r"2\.0"):
        agui_msgspec.Consumer(version="2.0")


def test_the_package_re_exports_the_newest_bindings() -> None:
    assert agui_msgspec.RunFinishedEvent is agui_msgspec.v1_1.RunFinishedEvent
    assert "encrypted_value_type" in agui_msgspec.ReasoningMessage.__struct_fields__
    assert "encrypted_value_type" not in agui_msgspec.v1_0.ReasoningMessage.__struct_fields__
