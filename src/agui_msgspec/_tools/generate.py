"""``agui_msgspec.generate``: the binding for any AG-UI schema file (msgspec module, ``.proto``,
wire tables), from the installed package.

The generator itself is ``agui_msgspec._codegen``;
its tools come with the ``codegen`` extra, and are imported only when called.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import unicodedata
from pathlib import Path

from agui_msgspec._errors import UsageError, wrong_type
from agui_msgspec._versions import parse_version

# The generator's tools: import name → distribution, for the message when one is missing.
_TOOLS = {
    "datamodel_code_generator": "datamodel-code-generator",
    "jinja2": "jinja2",
    "ruff": "ruff",
}


def generate(
    schema: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    module: str | None = None,
    protocol_version: str | None = None,
    freeze: str | os.PathLike[str] | None = None,
) -> Path:
    """Write the binding for the AG-UI schema file ``schema`` into the folder ``out``: the
    msgspec module ``{module}.py``, its protobuf wire schema ``{module}.proto`` and the wire
    tables the runtime reads, ``{module}_wire.py``.

    Returns the module's path; with ``out`` on ``sys.path`` it imports as ``module``,
    and it is accepted wherever a ``version=`` is, on both wires (SSE and protobuf).
    ``module`` and ``protocol_version`` (``MAJOR.MINOR``) default to what the schema's
    ``$id`` names (``.../spec/1.1/schema.json``: ``v1_1`` and ``1.1``); give them for a draft.

    ``freeze`` is the field-number freeze file the user keeps (``Message.field = N`` lines):
    a new field or arm gets the next free number of its message and is appended, a removed
    one stays, reserved, and the file is written back in place. Without it, the freeze is
    ``{module}.proto-freeze.txt`` in ``out``, started fresh when absent. A freeze that gives
    two slots one number, or renumbers the wire tables already in ``out``, is refused
    (``CodegenError`` naming the slots).
    Raises :class:`UsageError` for a missing ``codegen`` extra or a bad name, and its
    subclass ``CodegenError`` for a schema the generator cannot turn into a module that
    imports, or into a protobuf wire (``pointer``: where in the schema, a JSON Pointer). The
    schema is read as data: its ``$ref`` must name its own ``$defs``, never another file or
    a URL. Nothing is written unless every file renders.
    """
    written = generate_files(
        schema, out, module=module, protocol_version=protocol_version, freeze=freeze
    )
    return written[0]


def generate_files(
    schema: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    module: str | None = None,
    protocol_version: str | None = None,
    freeze: str | os.PathLike[str] | None = None,
) -> list[Path]:
    """:func:`generate`, returning every path written: the module, its ``.proto``, its wire
    tables, and the freeze when it was written."""
    for name, path in (("schema", schema), ("out", out)):
        if not isinstance(path, (str, os.PathLike)):
            raise wrong_type(name, path, "a path (str or os.PathLike)")
    if module is not None and not isinstance(module, str):
        raise wrong_type("module=", module, "a module name (str)")
    if protocol_version is not None and not isinstance(protocol_version, str):
        raise wrong_type("protocol_version=", protocol_version, "a version string")
    if freeze is not None and not isinstance(freeze, (str, os.PathLike)):
        raise wrong_type("freeze=", freeze, "a path (str or os.PathLike) or None")
    if module is not None and (
        not module.isidentifier()
        or keyword.iskeyword(module)
        or unicodedata.normalize("NFKC", module) != module  # "ﬁeld" is imported as "field"
    ):
        raise UsageError(f"module name {module!r} is not usable: not a Python identifier")
    if protocol_version is not None and parse_version(protocol_version, "release") is None:
        raise UsageError(f"protocol version {protocol_version!r} is not MAJOR.MINOR")
    missing = [dist for name, dist in _TOOLS.items() if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(
            f"generating bindings needs {', '.join(missing)}: pip install 'agui-msgspec[codegen]'"
        )
    from agui_msgspec._codegen import CodegenError, write_binding  # noqa: PLC0415

    source = Path(schema)
    try:
        return write_binding(
            source.resolve(),  # the parser reads references from it as a file URI: absolute
            Path(out),
            module=module,
            protocol_version=protocol_version,
            freeze=None if freeze is None else Path(freeze),
        )
    except CodegenError as exc:
        raise CodegenError(exc.detail, exc.pointer, schema=str(source)) from None
    except RecursionError:  # a chain of definitions too long for the parser's recursion
        raise CodegenError("nested too deeply to generate", None, schema=str(source)) from None
    except OSError as exc:
        raise UsageError(f"cannot generate: {exc.filename}: {exc.strerror or exc}") from None
