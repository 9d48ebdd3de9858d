"""A guard for producers: ASGI middleware that verifies the AG-UI stream an endpoint sends.

:class:`ProducerGuard` wraps any ASGI application. For each HTTP response with a 2xx status
that is a ``text/event-stream`` or an ``application/vnd.ag-ui.event+proto`` body (the HTTP +
Protobuf binding), it runs the body it sends through the consumer pipeline (an
:class:`SSEReader` or a :class:`ProtobufReader`, and a :class:`VerifyingConsumer`, which
keeps what is open and not the conversation, per response) as it streams, and reports the first violation: to the ``on_violation`` callback, and to the
``logging`` module (logger ``agui_msgspec.guard``, level WARNING) with the rule, the event
index and the event's bytes. Any other response passes untouched. Pure ASGI: no framework import.

Two modes:

- ``end_with_run_error=False`` (the default) observes: every byte goes out as it comes,
  before it is verified, so the guard adds no buffering and no latency; a broken event
  reaches the client, which gets its own verdict.
- ``end_with_run_error=True`` enforces: the bytes of an event are held back until the
  event (an SSE event, a protobuf frame) is complete and verified, so the client never
  receives a broken event; instead the stream ends with a ``RUN_ERROR`` in the response's
  own framing (``code`` ``"agui-guard:<rule>"``) where the
  lifecycle allows one, and the rest of the application's body is dropped. The cost is
  latency: each event reaches the client when its last byte has been produced, not as its
  bytes are (bytes between events, such as keep-alive comments, still go out at once).
  What is held for one event, lines the reader ignores in it included, is bounded by
  ``max_event_size``: past it, the stream ends with ``event-too-large``.

A body the application compresses itself (``Content-Encoding`` set) is passed on
unverified, with a warning: put the guard inside any compression middleware.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

from agui_msgspec._errors import (
    ProtocolViolation,
    StreamError,
    TransportError,
    checked_callback,
    inert,
    wrong_type,
)
from agui_msgspec._pipeline.consumer import VerifyingConsumer
from agui_msgspec._pipeline.lifecycle import StreamState
from agui_msgspec._versions import LATEST_VERSION, VersionLike, bindings_for
from agui_msgspec._wire.protobuf import PROTOBUF_MEDIA_TYPE, ProtobufReader, proto_frame
from agui_msgspec._wire.text import DEFAULT_MAX_EVENT_SIZE, SSE_MEDIA_TYPE, SSEReader, sse_frame

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

logger = logging.getLogger("agui_msgspec.guard")

# The end of a blank line: where an SSE event is dispatched (LF, CRLF and CR all end lines).
# A CR before an LF is a CRLF's, as the reader counts it: not a line end of its own.
_BLANK_LINE = re.compile(rb"(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r|\n)")
# An event the reader accepts on one data line is held with its field name and line end.
_DATA_LINE_FRAMING = len(b"data: \r\n")
_EVENT_EXCERPT = 2048  # bytes of the offending event the log line shows
_SSE, _PROTOBUF = SSE_MEDIA_TYPE.encode(), PROTOBUF_MEDIA_TYPE.encode()


@dataclass(frozen=True)
class GuardReport:
    """One violation the guard found in a response it verified."""

    violation: StreamError
    """The rejection, with ``rule``, ``index`` (0-based event index in the response) and ``path``."""
    event: bytes | None
    """The payload of the offending event (its ``data``; for a protobuf frame, the event's
    JSON), or None when the body's end broke the rule (``truncated``)."""
    path: str
    """The request path of the response."""


