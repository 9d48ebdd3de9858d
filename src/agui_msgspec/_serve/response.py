"""The producer's HTTP response, framework-neutral: media type, headers and body bytes.

``negotiate_media_type`` applies the bindings' rules (spec: basic/transports/http-sse
and http-protobuf): the protobuf binding when the ``Accept`` header admits its media
type with a positive quality, SSE otherwise.

``EventStream`` turns the agent's events into body bytes, each checked by a
:class:`StrictWriter` first. A stream the writer refuses does not break off: it ends
with a ``RUN_ERROR`` naming the rule, which the lifecycle admits while items are
still open ("RUN_ERROR ends whatever was still open along with the run", spec:
events/lifecycle), so the consumer sees a failed run on a well-formed stream.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import (
    AsyncGenerator,
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
)
from typing import Any

import msgspec

from agui_msgspec._documents import OfficialModel
from agui_msgspec._errors import (
    ProtocolViolation,
    StreamError,
    TransportError,
    UsageError,
    wrong_type,
)
from agui_msgspec._pipeline.warnings import cut
from agui_msgspec._serve.writer import StrictWriter
from agui_msgspec._versions import LATEST_VERSION, VersionLike, bindings_for
from agui_msgspec._wire.protobuf import PROTOBUF_MEDIA_TYPE, proto_frame
from agui_msgspec._wire.text import SSE_MEDIA_TYPE, sse_frame

ProducedEvent = msgspec.Struct | Mapping[str, Any] | OfficialModel

logger = logging.getLogger("agui_msgspec")

_QVALUE = re.compile(r"(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)\Z")  # RFC 9110 §12.4.2


def negotiate_media_type(accept: str | None, *, offer_protobuf: bool = True) -> str:
    """The response media type for a request's ``Accept`` header: ``PROTOBUF_MEDIA_TYPE``
    when the header admits it with a positive quality (by name or by a wildcard, relative
    qualities not consulted), else ``SSE_MEDIA_TYPE``.

    No header, or an empty one, answers SSE: the default binding. ``offer_protobuf=False``
    answers SSE whatever the header says: a producer that does not support the protobuf
    binding ignores its media type (spec: basic/transports/http-protobuf).
    """
    if accept is not None and not isinstance(accept, str):
        raise wrong_type("accept", accept, "an Accept header value (str) or None")
    if offer_protobuf and accept and _admits(accept, PROTOBUF_MEDIA_TYPE):
        return PROTOBUF_MEDIA_TYPE
    return SSE_MEDIA_TYPE


def _admits(accept: str, media_type: str) -> bool:
    """Whether ``accept`` gives ``media_type`` a positive quality: the quality of the most
    specific range that matches it (RFC 9110 §12.5.1); a range with a bad ``q`` matches nothing."""
    best_specificity, quality = -1, 0.0
    # the ranges that can match, most specific highest
    matching = {media_type: 2, media_type.partition("/")[0] + "/*": 1, "*/*": 0}
    for entry in accept.split(","):
        media_range, *parameters = (part.strip() for part in entry.split(";"))
        specificity = matching.get(media_range.lower())
        if specificity is None:
            continue
        q = _quality(parameters)
        if q is None or specificity < best_specificity:
            continue
        if specificity > best_specificity:
            best_specificity, quality = specificity, q
        else:
            quality = max(quality, q)
    return quality > 0


def _quality(parameters: list[str]) -> float | None:
    """The ``q`` parameter (1 when absent), or None when it is not a qvalue."""
    for parameter in parameters:
        name, _, value = parameter.partition("=")
        if name.strip().lower() != "q":
            continue
        value = value.strip()
        return float(value) if _QVALUE.match(value) else None
    return 1.0


class EventStream:
    """The response to one run request: ``media_type``, ``headers``, and the body as an
    async iterable (or, for a sync ``events`` iterable, also a sync one) of bytes.

    ``events`` yields Structs, wire-named dicts or official ``ag-ui-protocol`` models. Each
    goes through a :class:`StrictWriter` for ``version`` and is framed for ``media_type``,
    one write per event. The stream always ends well formed:

    - an event the writer refuses ends it with ``RUN_ERROR`` (``code`` the rule id,
      ``message`` the violation), kept on :attr:`violation`;
    - ``events`` ending with a run still open (or with no event at all) ends it with
      ``RUN_ERROR`` (``code="truncated"``);
    - an exception raised by ``events`` ends it with ``RUN_ERROR``
      (``code="agent-exception"``, the message naming only the exception's class: its text
      may hold what the client must not see); it is logged on the ``agui_msgspec`` logger
      and kept on :attr:`exception`.

    ``offer_protobuf=False`` answers SSE whatever ``accept`` says (a producer that does not
    offer the protobuf binding); by default the media type is negotiated
    (:func:`negotiate_media_type`).

    No ``RUN_ERROR`` follows one the agent sent itself (only ``RUN_STARTED`` may). A sync
    iterable is iterated on the event loop by ``async for``: give an async one if producing
    an event blocks. The producer's iterable is closed when the stream ends early.
    """

    def __init__(
        self,
        events: Iterable[ProducedEvent] | AsyncIterable[ProducedEvent],
        accept: str | None = None,
        *,
        version: VersionLike = LATEST_VERSION,
        offer_protobuf: bool = True,
    ) -> None:
        # checked here: at the first read, iter() failing would pass for the agent's own failure
        if not isinstance(events, (Iterable, AsyncIterable)):
            raise wrong_type("EventStream()", events, "an iterable or async iterable of events")
        self.media_type: str = negotiate_media_type(accept, offer_protobuf=offer_protobuf)
        self._bindings = bindings_for(version)
        try:
            self._writer = StrictWriter(
                self._bindings,
                framing="protobuf" if self.media_type == PROTOBUF_MEDIA_TYPE else "sse",
            )
        except UsageError:  # bindings without a protobuf wire schema: the default binding
            self.media_type = SSE_MEDIA_TYPE
            self._writer = StrictWriter(self._bindings)
        self.headers: dict[str, str] = {
            "Content-Type": self.media_type,
            "Cache-Control": "no-cache",  # every response is a new run
            "X-Accel-Buffering": "no",  # proxies (nginx) pass each event on as it is written
        }
        self.violation: StreamError | None = None
        """The refusal (or truncation) that made the stream end with RUN_ERROR, if any."""
        self.exception: Exception | None = None
        """What ``events`` raised, if it did."""
        self._events = events
        self._started = False

    def __aiter__(self) -> AsyncGenerator[bytes, None]:
        self._start()
        if isinstance(self._events, AsyncIterable):
            return self._from_async(self._events)
        return self._as_async(self._from_sync(self._events))

    def __iter__(self) -> Iterator[bytes]:
        if not isinstance(self._events, Iterable):
            raise UsageError("an EventStream over an async iterable is iterated with async for")
        self._start()
        return self._from_sync(self._events)

    async def __call__(
        self,
        scope: MutableMapping[str, Any],
        receive: Callable[[], Awaitable[MutableMapping[str, Any]]],
        send: Callable[[MutableMapping[str, Any]], Awaitable[None]],
    ) -> None:
        """Serve the stream as an ASGI response (a Starlette endpoint may return it): the
        headers, then each frame as it is made. A client that leaves (``http.disconnect``)
        stops the body and closes the producer's iterable, which a bare ``async for`` over
        the stream never learns of."""
        import asyncio  # noqa: PLC0415  (only a server needs it)

        sender = asyncio.ensure_future(self._send_body(send))
        listener = asyncio.ensure_future(_until_disconnect(receive))
        try:
            await asyncio.wait({sender, listener}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (sender, listener):
                task.cancel()
            await asyncio.gather(sender, listener, return_exceptions=True)
        failure = None if sender.cancelled() else sender.exception()
        if failure is not None:  # the server's send failed
            raise failure

    async def _send_body(self, send: Callable[[MutableMapping[str, Any]], Awaitable[None]]) -> None:
        headers = [
            (k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in self.headers.items()
        ]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        async with contextlib.aclosing(self.__aiter__()) as frames:
            async for frame in frames:
                await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _start(self) -> None:
        if self._started:
            raise UsageError("an EventStream is one response body: it can be iterated once")
        self._started = True

    async def _from_async(
        self, events: AsyncIterable[ProducedEvent]
    ) -> AsyncGenerator[bytes, None]:
        iterator: AsyncIterator[ProducedEvent] | None = None
        try:
            iterator = aiter(events)
            while True:
                try:
                    event = await anext(iterator)
                except StopAsyncIteration:
                    break
                frame, go_on = self._send(event)
                if frame:
                    yield frame
                if not go_on:
                    return
            last = self._finish()
            if last:
                yield last
        except Exception as exc:  # the agent's own failure, __aiter__ included: in-stream
            last = self._failed(exc)
            if last:
                yield last
        finally:
            close = getattr(iterator, "aclose", None)
            if close is not None:
                try:
                    await close()
                except Exception as exc:  # the body is already over: only logged
                    self._close_failed(exc)

    def _from_sync(self, events: Iterable[ProducedEvent]) -> Iterator[bytes]:
        iterator: Iterator[ProducedEvent] | None = None
        try:
            iterator = iter(events)
            while True:
                try:
                    event = next(iterator)
                except StopIteration:
                    break
                frame, go_on = self._send(event)
                if frame:
                    yield frame
                if not go_on:
                    return
            last = self._finish()
            if last:
                yield last
        except Exception as exc:  # the agent's own failure, __iter__ included: in-stream
            last = self._failed(exc)
            if last:
                yield last
        finally:
            close = getattr(iterator, "close", None)
            if close is not None:
                try:
                    close()
                except Exception as exc:  # the body is already over: only logged
                    self._close_failed(exc)

    @staticmethod
    async def _as_async(frames: Iterator[bytes]) -> AsyncGenerator[bytes, None]:
        try:
            for frame in frames:
                yield frame
        finally:
            close = getattr(frames, "close", None)
            if close is not None:
                close()

    # --- sans-IO: one event in, the bytes to write out ------------------------------------

    def _send(self, event: ProducedEvent) -> tuple[bytes, bool]:
        """The frame for ``event`` and True, or the stream's last bytes and False."""
        try:
            return self._writer.frame(event), True
        except (ProtocolViolation, TransportError) as violation:
            self.violation = violation
            logger.warning("AG-UI event refused; ending the stream with RUN_ERROR: %s", violation)
            return self._run_error(str(violation), violation.rule), False

    def _finish(self) -> bytes:
        try:
            self._writer.close()
        except (ProtocolViolation, TransportError) as violation:
            self.violation = violation
            return self._run_error(str(violation), violation.rule)
        return b""

    def _failed(self, exc: Exception) -> bytes:
        self.exception = exc
        logger.error("the AG-UI agent raised; ending the stream with RUN_ERROR", exc_info=exc)
        return self._run_error(f"the agent failed ({type(exc).__name__})", "agent-exception")

    def _close_failed(self, exc: Exception) -> None:
        if self.exception is None:
            self.exception = exc
        logger.error("closing the AG-UI agent's iterable raised", exc_info=exc)

    def _run_error(self, message: str, code: str) -> bytes:
        """A RUN_ERROR frame, or nothing where the lifecycle admits none (after RUN_ERROR)."""
        if self._writer.stream_state == "failed":
            return b""
        # cut as a warning is: quoting a huge property name, it still fits a consumer's bound
        error = self._bindings.RunErrorEvent(message=cut(message), code=code)
        if self.media_type == PROTOBUF_MEDIA_TYPE:
            return proto_frame(error, self._bindings)
        return sse_frame(error)


async def _until_disconnect(receive: Callable[[], Awaitable[MutableMapping[str, Any]]]) -> None:
    """Read the request's messages (a body not yet read, say) until the client leaves."""
    while (await receive())["type"] != "http.disconnect":
        pass
