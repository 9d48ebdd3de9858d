"""The consumer: every stage of the pipeline in the specification's order.

``Consumer`` is sans-IO and incremental (h11 style): give it the bytes of a response
body as they arrive (``receive``), or payloads a reader of your own framed (``feed``,
``feed_many``), and it returns the typed events to deliver, or raises the
:class:`ProtocolViolation` that rejects the stream. ``consume`` runs a whole stream of
payloads and reports instead of raising; ``consume_body`` does the same for a body.
"""

from __future__ import annotations

import contextlib
import itertools
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, NoReturn, cast, overload

import msgspec
from msgspec import UNSET

from agui_msgspec._documents import Payload
from agui_msgspec._errors import (
    MalformedEvent,
    ProtocolViolation,
    StreamError,
    TransportError,
    UsageError,
    checked_bound,
    too_deep,
    wrong_type,
)
from agui_msgspec._pipeline.decode import Decoder, EventT, MessageT, Middleware, Repeats
from agui_msgspec._pipeline.expand import Expander
from agui_msgspec._pipeline.input import typed_input
from agui_msgspec._pipeline.lifecycle import (
    DEFAULT_MAX_CLOSED_ITEMS,
    DEFAULT_MAX_OPEN_ITEMS,
    Lifecycle,
    StreamState,
)
from agui_msgspec._pipeline.patch import StateBounds
from agui_msgspec._pipeline.reduce import DEFAULT_MAX_STATE_DEPTH, DEFAULT_MAX_STATE_SIZE, Reducer
from agui_msgspec._pipeline.run import Run, RunT
from agui_msgspec._pipeline.warnings import DEFAULT_MAX_WARNINGS
from agui_msgspec._versions import (
    LATEST_VERSION,
    Bindings,
    VersionLike,
    producer_version_notice,
)
from agui_msgspec._wire.protobuf import PROTOBUF_MEDIA_TYPE, ProtobufReader
from agui_msgspec._wire.text import (
    DEFAULT_MAX_EVENT_SIZE,
    SSE_MEDIA_TYPE,
    JSONLinesReader,
    PayloadReader,
    SSEReader,
    sniff_format,
)

if TYPE_CHECKING:
    from agui_msgspec import v1_0, v1_1
    from agui_msgspec._pipeline.decode import EventOfEither, MessageOfEither
    from agui_msgspec._pipeline.run import Run1_0, RunOfEither

__all__ = ["Consumer", "Middleware", "Result", "VerifyingConsumer", "consume", "consume_body"]


_Repeat = tuple[Any, str, Any, Any, Any]
"""The last event the verifier and the reducer took, when it was a delta that only
continued an open item and grew its buffer: the event class, the attribute naming the item,
the item, its ``subagent_run_id``, and the buffer's ``append``. A plain tuple, made once per
loop (a named one costs six times as much to make); typed Any, as the hot loop reads it
without narrowing: the event class None (no repeat) matches no event."""

_NO_REPEAT: _Repeat = (None, "", None, None, None)

BodyFormat = Literal["sse", "jsonl", "protobuf"]
ReaderFactory = Callable[[int, Bindings, Callable[[int, str], None]], PayloadReader]
"""A reader from ``max_event_size``, the bindings, and where to say a warning before a payload."""

READERS: dict[BodyFormat, ReaderFactory] = {
    "sse": lambda max_event_size, bindings, warn_before: SSEReader(max_event_size),
    "jsonl": lambda max_event_size, bindings, warn_before: JSONLinesReader(max_event_size),
    "protobuf": lambda max_event_size, bindings, warn_before: ProtobufReader(
        max_event_size, bindings, on_warning_before=warn_before
    ),
}
MEDIA_TYPES: dict[str, BodyFormat] = {
    SSE_MEDIA_TYPE: "sse",
    PROTOBUF_MEDIA_TYPE: "protobuf",
    "application/jsonl": "jsonl",
    "application/x-ndjson": "jsonl",
}
_BOM_AND_WHITESPACE = b"\xef\xbb\xbf \t\r\n"
# A body still blank after this many bytes is read as SSE (keep-alive blank lines, say).
_SNIFF_LIMIT = 4096
# Payloads per strict batch decode: enough to amortise the call, few enough to stay in cache.
_BATCH_SIZE = 1024
# Bytes of a whole body framed at once: a network read's worth.
_BODY_SLICE = 64 * 1024


