"""Render a :class:`~codegen.model.Bindings` through the jinja2 template, and import the result
before anyone writes it."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import jinja2
import msgspec

from agui_msgspec._errors import CodegenError

from .check import TABLE_NAMES
from .model import Bindings

TEMPLATES = Path(__file__).parent / "templates"


def render_module(bindings: Bindings) -> str:
    """The module's source; refused unless it imports and msgspec accepts every type in it."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["docstring"] = docstring
    env.filters["pystr"] = repr  # a str's repr is the literal that reads back as that str
    env.filters["json"] = json.dumps  # for a comment: one line of ASCII, nothing ends the comment
    type_names = (
        [e.name for e in bindings.enums]
        + [a.name for a in bindings.aliases + bindings.late_aliases]
        + [s.name for s in bindings.structs]
        + [u.name for u in bindings.unions]
    )
    exported = sorted(
        type_names + list(TABLE_NAMES),
        key=lambda name: (0 if name.isupper() else 1 if name[0].isupper() else 2, name),
    )
    needs_field = any(f.explicit_name for s in bindings.structs for f in s.fields)
    event_union = next(u for u in bindings.unions if u.name == "Event")
    try:
        text = env.get_template("bindings.py.jinja2").render(
            b=bindings, exported=exported, event_union=event_union, needs_field=needs_field
        )
    except jinja2.TemplateError as exc:
        raise CodegenError(f"the template cannot render it: {exc}", None) from None
    text = format_source(text)
    check_imports(text, bindings.module_name, type_names)
    return text


def format_source(text: str) -> str:
    """ruff's formatter as the post-pass: the template stays readable, the output tidy."""
    command = [
        sys.executable,
        "-m",
        "ruff",
        "format",
        "--line-length",
        "100",
        "--stdin-filename",
        "bindings.py",
        "-",
    ]
    done = subprocess.run(
        command, input=text, capture_output=True, text=True, encoding="utf-8", check=False
    )
    if done.returncode != 0:
        raise CodegenError(f"ruff format failed on the generated module:\n{done.stderr}", None)
    return done.stdout


_trial = itertools.count()


def check_imports(text: str, module_name: str, type_names: list[str]) -> None:
    """Run ``text`` as a module of its own and build a decoder for every type it defines (msgspec
    resolves annotations only then): a module that fails is refused, never written. Running it is
    safe because no schema text in it is code: names are checked, values are literals."""
    name = f"_agui_msgspec_codegen_trial_{next(_trial)}"
    module = types.ModuleType(name)
    sys.modules[name] = module  # msgspec resolves a Struct's annotations in its module
    try:
        code = compile(text, f"<generated {module_name}.py>", "exec", dont_inherit=True)
        exec(code, module.__dict__)
        for type_name in type_names:
            msgspec.json.Decoder(getattr(module, type_name))
    except Exception as exc:  # whatever the module raises is the reason it is refused
        detail = f"the generated module does not import: {type(exc).__name__}: {exc}"
        raise CodegenError(detail, None) from None
    finally:
        del sys.modules[name]


def docstring(text: str, indent: int) -> str:
    """``text`` as a triple-quoted docstring wrapped to the project's line length: a literal
    that reads back as ``text`` whatever it holds."""
    body = _docstring_body(text)
    width = 100 - indent
    if len(body) + 6 <= width:
        return f'"""{body}"""'
    lines = textwrap.wrap(body, width=width, break_long_words=False, break_on_hyphens=False)
    pad = " " * indent
    return '"""' + f"\n{pad}".join(lines) + f'\n{pad}"""'


def _docstring_body(text: str) -> str:
    """``text`` escaped for a docstring: backslashes doubled, unprintable characters as their
    escapes, and a quote escaped wherever it would close the string (before a quote, or last)."""
    out = []
    for index, char in enumerate(text):
        if char == "\\":
            out.append("\\\\")
        elif char == '"' and text[index + 1 : index + 2] in ('"', ""):
            out.append('\\"')
        elif not char.isprintable():
            out.append(repr(char)[1:-1])
        else:
            out.append(char)
    return "".join(out)
