"""The consumer: every stage of the pipeline in the specification's order.

``Consumer`` is sans-IO and incremental (h11 style): feed it one payload at a
time, it returns the typed events to deliver, or raises the
:class:`ProtocolViolation` that rejects the stream. ``consume`` runs a whole
stream and reports instead of raising.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Literal

import msgspec

from agui_msgspec._enforce import Enforcer, Payload
from agui_msgspec._errors import ProtocolViolation
from agui_msgspec._lifecycle import Lifecycle, Run
from agui_msgspec._versions import LATEST_VERSION, bindings_for


class Consumer:
    """Incremental consumer for one stream.

    ``on_warning`` is called with each warning as it happens (stripped paths,
    dropped events); the warnings are also kept in :attr:`warnings`.
    """

    def __init__(
        self,
        version: str | ModuleType = LATEST_VERSION,
        on_warning: Callable[[str], None] | None = None,
    ) -> None:
        self.bindings = bindings_for(version)
        self.warnings: list[str] = []
        self._on_warning = on_warning
        self._enforcer = Enforcer(self.bindings, self._warn)
        self._lifecycle = Lifecycle()
        self._index = 0
        self._violation: ProtocolViolation | None = None

    @property
    def runs(self) -> list[Run]:
        return self._lifecycle.runs

    @property
    def slow_path_count(self) -> int:
        """Payloads that needed the slow path; conformant traffic leaves this at 0."""
        return self._enforcer.slow_path_count

    @property
    def violation(self) -> ProtocolViolation | None:
        """The violation that rejected the stream, once one has."""
        return self._violation

    def feed(self, payload: Payload) -> list[msgspec.Struct]:
        """Take one event payload; return the events to deliver (none if it was dropped)."""
        if self._violation is not None:
            raise self._violation
        index = self._index
        self._index += 1
        try:
            event = self._enforcer.decode(payload, index)
            if event is None:
                return []
            self._lifecycle.receive(event, index)
        except ProtocolViolation as violation:
            self._violation = violation
            raise
        except RecursionError:
            self._violation = ProtocolViolation(
                "too-deep", "the event nests too deeply", index=index
            )
            raise self._violation from None
        return [event]

    def close(self) -> None:
        """End of stream: raises ``ProtocolViolation(rule="truncated")`` if a run is still active."""
        if self._violation is not None:
            raise self._violation
        try:
            self._lifecycle.close()
        except ProtocolViolation as violation:
            self._violation = violation
            raise

    def _warn(self, message: str) -> None:
        self.warnings.append(message)
        if self._on_warning is not None:
            self._on_warning(message)


@dataclass
class Result:
    """What ``consume`` found: the verdict, and everything delivered before any failure."""

    outcome: Literal["completed", "failed"]
    """``failed`` means the consumer rejected the stream; a run's own RUN_ERROR is not that."""
    violation: ProtocolViolation | None
    events: list[msgspec.Struct] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)


def consume(events: Iterable[Payload], version: str | ModuleType = LATEST_VERSION) -> Result:
    """Run a whole stream through the consumer; never raises for a bad stream."""
    consumer = Consumer(version)
    delivered: list[msgspec.Struct] = []
    try:
        for payload in events:
            delivered.extend(consumer.feed(payload))
        consumer.close()
    except ProtocolViolation:
        pass
    violation = consumer.violation
    return Result(
        outcome="failed" if violation is not None else "completed",
        violation=violation,
        events=delivered,
        warnings=consumer.warnings,
        runs=consumer.runs,
    )