# Events whose effect on the reducer's state and activity messages a verdict depends on (their
# bounds and patches are rules); run-level ones reset what streams.
_VERDICT_EVENTS = frozenset(
    {
        "RUN_STARTED",
        "RUN_ERROR",
        "STATE_SNAPSHOT",
        "STATE_DELTA",
        "MESSAGES_SNAPSHOT",
        "ACTIVITY_SNAPSHOT",
        "ACTIVITY_DELTA",
    }
)


def _discard(_delta: str) -> None:
    """Where the deltas a verifier does not keep go."""


class _VerdictReducer:
    """The reducer as far as the verdict needs it: the state and the activity messages, whose
    bounds and patches are rules; the conversation's text, arguments and results are not kept."""

    def __init__(self, reducer: Reducer) -> None:
        self._reducer = reducer
        self._kept: dict[type, bool] = {}  # per event class: whether the reducer sees it

    @property
    def messages(self) -> Sequence[Any]:
        raise UsageError("a VerifyingConsumer keeps no messages: use a Consumer for them")

    @property
    def state(self) -> Any:
        return self._reducer.state

    def compact(self) -> None:
        self._reducer.compact()

    def apply(self, event: Any, index: int) -> Callable[[str], None] | None:
        kept = self._kept.get(type(event))
        if kept is None:
            kept = self._kept[type(event)] = event.type in _VERDICT_EVENTS
        # a delta not kept continues nothing here: its repeats may skip the stages alike
        return self._reducer.apply(event, index) if kept else _discard


