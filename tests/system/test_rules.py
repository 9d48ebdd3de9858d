"""The rule table (``_rules.RULES``) names every rule the library raises, and each rule's
spec pages are pages of the 1.1 specification."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agui_msgspec._pipeline import lifecycle
from agui_msgspec._rules import RULES, SPEC_BASE, spec_url
from agui_msgspec._tools.conformance import RULE_PAGES

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "agui_msgspec"
ERRORS = {"ProtocolViolation", "MalformedEvent", "MalformedInput", "LifecycleViolation",
          "ChunkViolation", "TransportError"}  # fmt: skip
SPEC_PAGES = {
    "architecture",
    "schema",
    "basic/processing",
    "basic/run-input",
    "basic/transports",
    "basic/transports/http-sse",
    "basic/transports/http-protobuf",
    "basic/patterns/streaming",
    "basic/patterns/interrupt-resume",
    "events/lifecycle",
    "events/text-messages",
    "events/tool-calls",
    "events/reasoning",
    "events/subagents",
    "events/activity",
    "events/passthrough",
    "events/state",
}  # fmt: skip  (the 1.1 pages a rule can come from: docs/spec/1.1/ upstream)


def _named_rules(tree: ast.AST) -> set[str]:
    """Rule ids written as literals where an exception is made: the first argument or
    ``rule=`` of an error class, or a value bound to a name ``rule``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else None
            if name in ERRORS and node.args and isinstance(node.args[0], ast.Constant):
                found.add(node.args[0].value)
            found |= {
                k.value.value
                for k in node.keywords
                if k.arg == "rule" and isinstance(k.value, ast.Constant)
            }
        elif isinstance(node, ast.Assign):
            target, value = node.targets[0], node.value
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
                pairs = zip(target.elts, value.elts, strict=False)
            else:
                pairs = zip([target], [value], strict=True)
            found |= {
                v.value
                for t, v in pairs
                if isinstance(t, ast.Name) and t.id == "rule" and isinstance(v, ast.Constant)
            }
    return {rule for rule in found if isinstance(rule, str)}


def test_every_rule_the_source_names_is_in_the_table() -> None:
    named: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if not path.name.startswith("v1_"):
            named |= _named_rules(ast.parse(path.read_text()))
    assert len(named) > 15  # the scan finds the rules (a broken scan finds none)
    assert named - RULES.keys() == set()


def test_the_scan_finds_a_rule_missing_from_the_table() -> None:
    source = 'raise TransportError("no-such-rule", "x")\nrule, detail = "other-rule", "y"'
    assert _named_rules(ast.parse(source)) - RULES.keys() == {"no-such-rule", "other-rule"}


@pytest.mark.parametrize("kind", lifecycle._OPEN_ORDER, ids=lambda kind: kind.slug)
def test_every_item_kind_has_its_two_rules(kind: lifecycle.Kind) -> None:
    assert {f"{kind.slug}-already-open", f"{kind.slug}-not-open"} <= RULES.keys()


def test_the_conformance_runner_knows_every_rule_with_a_page() -> None:
    stream_rules = {rule.id for rule in RULES.values() if rule.pages and rule.error is not None}
    not_of_a_stream = {  # an input's, a lone message's, a writer's: a fixture cannot expect them
        "malformed-input", "resume-uncovered", "resume-expired", "malformed-message",
        "unrecognised-content",
    }  # fmt: skip
    transport = {rule.id for rule in RULES.values() if rule.error == "TransportError"}
    assert stream_rules - RULE_PAGES.keys() <= transport | not_of_a_stream


@pytest.mark.parametrize("rule", RULES.values(), ids=lambda rule: rule.id)
def test_each_rule_links_to_a_spec_page_or_is_a_bound_of_ours(rule: object) -> None:
    assert isinstance(rule, type(RULES["truncated"]))
    if rule.pages:
        assert set(rule.pages) <= SPEC_PAGES
        anchor = f"#{rule.anchor}" if rule.anchor else ""
        assert spec_url(rule.id) == SPEC_BASE + rule.pages[0] + anchor
    else:
        assert rule.bound, "a rule with no spec page is a bound: say which option sets it"
        assert spec_url(rule.id) is None


def test_an_unknown_rule_has_no_link() -> None:
    assert spec_url("no-such-rule") is None
