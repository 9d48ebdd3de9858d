"""Every ```python block of the README and docs/ passes ``mypy --strict`` as a module of its
own, so an example cannot teach code that fails the types it shows.

A block that is a fragment on purpose is marked with ``<!-- docs-check: skip (why) -->`` on
the line before it. A block that fails because of the library's own annotations (not the
example's) is listed in ``XFAIL`` as a strict xfail: once the library is typed, it
passes and the test says to take it off the list. ``nox -s docs`` runs this with mypy
installed; elsewhere it skips when mypy is absent.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

import agui_msgspec

ROOT = Path(__file__).resolve().parents[2]
SKIP_MARK = "<!-- docs-check: skip"
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```python[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.MULTILINE | re.DOTALL,
)

# Blocks that fail mypy --strict only through the library's own annotations, each with the
# reason; strict, so an entry goes once the library's types let the block pass.
XFAIL: dict[str, str] = {}


@dataclass(frozen=True)
class Block:
    name: str  # "<file>#<n>": the n-th python block of the file, from 1
    source: str
    skipped: bool

    @property
    def module(self) -> str:
        return "block_" + re.sub(r"\W", "_", self.name)


def documents() -> list[Path]:
    docs = sorted((ROOT / "docs").rglob("*.md"))
    return [ROOT / "README.md", *docs]


def blocks() -> list[Block]:
    found = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        for number, match in enumerate(FENCE.finditer(text), start=1):
            before = text[: match.start()].rstrip().rsplit("\n", 1)[-1]
            indent = match.group("indent")
            lines = match.group("body").splitlines()
            source = "\n".join(line.removeprefix(indent) for line in lines) + "\n"
            name = f"{path.relative_to(ROOT).as_posix()}#{number}"
            found.append(Block(name, source, before.strip().startswith(SKIP_MARK)))
    return found


BLOCKS = blocks()


@pytest.fixture(scope="module")
def mypy_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """mypy --strict once over every checked block (one module each): its errors by module."""
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("AGUI_DOCS_REQUIRED"):
            pytest.fail("mypy is not installed (nox -s docs must check the examples)")
        pytest.skip("mypy is not installed: `nox -s docs` checks the examples")
    folder = tmp_path_factory.mktemp("examples")
    checked = [block for block in BLOCKS if not block.skipped]
    for block in checked:
        (folder / f"{block.module}.py").write_text(block.source, encoding="utf-8")
    command = [
        sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--no-error-summary",
        "--show-error-codes", "--config-file", os.devnull, *(f"{b.module}.py" for b in checked),
    ]  # fmt: skip
    env = dict(os.environ)
    package_root = Path(agui_msgspec.__file__).parents[1]
    if "site-packages" not in package_root.parts:  # a checkout on PYTHONPATH, not installed
        env["MYPYPATH"] = str(package_root)
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, check=False)
    assert done.returncode in (0, 1), done.stderr or done.stdout  # 2: mypy itself failed
    errors: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        module = line.split(".py:", 1)[0]
        errors.setdefault(module, []).append(line)
    return errors


def _param(block: Block) -> object:
    marks = []
    if block.name in XFAIL:
        marks.append(pytest.mark.xfail(reason=XFAIL[block.name], strict=True))
    return pytest.param(block, id=block.name, marks=marks)


@pytest.mark.parametrize("block", [_param(b) for b in BLOCKS if not b.skipped])
def test_the_example_passes_mypy_strict(block: Block, mypy_errors: dict[str, list[str]]) -> None:
    errors = mypy_errors.get(block.module, [])
    assert errors == [], "\n" + block.source + "\n" + "\n".join(errors)


def test_every_listed_block_exists_and_few_are_skipped() -> None:
    names = {block.name for block in BLOCKS}
    assert sorted(set(XFAIL) - names) == []  # an entry whose block moved or went
    skipped = [block.name for block in BLOCKS if block.skipped]
    assert len(skipped) <= len(BLOCKS) // 10, skipped