class Consumer(Generic[EventT, MessageT, RunT]):
    """Incremental consumer for one stream: the bytes of its body with :meth:`receive`, or
    its payloads with :meth:`feed` and :meth:`feed_many`, then :meth:`close`. The events
    it returns, its messages and its runs are the version's: to a type checker,
    ``Consumer()`` is ``Consumer[v1_1.Event, v1_1.Message, Run]`` (what a bare ``Consumer``
    annotation means), ``Consumer("1.0")`` holds ``v1_0``'s, a ``str`` version either
    version's, and generated bindings give ``Consumer[Any, Any, Any]``.

    It decodes through a :class:`Decoder` (the tolerant decode: compatibility, middleware,
    enforcement), then expands chunks, verifies the run lifecycle and reduces.

    ``on_warning`` is called with each warning as it happens (stripped paths,
    dropped events); the warnings are also kept in :attr:`warnings`. ``input``
    is the ``RunAgentInput`` (Struct or wire-named dict) the run started from:
    it seeds the messages and the state. ``middleware`` stages see every event
    after the compatibility boundary and before enforcement, in order, as the
    specification places them; installing any costs a generic JSON decode per
    event, so conformant traffic is no longer a single typed decode.
    ``peer_version`` is the protocol version of a producer known to speak an
    older one (``"0.0.57"``, say): the era shims it needs then run (README,
    "Older peers"); an era shim that must see every event costs that decode too.
    ``max_event_size`` bounds one event of the body :meth:`receive` takes (bytes);
    ``max_open_items`` the items a run holds open at once, ``max_closed_items`` those it
    remembers once closed (their owners, for the attribution of a reopen).
    """

    @overload
    def __init__(
        self: Consumer[v1_1.Event, v1_1.Message, Run],
        version: Literal["1.1"] = "1.1",
        on_warning: Callable[[str], None] | None = None,
        input: Any = None,
        middleware: Iterable[Middleware] = (),
        max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
        max_state_size: int = DEFAULT_MAX_STATE_SIZE,
        max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        peer_version: str | None = None,
        *,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    ) -> None: ...
    @overload
    def __init__(
        self: Consumer[v1_0.Event, v1_0.Message, Run1_0],
        version: Literal["1.0"],
        on_warning: Callable[[str], None] | None = None,
        input: Any = None,
        middleware: Iterable[Middleware] = (),
        max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
        max_state_size: int = DEFAULT_MAX_STATE_SIZE,
        max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        peer_version: str | None = None,
        *,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    ) -> None: ...
    @overload
    def __init__(
        self: Consumer[EventOfEither, MessageOfEither, RunOfEither],
        version: str,
        on_warning: Callable[[str], None] | None = None,
        input: Any = None,
        middleware: Iterable[Middleware] = (),
        max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
        max_state_size: int = DEFAULT_MAX_STATE_SIZE,
        max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        peer_version: str | None = None,
        *,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    ) -> None: ...
    @overload
    def __init__(
        self: Consumer[Any, Any, Any],
        version: Bindings,
        on_warning: Callable[[str], None] | None = None,
        input: Any = None,
        middleware: Iterable[Middleware] = (),
        max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
        max_state_size: int = DEFAULT_MAX_STATE_SIZE,
        max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        peer_version: str | None = None,
        *,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    ) -> None: ...
    def __init__(
        self,
        version: VersionLike = LATEST_VERSION,
        on_warning: Callable[[str], None] | None = None,
        input: Any = None,
        middleware: Iterable[Middleware] = (),
        max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
        max_state_size: int = DEFAULT_MAX_STATE_SIZE,
        max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        peer_version: str | None = None,
        *,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    ) -> None:
        # checked when made, not mid-stream (WarningLog checks max_warnings)
        checked_bound("max_event_size", max_event_size, 1)
        for name, bound in (
            ("max_open_items", max_open_items),
            ("max_closed_items", max_closed_items),
            ("max_state_size", max_state_size),
            ("max_state_depth", max_state_depth),
        ):
            checked_bound(name, bound)
        self._decoder: Decoder[Any] = Decoder(
            version,
            on_warning,
            peer_version=peer_version,
            max_warnings=max_warnings,
            middleware=middleware,
        )
        self.bindings: Bindings = self._decoder.bindings
        self._warnings = self._decoder.warning_log
        self.warnings: list[str] = self._warnings.kept
        warn = self._warnings.warn
        self._run_started: type[msgspec.Struct] = self.bindings.RunStartedEvent
        self._expander = Expander(self.bindings)
        # The same reading as outgoing input: what the version does not know is stripped.
        seed = None if input is None else typed_input(input, self.bindings, warn)
        self._lifecycle = Lifecycle(
            max_open_items,
            None if seed is None else seed.thread_id,
            max_closed_items=max_closed_items,
            keeps_history=self._keeps_conversation,
        )
        reducer = Reducer(self.bindings, warn, seed, StateBounds(max_state_size, max_state_depth))
        self._reducer: Reducer | _VerdictReducer = (
            reducer if self._keeps_conversation else _VerdictReducer(reducer)
        )
        # What the loop calls and reads, bound once: feed() pays the loop's setup per payload.
        self._stages = (
            self._expander.expand,
            self._lifecycle.receive,
            self._reducer.apply,
            self._expander.streams,
            self._expander.chunk_types,
        )
        self._index = 0
        self._max_event_size = max_event_size
        self._reader: PayloadReader | None = None  # the body's, once its format is told
        self._head = b""  # the body's first bytes, while they are too blank to tell its format
        # A reader's warnings about the body before payloads not yet taken, by that index.
        self._reader_warnings: deque[tuple[int, str]] = deque()
        self._violation: StreamError | None = None
        self._repeat = _NO_REPEAT
        self._compacted_at = 0  # the event index at the reducer's last compaction

    @property
    def runs(self) -> list[RunT]:
        """Every run so far, in order (a :class:`VerifyingConsumer`: the latest only)."""
        return cast("list[RunT]", self._lifecycle.runs)  # the lifecycle's runs hold any version's

    @property
    def messages(self) -> Sequence[MessageT]:
        """The messages after the reducer, as message Structs: the same read-only list at
        every read, brought up to date by the read (``list(consumer.messages)`` keeps one)."""
        return self._reducer.messages

    @property
    def state(self) -> Any:
        """The agent state: any JSON value."""
        return self._reducer.state

    @property
    def slow_path_count(self) -> int:
        """Payloads that needed the slow path; conformant traffic leaves this at 0."""
        return self._decoder.slow_path_count

    @property
    def violation(self) -> StreamError | None:
        """The violation that rejected the stream, once one has."""
        return self._violation

    @property
    def event_index(self) -> int:
        """The index the next payload gets: the payloads taken so far, dropped ones included
        (what a violation's ``index`` counts)."""
        return self._index

    @property
    def inside_event(self) -> bool:
        """Whether the bytes :meth:`receive` took end inside an event: part of one is held
        (a body still blank, or between events, is not)."""
        return self._reader is not None and self._reader.inside_event

    @property
    def stream_state(self) -> StreamState:
        """Where the stream stands in the run lifecycle: idle, active, closed or failed."""
        return self._lifecycle.state

    def warn(self, message: str) -> None:
        """Add a warning of the caller's own (a transport's, say) to :attr:`warnings`, under
        the same bound and ``on_warning`` callback as the stream's."""
        self._warnings.warn(message)

    def set_media_type(self, media_type: str) -> None:
        """Read the body :meth:`receive` takes as ``media_type`` (a ``Content-Type`` value;
        parameters and case aside) instead of telling its format from its first bytes:
        ``text/event-stream`` is SSE, ``application/vnd.ag-ui.event+proto`` protobuf frames,
        ``application/jsonl`` and ``application/x-ndjson`` JSON lines. Before the body only:
        a consumer made before the response's headers came learns it when they do."""
        if not isinstance(media_type, str):
            raise wrong_type("set_media_type()", media_type, "a media type (str)")
        name = media_type.partition(";")[0].strip().lower()
        body_format = MEDIA_TYPES.get(name)
        if body_format is None:
            raise UsageError(f"no reader for media type {name!r}: one of {', '.join(MEDIA_TYPES)}")
        if self._reader is not None or self._head:
            raise UsageError("the body has started: name its media type before receive()")
        self._start_reader(body_format)

    def receive(self, chunk: bytes | bytearray | memoryview) -> list[EventT]:
        """Take the next bytes of the response body; return the events they complete.

        Without :meth:`set_media_type` the first bytes tell the body's format: protobuf
        frames if the first is NUL, JSON lines if ``{`` comes first after a BOM and
        whitespace, else SSE (a body still blank after 4096 bytes too). However the body
        is cut into chunks, the events, the warnings and the verdict are the same. As with
        :meth:`feed_many`, the events that passed before a violation are on its
        ``delivered``. A consumer takes either bytes or payloads, not both.
        """
        if self._violation is not None:
            raise self._violation
        delivered: list[Any] = []
        try:
            self._receive(chunk, delivered)
        except (ProtocolViolation, TransportError) as violation:
            violation.delivered = list(delivered)
            raise
        return delivered

    def _receive(
        self, chunk: bytes | bytearray | memoryview, delivered: list[msgspec.Struct] | None
    ) -> None:
        if not isinstance(chunk, bytes):
            if not isinstance(chunk, (bytearray, memoryview)):
                raise wrong_type("receive()", chunk, "bytes")
            chunk = bytes(chunk)  # the readers slice and keep bytes, not a view of the caller's
        reader = self._reader
        if reader is None:
            head = self._head = self._head + chunk
            body_format = told_format(head)
            if body_format is None:
                return
            reader, chunk, self._head = self._start_reader(body_format), head, b""
        try:
            payloads = reader.feed(chunk)
        except (
            ProtocolViolation,
            TransportError,
        ) as violation:  # the reader's: it rejects the stream as well
            self._violation = violation
            raise
        self._feed_many(payloads, delivered)

    def _start_reader(self, body_format: BodyFormat) -> PayloadReader:
        """The body's reader; its warnings join the consumer's where a body read byte by
        byte would say them, whatever the chunking."""
        start, consumer = self._index, weakref.ref(self)

        def warn_before(index: int, message: str) -> None:
            # Weakly: the consumer holds the reader, and a cycle would keep a dropped consumer
            # (its messages and state) until the collector's next full pass.
            owner = consumer()
            if owner is not None:
                owner._warn_before(start + index, message)

        self._reader = READERS[body_format](self._max_event_size, self.bindings, warn_before)
        return self._reader

    def feed(self, payload: Payload) -> list[EventT]:
        """Take one event payload; return the events to deliver (none if it was dropped).

        A chunk event comes back expanded into the explicit events it stands for; if a
        later one of those breaks a rule, the earlier ones are on the violation's
        ``delivered``, so nothing that passed is lost.
        """
        if self._violation is not None:
            raise self._violation
        if self._reader_warnings:
            return self.feed_many((payload,))
        index = self._index
        self._index = index + 1  # counted before decoding: a callback may raise from in there
        try:
            event: Any = self._decoder.decode(payload, index)
        except ProtocolViolation as violation:
            self._violation = violation
            raise
        repeat_type, item_attr, item_id, owner, sink = self._repeat
        if (  # the loop's repeat, for one payload: most of a stream, without the loop's setup
            type(event) is repeat_type
            and getattr(event, item_attr) == item_id
            and event.subagent_run_id == owner
            and event.metadata is UNSET
        ):
            sink(event.delta)
            if index - self._compacted_at >= _BATCH_SIZE:
                self._reducer.compact()
                self._compacted_at = index
            return [event]
        self._index = index
        delivered: list[Any] = []
        try:
            self._feed_payloads((payload,), delivered, [event])
        except ProtocolViolation as violation:
            violation.delivered = list(delivered)
            raise
        return delivered

    def feed_many(self, payloads: Iterable[Payload]) -> list[EventT]:
        """Take several payloads in order, such as those a reader made of one chunk; return
        the events to deliver. The same as ``feed`` on each, at a lower cost per event."""
        if self._violation is not None:
            raise self._violation
        if not isinstance(payloads, Iterable):
            raise wrong_type("feed_many()", payloads, "an iterable of payloads")
        delivered: list[Any] = []
        try:
            self._feed_many(payloads, delivered)
        except (ProtocolViolation, TransportError) as violation:
            violation.delivered = list(delivered)
            raise
        return delivered

    def _feed_many(
        self, payloads: Iterable[Payload], delivered: list[msgspec.Struct] | None
    ) -> None:
        """``_feed_payloads``, with a reader's warnings said between the payloads they come
        between, as a body read byte by byte would have them."""
        if self._reader_warnings:
            pending = payloads if isinstance(payloads, Sequence) else list(payloads)
            taken = 0
            while self._reader_warnings and taken < len(pending):
                ahead = max(0, self._reader_warnings[0][0] - self._index)
                self._feed_payloads(pending[taken : taken + ahead], delivered)
                taken += ahead
                self._say_reader_warnings()
            payloads = pending[taken:]
        self._feed_payloads(payloads, delivered)
        if self._reader_warnings:
            self._say_reader_warnings()

    def _warn_before(self, index: int, message: str) -> None:
        """A reader's warning about the body before payload ``index``: said once the
        payloads before it are taken (never, if one of them is rejected)."""
        self._reader_warnings.append((index, message))
        self._say_reader_warnings()

    def _say_reader_warnings(self) -> None:
        while self._reader_warnings and self._reader_warnings[0][0] <= self._index:
            self._warnings.warn(self._reader_warnings.popleft()[1])

    def _feed_payloads(
        self,
        payloads: Iterable[Payload],
        delivered: list[msgspec.Struct] | None,
        decoded: list[Any] | None = None,
    ) -> None:
        """Every stage, event by event; appends each event as it passes, so what passed
        before a violation is not lost. One loop for many payloads keeps the per-event
        overhead to the stages themselves. ``decoded``: the payloads' events, already decoded
        (not yet counted)."""
        if self._violation is not None:
            raise self._violation
        expand, receive, apply, streams, chunk_types = self._stages
        # Most of a stream is deltas repeating the item of the delta before: those skip the
        # verifier and the reducer, which said (_Repeat) what such an event would do there.
        repeat_type, item_attr, item_id, owner, sink = self._repeat
        index = self._index - 1
        event: Any  # a Struct of the version's event types, or None for a dropped one
        repeats: Repeats | None = None  # the current batch's warnings not yet said
        try:
            batches = self._batches(payloads) if decoded is None else ((payloads, decoded, None),)
            for batch, events, left_to_say in batches:
                repeats = left_to_say
                for event in self._decode_each(batch, index + 1) if events is None else events:
                    index += 1
                    if (
                        type(event) is repeat_type
                        and getattr(event, item_attr) == item_id
                        and event.subagent_run_id == owner
                        and event.metadata is UNSET
                    ):
                        sink(event.delta)
                        if delivered is not None:
                            delivered.append(event)
                        continue
                    if event is None:  # dropped
                        continue
                    repeat_type = None
                    if streams or type(event) in chunk_types:
                        for expanded in expand(event, index):
                            self._deliver(expanded, index, delivered)
                        continue
                    # _deliver, inlined: most events are not chunks; a call per event is measurable
                    continued = receive(event, index)
                    if type(event) is self._run_started:
                        self._run_started_by(event, index)
                    grown = apply(event, index)
                    if delivered is not None:
                        delivered.append(event)
                    if continued is not None and grown is not None:
                        repeat_type, item_attr, sink = type(event), continued, grown
                        item_id = getattr(event, continued)
                        owner = event.subagent_run_id
                if repeats is not None:
                    self._say_repeats(repeats, index)
                    repeats = None
                if index - self._compacted_at >= _BATCH_SIZE:
                    self._reducer.compact()
                    self._compacted_at = index
        except (ProtocolViolation, TransportError) as violation:
            self._violation = violation
            raise
        except RecursionError:
            self._violation = too_deep(index)
            raise self._violation from None
        finally:
            if repeats is not None:  # a batch one version ahead stopped by a violation
                self._say_repeats(repeats, index)
            self._index = max(self._index, index + 1)
            self._repeat = (repeat_type, item_attr, item_id, owner, sink)

    def _say_repeats(self, repeats: Repeats, index: int) -> None:
        """The warnings a batch one version ahead left to say, for its events up to ``index``
        (the one a stage rejected included): those one by one would have said."""
        first, count, details = repeats
        taken = min(count, index - first + 1)
        if taken > 0:
            self._warnings.warn_each(first, taken, details)

    def _batches(
        self, payloads: Iterable[Payload]
    ) -> Iterable[tuple[Iterable[Payload], list[EventT] | None, Repeats | None]]:
        """The payloads in batches, each with its events if the strict decoder alone gave
        them all (the fast path, for slices of a list or tuple), else None: one by one; and
        the batch's warnings left to say. Anything else (a generator, say) goes one by one as
        it comes, and so does middleware. Every _BATCH_SIZE events, the reducer compacts the
        text that repeats streamed into."""
        if not isinstance(payloads, (list, tuple)):
            return ((batch, None, None) for batch in _batches_as_read(payloads))
        if len(payloads) == 1:  # feed(): no batch to spread a call over; counted before decoding
            self._index += 1
            event = self._decoder.decode(payloads[0], self._index - 1)
            return ((payloads, [event], None),)  # type: ignore[list-item]  # None: dropped
        return self._decoder._batches(payloads, _BATCH_SIZE)

    def _decode_each(self, payloads: Iterable[Payload], index: int) -> Iterator[EventT | None]:
        """The tolerant decode, payload by payload; None for a dropped event."""
        decode = self._decoder.decode
        for payload in payloads:
            self._index = index + 1  # counted before decoding: a callback may raise from in there
            yield decode(payload, index)
            index += 1

    def _deliver(
        self, event: msgspec.Struct, index: int, delivered: list[msgspec.Struct] | None
    ) -> None:
        self._lifecycle.receive(event, index)
        if type(event) is self._run_started:
            self._run_started_by(event, index)
        self._reducer.apply(event, index)
        if delivered is not None:
            delivered.append(event)

    def _run_started_by(self, event: Any, index: int) -> None:
        """A run began: the warnings about the event join the new run, and the producer's
        declaration is judged."""
        self._warnings.run_started(index, self._lifecycle.runs_started)
        if event.protocol_version is not msgspec.UNSET:
            notice = producer_version_notice(event.protocol_version, self.bindings.PROTOCOL_VERSION)
            if notice is not None:
                self._warnings.warn(notice)

    def close(self, *, inside_event: bool = False) -> list[EventT]:
        """End of stream, and of the body :meth:`receive` took: return the events its end
        completes (a JSON lines body may end without a line end).

        Raises ``ProtocolViolation(rule="truncated")`` if a run is still active, or if the
        body ended inside an event: the one ``receive`` took, or, for payloads of a reader
        of your own, ``inside_event`` (its ``discarded_partial``).
        """
        if self._violation is not None:
            raise self._violation
        delivered: list[Any] = []
        try:
            self._close(inside_event, delivered)
        except (ProtocolViolation, TransportError) as violation:
            violation.delivered = list(delivered)
            raise
        return delivered

    def _close(self, inside_event: bool, delivered: list[msgspec.Struct] | None) -> None:
        reader = self._reader  # None: no body, or one still blank, which holds no event
        try:
            if reader is not None:
                self._feed_many(reader.close(), delivered)
                inside_event = inside_event or reader.discarded_partial
            self._lifecycle.close()
            if inside_event:
                raise ProtocolViolation("truncated", "the body ended inside an event")
        except (ProtocolViolation, TransportError) as violation:
            self._violation = violation
            raise

    _keeps_conversation = True
    """Whether the reducer keeps the messages (a :class:`VerifyingConsumer` does not)."""

    def result(self, delivered: list[Any]) -> Result[EventT, MessageT, RunT]:
        """The verdict so far, with ``delivered`` as the events the application received."""
        return Result(
            outcome="failed" if self._violation is not None else "completed",
            violation=self._violation,
            events=delivered,
            warnings=self.warnings,
            runs=self.runs,
            messages=list(self.messages),
            state=self.state,
        )


