"""The consumer: every stage of the pipeline in the specification's order.

``Consumer`` is sans-IO and incremental (h11 style): feed it a payload, or the
payloads a reader made of one chunk, and it returns the typed events to deliver, or
raises the :class:`ProtocolViolation` that rejects the stream. ``consume`` runs a whole
stream and reports instead of raising; ``consume_body`` does the same for a response
body, through the transport reader it looks like.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal, NamedTuple

import msgspec
from msgspec import UNSET

from agui_msgspec._errors import MalformedEvent, ProtocolViolation
from agui_msgspec._pipeline.compat import DROPPED, Compatibility
from agui_msgspec._pipeline.enforce import Enforcer, Payload, decode_document, encode_document
from agui_msgspec._pipeline.expand import Expander
from agui_msgspec._pipeline.input import typed_input
from agui_msgspec._pipeline.lifecycle import DEFAULT_MAX_OPEN_ITEMS, Lifecycle, Run
from agui_msgspec._pipeline.patch import StateBounds
from agui_msgspec._pipeline.reduce import DEFAULT_MAX_STATE_DEPTH, DEFAULT_MAX_STATE_SIZE, Reducer
from agui_msgspec._pipeline.warnings import DEFAULT_MAX_WARNINGS, WarningLog
from agui_msgspec._versions import LATEST_VERSION, bindings_for, producer_version_notice
from agui_msgspec._wire.protobuf import ProtobufReader
from agui_msgspec._wire.text import (
    DEFAULT_MAX_EVENT_SIZE,
    JSONLinesReader,
    PayloadReader,
    SSEReader,
    iter_batches,
    sniff_format,
)

Middleware = Callable[[dict[str, Any], int], dict[str, Any] | None]
"""A stage before enforcement: gets each event as a wire-named dict and its index,
returns the (possibly changed) dict, or None to drop the event."""


class _Repeat(NamedTuple):
    """The last event the verifier and the reducer took, when it was a delta that only
    continued an open item and grew its buffer: the event class, the attribute naming the
    item, the item, its ``subagent_run_id``, and the buffer's ``append``. Typed Any, as the
    hot loop reads them without narrowing: ``event_type`` None (no repeat) matches no event."""

    event_type: Any
    item_attr: str
    item_id: Any
    owner: Any
    sink: Any


_NO_REPEAT = _Repeat(None, "", None, None, None)
_BOM_AND_WHITESPACE = b"\xef\xbb\xbf \t\r\n"
# A body still blank after this many bytes is read as SSE (keep-alive blank lines, say).
_SNIFF_LIMIT = 4096
# Payloads per strict batch decode: enough to amortise the call, few enough to stay in cache.
_BATCH_SIZE = 1024
# Bytes of a whole body framed at once: a network read's worth.
_BODY_SLICE = 64 * 1024


def _too_deep(index: int) -> MalformedEvent:
    return MalformedEvent("too-deep", "the event nests too deeply", index=index)


class Consumer:
    """Incremental consumer for one stream.

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
    """

    def __init__(
        self,
        version: str | ModuleType = LATEST_VERSION,
        on_warning: Callable[[str], None] | None = None,
        input: Any = None,
        middleware: Sequence[Middleware] = (),
        max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
        max_state_size: int = DEFAULT_MAX_STATE_SIZE,
        max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
        max_warnings: int = DEFAULT_MAX_WARNINGS,
        peer_version: str | None = None,
    ) -> None:
        self.bindings = bindings_for(version)
        self._warnings = WarningLog(max_warnings, on_warning)
        self.warnings: list[str] = self._warnings.kept
        self._warn = self._warnings.warn
        self._compat = Compatibility(self._warn, peer_version)
        self._middleware = tuple(middleware)
        # With middleware or an era shim, every event is a document that the boundary sees
        # first; else the boundary runs in the slow path only.
        self._documents = bool(self._middleware) or self._compat.every_event
        translate = None if self._documents else self._compat.translate
        self._enforcer = Enforcer(self.bindings, self._warn, translate)
        self._run_started: type[msgspec.Struct] = self.bindings.RunStartedEvent
        self._expander = Expander(self.bindings)
        # The same reading as outgoing input: what the version does not know is stripped.
        seed = None if input is None else typed_input(input, self.bindings, self._warn)
        self._lifecycle = Lifecycle(max_open_items, None if seed is None else seed.thread_id)
        self._reducer = Reducer(
            self.bindings, self._warn, seed, StateBounds(max_state_size, max_state_depth)
        )
        self._index = 0
        # A reader's warnings about the body before payloads not yet taken, by that index.
        self._reader_warnings: deque[tuple[int, str]] = deque()
        self._violation: ProtocolViolation | None = None
        self._repeat = _NO_REPEAT

    @property
    def runs(self) -> list[Run]:
        return self._lifecycle.runs

    @property
    def messages(self) -> Sequence[Any]:
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
        return self._enforcer.slow_path_count

    @property
    def violation(self) -> ProtocolViolation | None:
        """The violation that rejected the stream, once one has."""
        return self._violation

    def feed(self, payload: Payload) -> list[msgspec.Struct]:
        """Take one event payload; return the events to deliver (none if it was dropped).

        A chunk event comes back expanded into the explicit events it stands for; if a
        later one of those breaks a rule, the earlier ones are on the violation's
        ``delivered``, so nothing that passed is lost.
        """
        return self.feed_many((payload,))

    def feed_many(self, payloads: Sequence[Payload]) -> list[msgspec.Struct]:
        """Take several payloads in order, such as those a reader made of one chunk; return
        the events to deliver. The same as ``feed`` on each, at a lower cost per event."""
        if self._violation is not None:
            raise self._violation
        delivered: list[msgspec.Struct] = []
        try:
            self._feed_many(payloads, delivered)
        except ProtocolViolation as violation:
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
            self._warn(self._reader_warnings.popleft()[1])

    def _feed_payloads(
        self, payloads: Iterable[Payload], delivered: list[msgspec.Struct] | None
    ) -> None:
        """Every stage, event by event; appends each event as it passes, so what passed
        before a violation is not lost. One loop for many payloads keeps the per-event
        overhead to the stages themselves."""
        if self._violation is not None:
            raise self._violation
        expand = self._expander.expand
        receive, apply = self._lifecycle.receive, self._reducer.apply
        streams, chunk_types = self._expander.streams, self._expander.chunk_types
        # Most of a stream is deltas repeating the item of the delta before: those skip the
        # verifier and the reducer, which said (_Repeat) what such an event would do there.
        repeat_type, item_attr, item_id, owner, sink = self._repeat
        index = self._index - 1
        event: Any  # a Struct of the version's event types, or None for a dropped one
        try:
            for batch, events in self._batches(payloads):
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
        except ProtocolViolation as violation:
            self._violation = violation
            raise
        except RecursionError:
            self._violation = _too_deep(index)
            raise self._violation from None
        finally:
            self._index = max(self._index, index + 1)
            self._repeat = _Repeat(repeat_type, item_attr, item_id, owner, sink)

    def _feed_batches(
        self, batches: Iterable[Sequence[Payload]], delivered: list[msgspec.Struct] | None
    ) -> None:
        """``_feed_many`` on each batch; a violation met while making the next batch (a
        reader's) rejects the stream as well."""
        try:
            for batch in batches:
                self._feed_many(batch, delivered)
        except ProtocolViolation as violation:
            self._violation = violation
            raise

    def _batches(
        self, payloads: Iterable[Payload]
    ) -> Iterable[tuple[Iterable[Payload], list[msgspec.Struct] | None]]:
        """The payloads in batches, each with its events if the strict decoder alone gave
        them all (the fast path, for slices of a list or tuple), else None: one by one.
        Anything else (a generator, say) goes one by one as it comes, and so does middleware."""
        if self._documents or not isinstance(payloads, (list, tuple)):
            return ((payloads, None),)
        decode_conformant = self._enforcer.decode_conformant
        return (
            (batch, decode_conformant(batch))
            for batch in (
                payloads[start : start + _BATCH_SIZE]
                for start in range(0, len(payloads), _BATCH_SIZE)
            )
        )

    def _decode_each(
        self, payloads: Iterable[Payload], index: int
    ) -> Iterator[msgspec.Struct | None]:
        """Middleware, then enforcement, payload by payload; None for a dropped event."""
        decode, documents = self._enforcer.decode, self._documents
        for payload in payloads:
            self._index = index + 1  # counted before decoding: a callback may raise from in there
            try:
                if documents:
                    document = self._before_enforcement(payload, index)
                    event = None if document is None else decode(document, index)
                else:
                    event = decode(payload, index)
            except RecursionError:
                raise _too_deep(index) from None
            yield event
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

    def _before_enforcement(self, payload: Payload, index: int) -> bytes | None:
        """Compatibility, then the middleware; the JSON bytes for enforcement, or None if dropped."""
        document = self._compat.translate(decode_document(payload, index), index)
        if document is DROPPED:  # an era shim dropped it, with a warning
            return None
        for stage in self._middleware:
            if not isinstance(document, dict):
                break
            document = stage(document, index)
            if document is None:
                return None
        return encode_document(document, index)  # anything but an object is not-an-object

    def _run_started_by(self, event: Any, index: int) -> None:
        """A run began: the boundary learns its id, the warnings about the event join the new
        run, and the producer's declaration is judged."""
        self._compat.run_id = event.run_id
        self._warnings.run_started(index, len(self._lifecycle.runs))
        if event.protocol_version is not msgspec.UNSET:
            notice = producer_version_notice(event.protocol_version, self.bindings.PROTOCOL_VERSION)
            if notice is not None:
                self._warn(notice)

    def close(self, *, inside_event: bool = False) -> None:
        """End of stream: raises ``ProtocolViolation(rule="truncated")`` if a run is still active,
        or if the body ended ``inside_event`` (a reader's ``discarded_partial``)."""
        if self._violation is not None:
            raise self._violation
        try:
            self._lifecycle.close()
            if inside_event:
                raise ProtocolViolation("truncated", "the body ended inside an event")
        except ProtocolViolation as violation:
            self._violation = violation
            raise

    def result(self, delivered: list[msgspec.Struct]) -> Result:
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


@dataclass
class Result:
    """What ``consume`` found: the verdict, and everything delivered before any failure."""

    outcome: Literal["completed", "failed"]
    """``failed`` means the consumer rejected the stream; a run's own RUN_ERROR is not that."""
    violation: ProtocolViolation | None
    events: list[msgspec.Struct] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    runs: list[Run] = field(default_factory=list)
    messages: list[Any] = field(default_factory=list)
    state: Any = None


def consume(
    events: Iterable[Payload],
    version: str | ModuleType = LATEST_VERSION,
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Sequence[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result:
    """Run a whole stream through the consumer; never raises for a bad stream.

    ``keep_events=False`` keeps only the verdict, runs, messages and state, so a
    long stream is consumed in memory bounded by what it assembles.
    """

    def run(consumer: Consumer, delivered: list[msgspec.Struct] | None) -> None:
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
            max_state_depth=max_state_depth,
            max_warnings=max_warnings,
            peer_version=peer_version,
        ),
        keep_events,
        run,
    )


def consume_body(
    body: bytes | bytearray | memoryview | Iterable[bytes],
    version: str | ModuleType = LATEST_VERSION,
    input: Any = None,
    *,
    keep_events: bool = True,
    middleware: Sequence[Middleware] = (),
    on_warning: Callable[[str], None] | None = None,
    max_open_items: int = DEFAULT_MAX_OPEN_ITEMS,
    max_state_size: int = DEFAULT_MAX_STATE_SIZE,
    max_state_depth: int = DEFAULT_MAX_STATE_DEPTH,
    max_warnings: int = DEFAULT_MAX_WARNINGS,
    peer_version: str | None = None,
) -> Result:
    """``consume`` for a response body: bytes, or an iterable of byte chunks as they arrive.

    The body is read as protobuf frames if its first byte is NUL (the high byte of a
    frame's length), as JSON lines if it starts with ``{`` (after a BOM and whitespace),
    else as SSE, and each chunk's events go through the pipeline together. A body that
    ends inside an event (or a frame) is truncated.
    """

    def run(consumer: Consumer, delivered: list[msgspec.Struct] | None) -> None:
        chunks: Iterator[bytes] = (
            _slices(body) if isinstance(body, (bytes, bytearray, memoryview)) else iter(body)
        )
        head = body_head(chunks)
        reader = reader_for(head, consumer)
        consumer._feed_batches(iter_batches(itertools.chain((head,), chunks), reader), delivered)
        consumer.close(inside_event=reader.discarded_partial)

    return _reported(
        lambda: Consumer(
            version,
            on_warning,
            input,
            middleware,
            max_open_items,
            max_state_size=max_state_size,
            max_state_depth=max_state_depth,
            max_warnings=max_warnings,
            peer_version=peer_version,
        ),
        keep_events,
        run,
    )


def _slices(body: bytes | bytearray | memoryview) -> Iterator[bytes]:
    """A whole body in slices: a reader makes the payloads of one slice at a time, so the
    framing costs memory in proportion to a slice, not to the body."""
    whole = body if isinstance(body, bytes) else bytes(body)
    for start in range(0, len(whole), _BODY_SLICE):
        yield whole[start : start + _BODY_SLICE]


def body_head(chunks: Iterator[bytes]) -> bytes:
    """The first chunks of a body, joined: enough to tell its format (one byte past a BOM and
    whitespace, or ``_SNIFF_LIMIT`` bytes, or the whole body if it ends first)."""
    head = b""
    for chunk in chunks:
        head += chunk
        if head.lstrip(_BOM_AND_WHITESPACE) or len(head) > _SNIFF_LIMIT:
            break
    return head


def protobuf_reader(
    consumer: Consumer, max_event_size: int = DEFAULT_MAX_EVENT_SIZE
) -> ProtobufReader:
    """A protobuf reader for ``consumer``: its warnings join the consumer's where a body
    read byte by byte would say them, whatever the chunking."""
    start = consumer._index
    return ProtobufReader(
        max_event_size,
        consumer.bindings,
        on_warning_before=lambda index, message: consumer._warn_before(start + index, message),
    )


def reader_for(head: bytes, consumer: Consumer) -> PayloadReader:
    """The reader for a body that starts with ``head``: protobuf frames if its first byte is
    NUL (a frame length's high byte; a text body never starts with NUL), JSON lines if it
    starts with ``{``, else SSE. A protobuf reader's warnings join the consumer's."""
    if head[:1] == b"\x00":
        return protobuf_reader(consumer)
    return SSEReader() if sniff_format(head) == "sse" else JSONLinesReader()


def _reported(
    make_consumer: Callable[[], Consumer],
    keep_events: bool,
    run: Callable[[Consumer, list[msgspec.Struct] | None], None],
) -> Result:
    """The result of a whole stream, which ``run`` feeds to the consumer and closes; a
    violation is reported on it, not raised."""
    try:
        consumer = make_consumer()
    except MalformedEvent as violation:  # the input the run started from is malformed
        return Result(outcome="failed", violation=violation)
    delivered: list[msgspec.Struct] | None = [] if keep_events else None
    with contextlib.suppress(ProtocolViolation):
        run(consumer, delivered)
    return consumer.result(delivered or [])
