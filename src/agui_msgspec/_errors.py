"""Every exception the library raises on purpose, under one base.

    AguiError                    catch this for "anything this library raised"
    ├── ProtocolViolation        the producer broke a rule: .rule .detail .index .path .subject .delivered
    │   ├── MalformedEvent       not JSON, not an event, or a known value the schema rejects
    │   │   └── MalformedInput   a RunAgentInput (a request body, an outgoing input) that is malformed
    │   ├── LifecycleViolation   an event where the run lifecycle does not allow it
    │   └── ChunkViolation       a *_CHUNK event that cannot be expanded
    ├── TransportError           the bytes could not be framed, or the transport failed: the same
    │                            .rule .detail .index .path .subject .delivered
    ├── HttpAgentError           the endpoint answered without an event stream: .status_code ...
    ├── RunFailed                the run reported its own failure (RUN_ERROR), when asked: .result .error
    └── UsageError               the library was called wrongly (also a ValueError)
        └── CodegenError         a schema the generator cannot turn into bindings: .pointer

A bad stream raises :class:`ProtocolViolation` (or a subclass), a broken network or framing
:class:`TransportError`; both carry ``rule``, a stable id (the docs list them), ``index``, the
0-based position of the offending event in the stream, and ``path``, a JSON Pointer into it,
so code that reports either reads one set of attributes (:data:`StreamError` names both).
``MalformedInput`` is also a ``MalformedEvent`` for one release, so ``except MalformedEvent``
around ``parse_run_input`` keeps working; catch ``MalformedInput`` instead.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

if TYPE_CHECKING:
    from agui_msgspec import v1_0, v1_1
    from agui_msgspec._http.client import RunResult


# What a message for people never carries raw: control characters (C0, DEL, C1), format
# characters (Unicode's Cf: the bidirectional marks, overrides and isolates, the zero-width
# and invisible ones, the BOM), the line and paragraph separators, lone surrogates (a file
# name that is not UTF-8, as Python reads it) and the two noncharacters XML refuses. From a
# stream they could retitle a terminal, write its clipboard, fake a line of a log (a LF, then
# "ACCEPTED") or reorder what it shows.
_INERT_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


@functools.cache
def _inert_table() -> dict[int, str]:
    # Planes 0, 1 and 14 hold every one of them (Unicode 15.1); read once, when first needed
    codes = itertools.chain(range(0x20000), range(0xE0000, 0xE1000))
    return {
        code: _escaped(code)
        for code in codes
        if code in (0xFFFE, 0xFFFF) or unicodedata.category(chr(code)) in _INERT_CATEGORIES
    }


def _escaped(code: int) -> str:
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def inert(text: str) -> str:
    """``text`` with each of those characters shown escaped (``\\x1b``, ``\\u202e``): one
    line, whatever a stream, a server or a file name put in the ids, names and paths it
    quotes."""
    return text if text.isprintable() else text.translate(_inert_table())  # the check: in C


@functools.cache
def _json_pattern() -> re.Pattern[str]:
    # C0 is JSON's own to escape (and a raw LF between values is layout, not text)
    codes = sorted(code for code in _inert_table() if code >= 0x20)
    ranges, start = [], codes[0]
    for previous, code in itertools.pairwise([*codes, -1]):
        if code != previous + 1:
            ranges.append(f"{re.escape(chr(start))}-{re.escape(chr(previous))}")
            start = code
    return re.compile(f"[{''.join(ranges)}]")


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON writes the rest as a UTF-16 surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def inert_json(text: str) -> str:
    """JSON ``text`` with each of the characters :func:`inert` escapes written as a ``\\u``
    escape: the same document, which a terminal shows without acting on. Outside a string
    JSON has none of them, and inside one the escape is the character itself."""
    return text if text.isprintable() else _json_pattern().sub(_json_escape, text)


class AguiError(Exception):
    """The base of every exception this library raises on purpose: nothing else escapes a
    public entry point. No attributes beyond the message; the subclasses add theirs."""


class _Finding(AguiError):
    """What a stream's rejection carries, whoever is at fault (the producer or the transport):
    the shared body of :class:`ProtocolViolation` and :class:`TransportError`, not a class to
    catch (``StreamError`` names the two)."""

    def __init__(
        self,
        rule: str,
        detail: str,
        *,
        index: int | None = None,
        path: str = "",
        subject: str | None = None,
    ) -> None:
        self.rule = rule
        self.detail = detail
        self.index = index
        self.path = path
        self.subject = subject
        """What ``path`` points into when it is not a stream's event ("request body", say)."""
        self.delivered: list[object] = []
        """Events of the failing payload that passed before it (a chunk expands to several)."""
        super().__init__(str(self))

    def __str__(self) -> str:
        if self.subject is not None:
            where = self.subject
        else:
            where = "end of stream" if self.index is None else f"event {self.index}"
        at = f" at {self.path}" if self.path else ""
        return inert(f"[{self.rule}] {where}{at}: {self.detail}")

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (type(self), self.rule, self.detail, self.index, self.path, self.subject))