class VerifyingConsumer(Consumer[EventT, MessageT, RunT]):
    """A :class:`Consumer` for the verdict alone: the same decode, expansion, lifecycle and
    rules, the same violations at the same events, in memory bounded by what is open, not
    by what was said. It keeps the state and the activity messages (their bounds and
    patches are rules), and the latest run, not the conversation nor the runs before:
    :attr:`messages` raises ``UsageError``, :attr:`runs` holds one run at most, and the
    reducer's own warnings about messages (an encrypted value naming no message, say) are
    not said. What :class:`ProducerGuard` runs on each response.
    """

    _keeps_conversation = False

    if TYPE_CHECKING:  # the version's own event union, as Consumer's overloads give it

        @property
        def messages(self) -> NoReturn: ...  # it raises UsageError, whatever the version

        @overload
        def __init__(
            self: VerifyingConsumer[v1_1.Event, v1_1.Message, Run],
            version: Literal["1.1"] = "1.1",
            on_warning: Callable[[str], None] | None = None,
            input: Any = None,
            middleware: Iterable[Middleware] = (),
            max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
            max_state_size: int = DEFAULT_MAX_STATE_SIZE,
            max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
            max_warnings: int = DEFAULT_MAX_WARNINGS,
            peer_version: str | None = None,
            *,
            max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
            max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
        ) -> None: ...
        @overload
        def __init__(
            self: VerifyingConsumer[v1_0.Event, v1_0.Message, Run1_0],
            version: Literal["1.0"],
            on_warning: Callable[[str], None] | None = None,
            input: Any = None,
            middleware: Iterable[Middleware] = (),
            max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
            max_state_size: int = DEFAULT_MAX_STATE_SIZE,
            max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
            max_warnings: int = DEFAULT_MAX_WARNINGS,
            peer_version: str | None = None,
            *,
            max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
            max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
        ) -> None: ...
        @overload
        def __init__(
            self: VerifyingConsumer[EventOfEither, MessageOfEither, RunOfEither],
            version: str,
            on_warning: Callable[[str], None] | None = None,
            input: Any = None,
            middleware: Iterable[Middleware] = (),
            max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
            max_state_size: int = DEFAULT_MAX_STATE_SIZE,
            max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
            max_warnings: int = DEFAULT_MAX_WARNINGS,
            peer_version: str | None = None,
            *,
            max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
            max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
        ) -> None: ...
        @overload
        def __init__(
            self: VerifyingConsumer[Any, Any, Any],
            version: Bindings,
            on_warning: Callable[[str], None] | None = None,
            input: Any = None,
            middleware: Iterable[Middleware] = (),
            max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
            max_state_size: int = DEFAULT_MAX_STATE_SIZE,
            max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
            max_warnings: int = DEFAULT_MAX_WARNINGS,
            peer_version: str | None = None,
            *,
            max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
            max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
        ) -> None: ...
        def __init__(self, *args: Any, **kwargs: Any) -> None: ...  # Consumer's, at run time


