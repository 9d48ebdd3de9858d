"""A run as a consumer saw it: :class:`Run`, the record the lifecycle keeps of each.

Kept out of ``lifecycle``, which may be compiled: mypyc rejects the run-time half of the
type variables that give ``Run`` its version's Structs (a checker sees defaults there).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol

from msgspec import UNSET, UnsetType

if TYPE_CHECKING:
    from typing_extensions import TypeVar

    from agui_msgspec import v1_0, v1_1

    # A run's Structs are its version's; unparametrised, ``Run`` is the newest version's.
    OutcomeT = TypeVar("OutcomeT", default=v1_1.RunFinishedOutcome)
    InterruptT = TypeVar("InterruptT", default=v1_1.Interrupt)
    ErrorT = TypeVar("ErrorT", default=v1_1.RunErrorEvent)
    UsageT = TypeVar("UsageT", bound="_Usage", default=v1_1.TokenUsage)
else:
    from typing import TypeVar

    OutcomeT = TypeVar("OutcomeT")
    InterruptT = TypeVar("InterruptT")
    ErrorT = TypeVar("ErrorT")
    UsageT = TypeVar("UsageT", bound="_Usage")

RunStatus = Literal["active", "completed", "interrupted", "cancelled", "failed", "truncated"]
"""Where a run stands: ``active`` while it streams, then how it ended (``failed``: RUN_ERROR)."""


class _Usage(Protocol):
    """What :meth:`Run.total_tokens` reads of a usage entry, in every version."""

    @property
    def total_tokens(self) -> int | UnsetType: ...


@dataclass
class Run(Generic[OutcomeT, InterruptT, ErrorT, UsageT]):
    """One run of the stream, as the consumer saw it.

    Its Structs are its version's: ``Run`` alone is a ``"1.1"`` run (``agui_msgspec.v1_1``);
    a consumer of ``"1.0"`` gives ``Run[v1_0.RunFinishedOutcome, v1_0.Interrupt,
    v1_0.RunErrorEvent, v1_0.TokenUsage]``, and generated bindings ``Run[Any, Any, Any, Any]``.
    """

    thread_id: str | None
    run_id: str | None
    status: RunStatus = "active"
    parent_run_id: str | None = None
    protocol_version: str | None = None
    """What the producer declared on RUN_STARTED; None for a pre-versioning peer."""
    outcome: OutcomeT | None = None
    """The RUN_FINISHED outcome Struct, or None (absent or stripped: a success)."""
    interrupts: list[InterruptT] = field(default_factory=list)
    """The interrupts an ``interrupt`` outcome stopped the run on."""
    result: v1_1.NonNullValue | None = None
    """RUN_FINISHED's ``result``: any JSON value but null, or None when absent."""
    error: ErrorT | None = None
    """The RunErrorEvent, for a failed run."""
    usage: list[UsageT] = field(default_factory=list)
    """TokenUsage entries from RUN_FINISHED or RUN_ERROR."""
    pending_tool_calls: list[str] = field(default_factory=list)
    """Ids of the tool calls the run left without a result, in the order they were made, once
    it ended: the application's to answer (events/tool-calls, "Frontend tools")."""
    pending_source: Literal["producer", "stream"] | None = None
    """Where :attr:`pending_tool_calls` came from: the success outcome's non-empty
    ``pendingToolCallIds`` (``producer``), or the stream (``stream``: every call the run
    started that no ``TOOL_CALL_RESULT`` or snapshot tool message answered); None while active."""

    def total_tokens(self) -> int | None:
        """Sum of ``total_tokens`` over the usage entries; None unless every entry reports it.

        An absent count is unknown, not zero, so a partial sum would understate.
        """
        counts: list[int] = []
        for entry in self.usage:
            if entry.total_tokens is UNSET:
                return None
            counts.append(entry.total_tokens)
        return sum(counts) if counts else None


if TYPE_CHECKING:
    # The runs a consumer keeps: its version's (``Run`` alone for the newest).
    RunT = TypeVar("RunT", bound=Run[Any, Any, Any, Any], default=Run)
    Run1_0 = Run[v1_0.RunFinishedOutcome, v1_0.Interrupt, v1_0.RunErrorEvent, v1_0.TokenUsage]
    # A consumer whose version is only known at run time keeps either version's runs.
    RunOfEither = Run[
        v1_1.RunFinishedOutcome | v1_0.RunFinishedOutcome,
        v1_1.Interrupt | v1_0.Interrupt,
        v1_1.RunErrorEvent | v1_0.RunErrorEvent,
        v1_1.TokenUsage | v1_0.TokenUsage,
    ]
else:
    RunT = TypeVar("RunT", bound=Run)