def _rebuild(
    cls: type[_Finding],
    rule: str,
    detail: str,
    index: int | None,
    path: str,
    subject: str | None = None,
) -> _Finding:
    return cls(rule, detail, index=index, path=path, subject=subject)


class ProtocolViolation(_Finding):
    """The stream broke a rule of the AG-UI specification; the consumer rejects it.

    Attributes: ``rule`` (the stable rule id), ``detail`` (why, in words), ``index`` (the
    0-based position of the offending event; None at the end of the stream), ``path`` (a JSON
    Pointer into that event, ``""`` for the whole of it), ``subject`` (what ``path`` points
    into when it is not a stream's event, such as ``"request body"``; else None) and
    ``delivered`` (the events of the failing payload or chunk that passed before it).
    """


class MalformedEvent(ProtocolViolation):
    """A payload is not JSON, not an event object, or a known field has a value the schema rejects.

    Attributes as :class:`ProtocolViolation`; ``path`` points at the rejected value.
    """


class MalformedInput(MalformedEvent):
    """A ``RunAgentInput`` is malformed: a request body ``parse_run_input`` cannot read
    (rule ``malformed-input``), or an outgoing input ``build_run_input`` refuses
    (``malformed-input``, ``resume-uncovered``, ``resume-expired``). The run never started:
    a server answers it with an HTTP error status.

    Attributes as :class:`ProtocolViolation`, ``subject`` ``"request body"``. It is also a
    :class:`MalformedEvent` for one release (the class these errors had before).
    """


def too_deep(index: int) -> MalformedEvent:
    """Event ``index`` nests deeper than the decoder (or the interpreter's stack) goes."""
    return MalformedEvent("too-deep", "the event nests too deeply", index=index)


class LifecycleViolation(ProtocolViolation):
    """An event arrived where the run lifecycle does not allow it.

    Attributes as :class:`ProtocolViolation`.
    """


class ChunkViolation(ProtocolViolation):
    """A ``*_CHUNK`` event cannot be expanded: missing first-chunk ids, conflicting repeats,
    ambiguity.

    Attributes as :class:`ProtocolViolation`.
    """


class TransportError(_Finding):
    """The bytes could not be framed into event payloads (an oversized event, a protobuf frame
    that does not decode), or the transport failed (``HttpAgent``: ``connect``, ``timeout``,
    ``cut``, ``decode``, ``deadline``, ...). Not a :class:`ProtocolViolation`: the network,
    not the producer's protocol, may be at fault.

    Attributes as :class:`ProtocolViolation`: ``rule``, ``detail``, ``index`` (the event the
    failure came at, or None before the first), ``path``, ``subject``, ``delivered``.
    """

    def __str__(self) -> str:
        if self.index is None and self.subject is None:  # before any event, or between streams
            return inert(f"[{self.rule}] {self.detail}")
        return super().__str__()


