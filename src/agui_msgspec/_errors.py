"""The exceptions of the public API.

A bad stream raises :class:`ProtocolViolation` (or a subclass) and nothing else:
``rule`` is a stable id (the docs list them), ``index`` the 0-based position of
the offending event in the stream, ``path`` a JSON Pointer into that event.
"""

from __future__ import annotations


class ProtocolViolation(Exception):
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


class UsageError(ValueError):
    """The library was called wrongly (an unknown protocol version, say); not a stream problem."""
