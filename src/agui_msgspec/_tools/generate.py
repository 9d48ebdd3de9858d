"""``agui_msgspec.generate``: bindings for any AG-UI schema file, from the installed package.

The generator itself is ``agui_msgspec._codegen``;
its tools come with the ``codegen`` extra, and are imported only when called.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
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
) -> Path:
    """Write msgspec bindings for the AG-UI schema file ``schema`` into the folder ``out``.

    Returns the module's path; with ``out`` on ``sys.path`` it imports as ``module``,
    and it is accepted wherever a ``version=`` is. ``module`` and ``protocol_version``
    (``MAJOR.MINOR``) default to what the schema's ``$id`` names
    (``.../spec/1.1/schema.json``: ``v1_1`` and ``1.1``); give them for a draft.
    Raises :class:`UsageError` for a missing ``codegen`` extra or a bad name, and its
    subclass ``CodegenError`` for a schema the generator cannot turn into a module that
    imports (``pointer``: where in the schema, a JSON Pointer). The schema is read as data:
    its ``$ref`` must name its own ``$defs``, never another file or a URL.
    """
    for name, path in (("schema", schema), ("out", out)):
        if not isinstance(path, (str, os.PathLike)):
            raise wrong_type(name, path, "a path (str or os.PathLike)")
    if module is not None and not isinstance(module, str):
        raise wrong_type("module=", module, "a module name (str)")
    if protocol_version is not None and not isinstance(protocol_version, str):
        raise wrong_type("protocol_version=", protocol_version, "a version string")
    if module is not None and (not module.isidentifier() or keyword.iskeyword(module)):
        raise UsageError(f"module name {module!r} is not usable: not a Python identifier")
    if protocol_version is not None and parse_version(protocol_version, "release") is None:
        raise UsageError(f"protocol version {protocol_version!r} is not MAJOR.MINOR")
    missing = [dist for name, dist in _TOOLS.items() if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(
            f"generating bindings needs {', '.join(missing)}: pip install 'agui-msgspec[codegen]'"
        )
    from agui_msgspec._codegen import CodegenError, write_module  # noqa: PLC0415

    source = Path(schema)
    try:
        return write_module(source, Path(out), module=module, protocol_version=protocol_version)
    except CodegenError as exc:
        raise CodegenError(exc.detail, exc.pointer, schema=str(source)) from None
    except RecursionError:  # a chain of definitions too long for the parser's recursion
        raise CodegenError("nested too deeply to generate", None, schema=str(source)) from None
    except OSError as exc:
        raise UsageError(f"cannot generate: {exc.filename}: {exc.strerror or exc}") from None
