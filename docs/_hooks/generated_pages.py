"""The build's own checks and generated tables (a mkdocs hook).

- The rule reference is made from ``agui_msgspec._rules.RULES`` at every build, and the API
  index and the bindings page from ``agui_msgspec.__all__`` and its group comments: none is
  a committed copy that can drift.
- Every name in ``agui_msgspec.__all__`` must be documented on exactly one API page, each
  group of ``__all__`` on one page of its own, and each name must have a docstring: a
  warning, which ``mkdocs build --strict`` turns into a failed build.
"""

from __future__ import annotations

import io
import logging
import re
import tokenize
from collections import Counter
from pathlib import Path
from typing import Any

import griffe

import agui_msgspec
from agui_msgspec._rules import RULES, SPEC_BASE, Rule

log = logging.getLogger("mkdocs.hooks.agui")

API_PAGES = Path(__file__).parents[1] / "reference" / "api"
PACKAGE_INIT = Path(agui_msgspec.__file__)
ENTRY = re.compile(r"^::: agui_msgspec\.(\w+)\s*$", re.MULTILINE)
RULES_MARKER = "<!-- generated: rule table -->"
BINDINGS_MARKER = "<!-- generated: bindings -->"
INDEX_MARKER = "<!-- generated: api index -->"
# The comment that opens each of the bindings' groups in __all__: one page holds them all.
BINDINGS_GROUP = "The 1.1 bindings"
# A field the schema gives no description has no docstring: show it anyway, with its type.
BINDING_ENTRY = """::: agui_msgspec.{name}
    options:
      heading_level: 3
      show_if_no_docstring: true
"""

# Public names whose docstring lives in a module another change is rewriting: each is listed
# with the reason, and the build fails once the docstring exists (so the list cannot go stale).
PENDING_DOCSTRINGS: dict[str, str] = {}


def _all_groups() -> dict[str, list[str]]:
    """``agui_msgspec.__all__`` by the comment that opens each group, in source order."""
    groups: dict[str, list[str]] = {}
    inside = False
    current: list[str] = []
    tokens = tokenize.generate_tokens(io.StringIO(PACKAGE_INIT.read_text("utf-8")).readline)
    for token in tokens:
        if not inside:
            inside = token.type == tokenize.NAME and token.string == "__all__"
            continue
        if token.type == tokenize.OP and token.string == "]":
            break
        if token.type == tokenize.COMMENT and not token.string.startswith("# noqa"):
            current = groups.setdefault(token.string.lstrip("# ").strip(), [])
        elif token.type == tokenize.STRING:
            current.append(token.string.strip("\"'"))
    return groups


def _split_title(comment: str) -> tuple[str, str]:
    """``"The wires: readers of bodies, ..."`` -> its title and what follows the colon."""
    title, _, rest = comment.partition(":")
    return title.strip(), rest.strip()


def _binding_groups() -> dict[str, list[str]]:
    """The 1.1 bindings' groups of ``__all__`` ("events", "messages", ...), by their heading."""
    return {
        rest[:1].upper() + rest[1:]: names
        for comment, names in _all_groups().items()
        for title, rest in [_split_title(comment)]
        if title == BINDINGS_GROUP
    }


def _bindings_page() -> str:
    parts = []
    for heading, names in _binding_groups().items():
        parts.append(f"## {heading}\n")
        parts.extend(BINDING_ENTRY.format(name=name) for name in names)
    return "\n".join(parts)


def _page_groups() -> dict[str, list[str]]:
    """The groups of ``__all__`` as the API pages hold them: the bindings' groups as one."""
    pages: dict[str, list[str]] = {}
    for comment, names in _all_groups().items():
        title, _ = _split_title(comment)
        key = BINDINGS_GROUP if title == BINDINGS_GROUP else comment
        pages.setdefault(key, []).extend(names)
    return pages


def _index_table() -> str:
    where = _documented_names()
    rows = ["| page | what it holds |", "| --- | --- |"]
    for comment, names in _page_groups().items():
        page = where.get(names[0], ["?"])[0]
        title, what = _split_title(comment)
        what = re.sub(r"\s*\(.*\)$", "", what)  # a note to the code's reader, not the docs'
        if comment == BINDINGS_GROUP:
            title, what = "The 1.1 bindings", "events, messages, unions, aliases, the other Structs"
        shown = names if len(names) <= 12 else []
        held = ", ".join(f"[`{name}`][agui_msgspec.{name}]" for name in shown)
        rows.append(f"| [{title}]({page}) | {what}{': ' if held and what else ''}{held} |")
    return "\n".join(rows) + "\n"


def _error_cell(error: str | None) -> str:
    if error is None:
        return "— (reported, never raised)"
    # A class the rule table names before the package exports it is shown, not linked.
    if error in agui_msgspec.__all__:
        return f"[`{error}`][agui_msgspec.{error}]"
    return f"`{error}`"


def _pages_cell(rule: Rule) -> str:
    if not rule.pages:
        return "— (a resource bound of this library)"
    # The first page is where the rule is stated: linked to its heading when it has one.
    first, *others = rule.pages
    title = f"{first}#{rule.anchor}" if rule.anchor else first
    links = [f"[{title}]({rule.spec_url})"]
    links += [f"[{page}]({SPEC_BASE}{page})" for page in others]
    return ", ".join(links)


def _rules_table() -> str:
    rows = [
        "| rule | severity | exception | what breaks it | spec pages | set by |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for rule in RULES.values():
        bound = f"`{rule.bound}`" if rule.bound else ""
        rows.append(
            f'| <a id="{rule.id}"></a>`{rule.id}` | {rule.severity} | {_error_cell(rule.error)} '
            f"| {rule.summary} | {_pages_cell(rule)} | {bound} |"
        )
    counts = Counter(rule.severity for rule in RULES.values())
    tally = ", ".join(f"{counts[kind]} {kind}s" for kind in ("violation", "warning", "hint"))
    return "\n".join(rows) + f"\n\n{len(RULES)} rules: {tally}.\n"


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
    for comment, names in _page_groups().items():
        pages = {page for name in names for page in where.get(name, [])}
        if len(pages) > 1:
            log.warning(f"the __all__ group {comment!r} is on {sorted(pages)}: it must be on one")
        for page in pages:
            others = {n for n, on in where.items() if page in on} - set(names)
            if others:
                log.warning(f"{page} holds {sorted(others)}, which are not of {comment!r}")
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
    for marker, generate in (
        (RULES_MARKER, _rules_table),
        (BINDINGS_MARKER, _bindings_page),
        (INDEX_MARKER, _index_table),
    ):
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
