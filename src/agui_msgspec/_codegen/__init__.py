"""Generate msgspec bindings from an AG-UI JSON Schema file.

datamodel-code-generator parses the schema (references, ``allOf`` mixins,
constraints); :mod:`.model` turns its models into a small description of
msgspec Structs, tagged unions and tables, and :mod:`.render` writes that
description through the jinja2 template in ``templates/``. The schema may be
anyone's: :mod:`.check` vets it first, and a module that does not import is
never written.

This folder ships in the wheel as ``agui_msgspec._codegen``; the public entry
points are ``agui_msgspec.generate()`` and ``agui-msgspec generate``.
"""

from __future__ import annotations

from pathlib import Path

from agui_msgspec._errors import CodegenError

from .model import read_schema
from .render import render_module

__all__ = ["CodegenError", "write_module"]


def write_module(
    schema: Path, out: Path, *, module: str | None = None, protocol_version: str | None = None
) -> Path:
    """Write the bindings module for ``schema`` into ``out``; return its path. Nothing is
    written unless the module imports (:func:`~.render.render_module` tries it)."""
    bindings = read_schema(schema, module_name=module, protocol_version=protocol_version)
    text = render_module(bindings)
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{bindings.module_name}.py"
    target.write_text(text, encoding="utf-8")
    return target
