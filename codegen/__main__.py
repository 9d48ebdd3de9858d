"""``python -m codegen --schema FILE --out DIR``: write one bindings module."""

from __future__ import annotations

import argparse
from pathlib import Path

from codegen.model import read_schema
from codegen.render import render_module


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m codegen", description=__doc__)
    parser.add_argument("--schema", type=Path, required=True, help="AG-UI schema.json to read")
    parser.add_argument("--out", type=Path, required=True, help="folder to write the module into")
    args = parser.parse_args(argv)

    bindings = read_schema(args.schema)
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"{bindings.module_name}.py"
    target.write_text(render_module(bindings), encoding="utf-8")
    print(target)


if __name__ == "__main__":
    main()
