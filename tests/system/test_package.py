"""The package as installed: one version, and an import that loads only what every user needs
(the HTTP client's asyncio and httpx, and the 1.0 bindings, load when used)."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
import textwrap

import agui_msgspec
from agui_msgspec import __about__

# A fresh interpreter imports the package with a finder that notes, for each watched module,
# the package module whose import statement loaded it.
_IMPORT_PROBE = textwrap.dedent(
    """
    import importlib.abc, json, sys, traceback
    WATCHED = {watched!r}
    importers = {{}}

    class Probe(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name in WATCHED and name not in importers:
                frames = [f.filename for f in traceback.extract_stack()]
                ours = [f.split("agui_msgspec/")[-1] for f in frames if "agui_msgspec/" in f]
                importers[name] = ours[-1] if ours else "?"
            return None

    sys.meta_path.insert(0, Probe())
    import agui_msgspec
    print(json.dumps({{"importers": importers, "loaded": sorted(set(WATCHED) & set(sys.modules))}}))
    """
)


def imported_by_the_package() -> dict[str, object]:
    watched = ["asyncio", "ssl", "httpx", "agui_msgspec.v1_0", "agui_msgspec.v1_0_wire"]
    code = _IMPORT_PROBE.format(watched=watched)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    found: dict[str, object] = json.loads(done.stdout)
    return found


def test_import_leaves_asyncio_ssl_and_httpx_unloaded() -> None:
    loaded = imported_by_the_package()["loaded"]
    assert isinstance(loaded, list)
    assert not {"asyncio", "ssl", "httpx"} & set(loaded), loaded


def test_no_module_but_the_package_init_imports_the_1_0_bindings() -> None:
    importers = imported_by_the_package()["importers"]
    assert isinstance(importers, dict)
    for bindings in ("agui_msgspec.v1_0", "agui_msgspec.v1_0_wire"):
        assert importers.get(bindings, "__init__.py") == "__init__.py", importers


def test_import_leaves_the_1_0_bindings_unloaded() -> None:
    loaded = imported_by_the_package()["loaded"]
    assert isinstance(loaded, list)
    assert "agui_msgspec.v1_0" not in loaded
    assert "agui_msgspec.v1_0_wire" not in loaded


def test_the_1_0_bindings_load_when_asked_for() -> None:
    assert agui_msgspec.v1_0.UserMessage.role == "user"
    assert "agui_msgspec.v1_0" in sys.modules


def test_the_version_is_the_installed_metadata_version() -> None:
    assert __about__.__version__ == importlib.metadata.version("agui-msgspec")


def test_the_package_says_its_version() -> None:
    assert agui_msgspec.__version__ == __about__.__version__
