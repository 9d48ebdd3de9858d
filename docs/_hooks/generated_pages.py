"""The build's own checks and generated tables (a mkdocs hook).

- The rule reference is made from ``agui_msgspec._rules.RULES`` at every build, and the
  bindings page from ``agui_msgspec.v1_1.__all__``: neither is a committed copy that can drift.
- Every name in ``agui_msgspec.__all__`` must be documented on exactly one API page, and have
  a docstring: a warning, which ``mkdocs build --strict`` turns into a failed build.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

import griffe
import msgspec

import agui_msgspec
from agui_msgspec import v1_1
from agui_msgspec._rules import RULES, SPEC_BASE

log = logging.getLogger("mkdocs.hooks.agui")

API_PAGES = Path(__file__).parents[1] / "reference" / "api"
ENTRY = re.compile(r"^::: agui_msgspec\.(\w+)\s*$", re.MULTILINE)
RULES_MARKER = "<!-- generated: rule table -->"
BINDINGS_MARKER = "<!-- generated: bindings -->"
# A Struct's fields carry no docstring of their own (yet): show them anyway, with their types.
BINDING_ENTRY = """::: agui_msgspec.{name}
    options:
      heading_level: 3
      show_if_no_docstring: true
"""

# Public names whose docstring lives in a module another change is rewriting: each is listed
# with the reason, and the build fails once the docstring exists (so the list cannot go stale).
PENDING_DOCSTRINGS = {
    "LATEST_VERSION": "constant without an attribute docstring (_versions.py)",
    "SUPPORTED_VERSIONS": "constant without an attribute docstring (_versions.py)",
    "SSE_MEDIA_TYPE": "constant without an attribute docstring (_wire/text.py)",
    "PROTOBUF_MEDIA_TYPE": "constant without an attribute docstring (_wire/protobuf/reader.py)",
    "RunStatus": "type alias without a docstring (_pipeline/lifecycle.py)",
    "PROTOCOL_VERSION": "generated constant: the generator writes no docstring for it",
    "SCHEMA_ID": "generated constant: the generator writes no docstring for it",
}


def _binding_groups() -> dict[str, list[str]]:
    """The 1.1 bindings' public names, by what they are."""
    groups: dict[str, list[str]] = {
        "Events": [], "Messages": [], "Other Structs": [], "Unions, aliases and enums": [],
        "Codecs and tables": [],
    }  # fmt: skip
    for name in v1_1.__all__:
        value = getattr(v1_1, name)
        if isinstance(value, type) and issubclass(value, msgspec.Struct):
            kind = (
                "Events" if name.endswith("Event")
                else "Messages" if name.endswith("Message")
                else "Other Structs"
            )  # fmt: skip
        elif isinstance(value, (dict, str, msgspec.json.Encoder, msgspec.json.Decoder)):
            kind = "Codecs and tables"
        else:
            kind = "Unions, aliases and enums"
        groups[kind].append(name)
    return groups


def _bindings_page() -> str:
    parts = []
    for title, names in _binding_groups().items():
        parts.append(f"## {title}\n")
        parts.extend(BINDING_ENTRY.format(name=name) for name in names)
    return "\n".join(parts)


def _error_cell(error: str) -> str:
    # A class the rule table names before the package exports it is shown, not linked.
    if error in agui_msgspec.__all__:
        return f"[`{error}`][agui_msgspec.{error}]"
    return f"`{error}`"


def _rules_table() -> str:
    rows = [
        "| rule | exception | what breaks it | spec pages | set by |",
        "| --- | --- | --- | --- | --- |",
    ]
    for rule in RULES.values():
        pages = (
            ", ".join(f"[{page}]({SPEC_BASE}{page})" for page in rule.pages)
            or "— (a resource bound of this library)"
        )
        bound = f"`{rule.bound}`" if rule.bound else ""
        rows.append(
            f'| <a id="{rule.id}"></a>`{rule.id}` | {_error_cell(rule.error)} '
            f"| {rule.summary} | {pages} | {bound} |"
        )
    return "\n".join(rows) + f"\n\n{len(RULES)} rules.\n"


def _documented_names() -> dict[str, list[str]]:
    """Each API entry's name, with the pages it is on (the bindings page counts its own)."""
    where: dict[str, list[str]] = {}
    for page in sorted(API_PAGES.glob("*.md")):
        text = page.read_text(encoding="utf-8")
        names = ENTRY.findall(text)
        if BINDINGS_MARKER in text:
            names += [name for group in _binding_groups().values() for name in group]
        for name in names:
            where.setdefault(name, []).append(page.name)
    return where


def _check_api_pages() -> None:
    where = _documented_names()
    for name in agui_msgspec.__all__:
        pages = where.get(name, [])
        if len(pages) != 1:
            log.warning(
                f"agui_msgspec.{name} is on {len(pages)} API pages {pages}: it must be on one"
            )
    for name in sorted(set(where) - set(agui_msgspec.__all__)):
        log.warning(f"agui_msgspec.{name} is documented but not in agui_msgspec.__all__")


def _check_docstrings() -> None:
    package = griffe.load("agui_msgspec", search_paths=["src"], resolve_aliases=True)
    for name in agui_msgspec.__all__:
        member = package[name]
        target = member.final_target if member.is_alias else member
        has_doc = bool(target.docstring and target.docstring.value.strip())
        if not has_doc and name not in PENDING_DOCSTRINGS:
            log.warning(f"agui_msgspec.{name} ({target.path}) has no docstring")
        if has_doc and name in PENDING_DOCSTRINGS:
            log.warning(f"agui_msgspec.{name} has a docstring now: drop it from PENDING_DOCSTRINGS")
    for name in sorted(set(PENDING_DOCSTRINGS) - set(agui_msgspec.__all__)):
        log.warning(f"PENDING_DOCSTRINGS names {name}, which is no longer public")


def on_pre_build(config: Any, **kwargs: Any) -> None:
    _check_api_pages()
    _check_docstrings()


def on_page_markdown(markdown: str, page: Any, **kwargs: Any) -> str:
    return markdown.replace(RULES_MARKER, _rules_table()).replace(BINDINGS_MARKER, _bindings_page())