@dataclass
class Result(Generic[EventT, MessageT, RunT]):
    """What ``consume`` found: the verdict, and everything delivered before any failure.

    Its Structs are the version's, as :class:`Consumer`'s are: ``consume(...)`` gives
    ``Result[v1_1.Event, v1_1.Message, Run]`` (a bare ``Result``), ``version="1.0"``
    ``v1_0``'s, a ``str`` version either version's, and generated bindings
    ``Result[Any, Any, Any]``.
    """

    outcome: Literal["completed", "failed"]
    """``failed`` means the consumer rejected the stream; a run's own RUN_ERROR is not that."""
    violation: StreamError | None
    """What rejected the stream: a :class:`ProtocolViolation`, or a :class:`TransportError`
    for bytes that could not be framed (an oversized event); None when it was accepted."""
    events: list[EventT] = field(default_factory=list)
    """The typed events delivered, in order (chunks expanded); what passed before a failure."""
    warnings: list[str] = field(default_factory=list)
    """One per stripped path, dropped event or version notice (bounded: ``max_warnings``)."""
    runs: list[RunT] = field(default_factory=list)
    """Every run the stream carried, in order."""
    messages: list[MessageT] = field(default_factory=list)
    """The conversation after the reducer: the input's messages, then the stream's."""
    state: v1_1.State = None
    """The agent state: any JSON value (None before any)."""