class ProducerGuard:
    """ASGI middleware verifying every AG-UI event stream ``app`` sends.

    ``on_violation`` is called with a :class:`GuardReport` for the first violation of each
    response (a stream is rejected once; later events are not verified). ``version`` is the
    protocol version the stream is judged by, ``max_event_size`` the reader's bound.
    ``end_with_run_error`` holds each event back until verified and replaces a broken one
    with a ``RUN_ERROR`` that ends the stream (see the module docstring for the trade-off).
    ``offer_protobuf=False`` makes the application answer SSE whatever the client's
    ``Accept`` says: the request reaches it with ``Accept: text/event-stream``, so any
    negotiation behind the guard picks SSE (a producer that does not offer the protobuf
    binding may ignore its media type).
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        on_violation: Callable[[GuardReport], None] | None = None,
        end_with_run_error: bool = False,
        version: VersionLike = LATEST_VERSION,
        max_event_size: int = DEFAULT_MAX_EVENT_SIZE,
        offer_protobuf: bool = True,
    ) -> None:
        # refused here, not by the first response: a bad option must not break every request
        bindings_for(version)
        SSEReader(max_event_size)
        if not callable(app):
            raise wrong_type("ProducerGuard()", app, "an ASGI application")
        checked_callback("on_violation=", on_violation)
        self.app = app
        self.offer_protobuf = offer_protobuf
        self.on_violation = on_violation
        self.end_with_run_error = end_with_run_error
        self.version = version
        self.max_event_size: int = max_event_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if not self.offer_protobuf:
            scope = _accepting_sse_only(scope)
        response = _GuardedResponse(self, scope, send)
        # The guard may end the stream with RUN_ERROR: the rest of the app's body is dropped.
        with contextlib.suppress(_StreamEnded):
            await self.app(scope, receive, response.send)

    def _report(self, report: GuardReport) -> None:
        violation = report.violation
        event = (
            "" if report.event is None else report.event[:_EVENT_EXCERPT].decode("utf-8", "replace")
        )
        # one log line, whatever the request's path or the stream put in the names it quotes
        logger.warning(
            "AG-UI stream of %s rejected: %s; event: %s",
            inert(report.path),
            violation,
            inert(event),
            extra={"agui_rule": violation.rule, "agui_index": violation.index},
        )
        if self.on_violation is not None:
            try:
                self.on_violation(report)
            except Exception:  # a failing callback must not break the application's response
                logger.exception("the guard's on_violation callback failed")


def _accepting_sse_only(scope: Scope) -> Scope:
    """``scope`` with its ``Accept`` headers replaced by SSE's media type."""
    headers = [
        (name, value) for name, value in scope.get("headers", []) if name.lower() != b"accept"
    ]
    return {**scope, "headers": [*headers, (b"accept", _SSE)]}


class _StreamEnded(Exception):
    """Raised into the application when the guard has ended its stream."""


