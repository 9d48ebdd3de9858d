"""Every exception the library raises on purpose, under one base.

    AguiError
    ├── ProtocolViolation        the stream broke a rule: .rule .index .path .subject .delivered
    │   ├── MalformedEvent       not JSON, not an event, or a known value the schema rejects
    │   ├── LifecycleViolation   an event where the run lifecycle does not allow it
    │   ├── ChunkViolation       a *_CHUNK event that cannot be expanded
    │   └── TransportError       the bytes could not be framed, or the transport failed
    ├── HttpAgentError           the endpoint answered without an event stream: .status_code ...
    ├── RunFailed                the run reported its own failure (RUN_ERROR): .result .error
    └── UsageError               the library was called wrongly (also a ValueError)
        └── CodegenError         a schema the generator cannot turn into bindings: .pointer

A bad stream raises :class:`ProtocolViolation` (or a subclass) and nothing else:
``rule`` is a stable id (the docs list them), ``index`` the 0-based position of
the offending event in the stream, ``path`` a JSON Pointer into that event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

if TYPE_CHECKING:
    from agui_msgspec._http.client import RunResult


class AguiError(Exception):
    """The base of every exception this library raises on purpose."""


class ProtocolViolation(AguiError):
    """The stream broke a rule of the AG-UI specification; the consumer rejects it."""

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
        return f"[{self.rule}] {where}{at}: {self.detail}"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (type(self), self.rule, self.detail, self.index, self.path, self.subject))


def _rebuild(
    cls: type[ProtocolViolation],
    rule: str,
    detail: str,
    index: int | None,
    path: str,
    subject: str | None = None,
) -> ProtocolViolation:
    return cls(rule, detail, index=index, path=path, subject=subject)


class MalformedEvent(ProtocolViolation):
    """A payload is not JSON, not an event object, or a known field has a value the schema rejects."""


def too_deep(index: int) -> MalformedEvent:
    """Event ``index`` nests deeper than the decoder (or the interpreter's stack) goes."""
    return MalformedEvent("too-deep", "the event nests too deeply", index=index)


class LifecycleViolation(ProtocolViolation):
    """An event arrived where the run lifecycle does not allow it."""


class ChunkViolation(ProtocolViolation):
    """A ``*_CHUNK`` event cannot be expanded: missing first-chunk ids, conflicting repeats, ambiguity."""


class TransportError(ProtocolViolation):
    """The bytes could not be framed into event payloads (an oversized event, say), or the
    transport failed (``HttpAgent``: ``connect``, ``timeout``, ``cut``, ``decode``, ...)."""

    def __str__(self) -> str:
        if self.index is None and self.subject is None:  # before any event, or between streams
            return f"[{self.rule}] {self.detail}"
        return super().__str__()


class UsageError(AguiError, ValueError):
    """The library was called wrongly (an unknown protocol version, say); not a stream problem."""


class CodegenError(UsageError):
    """The schema cannot be turned into bindings: ``pointer`` is where (a JSON Pointer into the
    schema; ``None`` when the fault is in no one place), ``schema`` the file, the message why."""

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

    ``status_code`` is the HTTP status, ``content_type`` the response's media
    type, ``body`` the start of the response body (at most 2 KiB, decoded leniently).
    """

    def __init__(self, message: str, *, status_code: int, content_type: str, body: str) -> None:
        self.status_code = status_code
        self.content_type = content_type
        self.body = body
        super().__init__(message)


class RunFailed(AguiError):
    """The run reported its own failure with ``RUN_ERROR``; the stream itself was conformant.

    ``error`` is the ``RunErrorEvent``; ``result`` holds what the run delivered before it.
    """

    def __init__(self, result: RunResult) -> None:
        self.result = result
        self.error: Any = result.run.error
        code = self.error.code
        suffix = "" if code is msgspec.UNSET else f" ({code})"
        super().__init__(f"the run failed: {self.error.message}{suffix}")
