"""Which generated bindings serve which protocol version, and how versions read and compare."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, Final, Literal, Protocol, TypeAlias

import msgspec

from agui_msgspec._errors import UsageError, wrong_type

SUPPORTED_VERSIONS: Final[tuple[Literal["1.0"], Literal["1.1"]]] = ("1.0", "1.1")
"""The protocol versions a ``version=`` string may name: each has bindings in the package."""
LATEST_VERSION: Final = SUPPORTED_VERSIONS[-1]
"""The newest of them: every ``version=`` defaults to it (``agui_msgspec.PROTOCOL_VERSION``)."""


class Bindings(Protocol):
    """What the runtime reads from a generated bindings module (``agui_msgspec.v1_1``, or
    one ``agui-msgspec generate`` wrote): a module is one as it stands.

    ``PROTOCOL_VERSION`` is read-only: a module's ``PROTOCOL_VERSION = "1.1"`` is a
    ``Literal`` to some checkers (pyright), which a mutable ``str`` member would refuse. The
    classes are ``type[Any]``: each version's have their own fields, and a mutable member is
    invariant. Other classes are looked up by name (the events a chunk expands to, an
    official model's counterpart).
    """

    @property
    def PROTOCOL_VERSION(self) -> str: ...  # noqa: N802  (the module's name)

    EVENT_TYPES: dict[str, type[msgspec.Struct]]
    UNIONS: dict[str, tuple[str, dict[str, type[msgspec.Struct]]]]
    CLOSED_STRING_SETS: dict[str, frozenset[str]]
    OPEN_UNION_FIELDS: dict[type[msgspec.Struct], dict[str, Any]]
    event_decoder: msgspec.json.Decoder[Any]
    RunAgentInput: type[Any]
    RunStartedEvent: type[Any]
    RunErrorEvent: type[Any]
    AssistantMessage: type[Any]
    ToolMessage: type[Any]
    ReasoningMessage: type[Any]
    ActivityMessage: type[Any]
    ToolCall: type[Any]
    FunctionCall: type[Any]


VersionLike: TypeAlias = str | Bindings
"""Where a protocol version is asked for: a supported version string, or generated bindings."""

# The members whose absence marks a module as not bindings at all.
_BINDINGS_NAMES = ("PROTOCOL_VERSION", "EVENT_TYPES", "UNIONS", "RunAgentInput", "event_decoder")


def bindings_for(version: VersionLike) -> Bindings:
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
    if not isinstance(version, str):
        raise wrong_type("version=", version, "a version string or a bindings module")
    if version not in SUPPORTED_VERSIONS:
        raise UsageError(
            f"unsupported protocol version {version!r}; known: {', '.join(SUPPORTED_VERSIONS)}"
        )
    return importlib.import_module(f"agui_msgspec.v{version.replace('.', '_')}")


def load_bindings(path: str | Path) -> Bindings:
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


VersionForm = Literal["release", "declaration", "pin", "peer"]
"""How much of the one version grammar, ``MAJOR[.MINOR[.REST]]``, a reader accepts:

- ``"release"``: MAJOR.MINOR, no REST (the version ``generate`` stamps on bindings);
- ``"declaration"``: MAJOR.MINOR, any REST accepted and not read (a producer's
  ``protocolVersion``, the bindings' own: spec basic/versioning compares MAJOR.MINOR);
- ``"pin"``: a declaration, or MAJOR alone, read as MAJOR.0 (the version a consumer speaks);
- ``"peer"``: MAJOR.MINOR, or MAJOR.MINOR.PATCH with the patch read, each part at most nine
  digits (the era a peer is known to speak: ``0.0.39``).

MAJOR, MINOR and PATCH are ASCII digits: ``str.isdigit`` alone also takes ``"²"``, which
``int()`` refuses.
"""

_PEER_DIGITS = 9  # at most, in each part of a peer's version: peer_version's limit as it was


@functools.total_ordering
@dataclass(frozen=True)
class ProtocolVersion:
    """A protocol version's numeric parts, ordered by value (``1.10`` after ``1.9``).

    Each part is its ASCII digits without leading zeros (``"0"`` for zero), never an
    ``int``: a producer chooses the string, and ``int()`` refuses 4,301 digits and is
    quadratic before that, while ordering by length, then digits, is linear.
    """

    major: str
    minor: str = "0"
    patch: str = "0"

    def __lt__(self, other: ProtocolVersion) -> bool:
        return self._order() < other._order()

    def _order(self) -> tuple[tuple[int, str], ...]:
        return tuple((len(part), part) for part in (self.major, self.minor, self.patch))


def parse_version(text: str, form: VersionForm) -> ProtocolVersion | None:
    """``text`` as a :class:`ProtocolVersion` if it has the ``form`` asked for, else None.

    Linear in the length of ``text``, and raises nothing: a producer's string is read
    as safely as the application's own.
    """
    major, *more = text.split(".", 2)
    if not _is_number(major):
        return None
    if not more:  # MAJOR alone
        return ProtocolVersion(_digits(major)) if form == "pin" else None
    minor, *rest = more
    if not _is_number(minor):
        return None
    if form == "peer":
        patch = rest[0] if rest else "0"
        if not _is_number(patch) or max(map(len, (major, minor, patch))) > _PEER_DIGITS:
            return None
        return ProtocolVersion(_digits(major), _digits(minor), _digits(patch))
    if form == "release" and rest:
        return None
    return ProtocolVersion(_digits(major), _digits(minor))


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _digits(number: str) -> str:
    return number.lstrip("0") or "0"


def producer_version_notice(declared: str, ours: str) -> str | None:
    """A warning when a producer declares a newer or uninterpretable version, or when the
    bindings' own version is not ``MAJOR.MINOR`` (a draft); None when quiet.

    Versions compare as MAJOR.MINOR (spec: basic/versioning); the run proceeds either way.
    """
    theirs, mine = parse_version(declared, "declaration"), parse_version(ours, "declaration")
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
