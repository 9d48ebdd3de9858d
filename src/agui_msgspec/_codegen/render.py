"""Render a :class:`~codegen.model.Bindings` through the jinja2 template."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import jinja2

from .model import Bindings, CodegenError

TEMPLATES = Path(__file__).parent / "templates"


def render_module(bindings: Bindings) -> str:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=False,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters["docstring"] = docstring
    env.filters["pystr"] = json.dumps  # a JSON string is a Python string literal
    exported = sorted(
        [e.name for e in bindings.enums]
        + [a.name for a in bindings.aliases + bindings.late_aliases]
        + [s.name for s in bindings.structs]
        + [u.name for u in bindings.unions]
        + ["CLOSED_STRING_SETS", "EVENT_TYPES", "OPEN_UNION_FIELDS", "PROTOCOL_VERSION"]
        + ["REQUIRED_FIELDS", "SCHEMA_ID", "UNIONS", "encoder", "event_decoder"],
        key=lambda name: (0 if name.isupper() else 1 if name[0].isupper() else 2, name),
    )
    needs_field = any(f.explicit_name for s in bindings.structs for f in s.fields)
    event_union = next(u for u in bindings.unions if u.name == "Event")
    text = env.get_template("bindings.py.jinja2").render(
        b=bindings, exported=exported, event_union=event_union, needs_field=needs_field
    )
    return format_source(text)


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
    done = subprocess.run(command, input=text, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CodegenError(f"ruff format failed on the generated module:\n{done.stderr}")
    return done.stdout


def docstring(text: str, indent: int) -> str:
    """A triple-quoted docstring wrapped to the project's line length."""
    width = 100 - indent
    if len(text) + 6 <= width:
        return f'"""{text}"""'
    lines = textwrap.wrap(text, width=width, break_on_hyphens=False)
    pad = " " * indent
    return '"""' + f"\n{pad}".join(lines) + f'\n{pad}"""'
