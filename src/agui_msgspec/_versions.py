"""Which generated bindings serve which protocol version, and how versions compare."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from agui_msgspec._errors import UsageError

SUPPORTED_VERSIONS = ("1.0", "1.1")
LATEST_VERSION = SUPPORTED_VERSIONS[-1]

# What the runtime reads from a bindings module; a module without them is not one.
_BINDINGS_NAMES = ("PROTOCOL_VERSION", "EVENT_TYPES", "UNIONS", "RunAgentInput", "event_decoder")


def bindings_for(version: str | ModuleType) -> ModuleType:
    """The generated module for ``version``; a module passed in is used as it is.

    Passing a module lets a consumer run on bindings generated from another
    schema file (a draft, a newer version) without a release of this package.
    """
    if isinstance(version, ModuleType):
        missing = [name for name in _BINDINGS_NAMES if not hasattr(version, name)]
        if missing:
            raise UsageError(
                f"module {version.__name__!r} is not generated AG-UI bindings "
                f"(no {', '.join(missing)}); make one with `agui-msgspec generate`"
            )
        return version
    if version not in SUPPORTED_VERSIONS:
        raise UsageError(
            f"unsupported protocol version {version!r}; known: {', '.join(SUPPORTED_VERSIONS)}"
        )
    return importlib.import_module(f"agui_msgspec.v{version.replace('.', '_')}")


def load_bindings(path: str | Path) -> ModuleType:
    """The bindings module in the file at ``path`` (what ``agui-msgspec generate`` wrote).

    It is registered in ``sys.modules`` under its file name, as an import would,
    because msgspec resolves the Structs' annotations through it; a name some other
    module holds there is refused rather than replaced.
    """
    path = Path(path)
    name = path.stem
    if path.suffix != ".py" or not name.isidentifier():
        raise UsageError(f"{str(path)!r} is not a Python module file (NAME.py)")
    loaded = sys.modules.get(name)
    if loaded is not None:
        if getattr(loaded, "__file__", None) == str(path.resolve()):
            return bindings_for(loaded)
        raise UsageError(f"a module named {name!r} is already imported: rename {str(path)!r}")
    spec = importlib.util.spec_from_file_location(name, path.resolve())
    if spec is None or spec.loader is None:  # pragma: no cover - a .py path always has a spec
        raise UsageError(f"cannot load {str(path)!r}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        return bindings_for(module)
    except UsageError:
        del sys.modules[name]
        raise
    except FileNotFoundError:
        del sys.modules[name]
        raise UsageError(f"cannot read {str(path)!r}: no such file") from None
    except Exception as exc:
        del sys.modules[name]
        raise UsageError(f"cannot load {str(path)!r}: {type(exc).__name__}: {exc}") from None


def version_key(version: str) -> tuple[tuple[int, str], tuple[int, str]] | None:
    """``MAJOR.MINOR`` (anything after a further ``.`` ignored) as a sortable key, or None.

    Only ASCII digits count, and no number is built: the key compares the digits
    by length, then by value, so any string costs linear time and raises nothing
    (``int()`` refuses ``"²"``, which ``str.isdigit`` accepts, and 4,301 digits).
    """
    major, dot, rest = version.partition(".")
    minor = rest.partition(".")[0]
    if not (dot and _is_number(major) and _is_number(minor)):
        return None
    return _number_key(major), _number_key(minor)


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _number_key(digits: str) -> tuple[int, str]:
    significant = digits.lstrip("0")
    return len(significant), significant


def producer_version_notice(declared: str, ours: str) -> str | None:
    """A warning when a producer declares a newer or uninterpretable version, or when the
    bindings' own version is not ``MAJOR.MINOR`` (a draft); None when quiet.

    Versions compare as MAJOR.MINOR (spec: basic/versioning); the run proceeds either way.
    """
    theirs, mine = version_key(declared), version_key(ours)
    if theirs is None:
        return f"RUN_STARTED /protocolVersion: the producer declares {_shown(declared)}, which this consumer cannot interpret; proceeding as {_shown(ours)}"
    if mine is None:
        return f"RUN_STARTED /protocolVersion: the producer declares {_shown(declared)}; these bindings are {_shown(ours)}, not MAJOR.MINOR, so the two cannot be compared"
    if theirs > mine:
        return f"RUN_STARTED /protocolVersion: the producer declares {_shown(declared)}, newer than this consumer's {ours}; proceeding as {ours}"
    return None


def _shown(version: str, limit: int = 40) -> str:
    """A version string for a message: quoted, and cut, since a producer chooses its length."""
    return (
        repr(version)
        if len(version) <= limit
        else f"{version[:limit]!r}… ({len(version)} characters)"
    )
