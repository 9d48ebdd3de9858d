"""Protocol versions: which bindings a consumer uses, and bindings generated from another schema.

The pre-1.0 draft has no ``cancelled`` outcome: the seed's own example of a terminal
state added later. A consumer on draft bindings must read it as an unrecognised
union member — stripped with a warning, so the run is a success — not as malformed.
"""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

import agui_msgspec
from agui_msgspec import UsageError, consume
from agui_msgspec._versions import Bindings, ProtocolVersion, VersionForm, parse_version

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


# --- the one version grammar, read in each caller's form ------------------------------------

V = ProtocolVersion
SUPERSCRIPT, ARABIC_INDIC = "\u00b2", "\u0661"  # digits to str.isdigit, not to int()


@pytest.mark.parametrize(
    ("form", "text", "parsed"),
    [
        # generate's protocol_version: exactly MAJOR.MINOR
        ("release", "1.1", V("1", "1")),
        ("release", "01.10", V("1", "10")),
        ("release", "1", None),
        ("release", "1.1.0", None),
        ("release", "1.1.x", None),
        ("release", "1.2-draft", None),
        # a producer's protocolVersion and the bindings' own: what follows MINOR is not read
        ("declaration", "1.1", V("1", "1")),
        ("declaration", "1.10.3", V("1", "10")),
        ("declaration", "1.2.3-draft", V("1", "2")),
        ("declaration", "1.1.", V("1", "1")),
        ("declaration", "1", None),
        ("declaration", "1.2-draft", None),
        ("declaration", "1..2", None),
        ("declaration", "draft", None),
        # the version a consumer speaks: MAJOR alone is MAJOR.0, an era's patch is not read
        ("pin", "1", V("1", "0")),
        ("pin", "1.1", V("1", "1")),
        ("pin", "0.0.57", V("0", "0")),
        ("pin", "1.", None),
        ("pin", "1.x", None),
        ("pin", "1.2-draft", None),
        # a peer's era: the patch is read, nothing else may follow, nine digits a part
        ("peer", "0.0.57", V("0", "0", "57")),
        ("peer", "1.1", V("1", "1", "0")),
        ("peer", "000000001.0.0", V("1", "0", "0")),
        ("peer", "1", None),
        ("peer", "0..0", None),
        ("peer", "0.0.39-beta", None),
        ("peer", "1.1.0.1", None),
        ("peer", "1.1.", None),
        ("peer", "1234567890.0", None),
    ]
    + [
        (form, text, None)
        for form in ("release", "declaration", "pin", "peer")
        for text in (
            "",
            " 1.1",
            "1.1\n",
            SUPERSCRIPT + "1",
            f"1.{SUPERSCRIPT}",
            f"{ARABIC_INDIC}.{ARABIC_INDIC}",
        )
    ],
)
def test_each_form_reads_what_its_caller_accepts(
    form: VersionForm, text: str, parsed: ProtocolVersion | None
) -> None:
    assert parse_version(text, form) == parsed


@pytest.mark.parametrize(
    ("form", "ascending"),
    [
        ("peer", ["0.0.39", "0.0.40", "0.0.58", "1.0", "1.0.1", "1.9", "1.10", "2.0"]),
        (
            "declaration",
            ["1.9", "1.10", "1.10" + "0" * 5000, "9" * 4301 + ".0", "1" + "0" * 4301 + ".0"],
        ),
    ],
)
def test_versions_order_by_the_value_of_their_parts(
    form: VersionForm, ascending: list[str]
) -> None:
    parsed = [parse_version(text, form) or pytest.fail(text) for text in ascending]
    assert all(a < b for a, b in itertools.pairwise(parsed))
    assert parse_version("01.00", "peer") == parse_version("1.0.0", "peer") == V("1", "0", "0")
    assert parse_version("1.01", "declaration") == parse_version("1.1", "declaration")


def test_generated_bindings_have_every_member_the_protocol_names() -> None:
    generated: list[Bindings] = [agui_msgspec.v1_0, agui_msgspec.v1_1]  # modules type-check as one
    for bindings in generated:
        assert all(hasattr(bindings, member) for member in Bindings.__annotations__)


def test_draft_bindings_have_every_member_the_protocol_names(draft_bindings: ModuleType) -> None:
    assert all(hasattr(draft_bindings, member) for member in Bindings.__annotations__)
