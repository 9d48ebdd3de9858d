"""Typed end to end: an SDK-style user file passes ``mypy --strict`` with no cast and no Any
(issue 24), the entry points' results have the version's own types, and a typo is caught."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mypy")
pytest.importorskip("ag_ui")

CASES = Path(__file__).parent / "typing_cases"
SRC = Path(__file__).resolve().parents[2] / "src"
V11 = "agui_msgspec.v1_1"
EVENT = f"{V11}.TextMessageStartEvent | {V11}.TextMessageContentEvent"  # how the union begins
MESSAGE = f"{V11}.DeveloperMessage | {V11}.SystemMessage | {V11}.AssistantMessage"


def mypy(case: str, tmp_path: Path) -> tuple[int, str]:
    """``mypy --strict`` on one case file, as a user's project would run it."""
    target = tmp_path / case
    shutil.copy(CASES / case, target)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            str(target),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"MYPYPATH": str(SRC), "PATH": "", "PYTHONPATH": str(SRC)},
        check=False,
        timeout=600,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.fixture(scope="module")
def user_sdk(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, str]:
    return mypy("user_sdk.py", tmp_path_factory.mktemp("typing"))


def revealed(output: str) -> list[str]:
    return re.findall(r'Revealed type is "(.*)"', output)


def test_an_sdk_written_on_the_library_passes_mypy_strict(user_sdk: tuple[int, str]) -> None:
    code, output = user_sdk
    errors = [line for line in output.splitlines() if ": error:" in line]
    assert errors == []
    assert code == 0, output


def test_the_entry_points_return_the_versions_own_types(user_sdk: tuple[int, str]) -> None:
    types = revealed(user_sdk[1])
    assert types[:4] == [
        f"{V11}.RunAgentInput",
        "agui_msgspec.v1_0.RunAgentInput",
        f"{V11}.RunAgentInput",
        f"{V11}.RunAgentInput",
    ]
    assert types[4].startswith(EVENT)  # from_official(an official event): the event union
    assert types[5].startswith("ag_ui.")  # to_official: the official model back
    assert types[5].endswith(".RunAgentInput")
    assert types[6].startswith(f"list[{EVENT}")
    assert types[7].startswith(f"list[{MESSAGE}")
    assert types[8] == (
        f"{V11}.RunFinishedSuccessOutcome | {V11}.RunFinishedInterruptOutcome"
        f" | {V11}.RunFinishedCancelledOutcome | None"
    )
    assert types[9] == f"{V11}.RunErrorEvent | None"
    assert types[10].startswith(EVENT)  # RunStream yields the event union
    assert types[11] == (
        "Literal['active'] | Literal['completed'] | Literal['interrupted'] | "
        "Literal['cancelled'] | Literal['failed'] | Literal['truncated']"
    )
    v10 = "agui_msgspec.v1_0"
    assert types[12].startswith(f"{v10}.TextMessageStartEvent | {v10}.TextMessageContentEvent")
    assert types[13] == f"{v10}.RunErrorEvent | None"
    assert types[14].startswith(f"list[{v10}.DeveloperMessage | {v10}.SystemMessage")
    assert types[15] == f"{v10}.RunAgentInput"
    assert types[16] == f"{V11}.RunErrorEvent | {v10}.RunErrorEvent | None"
    assert types[17] == f"{V11}.RunAgentInput | {v10}.RunAgentInput"
    assert "Any" not in " ".join(types)


def test_a_misspelt_field_is_a_type_error(tmp_path: Path) -> None:
    code, output = mypy("typo.py", tmp_path)
    assert code == 1
    assert '"RunAgentInput" has no attribute "thread_idd"' in output