@overload
def consume(
    events: Iterable[Payload],
    version: Literal["1.1"] = "1.1",
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[v1_1.Event, v1_1.Message, Run]: ...
@overload
def consume(
    events: Iterable[Payload],
    version: Literal["1.0"],
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[v1_0.Event, v1_0.Message, Run1_0]: ...
@overload
def consume(
    events: Iterable[Payload],
    version: str,
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[EventOfEither, MessageOfEither, RunOfEither]: ...
@overload
def consume(
    events: Iterable[Payload],
    version: Bindings,
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[Any, Any, Any]: ...
def consume(
    events: Iterable[Payload],
    version: VersionLike = LATEST_VERSION,
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[Any, Any, Any]:
    """Run a whole stream through the consumer; never raises for a bad stream.

    ``keep_events=False`` keeps only the verdict, runs, messages and state, so a
    long stream is consumed in memory bounded by what it assembles.
    """

    if not isinstance(events, Iterable):
        raise wrong_type("consume()", events, "an iterable of payloads")

    def run(consumer: Consumer[Any, Any, Any], delivered: list[msgspec.Struct] | None) -> None:
        consumer._feed_many(events, delivered)
        consumer.close()

    return _reported(
        lambda: Consumer(
            version,
            on_warning,
            input,
            middleware,
            max_open_items,
            max_state_size=max_state_size,
            max_closed_items=max_closed_items,
            max_state_depth=max_state_depth,
            max_warnings=max_warnings,
            peer_version=peer_version,
        ),
        keep_events,
        run,
    )


@overload
def consume_body(
    body: bytes | bytearray | memoryview | Iterable[bytes | bytearray | memoryview],
    version: Literal["1.1"] = "1.1",
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[v1_1.Event, v1_1.Message, Run]: ...
@overload
def consume_body(
    body: bytes | bytearray | memoryview | Iterable[bytes | bytearray | memoryview],
    version: Literal["1.0"],
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[v1_0.Event, v1_0.Message, Run1_0]: ...
@overload
def consume_body(
    body: bytes | bytearray | memoryview | Iterable[bytes | bytearray | memoryview],
    version: str,
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[EventOfEither, MessageOfEither, RunOfEither]: ...
@overload
def consume_body(
    body: bytes | bytearray | memoryview | Iterable[bytes | bytearray | memoryview],
    version: Bindings,
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[Any, Any, Any]: ...
def consume_body(
    body: bytes | bytearray | memoryview | Iterable[bytes | bytearray | memoryview],
    version: VersionLike = LATEST_VERSION,
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Iterable[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_closed_items: int = DEFAULT_MAX_CLOSED_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result[Any, Any, Any]:
    """``consume`` for a response body: bytes, or an iterable of byte chunks as they arrive.

    The body is read as :meth:`Consumer.receive` reads it: protobuf frames if its first
    byte is NUL (the high byte of a frame's length), JSON lines if it starts with ``{``
    (after a BOM and whitespace), else SSE; each chunk's events go through the pipeline
    together. A body that ends inside an event (or a frame) is truncated.
    """

    if not isinstance(body, Iterable):
        raise wrong_type("consume_body()", body, "bytes or an iterable of bytes")

    def run(consumer: Consumer[Any, Any, Any], delivered: list[msgspec.Struct] | None) -> None:
        chunks = _slices(body) if isinstance(body, (bytes, bytearray, memoryview)) else body
        for chunk in chunks:
            consumer._receive(chunk, delivered)  # receive(), less a list of events per chunk
        consumer._close(False, delivered)

    return _reported(
        lambda: Consumer(
            version,
            on_warning,
            input,
            middleware,
            max_open_items,
            max_state_size=max_state_size,
            max_closed_items=max_closed_items,
            max_state_depth=max_state_depth,
            max_warnings=max_warnings,
            peer_version=peer_version,
        ),
        keep_events,
        run,
    )


def _batches_as_read(payloads: Iterable[Payload]) -> Iterator[Iterable[Payload]]:
    """``payloads`` in batches of ``_BATCH_SIZE``, each read from them only as it is used."""
    iterator = iter(payloads)
    for first in iterator:
        yield itertools.chain((first,), itertools.islice(iterator, _BATCH_SIZE - 1))


def _slices(body: bytes | bytearray | memoryview) -> Iterator[bytes]:
    """A whole body in slices: a reader makes the payloads of one slice at a time, so the
    framing costs memory in proportion to a slice, not to the body."""
    whole = body if isinstance(body, bytes) else bytes(body)
    for start in range(0, len(whole), _BODY_SLICE):
        yield whole[start : start + _BODY_SLICE]


def told_format(head: bytes) -> BodyFormat | None:
    """The format of a body that starts with ``head``, or None while ``head`` is blank (a BOM,
    keep-alive line ends) and short enough to wait for more: protobuf frames if its first
    byte is NUL (a frame length's high byte; a text body never starts with NUL), JSON lines
    if it starts with ``{``, else SSE."""
    if len(head) <= _SNIFF_LIMIT and not head.lstrip(_BOM_AND_WHITESPACE):
        return None
    return "protobuf" if head[:1] == b"\x00" else sniff_format(head)


def _reported(
    make_consumer: Callable[[], Consumer[Any, Any, Any]],
    keep_events: bool,
    run: Callable[[Consumer[Any, Any, Any], list[msgspec.Struct] | None], None],
) -> Result[Any, Any, Any]:
    """The result of a whole stream, which ``run`` feeds to the consumer and closes; a
    violation is reported on it, not raised."""
    try:
        consumer = make_consumer()
    except MalformedEvent as violation:  # the input the run started from is malformed
        return Result(outcome="failed", violation=violation)
    delivered: list[msgspec.Struct] | None = [] if keep_events else None
    with contextlib.suppress(ProtocolViolation, TransportError):
        run(consumer, delivered)
    return consumer.result(delivered or [])
