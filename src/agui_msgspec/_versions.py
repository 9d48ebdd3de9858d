"""Which generated bindings serve which protocol version."""

from __future__ import annotations

import importlib
from types import ModuleType

from agui_msgspec._errors import UsageError

SUPPORTED_VERSIONS = ("1.0", "1.1")
LATEST_VERSION = SUPPORTED_VERSIONS[-1]


def bindings_for(version: str | ModuleType) -> ModuleType:
    """The generated module for ``version``; a module passed in is used as it is.

    Passing a module lets a consumer run on bindings generated from another
    schema file (a draft, a newer version) without a release of this package.
    """
    if isinstance(version, ModuleType):
        return version
    if version not in SUPPORTED_VERSIONS:
        raise UsageError(
            f"unsupported protocol version {version!r}; known: {', '.join(SUPPORTED_VERSIONS)}"
        )
    return importlib.import_module(f"agui_msgspec.v{version.replace('.', '_')}")


def producer_version_notice(declared: str, ours: str) -> str | None:
    """A warning when a producer declares a newer or uninterpretable version; None when quiet.

    Versions compare as MAJOR.MINOR (spec: basic/versioning); the run proceeds either way.
    """
    theirs, mine = _major_minor(declared), _major_minor(ours)
    if theirs is None:
        return f"RUN_STARTED /protocolVersion: the producer declares {declared!r}, which this consumer cannot interpret; proceeding as {ours}"
    if mine is not None and theirs > mine:
        return f"RUN_STARTED /protocolVersion: the producer declares {declared!r}, newer than this consumer's {ours}; proceeding as {ours}"
    return None


def _major_minor(version: str) -> tuple[int, int] | None:
    parts = version.split(".")
    if len(parts) < 2 or not all(part.isdigit() for part in parts[:2]):
        return None
    return int(parts[0]), int(parts[1])
