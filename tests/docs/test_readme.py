"""The README is the front door: short, with the two commands a newcomer runs, and links
that lead into the documentation (every page of substance lives under docs/)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
COMMANDS = [
    "python -m pip install . && python -m agui_msgspec check examples/plain-answer.sse",
    "python -m pip install nox && python -m nox -s tests",
]


def test_the_readme_fits_on_a_few_screens() -> None:
    assert len(README.splitlines()) <= 150


def test_the_readme_keeps_its_two_commands_as_they_are() -> None:
    for command in COMMANDS:
        assert f"```sh\n{command}\n```" in README


def test_every_relative_link_of_the_readme_leads_to_a_file() -> None:
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [t for t in targets if "://" not in t]
    assert any(t.startswith("docs/") for t in local)
    assert [t for t in local if not (ROOT / t).exists()] == []
