"""Generate msgspec bindings from an AG-UI JSON Schema file.

datamodel-code-generator parses the schema (references, ``allOf`` mixins,
constraints); :mod:`.model` turns its models into a small description of
msgspec Structs, tagged unions and tables, and :mod:`.render` writes that
description through the jinja2 template in ``templates/``; :mod:`.proto` writes
the same schema's protobuf wire (``.proto`` and the tables the runtime codec
reads), numbered by a field-number freeze. The schema may be anyone's:
:mod:`.check` vets it first, and a module that does not import is never written.

This folder ships in the wheel as ``agui_msgspec._codegen``; the public entry
points are ``agui_msgspec.generate()`` and ``agui-msgspec generate``.
"""

from __future__ import annotations

from pathlib import Path

from agui_msgspec._errors import CodegenError

from .model import read_schema
from .proto import render_wire, write_files
from .render import render_module

__all__ = ["CodegenError", "write_binding"]


def write_binding(
    schema: Path,
    out: Path,
    *,
    module: str | None = None,
    protocol_version: str | None = None,
    freeze: Path | None = None,
) -> list[Path]:
    """Write the whole binding for ``schema`` into ``out``: the bindings module, its
    ``.proto`` and its wire tables, numbered by the field-number freeze ``freeze`` (default:
    ``{module}.proto-freeze.txt`` in ``out``, started fresh when absent), written back when it
    gains slots. Returns the paths written, the module first. Nothing is written unless
    every file renders and the module imports (:func:`~.render.render_module` tries it)."""
    bindings = read_schema(schema, module_name=module, protocol_version=protocol_version)
    text = render_module(bindings)
    freeze_path = freeze or out / f"{bindings.module_name}.proto-freeze.txt"
    wire = render_wire(
        schema,
        out,
        freeze_path=freeze_path,
        module=bindings.module_name,
        protocol_version=bindings.protocol_version,
    )
    files = {out / f"{bindings.module_name}.py": text, **wire}
    write_files(files)
    return list(files)
