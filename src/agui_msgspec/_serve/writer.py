"""The strict writer: a producer's events checked before they go onto the wire.

:class:`StrictWriter` is the "strict writer" of the architecture page. Like
h11, the project has one state machine for both sides: the writer runs an
event through the same stages the consumer verifies with (enforcement on the
encoded bytes, chunk expansion, the lifecycle table), so the verdict a
producer gets before sending is the verdict the peer would give on receipt.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Mapping
from typing import Any, Literal

import msgspec

from agui_msgspec._documents import OfficialModel, encode_document
from agui_msgspec._errors import (
    ProtocolViolation,
    StreamError,
    TransportError,
    UsageError,
    checked_bound,
    inert,
    too_deep,
)
from agui_msgspec._pipeline.enforce import Enforcer
from agui_msgspec._pipeline.expand import Expander
from agui_msgspec._pipeline.lifecycle import Lifecycle
from agui_msgspec._pipeline.patch import StateBounds, bound_passed, depth_reached
from agui_msgspec._pipeline.reduce import DEFAULT_MAX_STATE_DEPTH, DEFAULT_MAX_STATE_SIZE
from agui_msgspec._pipeline.warnings import cut
from agui_msgspec._versions import LATEST_VERSION, VersionLike, bindings_for
from agui_msgspec._wire.protobuf import proto_frame, wire_tables
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE

REMOVALS_SHOWN = 10
"""Removals an ``unrecognised-content`` refusal quotes; it counts the rest, so it stays short."""
# An enforcer's warning about a value it removed: "event 3 /a/0: removed unrecognised ...".
_REMOVED_AT = re.compile(r"event \d+ (/.*?): removed unrecognised ", re.DOTALL)


class _Removals:
    """The enforcer's warnings about the event being checked (all it would remove or drop):
    the first few, cut as a consumer cuts its warnings, the first one's place, and a count."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.count = 0
        self.first_path = ""

    def __call__(self, warning: str) -> None:
        if not self.count:
            removed_at = _REMOVED_AT.match(warning)
            self.first_path = removed_at.group(1) if removed_at else ""  # "": the whole event
        self.count += 1
        if len(self.shown) < REMOVALS_SHOWN:
            self.shown.append(cut(inert(warning)))

    def refusal(self, index: int) -> ProtocolViolation:
        more = self.count - len(self.shown)
        listed = "; ".join(self.shown) + (f"; and {more} more" if more else "")
        return ProtocolViolation(
            "unrecognised-content",
            f"a consumer would not receive this event as sent: {listed}",
            index=index,
            path=self.first_path,
        )


