"""A public name's own docstring, as its source says it: the mypyc build (``nox -s
compiled``) drops compiled classes' docstrings at run time, and help() there shows none,
so a check of what the docs say reads the ``.py`` that ships beside the extension."""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path
from typing import Any


def own_docstring(value: Any) -> str | None:
    """``value``'s own docstring (a class's, not one it inherits), from its source when its
    module is compiled."""
    module = sys.modules.get(getattr(value, "__module__", ""), None)
    compiled = str(getattr(module, "__file__", "")).endswith((".so", ".pyd"))
    if not compiled:
        if isinstance(value, type):
            doc: str | None = value.__dict__.get("__doc__")
            return doc
        return getattr(value, "__doc__", None)
    assert module is not None
    source = Path(str(module.__file__)).with_name(module.__name__.rpartition(".")[2] + ".py")
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        defines = isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        if defines and node.name == value.__name__:
            return ast.get_docstring(node)
    return inspect.getdoc(value)
