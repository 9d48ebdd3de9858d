"""The text wire: response-body bytes in, one payload (the bytes of one event) out, and the
SSE writer beside its reader.

``encode`` and ``sse_frame`` write what the HTTP + SSE binding carries: one compact JSON
event per ``data`` line, LF framing (spec: basic/transports/http-sse).

A reader only frames. Whether a payload is JSON, and whether it is a valid
event, is judged by the later stages, so one event gets one verdict on every
transport (AG-UI basic/processing). Payloads stay bytes: the JSON decoder
validates the UTF-8.

Where each rule comes from:

- AG-UI basic/transports/http-sse: each SSE event's ``data`` is exactly one
  protocol event; ``event:``, ``id:``, ``retry:`` and comment lines are ignored;
  producers MUST send LF line ends and a consumer MAY accept the full grammar,
  which :class:`SSEReader` does.
- WHATWG HTML, "Interpreting an event stream" (the SSE grammar): LF, CRLF and CR
  end a line; one leading BOM is skipped; a line starting with ``:`` is a
  comment; the field name is what precedes the first colon (the whole line if
  it has none) and one space after the colon is dropped; ``data`` values join
  with LF; a blank line dispatches the event unless it has no data lines; at
  end of stream an event not yet dispatched is discarded.
- jsonlines.org: one value per LF-terminated line, ``\\r\\n`` tolerated, and a
  last line without a line separator is still a value.

What neither says, decided here:

- ``max_event_size`` bounds what one event holds in the reader: its data so
  far plus the line still arriving. A ``data:`` line counts by its value (plus
  the LF that joins it), so a payload of exactly ``max_event_size`` bytes
  passes. Exceeding it raises ``TransportError(rule="event-too-large")`` as
  soon as the bytes arrive, with ``index`` = the payloads emitted before it.
  Payloads completed earlier in the same chunk are returned first and the error
  is raised by the next ``feed`` or ``close``, so nothing before it is lost.
- :attr:`SSEReader.discarded_partial` tells the client that the body ended
  inside an event that had data, so it can report truncation.
- Lines of JSON whitespace only are blank in JSON lines.
- A reader serves one stream: after ``close`` or an error it refuses more input.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from typing import Literal, Protocol

import msgspec

from agui_msgspec._errors import (
    MalformedEvent,
    TransportError,
    UsageError,
    checked_bound,
    wrong_type,
)
from agui_msgspec._json import encode_json

DEFAULT_MAX_EVENT_SIZE = 10 * 1024 * 1024
SSE_MEDIA_TYPE = "text/event-stream"
"""The media type of an SSE body (spec: basic/transports/http-sse)."""
_BOM = b"\xef\xbb\xbf"
# Between two events in the spelling producers send: "data: <payload>\n\ndata: <payload>".
_PLAIN_EVENT_SEPARATOR = b"\n\ndata: "


def encode(event: msgspec.Struct) -> bytes:
    """An event (or any binding Struct) as compact JSON, wire names, absent fields left out.

    An absent field is ``msgspec.UNSET`` and is omitted, so it is never written as
    ``null``. ``None`` where the schema has no null is written as given; the
    :class:`StrictWriter` refuses it. A value JSON has no form for (a lone surrogate, an
    object msgspec cannot encode, nesting past the interpreter's stack) raises
    ``MalformedEvent`` (``invalid-json``, ``too-deep``).
    """
    try:
        return encode_json(event)
    except (TypeError, ValueError, OverflowError) as exc:  # UnicodeEncodeError is a ValueError
        raise MalformedEvent(
            "invalid-json", f"the value is not JSON-encodable: {exc}", subject="event"
        ) from None
    except RecursionError:
        raise MalformedEvent("too-deep", "the value nests too deeply", subject="event") from None


def sse_frame(event: msgspec.Struct) -> bytes:
    """One SSE event carrying ``event``: ``data: <json>`` and a blank line, LF line ends.

    Compact JSON escapes every line break inside strings, so the payload is one line. Raises
    as :func:`encode` does.
    """
    return b"data: " + encode(event) + b"\n\n"


class PayloadReader(Protocol):
    """What the client needs from a reader: bytes in, payloads out."""

    discarded_partial: bool

    @property
    def inside_event(self) -> bool:
        """Whether the bytes read so far end inside an event: part of one is held."""
        ...

    def feed(self, chunk: bytes) -> list[bytes]: ...

    def close(self) -> list[bytes]: ...


class _LineReader(ABC):
    """Sans-IO machinery both line-based readers share; subclasses frame the lines."""

    def __init__(self, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        self.max_event_size: int = checked_bound("max_event_size", max_event_size, 1)
        self.discarded_partial: bool = False
        # The bytes after the last line end; a bytearray so a long line grows in amortised O(1).
        self._tail = bytearray()
        # The first bytes while they may still be a BOM split across chunks; None once past them.
        self._head: bytes | None = b""
        self._emitted = 0
        self._closed = False
        self._violation: TransportError | None = None

    def feed(self, chunk: bytes) -> list[bytes]:
        """Take the next bytes of the body; return the payloads they complete, in order."""
        if not isinstance(chunk, (bytes, bytearray, memoryview)):
            raise wrong_type("feed()", chunk, "bytes")
        self._check_usable()
        if self._head is not None:
            head = self._head + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._head = head
                return []
            self._head = None
            chunk = head[len(_BOM) :] if head.startswith(_BOM) else head
        if not chunk:
            return []
        out: list[bytes] = []
        try:
            self._frame(chunk, out)
        except TransportError as violation:
            self._violation = violation
            self._reset()
            if not out:
                raise
        self._emitted += len(out)
        return out

    def close(self) -> list[bytes]:
        """The body has ended: return the payloads its end completes."""
        self._check_usable()
        self._closed = True
        if self._head:  # fewer than three bytes in all, a BOM's start: ordinary bytes after all
            self._tail += self._head
        out = self._finish()
        self._reset()
        self._emitted += len(out)
        return out

    @property
    def inside_event(self) -> bool:
        """Whether the bytes read so far end inside an event (a line is still arriving)."""
        return bool(self._tail)

    def _check_usable(self) -> None:
        if self._violation is not None:
            raise self._violation
        if self._closed:
            raise UsageError("the reader is closed; use a new reader for each stream")

    def _too_large(self, emitted_in_chunk: int) -> TransportError:
        return TransportError(
            "event-too-large",
            f"an event is larger than max_event_size ({self.max_event_size} bytes)",
            index=self._emitted + emitted_in_chunk,
        )

    def _reset(self) -> None:
        self._tail = bytearray()

    @abstractmethod
    def _frame(self, chunk: bytes, out: list[bytes]) -> None:
        """Frame ``chunk`` (never empty) after the buffered bytes, appending payloads to ``out``."""

    @abstractmethod
    def _finish(self) -> list[bytes]:
        """The body has ended after the buffered bytes: the payloads its end completes."""


class SSEReader(_LineReader):
    """Incremental ``text/event-stream`` reader: one payload per dispatched SSE event.

    ``close()`` never returns a payload: an event the body ended inside is
    discarded (WHATWG), and :attr:`discarded_partial` is then True when that
    event had data, which the client reports as truncation.
    """

    def __init__(self, max_event_size: int = DEFAULT_MAX_EVENT_SIZE) -> None:
        super().__init__(max_event_size)
        # The event's data lines, joined at dispatch. A chunk's lines are folded into the first,
        # a bytearray, when it ends: what is held is what ``_size`` counts, not a slot per line.
        self._data: list[bytes | bytearray] = []
        # Length of b"\n".join(self._data), kept as lines arrive so checks cost O(1).
        self._size = 0
        # The last chunk ended in CR: an LF starting the next one belongs to that line end.
        self._pending_cr = False

    @property
    def inside_event(self) -> bool:
        """Whether the bytes read so far end inside an event: its data lines have begun, or a
        line is still arriving."""
        return bool(self._data or self._tail)

    def _frame(self, chunk: bytes, out: list[bytes]) -> None:
        if self._pending_cr:
            self._pending_cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        has_cr = b"\r" in chunk
        if not has_cr and b"\n" not in chunk:
            self._tail += chunk
            self._check_tail(out)
            return
        text = b"".join((self._tail, chunk))
        if has_cr:
            self._pending_cr = text.endswith(b"\r")
            text = text.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        elif not self._data and text[:6] == b"data: ":
            text = self._frame_plain_events(text, out)
        lines = text.split(b"\n")
        self._tail = bytearray(lines.pop())
        data = self._data
        size = self._size
        limit = self.max_event_size
        for line in lines:
            if not line:
                if data:
                    payload = data[0] if len(data) == 1 else b"\n".join(data)
                    out.append(payload if isinstance(payload, bytes) else bytes(payload))
                    data.clear()
                    size = 0
                continue
            if line[:6] == b"data: ":  # the common spelling first: one slice fewer per event
                value = line[6:]
            elif line[:5] == b"data:":
                value = line[5:]
            elif line == b"data":  # a field name without a colon has the empty value
                value = b""
            else:  # ignored, but counted: in pieces it would be held, and chunking must not matter
                if size + len(line) > limit:
                    raise self._too_large(len(out))
                continue
            size += len(value) + 1 if data else len(value)
            if size > limit:
                raise self._too_large(len(out))
            data.append(value)
        self._size = size
        if len(data) > 1:
            _fold(data)
        self._check_tail(out)

    def _frame_plain_events(self, text: bytes, out: list[bytes]) -> bytes:
        """Frame the leading events of ``text`` that are all ``data: <payload>\\n\\n``, the
        spelling producers send, with one split; return the rest for the line loop.

        If no piece between ``\\n\\ndata: `` separators holds an LF, the lines before the
        last blank line are exactly: a data line, a blank line, a data line, ... so the
        pieces are the payloads the line loop would make.
        """
        end = text.rfind(b"\n\n")
        if end < 0 or end > self.max_event_size:  # a payload might exceed it: the line loop says
            return text
        payloads = text[6:end].split(_PLAIN_EVENT_SEPARATOR)
        if b"\n" in b"".join(payloads):  # a copy and a memchr: faster than counting LFs
            return text
        out += payloads
        return text[end + 2 :]

    def _check_tail(self, out: list[bytes]) -> None:
        tail = self._tail
        if tail[:5] == b"data:":
            held = self._size + len(tail) - (6 if tail[5:6] == b" " else 5) + bool(self._data)
        elif b"data:".startswith(tail):  # may still become a data line, whose name is not counted
            held = self._size
        else:
            held = self._size + len(tail)
        if held > self.max_event_size:
            raise self._too_large(len(out))

    def _finish(self) -> list[bytes]:
        tail = self._tail
        self.discarded_partial = bool(self._data) or tail[:5] == b"data:" or tail == b"data"
        return []

    def _reset(self) -> None:
        super()._reset()
        self._data = []
        self._size = 0


def _fold(data: list[bytes | bytearray]) -> None:
    """Join an event's data lines into the first, in place: amortised O(1) a byte, however
    many chunks the event spans."""
    first = data[0]
    joined = first if isinstance(first, bytearray) else bytearray(first)
    joined += b"\n"
    joined += b"\n".join(data[1:])
    data[:] = [joined]


class JSONLinesReader(_LineReader):
    """Incremental JSON lines reader: each non-blank line is one payload.

    Lines end with LF or CRLF. A last line without a line end is still a payload
    (jsonlines.org), delivered by ``close()``; a body cut inside a line thus
    hands the decoder a fragment, which it rejects. :attr:`discarded_partial`
    stays False, as nothing is discarded.
    """

    def _frame(self, chunk: bytes, out: list[bytes]) -> None:
        if b"\n" not in chunk:
            self._tail += chunk
            self._check_tail(out)
            return
        text = b"".join((self._tail, chunk))
        lines = text.split(b"\n")
        self._tail = bytearray(lines.pop())
        has_cr = b"\r" in text
        limit = self.max_event_size
        for line in lines:
            payload = line[:-1] if has_cr and line[-1:] == b"\r" else line
            if len(payload) > limit:
                raise self._too_large(len(out))
            if payload.strip(b" \t\r"):
                out.append(payload)
        self._check_tail(out)

    def _check_tail(self, out: list[bytes]) -> None:
        # A CR ending the tail may yet be the CR of a CRLF, which is not payload.
        if len(self._tail) - self._tail.endswith(b"\r") > self.max_event_size:
            raise self._too_large(len(out))

    def _finish(self) -> list[bytes]:
        tail = self._tail
        payload = bytes(tail[:-1] if tail.endswith(b"\r") else tail)
        return [payload] if payload.strip(b" \t\r") else []


_LEADING_SPACE = re.compile(rb"[ \t\r\n]*")


def sniff_format(head: bytes) -> Literal["sse", "jsonl"]:
    """Tell JSON lines from SSE by the first bytes of a body (a BOM and whitespace skipped).

    A JSON lines body starts with an event object's ``{``; an SSE line starting
    with ``{`` would be an ignored field, so nothing else (empty input included)
    is JSON lines.
    """
    start = len(_BOM) if head.startswith(_BOM) else 0
    first = _LEADING_SPACE.match(head, start).end()  # type: ignore[union-attr]  # always matches
    return "jsonl" if head[first : first + 1] == b"{" else "sse"


def iter_batches(chunks: Iterable[bytes], reader: PayloadReader) -> Iterator[list[bytes]]:
    """Frame a whole body with ``reader``: the payloads of each chunk, then those ``close()``
    completes. A reader's error is raised after the batches before it."""
    for chunk in chunks:
        yield reader.feed(chunk)
    yield reader.close()


def iter_payloads(chunks: Iterable[bytes], reader: PayloadReader) -> Iterator[bytes]:
    """Frame a whole body with ``reader``, payload by payload."""
    for batch in iter_batches(chunks, reader):
        yield from batch
