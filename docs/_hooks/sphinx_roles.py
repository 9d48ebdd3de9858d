"""A griffe extension: the docstrings' Sphinx roles (:class:`~agui_msgspec.X`) as links.

The docstrings are written for ``help()`` and Sphinx-style readers; the site renders them as
Markdown, where a role would show as literal text. Each becomes an optional cross-reference:
a link where the name is documented on the site, plain code where it is not (a private
helper), so a role can never break the strict build.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|exc|obj):`(~?)([\w.]+)`")
PACKAGE = "agui_msgspec"


def _link(match: re.Match[str]) -> str:
    short, target = match.group(1) == "~", match.group(2)
    shown = target.rsplit(".", 1)[-1] if short else target
    identifier = target if target.startswith(PACKAGE + ".") else f"{PACKAGE}.{target}"
    return f'<autoref identifier="{identifier}" optional><code>{shown}</code></autoref>'


class SphinxRoles(griffe.Extension):
    """Rewrites every role of a docstring once the object tree is complete."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ":`" in obj.docstring.value:
            obj.docstring.value = ROLE.sub(_link, obj.docstring.value)
