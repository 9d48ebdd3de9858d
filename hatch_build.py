"""The wheel's build hook: pure Python unless ``AGUI_MSGSPEC_COMPILE`` asks for mypyc.

    pip install .                          # pure wheel (py3-none-any), no C compiler needed
    AGUI_MSGSPEC_COMPILE=1 pip install .   # the modules listed in pyproject.toml, compiled

``AGUI_MSGSPEC_COMPILE`` set to a comma-separated list of source paths (relative to the
project root) compiles those instead: ``benchmarks/compiled.py`` measures each candidate alone
that way. Only when compiling does the build ask for mypy (and setuptools, which drives the C
compiler), as dynamic build dependencies; the installed package needs neither. The ``.py``
files stay in the wheel beside their extension modules, which Python imports first.
"""

from __future__ import annotations

import os
import shutil
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

SWITCH = "AGUI_MSGSPEC_COMPILE"
COMPILER = ("mypy==2.4.1", "setuptools>=61")  # mypy as pinned for development: it checks them
SHARED_LIBRARY = "agui_msgspec"  # mypyc's runtime for the group: agui_msgspec__mypyc.<ext>


def requested(value: str, configured: list[str]) -> list[str]:
    """The source paths the switch's value asks to compile: none, the configured set, or its own."""
    value = value.strip()
    if value in ("", "0"):
        return []
    if value == "1":
        return configured
    return [path.strip() for path in value.split(",") if path.strip()]


class CompileHook(BuildHookInterface):
    """``[tool.hatch.build.targets.wheel.hooks.custom] compile = [...]``: what ``=1`` compiles."""

    def _paths(self) -> list[str]:
        return requested(os.environ.get(SWITCH, ""), list(self.config.get("compile", [])))

    def dependencies(self) -> list[str]:
        # msgspec too: mypyc type-checks the modules, and without msgspec's types it compiles
        # every msgspec value as an untyped object.
        return [*COMPILER, *self.metadata.core.dependencies] if self._paths() else []

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        paths = self._paths()
        if not paths or version == "editable":  # an editable install imports the sources
            return
        missing = [path for path in paths if not Path(self.root, path).is_file()]
        if missing:
            raise ValueError(f"{SWITCH} names files that do not exist: {', '.join(missing)}")
        self._scratch = tempfile.mkdtemp(prefix="agui-msgspec-mypyc-")
        for library in compile_modules(Path(self.root), paths, Path(self._scratch)):
            build_data["force_include"][str(library)] = str(
                library.relative_to(Path(self._scratch, "lib"))
            )
        build_data["pure_python"] = False
        build_data["infer_tag"] = True  # cp3XX-cp3XX-<platform>: the extensions' own ABI

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        if getattr(self, "_scratch", None):
            shutil.rmtree(self._scratch, ignore_errors=True)


def compile_modules(root: Path, paths: list[str], scratch: Path) -> list[Path]:
    """mypyc's C for ``paths`` (one group, one shared runtime), built into ``scratch/lib``."""
    from mypyc.build import mypycify  # noqa: PLC0415 (a build dependency only when compiling)
    from setuptools import Distribution  # noqa: PLC0415

    os.environ["MYPY_CACHE_DIR"] = str(scratch / "mypy-cache")  # not in the source tree
    here = Path.cwd()
    os.chdir(root)  # mypy reads pyproject.toml's [tool.mypy] from the working directory
    try:
        # The modules compiled are checked as `mypy --strict` checks them; the rest of the
        # package is read for its types, not checked (its optional imports need not be here).
        extensions = mypycify(
            ["--follow-imports=silent", *paths],
            opt_level="3",
            target_dir=str(scratch / "c"),
            group_name=SHARED_LIBRARY,
        )
        build = Distribution({"ext_modules": extensions}).get_command_obj("build_ext")
        build.build_lib, build.build_temp = str(scratch / "lib"), str(scratch / "obj")
        build.ensure_finalized()
        build.run()
    finally:
        os.chdir(here)
    return sorted((scratch / "lib").rglob(f"*{sysconfig.get_config_var('EXT_SUFFIX')}"))