class StrictWriter:
    """Checks each event a producer is about to send; raises before a bad one leaves.

    ``frame(event)`` returns the event's frame (SSE unless ``framing="protobuf"``: the
    HTTP + Protobuf binding's length-prefixed frame) when the event is legal where
    it stands, and otherwise raises the :class:`ProtocolViolation` a consumer
    would reject the stream with (same rule ids, ``index`` counting the events
    checked). Beyond what a consumer rejects, the writer also refuses an event
    the consumer would have to strip or drop (rule ``unrecognised-content``),
    such as a field the pinned ``version`` does not have, and an event larger than
    ``max_event_size`` (a consumer's default bound) as JSON or, with protobuf framing, as
    a frame: ``event-too-large``, what a consumer with that bound refuses on either framing.
    State and activity content are judged by a consumer's default bounds where one event
    decides: a snapshot nested deeper or larger than they allow (``too-deep``,
    ``state-too-large``), a patch whose pointer or value would nest them too deep. What
    patches add up to depends on what they meet, which the writer does not keep.

    A writer that raised is failed for good, like a consumer that rejected a
    stream: the event may have been partly absorbed (a chunk closes its
    predecessor before it is judged), so no later verdict could be trusted. To
    tell the peer, send a ``RUN_ERROR`` frame with :func:`sse_frame` directly, if
    :attr:`stream_state` is not ``failed``; :class:`EventStream` does all of this.
    """

    def __init__(
        self,
        version: VersionLike = LATEST_VERSION,
        *,
        framing: Literal["sse", "protobuf"] = "sse",
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
    ) -> None:
        if not isinstance(framing, str) or framing not in ("sse", "protobuf"):
            shown = repr(framing[:40]) if isinstance(framing, str) else type(framing).__name__
            raise UsageError(f"framing is 'sse' or 'protobuf', not {shown}")
        checked_bound("max_event_size", max_event_size, 1)
        bindings = bindings_for(version)
        self.framing = framing
        self._max_event_size = max_event_size
        # the protobuf wire of the pinned version; a version without one is refused here
        self._wire = wire_tables(bindings) if framing == "protobuf" else None
        self._removals = _Removals()  # a writer stops at the first event with any
        self._enforcer = Enforcer(bindings, self._removals)
        self._expander = Expander(bindings)
        self._lifecycle = Lifecycle()
        # event type → the attribute holding state (or activity content), or its patch
        self._snapshots = {
            bindings.EVENT_TYPES.get(kind): attr
            for kind, attr in (("STATE_SNAPSHOT", "snapshot"), ("ACTIVITY_SNAPSHOT", "content"))
        }
        self._patches = {
            bindings.EVENT_TYPES.get(kind): attr
            for kind, attr in (("STATE_DELTA", "delta"), ("ACTIVITY_DELTA", "patch"))
        }
        self._index = 0
        self._violation: StreamError | None = None

    def check(self, event: msgspec.Struct | Mapping[str, Any] | OfficialModel) -> bytes:
        """Deprecated: :meth:`frame`, the name that says it returns the frame's bytes."""
        warnings.warn(
            "StrictWriter.check is deprecated: use StrictWriter.frame, which returns the frame",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.frame(event)

    def frame(self, event: msgspec.Struct | Mapping[str, Any] | OfficialModel) -> bytes:
        """The frame for ``event`` (SSE, or with ``framing="protobuf"`` a length-prefixed
        protobuf frame), or the violation sending it would be.

        ``event`` is a Struct, a wire-named dict or an official ``ag-ui-protocol`` model.
        An event nested deeper than the interpreter can encode is ``too-deep``; with protobuf
        framing, one the wire cannot carry (nested past what a reader decodes) is refused as
        the reader would refuse its frame: ``malformed-frame``.
        """
        if self._violation is not None:
            raise self._violation
        index = self._index
        self._index += 1
        try:
            data = encode_document(event, index)
            # judged as a reader judges it, before looking inside: the SSE data line's value, and
            # what a protobuf reader bounds too, the JSON its frame decodes into (below: the frame)
            self._check_size(len(data), index)
            decoded = self._enforcer.decode(data, index)
            # a dropped event (None) has a removal to refuse it for; a kept one is framed first,
            # as a protobuf reader judges the frame before the event it decodes into
            frame = b"" if decoded is None else self._frame(decoded, data, index)
            if self._removals.count:
                raise self._removals.refusal(index)
            assert decoded is not None  # the enforcer drops an event only with a warning
            for expanded in self._expander.expand(decoded, index):
                self._lifecycle.receive(expanded, index)
                self._check_state(expanded, index)
        except (ProtocolViolation, TransportError) as violation:
            self._violation = violation
            raise
        except RecursionError:
            self._violation = too_deep(index)
            raise self._violation from None
        return frame

    def _check_state(self, event: msgspec.Struct, index: int) -> None:
        """The state bounds a consumer holds ``event`` to, where the event alone decides."""
        snapshot = self._snapshots.get(type(event))
        if snapshot is not None:
            passed = bound_passed(getattr(event, snapshot), _STATE_BOUNDS)[1]
            if passed is not None:
                raise ProtocolViolation(*passed, index=index, path=f"/{snapshot}")
        patch = self._patches.get(type(event))
        if patch is not None:
            for position, operation in enumerate(getattr(event, patch)):
                if depth_reached(operation, _STATE_BOUNDS) > _STATE_BOUNDS.max_depth:
                    detail = f"the operation would nest state deeper than {_STATE_BOUNDS.max_depth}"
                    path = f"/{patch}/{position}"
                    raise ProtocolViolation("too-deep", detail, index=index, path=path)

    def _frame(self, event: msgspec.Struct, data: bytes, index: int) -> bytes:
        if self._wire is None:
            return b"data: " + data + b"\n\n"
        try:
            frame = proto_frame(event, self._wire)
        except UsageError as problem:
            raise TransportError("malformed-frame", str(problem), index=index) from None
        self._check_size(len(frame) - 4, index)  # the message a reader holds, not its prefix
        return frame

    def _check_size(self, size: int, index: int) -> None:
        if size > self._max_event_size:
            raise TransportError(
                "event-too-large",
                f"the event is {size} bytes, over the {self._max_event_size} a consumer "
                "takes by default (max_event_size)",
                index=index,
            )

    @property
    def stream_state(self) -> Literal["idle", "active", "closed", "failed"]:
        """Where the stream stands: ``idle`` before the first run, ``active`` in a run,
        ``closed`` after ``RUN_FINISHED``, ``failed`` after ``RUN_ERROR``. After a refusal it
        is the state the refused event left: a ``RUN_ERROR`` may still end the stream
        well-formed unless this is ``failed`` (spec: events/lifecycle)."""
        return self._lifecycle.state.value

    def close(self) -> None:
        """The producer is done: raises ``ProtocolViolation(rule="truncated")`` if a run is active.

        A stream that sent no event at all is truncated too, as a consumer sees it.
        """
        if self._violation is not None:
            raise self._violation
        try:
            self._lifecycle.close()
        except (ProtocolViolation, TransportError) as violation:
            self._violation = violation
            raise


_STATE_BOUNDS = StateBounds(DEFAULT_MAX_STATE_SIZE, DEFAULT_MAX_STATE_DEPTH)