class _GuardedResponse:
    """One response: decides at its start whether to verify it, then feeds its body."""

    def __init__(self, guard: ProducerGuard, scope: Scope, send: Send) -> None:
        self.guard = guard
        self.path: str = scope.get("path", "")
        self._send = send
        # None: this response is not verified
        self._consumer: VerifyingConsumer[Any, Any, Any] | None = None
        self._reader: SSEReader | ProtobufReader = SSEReader(guard.max_event_size)
        self._protobuf = False
        self._frame_start = 0  # enforcing protobuf: where in the held bytes the next frame begins
        # enforcing: the bytes of the event not yet complete, grown in place (an event sent in
        # many small pieces is not copied again with each piece)
        self._held = bytearray()
        self._sent_cr = False  # enforcing: the bytes sent so far end in CR
        self._ended = False
        self._rejected = False  # a response is rejected once: later bytes are not verified

    async def send(self, message: Message) -> None:
        if self._ended:
            raise _StreamEnded
        kind = message["type"]
        if kind == "http.response.start":
            self._start(message)
        elif kind == "http.response.body" and self._consumer is not None:
            body = bytes(message.get("body", b""))
            more = bool(message.get("more_body", False))
            if self.guard.end_with_run_error:
                await self._enforce(body, more)
                return
            await self._send(message)  # observing: the bytes go out first, then the verdict
            self._observe(body, more)
            return
        await self._send(message)

    def _start(self, message: Message) -> None:
        status = int(message.get("status", 200))
        headers = {bytes(name).lower(): bytes(value) for name, value in message.get("headers", [])}
        media_type = headers.get(b"content-type", b"").split(b";")[0].strip().lower()
        if not (200 <= status < 300 and media_type in (_SSE, _PROTOBUF)):
            return
        if headers.get(b"content-encoding", b"identity").strip().lower() != b"identity":
            logger.warning(
                "AG-UI stream of %s is compressed: not verified (put the guard inside the "
                "compression middleware)",
                self.path,
            )
            return
        self._consumer = VerifyingConsumer(self.guard.version)
        if media_type == _PROTOBUF:
            self._protobuf = True
            # its warnings stay on it: the guard reports violations only
            self._reader = ProtobufReader(self.guard.max_event_size, self._consumer.bindings)

    # --- observing: bytes out first --------------------------------------------------------

    def _observe(self, body: bytes, more: bool) -> None:
        consumer = self._consumer
        assert consumer is not None
        if self._rejected:
            return
        payloads: list[bytes] = []
        start = consumer.event_index
        try:
            if body:
                payloads = self._reader.feed(body)
                consumer.feed_many(payloads)  # the guard delivers nothing
            if not more:
                payloads = []
                start = consumer.event_index
                self._reader.close()
                consumer.close(inside_event=self._reader.discarded_partial)
        except (ProtocolViolation, TransportError) as violation:
            self._reject(violation, payloads, start)

    # --- enforcing: each event held until verified ------------------------------------------

    async def _enforce(self, body: bytes, more: bool) -> None:
        consumer = self._consumer
        assert consumer is not None
        fed = len(self._held)  # the reader has every byte held; only ``body`` is new to it
        self._held += body
        buffer = self._held
        released = 0
        # Feed the reader up to one event's end at a time, so a verdict maps to its event
        # and everything before that event can go out.
        for end in self._event_ends(buffer, fed):
            if not await self._verify(buffer, fed, end, released):
                return
            fed = released = end
        if fed < len(buffer) and not await self._verify(buffer, fed, len(buffer), released):
            return  # the event still arriving is already too large
        if not self._protobuf:  # a frame's length is bounded by the reader, from its header
            if self._between_events(buffer):
                released = len(buffer)  # comments and blank lines go out at once
            elif len(buffer) - released > self.guard.max_event_size + _DATA_LINE_FRAMING:
                await self._hold_too_large(bytes(buffer[:released]))
                return
        verified = bytes(buffer[:released])
        if released or not more:
            try:
                if not more:
                    self._reader.close()
                    consumer.close(inside_event=self._reader.discarded_partial)
            except (ProtocolViolation, TransportError) as violation:
                self._reject(violation, [], consumer.event_index)
                await self._end_with_run_error(verified, violation)
                return
            out = verified if more else bytes(buffer)
            del self._held[:released]
            self._frame_start -= released
            self._sent_cr = out.endswith(b"\r")
            await self._send({"type": "http.response.body", "body": out, "more_body": more})

    def _event_ends(self, buffer: bytearray, fed: int) -> Iterator[int]:
        """Where each event complete in ``buffer`` ends, from about ``fed`` on (the bytes
        before it were seen): a blank line (at most 4 bytes), or a protobuf frame's length."""
        if not self._protobuf:
            yield from (
                blank_line.end() for blank_line in _BLANK_LINE.finditer(buffer, max(0, fed - 3))
            )
            return
        while len(buffer) - self._frame_start >= 4:
            start = self._frame_start
            end = start + 4 + int.from_bytes(buffer[start : start + 4], "big")
            if end > len(buffer):
                return  # the reader bounds the frame's length as soon as its header is fed
            self._frame_start = end
            yield end

    def _between_events(self, buffer: bytearray) -> bool:
        """Whether every byte fed ends a line outside any event: no data line has begun, no
        line is arriving (a BOM's first bytes are not a line end)."""
        return not self._reader.inside_event and buffer.endswith((b"\n", b"\r"))

    async def _hold_too_large(self, verified: bytes) -> None:
        """End the stream as the reader would had it held what the guard holds for one event
        (lines it ignores, such as comments, included)."""
        consumer = self._consumer
        assert consumer is not None
        violation = TransportError(
            "event-too-large",
            f"an event is larger than max_event_size ({self.guard.max_event_size} bytes)",
            index=consumer.event_index,
        )
        self._reject(violation, [], consumer.event_index)
        await self._end_with_run_error(verified, violation)

    async def _verify(self, buffer: bytearray, start: int, end: int, released: int) -> bool:
        """Feed ``buffer[start:end]``; on a violation, send the verified ``buffer[:released]``
        and a RUN_ERROR, and end the stream."""
        consumer = self._consumer
        assert consumer is not None
        first = consumer.event_index
        payloads: list[bytes] = []
        try:
            payloads = self._reader.feed(bytes(buffer[start:end]))
            consumer.feed_many(payloads)
        except (ProtocolViolation, TransportError) as violation:
            self._reject(violation, payloads, first)
            await self._end_with_run_error(bytes(buffer[:released]), violation)
            return False
        return True

    async def _end_with_run_error(self, verified: bytes, violation: StreamError) -> None:
        """Send the ``verified`` bytes before the broken event, a RUN_ERROR where the
        lifecycle allows one, and the end of the body."""
        consumer = self._consumer
        assert consumer is not None
        error = b""
        if consumer.stream_state is not StreamState.FAILED:  # after RUN_ERROR, none may follow
            run_error = consumer.bindings.RunErrorEvent(
                message=f"the producer broke the AG-UI protocol: {violation}",
                code=f"agui-guard:{violation.rule}",
            )
            error = (
                proto_frame(run_error, consumer.bindings)
                if self._protobuf
                else sse_frame(run_error)
            )
        half_a_crlf = verified.endswith(b"\r") or (not verified and self._sent_cr)
        if half_a_crlf and not self._protobuf:  # frames carry their lengths: none to finish
            error = b"\n" + error
        self._ended = True
        await self._send(
            {"type": "http.response.body", "body": verified + error, "more_body": False}
        )

    # --- both ------------------------------------------------------------------------------

    def _reject(self, violation: StreamError, payloads: list[bytes], start: int) -> None:
        self._rejected = True
        offset = -1 if violation.index is None else violation.index - start
        event = payloads[offset] if 0 <= offset < len(payloads) else None
        self.guard._report(GuardReport(violation, event, self.path))
