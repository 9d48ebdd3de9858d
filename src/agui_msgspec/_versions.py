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