StreamError: TypeAlias = "ProtocolViolation | TransportError"
"""What rejects a stream: the producer's fault or the transport's. Both read alike."""


class UsageError(AguiError, ValueError):
    """The library was called wrongly (an unknown protocol version, an argument of the wrong
    type, a conversion the official models cannot hold, ``run_sync`` inside an event loop);
    not a stream problem. No attributes beyond the message.
    """


def checked_bound(name: str, value: object, least: int = 0) -> int:
    """``value`` of the bound option ``name``, if it is an int of at least ``least`` (a bool
    is not); else the ``UsageError`` saying so, before a stream can fail on it mid-way.
    ``value`` is typed ``object``: a compiled caller would otherwise refuse it first, as a
    ``TypeError``."""
    if type(value) is not int:  # named by its type, as wrong_type does: a repr may be huge
        raise UsageError(f"{name} must be an int of at least {least}, not {type(value).__name__}")
    if value < least:
        raise UsageError(f"{name} must be an int of at least {least}, not {value}")
    return value


def wrong_type(what: str, value: object, expected: str) -> UsageError:
    """``what`` was given ``value``, which is not ``expected``: named by its type, never by its
    repr (a hostile value's repr may be huge, recurse, or raise)."""
    return UsageError(f"{what} takes {expected}, not {type(value).__name__}")


def checked_callback(name: str, value: object) -> None:
    """A ``UsageError`` unless ``value`` is None or callable: checked when it is given, as a
    callback is first called mid-stream, where a wrong one would fail as a ``TypeError``."""
    if value is not None and not callable(value):
        raise wrong_type(name, value, "a callable or None")


class CodegenError(UsageError):
    """The schema cannot be turned into bindings.

    Attributes: ``detail`` (why), ``pointer`` (where: a JSON Pointer into the schema; None when
    the fault is in no one place) and ``schema`` (the file, or ``""``).
    """

    def __init__(self, detail: str, pointer: str | None, *, schema: str = "") -> None:
        self.detail = detail
        self.pointer = pointer
        self.schema = schema
        super().__init__(str(self))

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.detail, self.pointer), {"schema": self.schema})

    def __str__(self) -> str:
        where = [f"cannot generate from {self.schema!r}"] if self.schema else []
        if self.pointer is not None:
            where.append(f"at #{self.pointer}")
        return f"{' '.join(where)}: {self.detail}" if where else self.detail


class HttpAgentError(AguiError):
    """The endpoint answered without an event stream: the run never started.

    Attributes: ``status_code`` (the HTTP status), ``content_type`` (the response's media
    type) and ``body`` (the start of the response body: at most 2 KiB, decoded leniently).
    """

    def __init__(self, message: str, *, status_code: int, content_type: str, body: str) -> None:
        self.status_code = status_code
        self.content_type = content_type
        self.body = body
        super().__init__(inert(message))


class RunFailed(AguiError):
    """The run reported its own failure with ``RUN_ERROR``; the stream itself was conformant.

    Raised only when asked for: ``RunResult.raise_for_status()``. Attributes: ``result`` (the
    :class:`RunResult`, with what the run delivered before it) and ``error`` (its
    ``RunErrorEvent``: ``v1_1``'s, or ``v1_0``'s from an agent of ``version="1.0"``; an
    ``except`` clause cannot know which, so it is typed as either).
    """

    def __init__(self, result: RunResult[Any, Any]) -> None:
        error = result.run.error
        if error is None:  # only a failed run is raised for, and it has its RUN_ERROR
            raise UsageError("RunFailed is for a run that failed (status 'failed')")
        self.result = result
        self.error: v1_1.RunErrorEvent | v1_0.RunErrorEvent = error
        code = self.error.code
        suffix = "" if code is msgspec.UNSET else f" ({code})"
        super().__init__(inert(f"the run failed: {self.error.message}{suffix}"))
